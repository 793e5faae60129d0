"""The hand-written leapfrog loss and gradient (``lib.kernels.leapfrog_mlp``) against its readable reference: autograd
through ``trajectory_loss`` (the leapfrog ``rollout`` with ``mlp_input_grad``'s hand-written backward inside)."""

from __future__ import annotations

import pytest
import torch

from lib.kernels.leapfrog_mlp import leapfrog_loss_grad
from lib.paper_b.mexican_hat import ASRNN, DataConfig, make_windows, trajectory_loss


def _model(seed: int, dtype=torch.float64) -> ASRNN:
    """A generic model (no zero bias), so every term of both sweeps is exercised."""
    gen = torch.Generator().manual_seed(seed)
    m = ASRNN.init(seed=seed, dtype=dtype)
    return ASRNN(*([t + 0.1 * torch.randn(t.shape, generator=gen, dtype=dtype) for t in ps]
                   for ps in (m.k_params, m.v_params)))  # fmt: skip


def _windows(n: int, dtype=torch.float64):
    train, _ = make_windows(DataConfig(ics_per_alpha=2, splits=10))
    return train.subset(torch.randperm(len(train), generator=torch.Generator().manual_seed(5))[:n]).to(dtype)


def _reference(model: ASRNN, w):
    params = [t.detach().clone().requires_grad_(True) for t in model.parameters()]
    nk = len(model.k_params)
    loss = trajectory_loss(ASRNN(params[:nk], params[nk:]), w)
    loss.backward()
    return loss.detach(), [t.grad for t in params]


@pytest.mark.parametrize("seed", [0, 1])
def test_loss_and_gradient_match_autograd(seed):
    model, w = _model(seed), _windows(23)
    ref_loss, ref_grads = _reference(model, w)
    loss, gk, gv = leapfrog_loss_grad(model.k_params, model.v_params, w.start, w.alpha, w.idx, w.target, 0.1)
    assert torch.allclose(loss, ref_loss, rtol=1e-13, atol=0)
    for ours, ref in zip([*gk, *gv], ref_grads, strict=True):
        assert ours.shape == ref.shape
        assert torch.allclose(ours, ref, rtol=1e-10, atol=1e-13 * float(ref.abs().max()))


def test_gradient_matches_finite_differences():
    model, w = _model(3), _windows(5)
    _, gk, gv = leapfrog_loss_grad(model.k_params, model.v_params, w.start, w.alpha, w.idx, w.target, 0.1)
    gen = torch.Generator().manual_seed(6)
    for params, grads in ((model.k_params, gk), (model.v_params, gv)):
        for j in (0, 2, 4, 6):  # one entry of every weight matrix
            pos = tuple(int(torch.randint(n, (1,), generator=gen)) for n in params[j].shape)
            eps, saved = 1e-6, params[j][pos].item()
            vals = []
            for sign in (1, -1):
                params[j][pos] = saved + sign * eps
                vals.append(float(trajectory_loss(model, w)))
            params[j][pos] = saved
            assert abs((vals[0] - vals[1]) / (2 * eps) - float(grads[j][pos])) < 1e-7 * max(1.0, abs(vals[0]))


def test_float32_is_close_to_float64():
    model, w = _model(2), _windows(40)
    m32, w32 = model.to(torch.float32), w.to(torch.float32)
    loss, gk, gv = leapfrog_loss_grad(m32.k_params, m32.v_params, w32.start, w32.alpha, w32.idx, w32.target, 0.1)
    ref_loss, ref_grads = _reference(model, w)
    assert loss.dtype == torch.float32 and abs(float(loss) / float(ref_loss) - 1) < 1e-4
    for ours, ref in zip([*gk, *gv], ref_grads, strict=True):
        assert float((ours.double() - ref).abs().max()) <= 1e-4 * float(ref.abs().max()) + 1e-12
