"""Loss and parameter gradient of a leapfrog rollout of a separable SiLU-MLP Hamiltonian, by hand (a fast path).

H(q, p; α) = K(p) + V(q, α), K and V SiLU MLPs in the layout of ``lib.kernels.silu_mlp`` ([W1, b1, …, W_L, b_L],
scalar output). The rollout is the kick–drift–kick leapfrog of ``lib.paper_b.mexican_hat.model.rollout`` and the loss
the windows' trajectory MSE of ``trajectory_loss`` there; their readable reference is autograd through those two
functions (``loss.backward()``, with ``silu_mlp.mlp_input_grad``'s hand-written backward inside).

:func:`leapfrog_loss_grad` computes the same loss and gradient without autograd: no graph over the 2S + 1 MLP
evaluations of an S-step rollout, every activation written once into a preallocated tape, and the parameter
gradients of each layer accumulated over all evaluations in *one* matrix product at the end (the per-evaluation
outer products g_lᵀā and z̄_lᵀh are stacked along the batch axis, so W̄_l = Pᵀ Q with P = [g; z̄], Q = [ā; h]).
``tests/kernels/test_leapfrog_mlp.py`` checks it against the reference in float64.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor


class _Tape:
    """The activations of one SiLU MLP's input gradient over ``evals`` evaluations of ``batch`` rows.

    Layer i (W_i of shape (out, in)): ``Q[i][1, e]`` its input h_i (``Q[0][1, e]`` is x, written by the caller),
    ``Q[i][0, e]`` the cotangent of ∂MLP/∂h_i (``Q[0][0, e]`` is ū, written by the caller), ``P[i][0, e]``
    g_i = ∂MLP/∂z_i, ``P[i][1, e]`` z̄_i, ``D[i][e]`` σ'(z_i), ``E[i][e]`` (∂MLP/∂h_{i+1})·σ''(z_i); ``abar_last[e]``
    the cotangent of the output weight row.
    """

    def __init__(self, params: Sequence[Tensor], evals: int, batch: int):
        dtype = params[0].dtype
        params = list(params)
        self.hidden = len(params) // 2 - 1
        shapes = [tuple(params[2 * i].shape) for i in range(self.hidden)]  # (out, in) of the hidden layers
        self.key = (tuple(tuple(t.shape) for t in params), evals, batch, dtype)
        self.Q = [torch.empty(2, evals, batch, i, dtype=dtype) for _, i in shapes]
        self.P = [torch.empty(2, evals, batch, o, dtype=dtype) for o, _ in shapes]
        self.D = [torch.empty(evals, batch, o, dtype=dtype) for o, _ in shapes]
        self.E = [torch.empty(evals, batch, o, dtype=dtype) for o, _ in shapes]
        self.abar_last = torch.empty(evals, batch, params[-2].shape[1], dtype=dtype)
        # scratch, reused by every evaluation: z, s, s(1 − s), σ'' of each layer; ∂MLP/∂h_i and its cotangent
        self.scratch = [torch.empty(4, batch, o, dtype=dtype).unbind(0) for o, _ in shapes]
        self.a = [torch.empty(batch, i, dtype=dtype) for _, i in shapes]
        self.hbar = [torch.empty(batch, i, dtype=dtype) for _, i in shapes]
        self.gbar = [torch.empty(batch, o, dtype=dtype) for o, _ in shapes]
        self.x_t = torch.empty(shapes[0][1], batch, dtype=dtype)  # ∇_x and x̄, transposed (see _narrow)
        n = self.hidden
        # per evaluation and layer, the views each sweep reads and writes (indexing them anew costs more than the ops)
        self.at = [
            [
                (self.Q[i][1, e], self.Q[i][0, e], self.P[i][0, e], self.P[i][1, e], self.D[i][e], self.E[i][e],
                 self.Q[i + 1][1, e] if i + 1 < n else self.scratch[i][3],
                 self.Q[i + 1][0, e] if i + 1 < n else self.abar_last[e])
                for i in range(n)
            ]
            for e in range(evals)
        ]  # fmt: skip
        self.set_params(params)

    def set_params(self, params: Sequence[Tensor]) -> None:
        """The parameters the next evaluations use (weights, their transposes, biases, the output weight row)."""
        n = self.hidden
        self.W = [params[2 * i] for i in range(n)]
        self.WT = [w.T.contiguous() for w in self.W]  # BLAS multiplies by a stored transpose faster than by a view
        self.b = [params[2 * i + 1] for i in range(n)]
        self.w_out, self.params = params[-2], list(params)

    def input_grad(self, e: int) -> Tensor:
        """u = ∇_x MLP at x = ``Q[0][1, e]``, filling evaluation e of the tape; shape (batch, d_in), a view valid until
        the tape's next evaluation or VJP."""
        at, n = self.at[e], self.hidden
        h = at[0][0]
        for i in range(n):
            z, s, sp, second = self.scratch[i]
            d, h_next = at[i][4], at[i][6]
            torch.addmm(self.b[i], h, self.WT[i], out=z)
            torch.sigmoid(z, out=s)
            h = torch.mul(z, s, out=h_next)
            torch.addcmul(s, s, s, value=-1.0, out=sp)  # s(1 − s)
            torch.addcmul(s, z, sp, out=d)  # σ' = s + z·s(1 − s)
            torch.add(z, h, alpha=-2.0, out=second).add_(2.0).mul_(sp)  # σ'' = s(1 − s)(2 + z − 2h)
        a = self.w_out  # ∂MLP/∂h_n, broadcast over the rows
        for i in range(n - 1, -1, -1):
            _, _, g, _, d, ea, _, _ = at[i]
            torch.mul(a, d, out=g)
            torch.mul(self.scratch[i][3], a, out=ea)
            a = torch.mm(g, self.W[i], out=self.a[i]) if i else self._narrow(g)
        return a

    def _narrow(self, m: Tensor) -> Tensor:
        """m @ W_0, (batch, d_in), as the transpose of W_0ᵀ mᵀ: BLAS is several times slower at a product with only
        d_in (2 or 3) output columns than at one with d_in rows."""
        return torch.mm(self.WT[0], m.T, out=self.x_t).T

    def vjp(self, e: int, *, need_x: bool = True) -> Tensor | None:
        """Cotangent of x for the output cotangent ū = ``Q[0][0, e]`` (a view valid until the tape's next evaluation or
        VJP); fills the tape's cotangents of evaluation e."""
        at, n = self.at[e], self.hidden
        for i in range(n):
            _, abar, _, zbar, d, ea, _, abar_next = at[i]
            gbar = torch.mm(abar, self.WT[i], out=self.gbar[i])
            torch.mul(gbar, ea, out=zbar)
            torch.mul(gbar, d, out=abar_next)
        hbar = None
        for i in range(n - 1, -1, -1):
            zbar, d = at[i][3], at[i][4]
            if hbar is not None:
                zbar.addcmul_(hbar, d)
            if i:
                hbar = torch.mm(zbar, self.W[i], out=self.hbar[i])
            else:
                hbar = self._narrow(zbar) if need_x else None
        return hbar

    def param_grads(self) -> list[Tensor]:
        """Gradients of all parameters, summed over every evaluation (one product per layer); ``init_mlp`` layout."""
        out = []
        for i in range(self.hidden):
            P, Q = self.P[i].flatten(0, 2), self.Q[i].flatten(0, 2)  # rows: [g; z̄] and [ā; h] of every evaluation
            out.append(P.T @ Q if Q.shape[1] >= 8 else (Q.T @ P).T)  # BLAS is slow at a narrow transposed product
            out.append(self.P[i][1].sum((0, 1)))
        out.append(self.abar_last.sum((0, 1))[None])
        out.append(torch.zeros_like(self.params[-1]))  # the output bias does not enter ∇_x MLP
        return out


