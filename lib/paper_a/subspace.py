"""The low-dimensional subspace confound of paper A §5: where an ablated Schur coupling acts, measured in activity.

A Schur ablation W̃ = Q (T − T_S) Qᵀ removes the coupling ΔW = W − W̃ = Q T_S Qᵀ. Paper A §5 names the test it did not
run: does a harmless ablation keep performance because ΔW avoids the activity directions that matter (the readout row
space, the dominant hidden-state PCs, the task-conditioned manifold), not because the coupling has no role? This module
gives the pieces:

- subspaces of one solution, each as an orthonormal basis (N_h, r): :func:`readout_basis`, :func:`pca` with
  :func:`n_components`, :func:`manifold_basis` (condition-averaged trajectories, conditions from
  :func:`condition_labels`), :func:`union_basis`;
- :func:`energy_fraction`: the share of a set of vectors' energy inside a subspace (Δh(t) or ΔW h(t));
- :func:`removed_coupling` (ΔW of a block set) and :func:`inside_outside` (ΔW = P ΔW + (I − P) ΔW);
- :func:`rollout_many` / :func:`fvu_many`: one driven rollout per recurrent matrix of a stack (the controls).

Everything is float64; shapes are in the docstrings (D matrices, B trials, T steps, N hidden units).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from lib.core import params
from lib.paper_a import metrics, schur

#: The ablations studied: the three single blocks and all three together (name → blocks of eq. 5).
BLOCK_SETS: dict[str, tuple[str, ...]] = {"RR": ("RR",), "CR": ("CR",), "CC": ("CC",), "all": ("RR", "CR", "CC")}

#: The rule that labels a held-out trial's condition, per task (see :func:`condition_labels`).
CONDITION_RULES: dict[str, str] = {
    "flipflop": "the target's sign pattern at the last step (2³ = 8 conditions)",
    "sine": "the cued frequency (the static cue level)",
    "context": "the cued context × the sign of the final target (the choice): 4 conditions",
    "copy": "the sign pattern of the first stored symbol's first three channels (8 conditions)",
}


def block_set(name: str) -> tuple[str, ...]:
    """The blocks of an ablation name in :data:`BLOCK_SETS`; ``ValueError`` naming the allowed ones otherwise."""
    return BLOCK_SETS[params.choice("block", name, BLOCK_SETS)]


# ------------------------------------------------------------------------------------------------- subspaces


def orthonormal_basis(M_nk, rtol: float = 1e-10) -> np.ndarray:
    """(N, r) orthonormal basis of the column space of ``M_nk`` (N, k): left singular vectors with σ > rtol·σ₁."""
    M = np.asarray(M_nk, dtype=np.float64)
    if M.ndim != 2:
        raise ValueError(f"M_nk must be 2-D (N, k); got shape {M.shape}")
    if M.size == 0 or not np.any(M):
        return np.zeros((M.shape[0], 0))
    U, s, _ = np.linalg.svd(M, full_matrices=False)
    return U[:, s > rtol * s[0]]


def readout_basis(W_hy) -> np.ndarray:
    """(N_h, r) orthonormal basis of the readout row space (the span of the rows of W_hy (N_y, N_h))."""
    return orthonormal_basis(_np(W_hy).T)


def union_basis(*bases: np.ndarray) -> np.ndarray:
    """(N, r) orthonormal basis of the sum of subspaces given by bases (N, r_i)."""
    return orthonormal_basis(np.concatenate([np.asarray(b, dtype=np.float64) for b in bases], axis=1))


def pca(states_bth) -> tuple[np.ndarray, np.ndarray]:
    """Principal axes of hidden states (B, T, N) pooled over trials and steps (centred).

    Returns ``(components_nn, cumulative_nn)``: the axes as columns, by decreasing variance, and the cumulative share
    of variance explained by the first 1..N axes (the last entry is 1).
    """
    X = _np(states_bth).reshape(-1, np.shape(states_bth)[-1])
    X = X - X.mean(axis=0)
    _, s, Vt = np.linalg.svd(X, full_matrices=False)
    var = s**2
    total = var.sum()
    cumulative = np.cumsum(var) / total if total > 0 else np.ones_like(var)
    return Vt.T, np.minimum(cumulative, 1.0)


def n_components(cumulative, level: float) -> int:
    """The smallest k whose first k axes explain at least ``level`` ∈ (0, 1] of the variance (k ∈ 1..N)."""
    level = params.real("level", level, min=0.0, max=1.0, min_open=True)
    cumulative = np.asarray(cumulative, dtype=np.float64)
    k = int(np.searchsorted(cumulative, level - 1e-12) + 1)
    return min(k, cumulative.size)


def pc_basis(components_nn, k: int) -> np.ndarray:
    """(N, k): the first ``k`` principal axes; ``k`` must lie in 1..N."""
    n = np.shape(components_nn)[1]
    k = params.integer("k", k, min=1, max=n)
    return np.asarray(components_nn)[:, :k]


def condition_labels(task: str, inputs_btx, targets_bty) -> np.ndarray:
    """(B,) int condition of each held-out trial by the task's rule in :data:`CONDITION_RULES`."""
    params.choice("task", task, CONDITION_RULES)
    x, y = _np(inputs_btx), _np(targets_bty)
    if task == "sine":
        return np.unique(x[:, 0, 0], return_inverse=True)[1].astype(int)
    if task == "context":
        return 2 * np.argmax(x[:, 0, 2:4], axis=1) + (y[:, -1, 0] > 0)
    pattern = y[:, -1, :3] if task == "flipflop" else x[:, 0, :3]
    return ((pattern > 0).astype(int) * (1 << np.arange(pattern.shape[1]))).sum(axis=1)


