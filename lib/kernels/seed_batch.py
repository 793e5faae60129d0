"""Several independent networks trained in one pass: the loss and gradients of S solutions stacked on a seed axis.

Readable reference: the textbook loop :func:`lib.paper_a.reference_training.train`, one network at a time, autograd
through :func:`lib.paper_a.rnn.rollout` and ``torch.optim.Adam``. Here every weight and every batch carries a leading
seed axis (S, …); nothing couples the S networks, each keeps its own weights, data and loss.
``tests/kernels/test_seed_batch.py`` checks losses and gradients against the reference to float tolerance (float64:
1e-12), and training against it.

What makes it fast on a CPU (``benchmarks/bench_training.py`` measures each against the in-process SGEMM peak):

- **one operator call for S networks**: the (B, N)·(N, N) product of every time step is one ``baddbmm_`` over the
  seed axis, as is every product of the loss and the gradients;
- **tanh through the logistic function**: tanh(z) = 2σ(2z) − 1. With g_t = σ(2z_t) the recurrence is
  g_t = σ(c_t + g_{t−1} M) with M = 4W_hhᵀ and c_t = 2(W_xh x_t − W_hh 1) (exact powers of two), so a step is one
  product and one vectorised ``sigmoid_`` (torch's float32 ``tanh`` runs at scalar speed here); h_t = 2g_t − 1 is
  formed once for the whole run. Its rounding differs from ``tanh``'s by about one float32 ulp of 1 near h = 0;
- **products in the orientation BLAS is fast at**: a side of one to eight channels (inputs, outputs) is kept as the
  row count of the thin operand (Wx·Xᵀ rather than X·W_xᵀ), four to five times faster here at N_x, N_y ≤ 8.

**A network's bits do not depend on its neighbours.** Every product is batched over the seed axis and computed network
by network, except one case: torch's ``bmm`` of a batch of *one* whose left operand has *one row* (the readout of a
one-output task, the input weights' gradient of a one-input task) runs another kernel than the same product inside a
batch of two or more, and rounds differently (measured with torch 2.13.0 and MKL 2024.2, float32 and float64,
N_h 16 to 72; two to eight networks in every position agree with each other). :func:`_bmm` runs that product as a
batch of two, so a network trained alone gets the bits it gets beside others
(``tests/paper_a/test_batched_training.py``; without it, seed 0 of the integrator at N_h = 64 alone and beside seed 2
differed by 2.6e-6 in W_hh after 300 steps).

Layout: the states are (S, T+1, B, N), so step t of every network is ``states[:, t]`` and one network's run is a
contiguous (T·B, N) matrix for the weight gradients; inputs, targets and masks are carried channel-first
(S, channels, T·B).
"""

from __future__ import annotations

import torch


class SeedBatchedMSE:
    """``losses, grads = SeedBatchedMSE()(W_xh, W_hh, W_hy, inputs, targets, mask)`` for S networks at once.

    W_xh (S, N, N_x), W_hh (S, N, N), W_hy (S, N_y, N); inputs (S, B, T, N_x), targets and the optional mask
    (S, B, T, N_y). Returns the (S,) masked mean squared errors of the rollouts from h_0 = 0 and
    ``(∂L_s/∂W_xh, ∂L_s/∂W_hh, ∂L_s/∂W_hy)`` stacked on the seed axis. Scratch buffers are kept across calls of one
    shape (a training run) instead of being allocated, and page-faulted, at every step.
    """

    def __init__(self):
        self._shape, self._buffers = None, {}

    def _scratch(self, seeds, steps, batch, n, dtype: torch.dtype, device: torch.device) -> dict[str, torch.Tensor]:
        if self._shape != (seeds, steps, batch, n, dtype, device):
            shapes = {"g": (seeds, steps + 1, batch, n), "h": (seeds, steps + 1, batch, n),
                      "dz": (seeds, steps, batch, n), "dtanh": (seeds, steps, batch, n)}  # fmt: skip
            self._shape = (seeds, steps, batch, n, dtype, device)
            self._buffers = {name: torch.empty(shape, dtype=dtype, device=device) for name, shape in shapes.items()}
            for name in ("g", "dz", "dtanh"):  # the views of every time step, made once (not twice a step)
                self._buffers[f"{name}_t"] = self._buffers[name].unbind(1)
        return self._buffers

    def __call__(self, W_xh, W_hh, W_hy, inputs_sbtx, targets_sbty, mask_sbty=None):
        seeds, batch, steps, _ = inputs_sbtx.shape
        n = W_hh.shape[-1]
        ws = self._scratch(seeds, steps, batch, n, inputs_sbtx.dtype, inputs_sbtx.device)
        x_sxk = _channels_first(inputs_sbtx)  # (S, N_x, T·B), column k = (t, b)
        h = _forward(x_sxk, W_xh, W_hh, ws["g"], ws["g_t"], ws["h"], batch)
        h_run = h[:, 1:].reshape(seeds, steps * batch, n)  # (S, T·B, N): h_1..h_T
        diff = _bmm(W_hy, h_run.transpose(1, 2)).sub_(_channels_first(targets_sbty))  # (S, N_y, T·B)
        if mask_sbty is None:
            losses = diff.square().mean(dim=(1, 2))
            grad_out = diff.mul_(2.0 / diff[0].numel())
        else:
            mask = _channels_first(mask_sbty)
            totals = mask.sum(dim=(1, 2))
            losses = (diff.square() * mask).sum(dim=(1, 2)) / totals
            grad_out = diff.mul_(mask).mul_((2.0 / totals).view(seeds, 1, 1))
        grad_W_hy = _bmm(grad_out, h_run)
        dz = ws["dz"]  # (S, T, B, N): ∂L/∂h_t on entry to _backward
        if W_hy.shape[1] == 1:  # one output: an outer product, the same single products as the bmm, at a third
            torch.mul(grad_out.transpose(1, 2), W_hy, out=dz.view(seeds, steps * batch, n))
        else:
            torch.bmm(grad_out.transpose(1, 2), W_hy, out=dz.view(seeds, steps * batch, n))
        grad_W_hh = _backward(dz, ws["dz_t"], W_hh, h, ws["dtanh"], ws["dtanh_t"])
        dz_run = dz.view(seeds, steps * batch, n)
        grad_W_xh = _bmm(x_sxk, dz_run).transpose(1, 2)
        return losses, (grad_W_xh, grad_W_hh, grad_W_hy)