def _tape(workspace: dict | None, name: str, params: Sequence[Tensor], evals: int, batch: int) -> _Tape:
    key = (tuple(tuple(t.shape) for t in params), evals, batch, params[0].dtype)
    tape = None if workspace is None else workspace.get(name)
    if tape is None or tape.key != key:
        tape = _Tape(params, evals, batch)
        if workspace is not None:
            workspace[name] = tape
    tape.set_params(params)
    return tape


def _buffer(workspace: dict | None, name: str, shape: tuple[int, ...], dtype: torch.dtype) -> Tensor:
    buf = None if workspace is None else workspace.get(name)
    if buf is None or tuple(buf.shape) != shape or buf.dtype != dtype:
        buf = torch.empty(shape, dtype=dtype)
        if workspace is not None:
            workspace[name] = buf
    return buf


def leapfrog_loss_grad(
    k_params: Sequence[Tensor],
    v_params: Sequence[Tensor],
    start: Tensor,
    alpha: Tensor,
    idx: Tensor,
    target: Tensor,
    dt: float,
    *,
    workspace: dict | None = None,
) -> tuple[Tensor, list[Tensor], list[Tensor]]:
    """Trajectory MSE of a leapfrog rollout of H = K(p) + V(q, α) and its gradients in K's and V's parameters.

    ``start`` (B, 4) the initial (q, p), ``alpha`` (B,), ``idx`` (B, C) the compared step indices, ``target``
    (B, C, 4) the true states there. Returns (loss, K's gradients, V's gradients), the values of
    ``trajectory_loss`` and of its ``backward()`` (tensors of the parameters' dtype, no autograd).

    ``workspace``: a dict kept by the caller between calls, holding the tapes (about 80 MB at the chapter's batch), so
    that a training loop writes into memory already mapped instead of fresh pages every step.
    """
    B, steps = start.shape[0], int(idx.max())
    K, V = _tape(workspace, "K", k_params, steps, B), _tape(workspace, "V", v_params, steps + 1, B)
    X = _buffer(workspace, "X", (steps + 1, B, 4), start.dtype)  # the states (q, p) of the rollout
    X[0] = start
    vin, kin = V.Q[0][1], K.Q[0][1]  # V's inputs [q, α] (steps + 1, B, 3), K's inputs p_half (steps, B, 2)
    vin[:, :, 2] = alpha
    vin[0, :, :2] = start[:, :2]
    half = 0.5 * dt
    uv = V.input_grad(0)
    for k in range(steps):
        ph = torch.add(X[k, :, 2:], uv[:, :2], alpha=-half, out=kin[k])  # kick: p + Δt/2 F(q)
        q = torch.add(X[k, :, :2], K.input_grad(k), alpha=dt, out=vin[k + 1, :, :2])  # drift: q + Δt ∇K(p)
        X[k + 1, :, :2] = q
        uv = V.input_grad(k + 1)
        torch.add(ph, uv[:, :2], alpha=-half, out=X[k + 1, :, 2:])  # kick
    gather = idx.T[:, :, None].expand(-1, -1, 4)  # (C, B, 4): X[idx[b, c], b, :]
    diff = X.gather(0, gather) - target.transpose(0, 1)
    loss = diff.square().mean()
    xbar = torch.zeros_like(X).scatter_add_(0, gather, diff.mul_(2.0 / diff.numel()))
    # Reverse sweep. qbar, pbar: cotangents of q_{k+1}, p_{k+1}; phbar: of the half-kicked momentum p_half_{k+1}.
    vbar, kbar = V.Q[0][0], K.Q[0][0]
    vbar[:, :, 2] = 0.0  # α is data
    qbar, pbar, phbar = xbar[steps, :, :2].clone(), xbar[steps, :, 2:], None
    for k in range(steps - 1, -1, -1):
        # u_V(q_{k+1}) kicks p_{k+1} and, after it, p_half_{k+1}: F = −u_V[:, :2]
        torch.mul(pbar if phbar is None else pbar + phbar, -half, out=vbar[k + 1, :, :2])
        qbar.add_(V.vjp(k + 1)[:, :2])
        torch.mul(qbar, dt, out=kbar[k])
        phbar = pbar + K.vjp(k)
        if k:
            qbar.add_(xbar[k, :, :2])
            pbar = phbar + xbar[k, :, 2:]
    torch.mul(phbar, -half, out=vbar[0, :, :2])
    V.vjp(0, need_x=False)
    return loss, K.param_grads(), V.param_grads()
