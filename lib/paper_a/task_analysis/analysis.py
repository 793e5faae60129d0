"""Every solution of one task profiled at one α (:class:`TaskAnalysis`) and the pipeline that builds it."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lib.core import params
from lib.core.tables import Table, mean_sem_text
from lib.paper_a import metrics, schur
from lib.paper_a.ablation import subset_key
from lib.paper_a.task_analysis.configuration import (
    N_HELDOUT,
    PAPER_ALPHA,
    SINGLE_BLOCKS,
    TaskStudy,
    heldout_batch,
    train_solutions,
)
from lib.paper_a.task_analysis.profiles import SolutionProfile, profile_solution
from lib.paper_a.train import TrainResult


@dataclass
class TaskAnalysis:
    """Every solution of one task (one configuration of its parameters) profiled at one α."""

    task: str
    task_params: dict[str, Any]
    alpha: float
    profiles: list[SolutionProfile]
    solutions: list[TrainResult] = field(repr=False, default_factory=list)
    batch: Any = field(repr=False, default=None)

    @property
    def seeds(self) -> list[int]:
        return [p.seed for p in self.profiles]

    def values(self, kind: str, key: str) -> np.ndarray:
        """(n_seeds,) of ``kind`` ∈ {"fvu", "dfvu", "mass", "sens"} for a subset key (e.g. "CR", "RR+CC")."""
        params.choice("kind", kind, ("fvu", "dfvu", "mass", "sens"))
        return np.array([getattr(p, kind)[key] for p in self.profiles], dtype=np.float64)

    def dfvu(self, key: str) -> np.ndarray:
        return self.values("dfvu", key)

    def sens(self, key: str) -> np.ndarray:
        return self.values("sens", key)

    def fvu_full(self) -> np.ndarray:
        return np.array([p.fvu_full for p in self.profiles])

    def n_R(self) -> np.ndarray:
        return np.array([p.n_R for p in self.profiles])

    def mean_sem(self, kind: str, key: str) -> tuple[float, float, int]:
        """(mean, SEM, count) over the seeds where the value is defined (S_ΔT is NaN for an empty block)."""
        v = self.values(kind, key)
        v = v[np.isfinite(v)]
        if v.size == 0:
            return math.nan, math.nan, 0
        m, s = metrics.mean_sem(v)
        return m, s, int(v.size)

    def count(self, holds: Callable[[SolutionProfile], bool | None]) -> tuple[int, int]:
        """(k, n): solutions where ``holds(profile)`` is true, out of those where it is defined (not None)."""
        judged = [holds(p) for p in self.profiles]
        judged = [bool(j) for j in judged if j is not None]
        return sum(judged), len(judged)

    def per_solution(self, holds: Callable[[SolutionProfile], bool | None]) -> tuple[bool, ...]:
        """``holds(profile)`` for every solution where it is defined (empty blocks can leave some out)."""
        return tuple(bool(j) for j in (holds(p) for p in self.profiles) if j is not None)

    def fraction(self, holds: Callable[[SolutionProfile], bool | None]) -> float:
        """Fraction of the solutions where ``holds(profile)`` is defined for which it is true (NaN if none is)."""
        k, n = self.count(holds)
        return k / n if n else math.nan

    def n_empty(self, key: str) -> int:
        """Solutions in which the ablation ``key`` removes nothing (an empty block)."""
        return sum(key in p.empty for p in self.profiles)

    def min_threshold_gap(self) -> float:
        """Smallest | |λ|/ρ − α | over every block of every solution."""
        return float(min(p.min_gap for p in self.profiles))

    def table(self, digits: int = 3, caption: str | None = None) -> Table:
        """One row per subset: mean ± SEM over the seeds of FVU, ΔFVU, removed mass and S_ΔT, and the seed count."""
        rows = []
        for subset in schur.all_subsets():
            key = subset_key(subset)
            cells = [mean_sem_text(*self.mean_sem(kind, key), digits) for kind in ("fvu", "dfvu", "mass", "sens")]
            n_empty = self.n_empty(key) if key else 0
            rows.append((schur.label(subset), *cells, len(self.profiles) - n_empty, n_empty))
        headers = ("ablation", "FVU", "ΔFVU", "removed mass", "S_ΔT", "n", "empty")
        return Table(headers, tuple(rows), caption=caption)

    def per_seed_table(self, blocks: Sequence[str] = SINGLE_BLOCKS, caption: str | None = None) -> Table:
        """One row per solution: n_R, signed gap to the threshold, full FVU, and per block ΔFVU with S_ΔT in brackets
        (one column per block, so that the table fits the text column at 1,280 px)."""
        head = ("seed", "n_R", "gap", "FVU", *(f"−{b}: ΔFVU (S_ΔT)" for b in blocks))
        rows = [
            (p.seed, p.n_R, f"{p.signed_gap:+.4f}", f"{p.fvu_full:.4f}")
            + tuple("empty" if b in p.empty else f"{p.dfvu[b]:.3g} ({p.sens[b]:.3g})" for b in blocks)
            for p in self.profiles
        ]
        return Table(head, tuple(rows), caption=caption)


def analyse_task(
    task: str,
    solutions: int | None = None,
    *,
    seeds: Sequence[int] | None = None,
    alpha: float = PAPER_ALPHA,
    task_params: dict[str, Any] | None = None,
    n_heldout: int = N_HELDOUT,
    progress: bool = True,
    workers: int | None = None,
    **overrides,
) -> TaskAnalysis:
    """Train/load one solution per seed with the paper's §4 settings and profile every ablation subset at ``alpha``.

    The arguments are validated by :class:`TaskStudy` before any training; see :func:`analyse`.
    """
    study = TaskStudy(
        task=task,
        solutions=solutions,
        seeds=seeds,
        alpha=alpha,
        task_params=task_params,
        n_heldout=n_heldout,
        training=overrides,
    )
    return analyse(study, progress=progress, workers=workers)


def analyse(study: TaskStudy, *, progress: bool = True, workers: int | None = None) -> TaskAnalysis:
    """Train/load the study's solutions (``workers`` processes for the missing ones) and profile each at its α."""
    task, task_params = study.task, study.task_params
    solutions = train_solutions(
        task, task_params=task_params, seeds=list(study.seeds), progress=progress, workers=workers, **study.training
    )
    batch = heldout_batch(task, task_params, study.n_heldout)
    profiles = [profile_solution(s.weights, batch, alpha=study.alpha, seed=s.config.seed) for s in solutions]
    return TaskAnalysis(task, task_params, study.alpha, profiles, solutions, batch)