def _bmm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``torch.bmm(a, b)`` with each network's product the bits it has in any batch (module docstring): a batch of
    one whose ``a`` has one row runs as a batch of two (the network twice) and keeps the first. Reference:
    ``torch.bmm(a, b)``, equal to it in every batch of two or more."""
    if a.shape[0] == 1 and a.shape[1] == 1:
        return torch.bmm(_twice(a), _twice(b))[:1]
    return torch.bmm(a, b)


def _twice(x: torch.Tensor) -> torch.Tensor:
    """A batch of one (1, m, n) as a batch of two in the same layout (a transposed view stays one: BLAS is told so)."""
    if not x.is_contiguous() and x.transpose(1, 2).is_contiguous():
        return torch.cat([x.transpose(1, 2)] * 2).transpose(1, 2)
    return torch.cat([x, x])


def _channels_first(values_sbtc: torch.Tensor) -> torch.Tensor:
    """(S, B, T, C) → contiguous (S, C, T·B): channels as rows, the columns in (t, b) order like the states."""
    seeds, batch, steps, channels = values_sbtc.shape
    return values_sbtc.permute(0, 3, 2, 1).reshape(seeds, channels, steps * batch)


def _forward(x_sxk, W_xh, W_hh, g, g_t, h, batch: int):
    """States h (S, T+1, B, N), h_0 = 0, of every network through g_t = σ(2z_t) (module docstring); ``g_t`` holds
    the views ``g[:, t]``."""
    seeds, steps = g.shape[0], g.shape[1] - 1
    bias = W_hh.sum(dim=2).mul_(-2.0).unsqueeze(1)  # (S, 1, N): −2 W_hh 1
    drive = g[:, 1:].view(seeds, steps * batch, -1)
    torch.baddbmm(bias, x_sxk.transpose(1, 2), W_xh.transpose(1, 2), alpha=2.0, out=drive)  # c_t, all t at once
    g_t[0].fill_(0.5)  # h_0 = 2 · ½ − 1 = 0
    M = W_hh.transpose(1, 2).mul(4.0)
    for t in range(steps):
        g_t[t + 1].baddbmm_(g_t[t], M).sigmoid_()
    return torch.add(g.new_full((), -1.0), g, alpha=2.0, out=h)  # h = 2g − 1, one pass


def _backward(dz, dz_t, W_hh, h, dtanh, dtanh_t):
    """BPTT in place: ``dz`` holds ∂L/∂h_t on entry and dz_t = ∂L/∂z_t on exit; returns ∂L/∂W_hh (S, N, N).
    ``dz_t``, ``dtanh_t`` hold the views of every time step."""
    seeds, steps, batch, n = dz.shape
    torch.addcmul(h.new_ones(()), h[:, 1:], h[:, 1:], value=-1.0, out=dtanh)  # 1 − h_t², one pass
    dz_t[-1].mul_(dtanh_t[-1])
    for t in range(steps - 2, -1, -1):
        dz_t[t].baddbmm_(dz_t[t + 1], W_hh).mul_(dtanh_t[t])
    h_prev = h[:, :-1].reshape(seeds, steps * batch, n)
    return torch.bmm(dz.view(seeds, steps * batch, n).transpose(1, 2), h_prev)
