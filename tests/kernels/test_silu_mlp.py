"""The hand-written SiLU-MLP input gradient, its VJP and per-sample Jacobian (``lib.kernels.silu_mlp``) against their
readable references: autograd through ``mlp_value`` (``torch.func.grad``, double backpropagation, ``jacrev``)."""

from __future__ import annotations

import torch
from torch.func import grad, jacrev

from lib.kernels.silu_mlp import mlp_grad_param_jacobian, mlp_input_grad
from lib.paper_b.mexican_hat import ASRNN, mlp_value, v_params_of, v_vector


def _theta(seed: int = 0) -> torch.Tensor:
    """A generic (not zero-bias) float64 parameter vector of V, so every term of the sweep is exercised."""
    gen = torch.Generator().manual_seed(seed)
    base = v_vector(ASRNN.init(seed=seed))
    return base + 0.1 * torch.randn(base.shape, generator=gen, dtype=torch.float64)


def test_input_gradient_matches_autograd():
    params = v_params_of(_theta())
    x = torch.randn(17, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    auto = torch.func.vmap(grad(lambda xi: mlp_value(params, xi[None])[0]))(x)
    assert torch.allclose(mlp_input_grad(params, x), auto, atol=1e-13)


def test_hand_written_backward_matches_double_backprop():
    params = [t.clone().requires_grad_(True) for t in v_params_of(_theta(2))]
    x = torch.randn(9, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(2), requires_grad=True)
    w = torch.randn(9, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    ours = torch.autograd.grad((mlp_input_grad(params, x) * w).sum(), [x, *params])

    def reference(x, *ps):
        v = mlp_value(ps, x).sum()
        (g,) = torch.autograd.grad(v, x, create_graph=True)
        return (g * w).sum()

    x2 = x.detach().clone().requires_grad_(True)
    ref = torch.autograd.grad(reference(x2, *params), [x2, *params], allow_unused=True)
    assert ref[-1] is None and float(ours[-1].abs().max()) == 0.0  # the output bias does not enter ∇V
    for a, b in zip(ours[:-1], ref[:-1], strict=True):
        assert torch.allclose(a, b, atol=1e-12)
    assert torch.autograd.gradcheck(lambda x: mlp_input_grad(params, x), (x,))


def test_per_sample_jacobian_matches_jacrev():
    params = v_params_of(_theta(3))
    gen = torch.Generator().manual_seed(4)
    x = torch.randn(6, 3, dtype=torch.float64, generator=gen)
    ubar = torch.randn(6, 3, dtype=torch.float64, generator=gen)
    J = mlp_grad_param_jacobian(params, x, ubar)

    def contraction(flat, xi, ui):
        ps, start = [], 0
        for t in params:
            ps.append(flat[start : start + t.numel()].reshape(t.shape))
            start += t.numel()
        g = grad(lambda z: mlp_value(ps, z[None])[0])(xi)
        return (g * ui).sum()

    flat = torch.cat([t.reshape(-1) for t in params])
    ref = torch.stack([jacrev(contraction)(flat, x[i], ubar[i]) for i in range(6)])
    assert torch.allclose(J, ref, atol=1e-12, rtol=1e-10)
