"""One trained solution seen through both lenses: paper A's ablations, real and predicted from paper B's Jacobian.

For every subset S of the coupling blocks, δ_S (the removal, −T on the blocks of S) is applied for real (paper A's
ablation, scored by :func:`lib.paper_a.ablation.subset_ablations` as the task chapters' profiles are) and predicted:

* the first-order output change J δ_S (exact, by the linearised rollout over the whole held-out set);
* the Gauss–Newton ΔFVU, ``(2 rᵀ J δ_S + ‖J δ_S‖²) / V`` with r the full model's masked residual ŷ − y and V the
  target variance the FVU divides by: the FVU of the linearised model ŷ + J δ_S;
* the fraction of ‖δ_S‖² in the near-null space of J over the probe trials (σ < τσ₁, paper B's truncation).

Paper B's sensitivities S_i = ‖J_{:,i}‖ / sqrt(M) come from the same probe Jacobian.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from lib.kernels.cpu_linalg import symmetric_eigh, tn_gram
from lib.lenses import jacobian as lj
from lib.paper_a import ablation, metrics, rnn, schur
from lib.paper_a.ablation import SolutionAblations, fvu_of, subset_key
from lib.paper_b.lifting import TAU, check_tau

#: The ablated subsets (every non-empty subset of the three blocks, paper A's order).
SUBSETS: tuple[tuple[str, ...], ...] = tuple(s for s in schur.all_subsets() if s)


@dataclass(frozen=True, eq=False)
class SolutionLens(SolutionAblations):
    """Real and predicted ablations of one solution (dicts keyed by subset key, e.g. ``"CR+CC"``).

    Paper A's side is the :class:`~lib.paper_a.ablation.SolutionAblations` of the non-empty subsets (seed, n_R, FVU,
    ΔFVU and removed mass; NaN ΔFVU for an empty subset, listed in ``empty``).
    ``dfvu_gn``: the Gauss–Newton prediction; ``change``/``change_pred``: ‖Δŷ‖ real and ‖J δ_S‖ (masked);
    ``null``: τ → key → fraction of ‖δ_S‖² with σ < τσ₁; ``sens``/``abs_T``: (n, n) S_i and |T_ij| on the coupling
    entries (NaN elsewhere); ``singular_values``: of the probe Jacobian, descending.
    """

    task: str
    dfvu_gn: dict[str, float]
    change: dict[str, float]
    change_pred: dict[str, float]
    null: dict[float, dict[str, float]]
    sens: np.ndarray = field(repr=False)
    abs_T: np.ndarray = field(repr=False)
    singular_values: np.ndarray = field(repr=False)
    n_probe_rows: int = 0
    path: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False)

    @property
    def keys(self) -> list[str]:
        """The non-empty ablations of this solution."""
        return [subset_key(s) for s in SUBSETS if subset_key(s) not in self.empty]


def check_taus(taus: Sequence[float]) -> tuple[float, ...]:
    """Each τ of a scan checked by paper B's :func:`lib.paper_b.lifting.check_tau` (a number in (0, 1))."""
    taus = tuple(taus)
    if not taus:
        raise ValueError("taus=() must hold at least one cutoff τ in (0, 1)")
    return tuple(check_tau(t) for t in taus)


