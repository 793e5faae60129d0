"""The tanh recurrence with hand-written backpropagation through time, and the masked MSE of its readout.

Readable reference: autograd through :func:`lib.paper_a.rnn.rollout`, the explicit loop h_t = tanh(W_xh x_t + W_hh
h_{t−1}), ŷ_t = W_hy h_t (paper A eqs. 1–2), followed by the masked mean squared error.
``tests/kernels/test_recurrence.py`` checks the gradients against it to float64 tolerance, and a short training against
it to float tolerance.

- :func:`tanh_states` (behind :func:`lib.paper_a.rnn.rollout_fast`): the states h_1..h_T, first-order
  differentiable in the weights, the inputs and h_0. About twice as fast on a CPU as autograd through the fused
  ``rnn_tanh`` kernel, which records every step (``benchmarks/bench_copy.py``).
- :class:`RolloutMSE` (the one-network training loss of an earlier loop; the book's training now goes through
  :mod:`lib.kernels.seed_batch`, and the readable loop is :mod:`lib.paper_a.reference_training`): mean((ŷ − y)²), or Σ m
  (ŷ − y)² / Σ m with a mask, of the rollout from h_0 = 0, as a scalar whose ``backward()`` hands over gradients
  computed with it. Its arithmetic is autograd's op for op, so they are bit for bit autograd's through
  :func:`tanh_states` (tested); what it drops is building and walking the graph, and it reuses its scratch buffers from
  one training step to the next.
"""

from __future__ import annotations

import torch


def _forward(inputs_btx, W_xh, W_hh, h0_bh, states=None):
    """States (T+1, B, N) with states[0] = h0, and the inputs in (T, B, N_x) layout.

    Forward: one GEMM for every input drive, then one ``addmm_`` and one ``tanh_`` per step. ``states`` is an
    optional preallocated (T+1, B, N) buffer to fill.
    """
    batch, steps, _ = inputs_btx.shape
    inputs_tbx = inputs_btx.transpose(0, 1).contiguous()
    if states is None:
        states = inputs_btx.new_empty(steps + 1, batch, W_hh.shape[0])
    states[0] = h0_bh
    torch.matmul(inputs_tbx, W_xh.T, out=states[1:])
    views, W_hh_T = states.unbind(0), W_hh.T
    for t in range(steps):
        views[t + 1].addmm_(views[t], W_hh_T).tanh_()
    return states, inputs_tbx


def _backward(dz, inputs_tbx, W_xh, W_hh, states, dtanh=None):
    """BPTT in place: ``dz`` (T, B, N) holds ∂L/∂h_t on entry and dz_t on exit; returns ∂L/∂W_xh, ∂L/∂W_hh.

    dz_t = (∂L/∂h_t + dz_{t+1} W_hh) ⊙ (1 − h_t²), one ``addmm_`` per step, then the weight gradients as single GEMMs
    over all steps: ∂L/∂W_hh = Σ_t dz_tᵀ h_{t−1}, ∂L/∂W_xh = Σ_t dz_tᵀ x_t. ``dtanh`` is an optional (T, B, N)
    scratch buffer for 1 − h_t².
    """
    steps, batch, n = states.shape[0] - 1, states.shape[1], states.shape[2]
    dtanh = torch.square(states[1:], out=dtanh) if dtanh is not None else states[1:].square()
    dtanh.neg_().add_(1.0)
    dz_views, dtanh_views = dz.unbind(0), dtanh.unbind(0)
    dz_views[-1].mul_(dtanh_views[-1])
    for t in range(steps - 2, -1, -1):
        dz_views[t].addmm_(dz_views[t + 1], W_hh).mul_(dtanh_views[t])
    dz_flat = dz.reshape(steps * batch, n)
    grad_W_hh = dz_flat.T @ states[:-1].reshape(steps * batch, n)
    grad_W_xh = dz_flat.T @ inputs_tbx.reshape(steps * batch, -1)
    return grad_W_xh, grad_W_hh


class TanhRecurrence(torch.autograd.Function):
    """States h_1..h_T (B, T, N) of h_t = tanh(W_xh x_t + W_hh h_{t−1}) with hand-written BPTT (first order only)."""

    @staticmethod
    def forward(ctx, inputs_btx, W_xh, W_hh, h0_bh):
        states, inputs_tbx = _forward(inputs_btx, W_xh, W_hh, h0_bh)
        ctx.save_for_backward(inputs_tbx, W_xh, W_hh, states)
        return states[1:].transpose(0, 1)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_bth):
        inputs_tbx, W_xh, W_hh, states = ctx.saved_tensors
        dz = grad_bth.transpose(0, 1).contiguous()  # (T, B, N): ∂L/∂h_t, turned into dz_t in place
        grad_W_xh, grad_W_hh = _backward(dz, inputs_tbx, W_xh, W_hh, states)
        grad_inputs = (dz @ W_xh).transpose(0, 1) if ctx.needs_input_grad[0] else None
        grad_h0 = dz[0] @ W_hh if ctx.needs_input_grad[3] else None
        return grad_inputs, grad_W_xh, grad_W_hh, grad_h0


