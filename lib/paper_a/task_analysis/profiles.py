"""One solution's ablation profile: FVU, ΔFVU, removed mass and S_ΔT of every subset of Schur couplings."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from lib.core import devices
from lib.paper_a import ablation, metrics, schur
from lib.paper_a.ablation import SolutionAblations, fvu_of, subset_key  # noqa: F401 - fvu_of, subset_key re-exported
from lib.paper_a.task_analysis.configuration import PAPER_ALPHA


@dataclass(frozen=True)
class SolutionProfile(SolutionAblations):
    """Ablation profile of one trained solution at one α: the :class:`~lib.paper_a.ablation.SolutionAblations` of
    every subset (seed, n_R, FVU, ΔFVU, removed mass, empty) with S_ΔT and the split's gaps.

    ``sens`` maps a subset key (``"RR"``, ``"CR+CC"``, ``""`` = full …) to S_ΔT; ``gaps``: |λ|/ρ − α per diagonal
    block; ``min_gap``: the nearest block to the threshold, min |gaps|; ``coupling_mass``: ‖N‖_F/‖T‖_F. The keys in
    ``empty`` remove no Schur mass: their FVU, ΔFVU and S_ΔT are NaN.
    """

    alpha: float
    sens: dict[str, float]
    moduli_over_rho: np.ndarray = field(repr=False)
    gaps: np.ndarray = field(repr=False)
    min_gap: float = math.nan
    coupling_mass: float = math.nan

    @property
    def signed_gap(self) -> float:
        """|λ|/ρ − α of the block nearest the threshold (negative: it sits just below α·ρ, in C)."""
        return float(self.gaps[np.argmin(np.abs(self.gaps))])


def profile_solution(
    weights: dict[str, torch.Tensor],
    batch,
    *,
    alpha: float = PAPER_ALPHA,
    seed: int = -1,
    subsets: Sequence[tuple[str, ...]] | None = None,
    form: schur.SchurForm | None = None,
    sectors: schur.SchurSplit | None = None,
    device: str = devices.DEFAULT,
) -> SolutionProfile:
    """Ablate each subset of {T_RR, T_C→R, T_CC} (default: all 8) of one solution and score its FVU on ``batch``.

    Built on :func:`lib.paper_a.ablation.subset_ablations`, each network rolled out alone; the full model must be among
    ``subsets`` (it is the reference of ΔFVU). ``sectors`` (a precomputed split of W_hh; then ``alpha`` and ``form``
    are not used) or ``form`` (its ordered Schur form) avoid recomputing them; α is validated by
    :func:`lib.paper_a.schur.split`. The rollouts run on ``device`` (``lib.core.devices``; checked to be present).
    """
    devices.require("device", device)
    subsets = schur.all_subsets() if subsets is None else [tuple(s) for s in subsets]
    if sectors is None:
        form = form if form is not None else schur.ordered_real_schur(weights["W_hh"])
        sectors = schur.split(form, alpha)
    return scored_profile(sectors, subsets, ablation.rollout_scorer(weights, batch, device), seed=seed)


def scored_profile(
    sp: schur.SchurSplit,
    subsets: Sequence[tuple[str, ...]],
    score: ablation.Scorer,
    *,
    seed: int = -1,
    moduli_over_rho: np.ndarray | None = None,
) -> SolutionProfile:
    """The profile of one network from its split ``sp`` and ``score`` (its ablated networks' FVUs,
    :data:`lib.paper_a.ablation.Scorer`): the ablations of ``subsets``, S_ΔT of each and the split's gaps.
    ``moduli_over_rho``: the diagonal blocks' |λ|/ρ (default: those of ``sp.form``; ``lib.own_network`` passes those
    of the matrix that decided the split of a leaky network)."""
    if () not in subsets:
        raise ValueError(f"subsets={subsets!r} must include () (the full model, the reference of ΔFVU)")
    form = sp.form
    result = ablation.subset_ablations(sp, subsets, score, seed=seed)
    sens = {k: metrics.sensitivity(d, result.mass[k]) if k not in result.empty else math.nan
            for k, d in result.dfvu.items()}  # fmt: skip
    return SolutionProfile(
        **result.ablation_fields(),
        alpha=sp.alpha,
        sens=sens,
        moduli_over_rho=np.asarray(form.moduli) / form.rho if moduli_over_rho is None else moduli_over_rho,
        gaps=np.asarray(sp.block_gaps),
        min_gap=float(sp.min_gap),
        coupling_mass=float(schur.coupling_mass(form)),
    )