def lens_solution(
    task: str,
    seed: int,
    weights,
    batch,
    *,
    alpha: float = schur.PAPER_ALPHA,
    probe_rows: int = 4096,
    taus: Sequence[float] = (TAU,),
    path_points: int = 0,
) -> SolutionLens:
    """Both lenses on one solution: ``batch`` is the held-out (inputs, targets, mask or None) of paper A's tasks.

    The probe Jacobian uses the first trials of the batch, as many as make at least ``probe_rows`` rows.
    ``path_points`` > 0 also follows W(λ) = Q (T + λ δ_S) Qᵀ for each single block at that many λ in [0, 1].
    """
    taus = check_taus(taus)
    w = rnn.as_float64(weights)
    x, y, mask = batch
    sp = schur.split(schur.ordered_real_schur(w["W_hh"].numpy()), alpha)
    coords = lj.coordinates(sp)
    outs = {}  # subset key → the outputs of its rollout, "" the full model: each network rolled out once
    real = ablation.subset_ablations(sp, SUBSETS, ablation.rollout_scorer(w, batch, outputs=outs), seed=seed)
    out = outs[""]
    m = torch.ones_like(y) if mask is None else mask
    var = float(metrics.target_variance(y, mask))
    resid = out - y  # r, unmasked: every sum below weighs by the mask m as the FVU does
    blocks = schur.ABLATION_BLOCKS
    tangents = lj.coupling_jvp(w, coords, np.stack([coords.removal([b]) for b in blocks]), x)  # (3, B, T, N_y)
    gn, change, change_pred = {}, {}, {}
    for s in SUBSETS:
        key = subset_key(s)
        if key in real.empty:  # an empty ablation removes nothing (paper A's profiles leave it out the same way)
            gn[key] = change[key] = change_pred[key] = math.nan
            continue
        jd = sum(tangents[blocks.index(b)] for b in s)  # J δ_S
        gn[key] = float((2 * (m * resid * jd).sum() + (m * jd.square()).sum()) / var)
        change[key] = float((m * (outs[key] - out).square()).sum().sqrt())
        change_pred[key] = float((m * jd.square()).sum().sqrt())
    trials = max(1, math.ceil(probe_rows / int(m[0].gt(0).sum())))
    J = lj.coupling_jacobian(w, coords, x[:trials], None if mask is None else mask[:trials])
    G = tn_gram(J)
    ev, V = symmetric_eigh(G)
    ev, V = ev.flip(0).clamp_min(0).numpy(), V.flip(1).numpy()
    S = np.sqrt(ev)
    null = {t: _null_fractions(coords, S, V, t, real.empty) for t in taus}
    sens = np.full((sp.form.n,) * 2, np.nan)
    sens[coords.rows, coords.cols] = np.sqrt(np.diag(G.numpy()) / J.shape[0])  # S_i = ‖J_{:,i}‖ / sqrt(M)
    abs_T = np.full_like(sens, np.nan)
    abs_T[coords.rows, coords.cols] = np.abs(coords.values)
    path = _paths(w, coords, batch, tangents, m * resid, m, var, real.fvu_full, path_points) if path_points else {}
    return SolutionLens(
        **real.ablation_fields(), task=task, dfvu_gn=gn, change=change, change_pred=change_pred, null=null,
        sens=sens, abs_T=abs_T, singular_values=S, n_probe_rows=int(J.shape[0]), path=path,
    )  # fmt: skip


def _null_fractions(coords, S, V, tau: float, empty) -> dict[str, float]:
    """key → ‖P_null δ_S‖² / ‖δ_S‖², the null space being spanned by the right singular vectors with σ < τσ₁."""
    keep = S >= tau * S[0] if S[0] > 0 else np.zeros_like(S, dtype=bool)
    Vr = V[:, keep]
    out = {}
    for s in SUBSETS:
        key = subset_key(s)
        d = coords.removal(s)
        out[key] = math.nan if key in empty else float(1.0 - np.sum((Vr.T @ d) ** 2) / np.sum(d**2))
    return out


def _paths(w, coords, batch, tangents, m_resid, m, var, fvu_full, points: int):
    """block → (λ, real ΔFVU(λ), Gauss–Newton ΔFVU(λ)) along W(λ) = Q (T + λ δ_b) Qᵀ, λ from 0 to 1."""
    lams = np.linspace(0.0, 1.0, int(points))
    out = {}
    for i, b in enumerate(schur.ABLATION_BLOCKS):
        if not np.any(coords.removal([b])):  # an empty block: no path
            continue
        real = np.array([path_dfvu(w, coords, [b], lam, batch, fvu_full) for lam in lams])
        a, c = float(2 * (m_resid * tangents[i]).sum() / var), float((m * tangents[i].square()).sum() / var)
        out[b] = (lams, real, a * lams + c * lams**2)
    return out


def path_dfvu(weights, coords: lj.Coordinates, subset, lam: float, batch, fvu_full: float) -> float:
    """Real ΔFVU at W(λ) = Q (T + λ δ_S) Qᵀ, λ in [0, 1] (λ = 1 is paper A's ablation of ``subset``)."""
    lam = lj.check_lam(lam)
    Q = coords.Q
    W = Q @ (coords.sectors.form.T + lam * coords.matrix(coords.removal(subset))) @ Q.T
    return metrics.delta_fvu(fvu_of({**weights, "W_hh": torch.tensor(W)}, batch), fvu_full)