def tanh_states(inputs_btx: torch.Tensor, W_xh: torch.Tensor, W_hh: torch.Tensor, h0_bh: torch.Tensor):
    """States (B, T, N) of the driven recurrence from ``h0_bh``; differentiable (first order), not by ``torch.func``."""
    return TanhRecurrence.apply(inputs_btx, W_xh, W_hh, h0_bh)


class RolloutMSE:
    """``loss = RolloutMSE()(weights, inputs_btx, targets_bty, mask_bty)``: the masked MSE of the rollout from h_0 = 0.

    ``weights`` holds W_xh (N, N_x), W_hh (N, N), W_hy (N_y, N); the loss is a scalar whose ``backward()`` sends
    ∂L/∂W_xh, ∂L/∂W_hh, ∂L/∂W_hy (computed with the loss) on to whatever the weights were built from. One instance
    keeps its five (T, B, N)-sized scratch buffers across calls of the same shape instead of allocating (and
    page-faulting) them at every training step.
    """

    def __init__(self):
        self._shape, self._buffers = None, {}

    def __call__(self, weights, inputs_btx, targets_bty, mask_bty=None) -> torch.Tensor:
        W_xh, W_hh, W_hy = weights["W_xh"], weights["W_hh"], weights["W_hy"]
        return _RolloutMSEFunction.apply(W_xh, W_hh, W_hy, inputs_btx, targets_bty, mask_bty, self._scratch)

    def _scratch(self, steps: int, batch: int, n: int, dtype: torch.dtype) -> dict[str, torch.Tensor]:
        if self._shape != (steps, batch, n, dtype):
            shapes = {"states": (steps + 1, batch, n), "S": (batch * steps, n), "grad_S": (batch * steps, n),
                      "dz": (steps, batch, n), "dtanh": (steps, batch, n)}  # fmt: skip
            self._shape = (steps, batch, n, dtype)
            self._buffers = {name: torch.empty(shape, dtype=dtype) for name, shape in shapes.items()}
        return self._buffers


class _RolloutMSEFunction(torch.autograd.Function):
    """The loss and, in the same pass, its weight gradients; ``backward`` returns them scaled by ∂(output)/∂L."""

    @staticmethod
    def forward(ctx, W_xh, W_hh, W_hy, inputs_btx, targets_bty, mask_bty, scratch):
        loss, ctx.grads = _loss_and_grads(W_xh, W_hh, W_hy, inputs_btx, targets_bty, mask_bty, scratch)
        return loss

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_loss):
        grads = ctx.grads
        del ctx.grads
        return *(g * grad_loss for g in grads), None, None, None, None  # × 1 from loss.backward(): exact


def _loss_and_grads(W_xh, W_hh, W_hy, inputs_btx, targets_bty, mask_bty, scratch):
    """``(loss, (∂L/∂W_xh, ∂L/∂W_hh, ∂L/∂W_hy))``, each operation the one autograd performs.

    The readout as one folded GEMM, PyTorch's backward formulas for mean, pow, sum, division and mm, then the
    recurrence's BPTT.
    """
    batch, steps, _ = inputs_btx.shape
    n = W_hh.shape[0]
    ws = scratch(steps, batch, n, inputs_btx.dtype)
    h0 = inputs_btx.new_zeros(batch, n)
    states, inputs_tbx = _forward(inputs_btx, W_xh, W_hh, h0, states=ws["states"])
    S = ws["S"]  # matmul folds (B, T, N) @ (N, N_y) through this (B·T, N) copy
    S.view(batch, steps, n).copy_(states[1:].transpose(0, 1))
    diff = S.mm(W_hy.T).view(batch, steps, -1) - targets_bty
    sq = diff**2
    one = torch.ones((), dtype=sq.dtype)  # ∂L/∂L, as backward() seeds it
    if mask_bty is None:
        loss = torch.mean(sq)
        grad_sq = one.expand(sq.shape) / sq.numel()  # MeanBackward
    else:
        masked = sq * mask_bty
        total = torch.sum(mask_bty)
        loss = torch.sum(masked) / total
        grad_sq = (one / total).expand(sq.shape) * mask_bty  # DivBackward, SumBackward, MulBackward
    grad_out = (grad_sq * (2.0 * diff.pow(1.0))).view(batch * steps, -1)  # PowBackward (exponent 2)
    grad_W_hy = grad_out.t().mm(S)  # MmBackward for the column-major W_hyᵀ, then its transpose
    grad_S = torch.mm(grad_out, W_hy, out=ws["grad_S"])
    dz = ws["dz"]
    dz.copy_(grad_S.view(batch, steps, n).transpose(0, 1))
    grad_W_xh, grad_W_hh = _backward(dz, inputs_tbx, W_xh, W_hh, states, dtanh=ws["dtanh"])
    return loss, (grad_W_xh, grad_W_hh, grad_W_hy)