def condition_means(states_bth, labels_b) -> np.ndarray:
    """(n_conditions, T, N): the trial-averaged trajectory of each condition (conditions in sorted order)."""
    H = _np(states_bth)
    labels = np.asarray(labels_b)
    if labels.shape != H.shape[:1]:
        raise ValueError(f"labels_b has shape {labels.shape}; the states need one label per trial {H.shape[:1]}")
    return np.stack([H[labels == c].mean(axis=0) for c in np.unique(labels)])


def manifold_basis(states_bth, labels_b, level: float = 0.99) -> np.ndarray:
    """(N, r): the task-conditioned manifold, the span of the condition-averaged trajectories (not centred).

    r is the smallest number of singular directions of the stacked means (n_cond·T, N) holding ``level`` of their
    energy.
    """
    level = params.real("level", level, min=0.0, max=1.0, min_open=True)
    M = condition_means(states_bth, labels_b).reshape(-1, np.shape(states_bth)[-1])
    _, s, Vt = np.linalg.svd(M, full_matrices=False)
    energy = np.cumsum(s**2) / np.sum(s**2)
    return Vt[: n_components(energy, level)].T


def energy_fraction(vectors_mn, basis_nr) -> float:
    """Σ‖Uᵀv‖² / Σ‖v‖² over vectors (…, N) for an orthonormal basis U (N, r); NaN when every vector is 0."""
    V = _np(vectors_mn).reshape(-1, np.shape(basis_nr)[0])
    total = float(np.einsum("ij,ij->", V, V))
    if total == 0.0:
        return float("nan")
    inside = V @ np.asarray(basis_nr, dtype=np.float64)
    return float(np.einsum("ij,ij->", inside, inside) / total)


# ------------------------------------------------------------------------------------------------- the coupling


def removed_coupling(sectors: schur.SchurSplit, blocks: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(ΔW, T_S), both (N, N): the coupling an ablation of ``blocks`` removes, ΔW = Q T_S Qᵀ = W − W̃(S).

    ``sectors``: the split of W's ordered Schur form (:func:`lib.paper_a.schur.split`).
    """
    blocks = schur.canonical(blocks, "blocks")
    if not blocks:
        raise ValueError("blocks=() removes nothing; name at least one of ('RR', 'CR', 'CC')")
    sp, form = sectors, sectors.form
    mask = np.zeros((form.n, form.n), dtype=bool)
    for b in blocks:
        mask |= sp.masks[b]
    T_S = np.where(mask, form.T, 0.0)
    return form.Q @ T_S @ form.Q.T, T_S


def inside_outside(delta_W, basis_nr) -> tuple[np.ndarray, np.ndarray]:
    """ΔW split by where it acts: (P ΔW, (I − P) ΔW) with P = U Uᵀ the projector on the subspace U (N, r)."""
    dW = np.asarray(delta_W, dtype=np.float64)
    U = np.asarray(basis_nr, dtype=np.float64)
    inside = U @ (U.T @ dW)
    return inside, dW - inside


# ------------------------------------------------------------------------------------------------- batched rollouts


def rollout_many(weights: dict, W_hh_dnn, inputs_btx, readout: bool = False) -> torch.Tensor:
    """States (D, B, T, N) of eq. (1) from h_0 = 0 for each recurrent matrix of the stack W_hh (D, N, N).

    With ``readout`` the outputs W_hy h_t (D, B, T, N_y) are kept instead of the states. W_xh is shared, so the input
    drive is computed once; float64 throughout.
    """
    W = torch.as_tensor(np.asarray(W_hh_dnn), dtype=torch.float64)
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError(f"W_hh_dnn must be a stack (D, N, N); got shape {tuple(W.shape)}")
    x = torch.as_tensor(inputs_btx, dtype=torch.float64)
    drive_tbn = (x @ torch.as_tensor(weights["W_xh"], dtype=torch.float64).T).transpose(0, 1)
    W_hy_t = torch.as_tensor(weights["W_hy"], dtype=torch.float64).T
    h = x.new_zeros(W.shape[0], x.shape[0], W.shape[1])
    Wt = W.transpose(1, 2).contiguous()
    width = W_hy_t.shape[1] if readout else W.shape[1]
    kept = x.new_empty(x.shape[1], W.shape[0], x.shape[0], width)
    with torch.no_grad():
        for t in range(x.shape[1]):
            h = torch.baddbmm(drive_tbn[t].expand_as(h), h, Wt).tanh_()
            kept[t] = h @ W_hy_t if readout else h
    return kept.permute(1, 2, 0, 3)


def fvu_many(weights: dict, W_hh_dnn, batch, chunk: int = 32) -> np.ndarray:
    """(D,) held-out FVU (:func:`lib.paper_a.metrics.fvu`, ``stacked=True``) of the network with each recurrent matrix
    of the stack.

    ``batch`` = (inputs_btx, targets_bty, mask_bty or None); the stack is rolled out ``chunk`` matrices at a time.
    """
    inputs, targets, mask = batch
    W = np.asarray(W_hh_dnn)
    out = []
    for i in range(0, W.shape[0], chunk):
        yhat = rollout_many(weights, W[i : i + chunk], inputs, readout=True)  # (d, B, T, N_y)
        out.append(metrics.fvu(yhat, targets, mask, stacked=True))
    return np.concatenate(out)


def _np(x) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=np.float64)
