"""Schur-coupling ablation profiles (paper A §2.5): score a network after zeroing each subset of {T_RR, T_C→R, T_CC}.

The runner is task-agnostic: ``score_fn(weights) -> float`` evaluates float64 weights ``{"W_xh", "W_hh", "W_hy"}``
(e.g. replay accuracy for the copy task, held-out FVU for the §4 tasks). Input and readout weights stay fixed; only
``W_hh`` is replaced by W̃(S) = Q T̃(S) Qᵀ, computed from one precomputed ordered Schur form.

The held-out FVU has its own runner, :func:`subset_ablations`: the ΔFVU and removed mass of each subset of one solution
as a :class:`SolutionAblations`, the record that the task chapters' profiles, the two lenses and the open-questions
controls extend. How each ablated network is scored is a :data:`Scorer`: :func:`rollout_scorer` rolls each one out
alone (paper A's way); the controls score theirs in one stack (:mod:`lib.paper_a.confound`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import torch

from lib.core import devices
from lib.core.lines import line
from lib.core.tables import Table
from lib.paper_a import metrics, rnn, schur

ScoreFn = Callable[[dict[str, torch.Tensor]], float]
#: Scores the ablated networks of one solution: ablations (the full model first) → their held-out FVUs, in order.
Scorer = Callable[[Sequence[schur.Ablation]], Sequence[float]]


@dataclass(frozen=True)
class AblationResult:
    """Scores of every ablated network of one solution at one α.

    ``records``: one dict per subset with ``subset`` (tuple of "RR"/"CR"/"CC"), ``label`` (paper notation),
    ``removed_mass`` (‖ΔT‖_F/‖T‖_F) and ``score``; ``n_R``, ``rho``, ``min_gap`` (min over blocks of ||λ|/ρ − α|),
    ``coupling_mass`` (‖N‖_F/‖T‖_F) and ``block_masses`` (‖T_X‖_F/‖T‖_F) describe the split.
    """

    alpha: float
    records: tuple[dict[str, Any], ...]
    n_R: int
    rho: float
    min_gap: float
    coupling_mass: float
    block_masses: dict[str, float] = field(default_factory=dict)

    @property
    def subsets(self) -> list[tuple[str, ...]]:
        """The ablated subsets, in order."""
        return [r["subset"] for r in self.records]

    @property
    def scores(self) -> np.ndarray:
        """(n_subsets,) float64 scores in the order of ``records``."""
        return np.array([r["score"] for r in self.records], dtype=np.float64)

    @property
    def removed_masses(self) -> np.ndarray:
        """(n_subsets,) float64 relative removed Schur mass."""
        return np.array([r["removed_mass"] for r in self.records], dtype=np.float64)

    def score(self, subset: Iterable[str] = ()) -> float:
        """The score of one subset (``()`` is the full model); KeyError naming what was computed otherwise."""
        key = schur.canonical(subset, "subset")
        for r in self.records:
            if r["subset"] == key:
                return r["score"]
        raise KeyError(f"subset {key} was not ablated; computed: {self.subsets}")

    def removed_mass(self, subset: Iterable[str]) -> float:
        """The relative removed mass of one subset."""
        key = schur.canonical(subset, "subset")
        return next(r["removed_mass"] for r in self.records if r["subset"] == key)

    def preserved(self, tol: float = line("replay_tolerance")) -> dict[str, bool]:
        """For each ablation label: is its score within ``tol`` of the full model's (|score − full| ≤ tol)?"""
        full = self.score(())
        return {r["label"]: abs(r["score"] - full) <= tol for r in self.records if r["subset"]}

    def classes(self, tol: float = line("replay_tolerance")) -> list[tuple[float, list[str]]]:
        """Functional classes: scores sorted and cut wherever consecutive values differ by more than ``tol``.

        Returns (mean score, labels) per class, best class first (single-linkage plateaus of the 1-D scores).
        """
        order = sorted(self.records, key=lambda r: -r["score"])
        groups: list[list[dict[str, Any]]] = []
        for r in order:
            if groups and groups[-1][-1]["score"] - r["score"] <= tol:
                groups[-1].append(r)
            else:
                groups.append([r])
        return [(float(np.mean([r["score"] for r in g])), [r["label"] for r in g]) for g in groups]

    def table(
        self,
        score_name: str = "score",
        reference: dict[str, float] | None = None,
        floatfmt=".3f",
        caption: str | None = None,
    ) -> Table:
        """Rows (ablation, removed mass, score[, reference]); ``reference`` maps labels to e.g. the paper's values."""
        headers = ["ablation", "removed mass", score_name]
        if reference is not None:
            headers.append("paper")
        rows = []
        for r in self.records:
            row = [r["label"], float(r["removed_mass"]), float(r["score"])]
            if reference is not None:
                row.append(reference.get(r["label"]))
            rows.append(tuple(row))
        return Table(tuple(headers), tuple(rows), floatfmt, caption)


