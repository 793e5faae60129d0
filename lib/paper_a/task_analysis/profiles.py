"""One solution's ablation profile: FVU, ΔFVU, removed mass and S_ΔT of every subset of Schur couplings."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from lib.core import devices
from lib.paper_a import ablation, metrics, rnn, schur
from lib.paper_a.task_analysis.configuration import PAPER_ALPHA


def fvu_of(weights: dict[str, torch.Tensor], batch, device: str = devices.DEFAULT) -> float:
    """Held-out FVU of the network on ``batch`` = (inputs_btx, targets_bty, mask_bty or None), float64 rollout on
    ``device`` (``lib.core.devices``; the FVU itself is computed on the CPU)."""
    w = {k: v.to(device) for k, v in rnn.as_float64(weights).items()}
    with torch.no_grad():
        out, _ = rnn.rollout_fast(w, torch.as_tensor(batch[0]).to(device))
    return metrics.fvu(out, batch[1], batch[2])


@dataclass(frozen=True)
class SolutionProfile:
    """Ablation profile of one trained solution at one α: FVU, ΔFVU, removed mass and S_ΔT per subset.

    ``dfvu``/``sens``/``mass``/``fvu`` map a subset label key (``"RR"``, ``"CR+CC"``, ``""`` = full …) to a float;
    ``gaps``: |λ|/ρ − α per diagonal block; ``min_gap``: the nearest block to the threshold, min |gaps|;
    ``empty``: the subset keys that remove no Schur mass (their FVU, ΔFVU and S_ΔT are NaN, see the module docstring).
    """

    seed: int
    alpha: float
    n_R: int
    fvu_full: float
    fvu: dict[str, float]
    dfvu: dict[str, float]
    mass: dict[str, float]
    sens: dict[str, float]
    moduli_over_rho: np.ndarray = field(repr=False)
    gaps: np.ndarray = field(repr=False)
    min_gap: float = math.nan
    coupling_mass: float = math.nan
    empty: tuple[str, ...] = ()

    @property
    def signed_gap(self) -> float:
        """|λ|/ρ − α of the block nearest the threshold (negative: it sits just below α·ρ, in C)."""
        return float(self.gaps[np.argmin(np.abs(self.gaps))])


def subset_key(subset: Iterable[str]) -> str:
    """``("RR", "CC")`` → ``"RR+CC"``; ``()`` → ``""``."""
    return "+".join(k for k in schur.ABLATION_BLOCKS if k in tuple(subset))


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

    Built on :func:`lib.paper_a.ablation.ablation_profile` with the held-out FVU as score; the full model must be among
    ``subsets`` (it is the reference of ΔFVU). ``sectors`` (a precomputed split of W_hh; then ``alpha`` and ``form``
    are not used) or ``form`` (its ordered Schur form) avoid recomputing them; α is validated by
    :func:`lib.paper_a.schur.split`. The rollouts run on ``device`` (``lib.core.devices``; checked to be present).
    """
    devices.require("device", device)
    subsets = schur.all_subsets() if subsets is None else [tuple(s) for s in subsets]
    if () not in subsets:
        raise ValueError(f"subsets={subsets!r} must include () (the full model, the reference of ΔFVU)")
    if sectors is None:
        form = form if form is not None else schur.ordered_real_schur(weights["W_hh"])
        sectors = schur.split(form, alpha)
    sp, form = sectors, sectors.form
    result = ablation.ablation_profile(weights, lambda w: fvu_of(w, batch, device), subsets=subsets, sectors=sp)
    full = result.score(())
    fvu, dfvu, mass, sens, empty = {}, {}, {}, {}, []
    for r in result.records:
        key = subset_key(r["subset"])
        mass[key] = float(r["removed_mass"])
        if key and mass[key] == 0.0:  # an empty ablation removes nothing: no intervention, no effect to score
            empty.append(key)
            fvu[key] = dfvu[key] = sens[key] = math.nan
            continue
        fvu[key] = float(r["score"])
        dfvu[key] = metrics.delta_fvu(fvu[key], full)
        sens[key] = metrics.sensitivity(dfvu[key], mass[key])
    return SolutionProfile(
        seed=int(seed),
        alpha=sp.alpha,
        n_R=int(sp.n_R),
        fvu_full=float(full),
        fvu=fvu,
        dfvu=dfvu,
        mass=mass,
        sens=sens,
        moduli_over_rho=np.asarray(form.moduli) / form.rho,
        gaps=np.asarray(sp.block_gaps),
        min_gap=float(sp.min_gap),
        coupling_mass=float(result.coupling_mass),
        empty=tuple(empty),
    )
