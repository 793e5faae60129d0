"""The orderings behind paper A's §4 claims, judged per solution and in the seed means."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np

from lib.core import params
from lib.paper_a.task_analysis.analysis import TaskAnalysis
from lib.paper_a.task_analysis.profiles import SolutionProfile
from lib.papers import schur_ablation

#: An ordering is a list of comparisons (kind, a, b) that must all hold: value(kind, a) > value(kind, b), where kind is
#: "dfvu" or "sens" and a, b are single blocks. A comparison with an empty b is dropped; an empty a (or no comparison
#: left) makes the ordering undefined (None) for that solution.
Ordering = tuple[tuple[str, str, str], ...]

#: The orderings behind the paper's §4 claims, as generic names evaluated for every task.
ORDERINGS: dict[str, Ordering] = {
    "CR_largest": (("dfvu", "CR", "CC"), ("dfvu", "CR", "RR")),
    "CC_largest": (("dfvu", "CC", "CR"), ("dfvu", "CC", "RR")),
    "CC_gt_CR": (("dfvu", "CC", "CR"),),
    "sens_CR_gt_CC": (("sens", "CR", "CC"),),
}

#: The orderings the paper reports for each of its tasks (keys of ORDERINGS; lib.papers.schur_ablation).
PAPER_CLAIMS: dict[str, tuple[str, ...]] = dict(schur_ablation.TASK_ORDERINGS)


def _judge(ordering: Ordering | str, value: Callable[[str, str], float]) -> bool | None:
    """Evaluate an ordering on ``value(kind, block)`` (NaN: the block is empty); None when undefined."""
    ordering = ORDERINGS[ordering] if isinstance(ordering, str) else ordering
    kept = []
    for k, a, b in ordering:
        va, vb = value(k, a), value(k, b)
        if not math.isfinite(va):
            return None
        if math.isfinite(vb):
            kept.append(va > vb)
    return all(kept) if kept else None


def holds(ordering: Ordering | str, profile: SolutionProfile) -> bool | None:
    """Whether one solution satisfies an ordering (a name in ORDERINGS or the comparisons); None if undefined."""

    def value(kind: str, block: str) -> float:
        v = getattr(profile, kind)[block]
        return math.nan if block in profile.empty else v

    return _judge(ordering, value)


def holds_in_means(ordering: Ordering | str, analysis: TaskAnalysis) -> bool:
    """Whether the seed means of ``analysis`` (over the solutions where each block is not empty) satisfy an ordering
    (how the paper reports its claims); False when undefined."""
    return bool(_judge(ordering, lambda k, b: analysis.mean_sem(k, b)[0]))


def paper_orderings(task: str) -> dict[str, Callable[[SolutionProfile], bool]]:
    """Per-solution tests of the orderings the paper reports for ``task`` (empty for a task not in the paper)."""
    return {name: (lambda p, name=name: holds(name, p)) for name in PAPER_CLAIMS.get(task, ())}


#: Per-solution tests of every ordering in ORDERINGS (for comparing tasks).
GENERIC_ORDERINGS: dict[str, Callable[[SolutionProfile], bool]] = {
    name: (lambda p, name=name: holds(name, p)) for name in ORDERINGS
}


def subset_fraction(analysis: TaskAnalysis, ordering: Ordering | str, k: int = 3) -> float:
    """Over every choice of ``k`` of the solutions, the fraction whose seed means satisfy ``ordering``.

    This is how often a paper-sized study (three seeds) drawn from our solutions would report the ordering.
    """
    k = params.integer("k", k, min=1, max=len(analysis.profiles))
    picks = list(itertools.combinations(analysis.profiles, k))
    sub = lambda ps: TaskAnalysis(analysis.task, analysis.task_params, analysis.alpha, list(ps))  # noqa: E731
    return float(np.mean([holds_in_means(ordering, sub(ps)) for ps in picks]))


def safe_fraction(analyses: Sequence[TaskAnalysis], key: str, tolerance: float) -> float:
    """Fraction of the solutions (over every analysis) where the ablation ``key`` removes mass (is not empty) whose
    ΔFVU is at most ``tolerance``; NaN when it is empty in every solution."""
    v = np.concatenate([a.dfvu(key) for a in analyses])
    v = v[np.isfinite(v)]
    return float(np.mean(v <= tolerance)) if v.size else math.nan


#: The orderings in words.
ORDERING_TEXT = {
    "CR_largest": "ΔFVU(−T_C→R) is the largest single-block effect",
    "CC_largest": "ΔFVU(−T_CC) is the largest single-block effect",
    "CC_gt_CR": "ΔFVU(−T_CC) > ΔFVU(−T_C→R)",
    "sens_CR_gt_CC": "S_ΔT(−T_C→R) > S_ΔT(−T_CC)",
}