def ablation_profile(
    weights: dict[str, Any],
    score_fn: ScoreFn,
    alpha: float = schur.PAPER_ALPHA,
    subsets: Sequence[Iterable[str]] | None = None,
    form: schur.SchurForm | None = None,
    *,
    sectors: schur.SchurSplit | None = None,
) -> AblationResult:
    """Score ``weights`` with W_hh replaced by W̃(S) for each subset S (default: all 8), float64, W_xh/W_hy fixed.

    ``sectors``, a precomputed split of W_hh (then ``alpha`` and ``form`` are not used), or ``form``, its ordered
    Schur form, avoid recomputing them; α is validated by :func:`lib.paper_a.schur.split`.
    """
    base = {k: torch.as_tensor(np.asarray(_np(weights[k])), dtype=torch.float64) for k in ("W_xh", "W_hh", "W_hy")}
    if sectors is None:
        form = schur.ordered_real_schur(base["W_hh"].numpy()) if form is None else form
        sectors = schur.split(form, alpha)
    form = sectors.form
    subsets = schur.all_subsets() if subsets is None else [schur.canonical(s, "subset") for s in subsets]
    records = []
    for s in subsets:
        ab = schur.ablate(sectors, s)
        W = base["W_hh"] if not ab.remove else torch.as_tensor(np.array(ab.W), dtype=torch.float64)
        score = float(score_fn({**base, "W_hh": W}))
        records.append({"subset": ab.remove, "label": ab.label, "removed_mass": float(ab.removed_mass), "score": score})
    return AblationResult(
        alpha=sectors.alpha,
        records=tuple(records),
        n_R=sectors.n_R,
        rho=form.rho,
        min_gap=sectors.min_gap,
        coupling_mass=schur.coupling_mass(form),
        block_masses={k: float(v) for k, v in sectors.masses().items()},
    )


def profiles_over_alpha(
    weights: dict[str, Any],
    score_fn: ScoreFn,
    alphas: Sequence[float] = (0.85, 0.9, 0.95),
    subsets: Sequence[Iterable[str]] | None = None,
) -> list[AblationResult]:
    """:func:`ablation_profile` at each α, sharing one Schur form (the decomposition does not depend on α).

    (The per-task α-scan of every solution is :func:`lib.paper_a.task_analysis.alpha_scan`.)
    """
    W_hh = np.asarray(_np(weights["W_hh"]), dtype=np.float64)
    form = schur.ordered_real_schur(W_hh)
    return [ablation_profile(weights, score_fn, a, subsets, form=form) for a in alphas]


def _np(x):
    return x.detach().cpu().numpy() if hasattr(x, "detach") else x


# ------------------------------------------------------------------------------------------------- ΔFVU of subsets


def subset_key(subset: Iterable[str]) -> str:
    """``("RR", "CC")`` → ``"RR+CC"``; ``()`` → ``""``."""
    return "+".join(k for k in schur.ABLATION_BLOCKS if k in tuple(subset))


def fvu_of(weights: dict[str, torch.Tensor], batch, device: str = devices.DEFAULT) -> float:
    """Held-out FVU of the network on ``batch`` = (inputs_btx, targets_bty, mask_bty or None), float64 rollout on
    ``device`` (``lib.core.devices``; the FVU itself is computed on the CPU)."""
    return metrics.fvu(_outputs(weights, batch, device), batch[1], batch[2])


