"""The Jacobian of paper A's held-out rollout with respect to the coupling entries of its ordered Schur form.

For a trained ``W_hh = Q T Qᵀ`` the coordinates are the entries of the coupling blocks T_RR, T_C→R, T_CC (paper A
eq. 5); Q, the diagonal blocks of T, W_xh and W_hy are held fixed and a change ∂T moves the recurrent matrix by
∂W = Q ∂T Qᵀ. The rows are the (masked) outputs ŷ_{b,t,k} of the rollout ``h_t = tanh(W_xh x_t + W h_{t−1})``,
``ŷ_t = W_hy h_t`` (paper A eqs. 1–2), trial-major, each scaled by sqrt(mask) so that ``‖J δ‖²`` is the masked
squared output change the FVU sums.

Two exact routes and a reference:

* :func:`coupling_jacobian`, the **adjoint route**: one backward recursion carries every output's adjoint
  ``λ_s = ∂ŷ_{t,k}/∂a_s`` at once (``λ_s = D_s Wᵀ λ_{s+1}``, ``D_s = diag(1 − h_s²)``), and
  ``∂ŷ_{t,k}/∂T = Σ_s (Qᵀλ_s)(Qᵀh_{s−1})ᵀ`` is one matrix product per trial. Its cost grows with the number of
  outputs per trial (T·N_y), not with the number of coordinates (about N_h²/2), so it wins wherever T·N_y < N_h²/2;
* :func:`coupling_jvp`, the **linearised rollout** (forward mode): ``z_t = D_t (∂W h_{t−1} + W z_{t−1})``,
  ``∂ŷ_t = W_hy z_t``, for a few directions ∂T at once: J δ without forming J;
* :func:`jacobian_by_columns`, the plain loop: one linearised rollout per coordinate (the benchmark's baseline).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor

from lib.core import params
from lib.paper_a import rnn, schur

#: Bytes of adjoint workspace one chunk of trials may take (the adjoint route processes trials in such chunks).
CHUNK_BYTES = 64 * 2**20


@dataclass(frozen=True, eq=False)
class Coordinates:
    """The coupling entries of T used as coordinates: ``rows``/``cols`` (n_c,) in row-major order within the union
    of the chosen blocks, ``block`` (n_c,) the block name of each, ``values`` (n_c,) T at those entries."""

    sectors: schur.SchurSplit = field(repr=False)
    blocks: tuple[str, ...]
    rows: np.ndarray = field(repr=False)
    cols: np.ndarray = field(repr=False)
    block: np.ndarray = field(repr=False)
    values: np.ndarray = field(repr=False)

    @property
    def size(self) -> int:
        return int(self.rows.size)

    @property
    def Q(self) -> np.ndarray:
        return self.sectors.form.Q

    def in_blocks(self, subset: Sequence[str]) -> np.ndarray:
        """(n_c,) bool: the coordinates inside the blocks of ``subset`` (validated against the known blocks)."""
        subset = schur.canonical(subset, "subset")
        return np.isin(self.block, subset)

    def removal(self, subset: Sequence[str]) -> np.ndarray:
        """(n_c,) δ_S: the change of the coordinates when the blocks of ``subset`` are zeroed (−T there, 0 else)."""
        return np.where(self.in_blocks(subset), -self.values, 0.0)

    def matrix(self, vector: np.ndarray) -> np.ndarray:
        """(n, n) ∂T with the coordinate vector placed at its entries (zeros elsewhere)."""
        out = np.zeros((self.sectors.form.n,) * 2)
        out[self.rows, self.cols] = vector
        return out


def coordinates(sectors: schur.SchurSplit, blocks: Sequence[str] = schur.ABLATION_BLOCKS) -> Coordinates:
    """The coupling coordinates of one split (default: all three blocks); an unknown block raises ValueError."""
    if not isinstance(sectors, schur.SchurSplit):
        raise TypeError(f"sectors must be a SchurSplit from lib.paper_a.schur.split; got {type(sectors).__name__}")
    blocks = schur.canonical(blocks, "blocks")
    if not blocks:
        raise ValueError("blocks=() must name at least one of " + ", ".join(schur.ABLATION_BLOCKS))
    label = np.full((sectors.form.n,) * 2, "", dtype=object)
    for b in blocks:
        label[sectors.masks[b]] = b
    rows, cols = np.nonzero(label != "")
    T = sectors.form.T
    return Coordinates(sectors, blocks, rows, cols, label[rows, cols].astype(str), T[rows, cols].copy())


def _weights64(weights) -> dict[str, Tensor]:
    return {k: torch.as_tensor(np.asarray(_np(weights[k])), dtype=torch.float64) for k in rnn.WEIGHT_NAMES}


def _np(x):
    return x.detach().cpu().numpy() if hasattr(x, "detach") else x


def _row_weights(mask_bty: Tensor | None, shape) -> Tensor:
    return torch.ones(shape, dtype=torch.float64) if mask_bty is None else mask_bty.to(torch.float64).sqrt()


def coupling_jacobian(weights, coords: Coordinates, inputs_btx: Tensor, mask_bty: Tensor | None = None) -> Tensor:
    """J (M, n_c), float64, by the adjoint route: rows the masked outputs (trial, step, output), columns ``coords``.

    Rows whose mask is zero are dropped; the others are scaled by sqrt(mask). Trials are processed in chunks of at
    most :data:`CHUNK_BYTES` of workspace.
    """
    w = _weights64(weights)
    x = torch.as_tensor(inputs_btx, dtype=torch.float64)
    B, T, _ = x.shape
    n, n_y = w["W_hh"].shape[0], w["W_hy"].shape[0]
    chunk = max(1, CHUNK_BYTES // (8 * T * n_y * n * T))
    rw = _row_weights(mask_bty, (B, T, n_y)).reshape(B, T * n_y)
    blocks = [_adjoint_chunk(w, coords, x[i : i + chunk]) * rw[i : i + chunk, :, None] for i in range(0, B, chunk)]
    J = torch.cat(blocks).reshape(B * T * n_y, coords.size)
    keep = rw.reshape(-1) > 0
    return J if bool(keep.all()) else J[keep]


def _adjoint_chunk(w: dict[str, Tensor], coords: Coordinates, x: Tensor) -> Tensor:
    """(b, T·N_y, n_c) for one chunk of trials: every output's adjoint carried back at once."""
    W, W_hy = w["W_hh"], w["W_hy"]
    Q = torch.tensor(np.array(coords.Q), dtype=torch.float64)
    with torch.no_grad():
        _, H = rnn.rollout_fast(w, x)  # (b, T, n)
    b, T, n = H.shape
    n_y = W_hy.shape[0]
    D = 1.0 - H.square()
    H_prev = torch.cat([H.new_zeros(b, 1, n), H[:, :-1]], dim=1) @ Q  # (b, T, n): Qᵀh_{s−1} per step
    lam = H.new_zeros(b, T * n_y, n)  # rows (t, k); at step s only rows with t ≥ s are non-zero
    stack = H.new_zeros(b, T * n_y, n, T)  # Qᵀλ_s per row, per step s
    for s in range(T - 1, -1, -1):
        rows = slice(s * n_y, T * n_y)
        active = lam[:, rows] @ W if s < T - 1 else lam[:, rows]
        active[:, :n_y] = W_hy  # the outputs of step s enter their adjoint here
        active = active * D[:, s, None, :]
        lam[:, rows] = active
        stack[:, rows, :, s] = active @ Q
    full = stack.reshape(b, T * n_y * n, T) @ H_prev  # (b, T·N_y·n, n): Σ_s (Qᵀλ_s)(Qᵀh_{s−1})ᵀ
    full = full.reshape(b, T * n_y, n, n)
    return full[:, :, torch.as_tensor(coords.rows), torch.as_tensor(coords.cols)]


