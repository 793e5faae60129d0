"""lib.kernels.recurrence against the readable reference it replaces: autograd through rnn.rollout (the fast rollout,
its hand-written BPTT and RolloutMSE)."""

from __future__ import annotations

import pytest
import torch

from lib.kernels import recurrence
from lib.paper_a import reference_training, rnn


def _weights(construction="dense_orthogonal", n=8, dtype=torch.float64, seed=0):
    return rnn.weights_from_params(rnn.init_params(construction, n, 3, 2, seed=seed, dtype=dtype))


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-6), (torch.float64, 1e-12)])
@pytest.mark.parametrize("construction", rnn.CONSTRUCTIONS)
def test_fast_rollout_matches_the_loop(construction, dtype, tol):
    w = _weights(construction, 12, dtype)
    x = torch.randn(5, 17, 3, generator=torch.Generator().manual_seed(1), dtype=torch.float64).to(dtype)
    out_loop, h_loop = rnn.rollout(w, x)
    out_fast, h_fast = rnn.rollout_fast(w, x)
    assert out_loop.shape == (5, 17, 2) and h_loop.shape == (5, 17, 12)
    assert torch.allclose(out_loop, out_fast, atol=tol, rtol=0)
    assert torch.allclose(h_loop, h_fast, atol=tol, rtol=0)


@pytest.mark.parametrize("construction", rnn.CONSTRUCTIONS)
def test_fast_rollout_gradients_match_autograd_through_the_loop(construction):
    """The hand-written BPTT of rollout_fast against autograd through the explicit loop (weights, inputs, h0)."""
    gen = torch.Generator().manual_seed(3)
    p = rnn.init_params(construction, 10, 3, 2, seed=1, dtype=torch.float64)
    p = {k: v.clone().requires_grad_(True) for k, v in p.items()}
    x = torch.randn(4, 9, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    h0 = torch.randn(4, 10, generator=gen, dtype=torch.float64, requires_grad=True)
    target = torch.randn(4, 9, 2, generator=gen, dtype=torch.float64)
    grads = []
    for fn in (rnn.rollout, rnn.rollout_fast):
        out, h = fn(rnn.weights_from_params(p), x, h0)
        loss = (out - target).pow(2).sum() + h.sin().sum()
        grads.append(torch.autograd.grad(loss, [*p.values(), x, h0]))
    for g_loop, g_fast in zip(*grads, strict=True):
        assert torch.allclose(g_loop, g_fast, atol=1e-12, rtol=0)


def test_tanh_recurrence_gradcheck():
    w = _weights(n=6)
    x = torch.randn(2, 5, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    h0 = torch.zeros(2, 6, dtype=torch.float64)
    W_xh, W_hh = w["W_xh"].clone().requires_grad_(True), w["W_hh"].clone().requires_grad_(True)
    assert torch.autograd.gradcheck(lambda a, b: recurrence.tanh_states(x, a, b, h0), (W_xh, W_hh))


def _loss_and_grads(loss_fn, weights, x, y, m):
    w = {k: v.clone().requires_grad_(True) for k, v in weights.items()}
    loss = loss_fn(w, x, y, m)
    return loss.detach(), torch.autograd.grad(loss, [w[k] for k in rnn.WEIGHT_NAMES])


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_rollout_mse_is_autograd_bit_for_bit(dtype, masked):
    """RolloutMSE's loss and gradients: those of autograd through rollout_fast and the masked MSE, bit for bit."""
    gen = torch.Generator().manual_seed(7)
    w = _weights("dense_orthogonal", 8, dtype)
    x, y = (torch.randn(6, 11, k, generator=gen, dtype=torch.float64).to(dtype) for k in (3, 2))
    m = (torch.rand(6, 11, 2, generator=gen) < 0.5).to(dtype) if masked else None
    kernel = recurrence.RolloutMSE()
    ours = _loss_and_grads(kernel, w, x, y, m)
    again = _loss_and_grads(kernel, w, x, y, m)  # the scratch buffers are reused: same numbers
    reference = _loss_and_grads(
        lambda w, x, y, m: reference_training.masked_mse(rnn.rollout_fast(w, x)[0], y, m), w, x, y, m
    )
    for a, b, c in zip((ours[0], *ours[1]), (again[0], *again[1]), (reference[0], *reference[1]), strict=True):
        assert torch.equal(a, b) and torch.equal(a, c)


def test_rollout_mse_matches_autograd_through_the_loop():
    gen = torch.Generator().manual_seed(8)
    p = {k: v.requires_grad_(True) for k, v in rnn.init_params("cayley", 10, 3, 2, seed=2).items()}
    x, y = torch.randn(4, 9, 3, generator=gen, dtype=torch.float64), torch.randn(4, 9, 2, dtype=torch.float64)
    m = torch.ones(4, 9, 2, dtype=torch.float64)
    m[:, :3] = 0
    losses = [
        recurrence.RolloutMSE()(rnn.weights_from_params(p), x, y, m),
        reference_training.masked_mse(rnn.rollout(rnn.weights_from_params(p), x)[0], y, m),
    ]
    assert torch.allclose(losses[0], losses[1], atol=1e-14, rtol=0)
    grads = [torch.autograd.grad(loss, list(p.values())) for loss in losses]  # through the Cayley construction
    for a, b in zip(*grads, strict=True):
        assert torch.allclose(a, b, atol=1e-12, rtol=0)