def _outputs(weights, batch, device: str) -> torch.Tensor:
    w = {k: v.to(device) for k, v in rnn.as_float64(weights).items()}
    with torch.no_grad():
        out, _ = rnn.rollout_fast(w, torch.as_tensor(batch[0]).to(device))
    return out


@dataclass(frozen=True, kw_only=True)
class SolutionAblations:
    """The subset ablations of one solution scored by the held-out FVU (paper A §2.5, §2.7).

    ``seed``: the solution's seed (−1 if not given); ``n_R``: its coordinates in R at the split's α; ``fvu_full``: the
    full model's FVU. ``fvu``, ``dfvu`` (ΔFVU = FVU(W̃) − FVU(W)) and ``mass`` (‖ΔT‖_F/‖T‖_F) map a subset key
    (:func:`subset_key`: ``"RR"``, ``"CR+CC"``, ``""`` = the full model) to a float. ``empty``: the keys of ablations
    that remove no Schur mass; they change nothing, so their FVU and ΔFVU are NaN unless they were scored.
    """

    seed: int
    n_R: int
    fvu_full: float
    fvu: dict[str, float]
    dfvu: dict[str, float]
    mass: dict[str, float]
    empty: tuple[str, ...] = ()

    def ablation_fields(self) -> dict[str, Any]:
        """This record's fields by name: the keyword arguments that build a record extending it from this one."""
        return {f.name: getattr(self, f.name) for f in fields(SolutionAblations)}


def rollout_scorer(
    weights: dict[str, Any], batch, device: str = devices.DEFAULT, outputs: dict | None = None
) -> Scorer:
    """The :data:`Scorer` of paper A: each network rolled out alone on ``batch`` and scored by :func:`fvu_of`.

    The full model keeps its own W_hh; an ablation's W̃ is taken as it is. ``outputs``, a dict, receives each rollout's
    outputs (B, T, N_y) under its subset key.
    """
    base = {k: torch.as_tensor(weights[k]) for k in rnn.WEIGHT_NAMES}

    def score(ablations: Sequence[schur.Ablation]) -> list[float]:
        fvus = []
        for ab in ablations:
            W = base["W_hh"] if not ab.remove else torch.as_tensor(np.array(ab.W), dtype=torch.float64)
            out = _outputs({**base, "W_hh": W}, batch, device)
            if outputs is not None:
                outputs[subset_key(ab.remove)] = out
            fvus.append(metrics.fvu(out, batch[1], batch[2]))
        return fvus

    return score


def subset_ablations(
    sectors: schur.SchurSplit,
    subsets: Sequence[Iterable[str]],
    score: Scorer,
    *,
    seed: int = -1,
    score_empty: bool = False,
) -> SolutionAblations:
    """ΔFVU and removed mass of each subset of coupling blocks, W_hh → W̃(S) = Q T̃(S) Qᵀ on the split ``sectors``.

    ``score`` gets the full model first, then each ablation in the order of ``subsets`` (``()`` is the full model,
    scored once). An ablation that removes no mass is listed in ``empty`` and, unless ``score_empty``, not scored.
    """
    ablations = [schur.ablate(sectors, schur.canonical(s, "subset")) for s in subsets]
    empty = [subset_key(ab.remove) for ab in ablations if ab.remove and ab.removed_mass == 0.0]
    scored = [ab for ab in ablations if ab.remove and (score_empty or subset_key(ab.remove) not in empty)]
    full, *rest = score([schur.ablate(sectors, ()), *scored])
    fvu_full = float(full)
    got = {subset_key(ab.remove): float(f) for ab, f in zip(scored, rest, strict=True)}
    got[""] = fvu_full
    fvu, dfvu, mass = {}, {}, {}
    for ab in ablations:
        key = subset_key(ab.remove)
        mass[key] = float(ab.removed_mass)
        fvu[key] = got.get(key, math.nan)
        dfvu[key] = metrics.delta_fvu(fvu[key], fvu_full) if key in got else math.nan
    return SolutionAblations(
        seed=int(seed), n_R=int(sectors.n_R), fvu_full=fvu_full, fvu=fvu, dfvu=dfvu, mass=mass, empty=tuple(empty)
    )