def coupling_jvp(weights, coords: Coordinates, directions: np.ndarray, inputs_btx: Tensor) -> Tensor:
    """J δ for each row δ of ``directions`` (k, n_c): the output tangents (k, B, T, N_y) of the linearised rollout.

    Unmasked and unscaled (apply the mask where the FVU does). Exact: the forward-mode derivative of
    :func:`lib.paper_a.rnn.rollout` along ∂W = Q ∂T Qᵀ.
    """
    directions = np.atleast_2d(np.asarray(directions, dtype=np.float64))
    if directions.shape[1] != coords.size:
        raise ValueError(f"directions have {directions.shape[1]} columns; the coordinates have {coords.size}")
    w = _weights64(weights)
    x = torch.as_tensor(inputs_btx, dtype=torch.float64)
    Q = coords.Q
    dW = torch.as_tensor(np.stack([Q @ coords.matrix(d) @ Q.T for d in directions]))  # (k, n, n)
    with torch.no_grad():
        _, H = rnn.rollout_fast(w, x)
    D = 1.0 - H.square()
    W_t = w["W_hh"].T
    z = H.new_zeros(dW.shape[0], *H.shape[::2])  # (k, B, n)
    h_prev = H.new_zeros(H.shape[0], H.shape[2])
    out = []
    for t in range(H.shape[1]):
        z = D[None, :, t] * (h_prev @ dW.transpose(1, 2) + z @ W_t)
        out.append(z)
        h_prev = H[:, t]
    return torch.stack(out, dim=2) @ w["W_hy"].T


def jacobian_by_columns(weights, coords: Coordinates, inputs_btx: Tensor, mask_bty: Tensor | None = None) -> Tensor:
    """J (M, n_c) by the plain loop: one linearised rollout per coordinate (the reference route; slow)."""
    x = torch.as_tensor(inputs_btx, dtype=torch.float64)
    eye = np.eye(coords.size)
    n_y = _weights64(weights)["W_hy"].shape[0]
    rw = _row_weights(mask_bty, (x.shape[0], x.shape[1], n_y)).reshape(-1)
    cols = [coupling_jvp(weights, coords, eye[i], x).reshape(-1) * rw for i in range(coords.size)]
    J = torch.stack(cols, dim=1)
    keep = rw > 0
    return J if bool(keep.all()) else J[keep]


def check_blocks(blocks) -> tuple[str, ...]:
    """A subset of the coupling blocks in canonical order; ValueError naming ``blocks`` for an unknown one."""
    return schur.canonical(blocks, "blocks")


def check_lam(lam) -> float:
    """λ of the continuous ablation path W(λ) = Q (T + λ δ_S) Qᵀ; ValueError outside [0, 1]."""
    return params.real("lam", lam, min=0.0, max=1.0)
