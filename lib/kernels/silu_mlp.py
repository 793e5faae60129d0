"""Hand-written input gradient of a SiLU MLP, its VJP and its per-sample parameter Jacobian (a fast path).

The MLP is a list ``[W1, b1, …, W_L, b_L]`` (W_l of shape (out, in), scalar output), evaluated readably by
``lib.paper_b.mexican_hat.model.mlp_value``. This module computes, without autograd inside:

* :func:`mlp_input_grad`: u = ∇_x MLP(x) (the SiLU derivative in a reverse sweep), with a hand-written backward so
  that training through it is first-order backpropagation (no double backward). Reference:
  ``torch.func.vmap(torch.func.grad(mlp_value))`` and double backpropagation through ``torch.autograd.grad(...,
  create_graph=True)``;
* :func:`mlp_grad_param_jacobian`: the per-sample parameter Jacobian of ū·∇_x MLP(x), written straight into one
  preallocated matrix. Reference: ``torch.func.jacrev`` of the same contraction.

``tests/kernels/test_silu_mlp.py`` checks both against their references and finite differences.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor


def _silu_parts(z: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """SiLU h = z·s(z) with s the sigmoid, its derivative σ' = s + z·s(1 − s), and s' = s(1 − s) (four tensor ops)."""
    s = torch.sigmoid(z)
    sp = torch.addcmul(s, s, s, value=-1.0)
    return z * s, torch.addcmul(s, z, sp), sp


def _silu_second(z: Tensor, h: Tensor, sp: Tensor) -> Tensor:
    """σ''(z) = s(1 − s)(2 + z(1 − 2s)) = s'·(2 + z − 2h), from z, h = σ(z) and s' = s(1 − s)."""
    return torch.add(z, h, alpha=-2.0).add_(2.0).mul_(sp)


def _grad_forward(params: Sequence[Tensor], x: Tensor):
    """∇_x of the MLP output and the cache the VJP needs: (u (B, d_in), cache)."""
    n = len(params) // 2
    hs, zs, ds, ss = [x], [], [], []
    h = x
    for i in range(n - 1):
        z = torch.addmm(params[2 * i + 1], h, params[2 * i].T)
        h, d, sp = _silu_parts(z)
        hs.append(h)
        zs.append(z)
        ds.append(d)
        ss.append(sp)
    a = params[-2].expand(x.shape[0], -1)  # dV/dh_{L-1}, (B, width)
    As = [None] * (n - 1)  # a_l = dV/dh_l
    gs = [None] * (n - 1)  # g_l = a_l ⊙ σ'(z_l) = dV/dz_l
    for i in range(n - 2, -1, -1):
        As[i] = a
        gs[i] = a * ds[i]
        a = gs[i] @ params[2 * i]
    return a, (hs, zs, ds, ss, As, gs)


def _grad_vjp(params: Sequence[Tensor], cache, ubar: Tensor, *, per_sample: bool):
    """Reverse sweep through ``_grad_forward``: cotangents of (x, params) for the output cotangent ū (B, d_in).

    With ``per_sample`` the parameter cotangents keep the batch axis (B, *shape): the rows of the parameter
    Jacobian of ū·∇_x V. Otherwise they are summed over the batch (a VJP for training).
    """
    hs, zs, ds, ss, As, gs = cache
    n = len(params) // 2
    outer = (lambda u, v: u[:, :, None] * v[:, None, :]) if per_sample else (lambda u, v: u.T @ v)
    total = (lambda u: u) if per_sample else (lambda u: u.sum(0))
    grads: list[Tensor | None] = [None] * len(params)
    zbar_b = [None] * (n - 1)  # z̄_l from the backward sweep
    abar = ubar  # ā_{l-1}
    for i in range(n - 1):  # a_{i} = g_{i+1} W_{i+1}: layer i+1 in 1-based notation
        grads[2 * i] = outer(gs[i], abar)  # W̄ from the backward sweep
        gbar = abar @ params[2 * i].T
        zbar_b[i] = _silu_second(zs[i], hs[i + 1], ss[i]).mul_(As[i]).mul_(gbar)
        abar = gbar * ds[i]
    grads[-2] = abar[:, None, :] if per_sample else abar.sum(0, keepdim=True)  # w̄_L
    grads[-1] = torch.zeros((ubar.shape[0], 1) if per_sample else (1,), dtype=ubar.dtype)
    hbar = None
    for i in range(n - 2, -1, -1):  # forward sweep reversed
        zbar = zbar_b[i] if hbar is None else torch.addcmul(zbar_b[i], hbar, ds[i])
        if per_sample:
            grads[2 * i] = grads[2 * i] + outer(zbar, hs[i])
        else:
            grads[2 * i] = torch.addmm(grads[2 * i], zbar.T, hs[i])
        grads[2 * i + 1] = total(zbar)
        hbar = zbar @ params[2 * i]
    return hbar, grads


class _InputGrad(torch.autograd.Function):
    """u = ∇_x MLP(x) with a hand-written backward (the VJP of ``_grad_vjp``); first-order differentiable."""

    @staticmethod
    def forward(ctx, x, *params):
        u, cache = _grad_forward(params, x)
        ctx.params, ctx.cache = params, cache
        return u

    @staticmethod
    def backward(ctx, ubar):
        xbar, grads = _grad_vjp(ctx.params, ctx.cache, ubar, per_sample=False)
        return (xbar, *grads)


def mlp_input_grad(params: Sequence[Tensor], x: Tensor) -> Tensor:
    """∇_x of the MLP's scalar output, by hand (SiLU derivative, reverse sweep); shape (B, d_in).

    Differentiable (first order) in x and in the parameters through a hand-written backward, so training needs
    no double backpropagation.
    """
    if torch.is_grad_enabled() and (x.requires_grad or any(t.requires_grad for t in params)):
        return _InputGrad.apply(x, *params)
    return _grad_forward(params, x)[0]


def mlp_grad_param_jacobian(params: Sequence[Tensor], x: Tensor, ubar: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Per-sample parameter Jacobian of ū_b·∇_x MLP(x_b): rows b, columns = flattened params; shape (B, p).

    The same reverse sweep as ``_grad_vjp(per_sample=True)``, written straight into one preallocated matrix
    (``out``, if given: every entry is overwritten).
    """
    _, (hs, zs, ds, ss, As, gs) = _grad_forward(params, x)
    n = len(params) // 2
    B = x.shape[0]
    sizes = [t.numel() for t in params]
    shape = (B, sum(sizes))
    if out is not None and (tuple(out.shape) != shape or out.dtype != x.dtype or not out.is_contiguous()):
        raise ValueError(f"out must be a contiguous {x.dtype} tensor of shape {shape}; got {tuple(out.shape)}")
    J = torch.empty(shape, dtype=x.dtype) if out is None else out
    views, start = [], 0
    for t, size in zip(params, sizes, strict=True):
        views.append(J[:, start : start + size].view(B, *t.shape))
        start += size
    zbar_b = []
    abar = ubar
    for i in range(n - 1):
        torch.mul(gs[i][:, :, None], abar[:, None, :], out=views[2 * i])
        gbar = abar @ params[2 * i].T
        zbar_b.append(gbar * As[i] * _silu_second(zs[i], hs[i + 1], ss[i]))
        abar = gbar * ds[i]
    views[-2].copy_(abar[:, None, :])
    views[-1].zero_()
    hbar = None
    for i in range(n - 2, -1, -1):
        zbar = zbar_b[i] if hbar is None else zbar_b[i] + hbar * ds[i]
        views[2 * i].addcmul_(zbar[:, :, None], hs[i][:, None, :])
        views[2 * i + 1].copy_(zbar)
        hbar = zbar @ params[2 * i]
    return J
