"""The verdict protocol: how a claim's inputs decide its verdict, and how stable that verdict is.

A claim (``lib.core.claims.Claim``) records the inputs of its decision; :func:`decide` computes the verdict from them
alone, by the protocol below, never from an expected outcome. The scorecard page states the same protocol, and the
results tests re-implement it. The lines are in ``lib.core.lines``.

**Per-solution statements** (a claim about trained solutions, ``per_solution``: whether it holds for each one, k of n).
The claim names a *line* (``lib.core.lines``, e.g. "a majority"): the statement **holds** when the 95 % Wilson lower
bound of k/n lies above the line, **fails** when the upper bound lies below it, and is otherwise **undecided at n**
(:func:`solutions_to_decide` gives how many solutions would decide it at the observed rate).

**Values** (``statistic`` set): our 95 % interval against the paper's tolerance, an equivalence decision. The paper's
tolerance is half a unit of its last printed digit plus ``PAPER_SEMS`` times the SEM it prints (its own spread); ours
enters only through the interval (:func:`interval`): one deterministic model ("model"): the value itself; a mean over
solutions ("mean", the paper's value is a seed mean): mean ± t·SEM; one solution ("one", the paper's value is one
trained model): the prediction interval of one solution, mean ± t·SD·√(1 + 1/n). The value **matches** when the
interval lies inside paper ± tolerance, **differs** when it lies wholly outside, and is otherwise **undecided**. The
same decision against ``kind_band`` (e.g. within the line ``kind_factor`` of the paper's value) says whether it is
of the paper's kind. A claim of one deterministic computation may instead pass ``matches`` and ``holds`` as
booleans (its interval is a point, so nothing is undecided).

**The verdict** (:func:`decide`) combines the *statement* (per-solution decision, else ``holds``, else the kind band)
and the *value* (the interval decision, else ``matches``):

1. neither → *not testable here*;
2. the statement fails → *not reproduced*; it is undecided → *undecided*;
3. the statement holds (or there is none): the value matches, or there is no value → *reproduced*; the value is
   undecided → *undecided*; the value differs → *reproduced in kind, values differ* when there is a statement, else
   *not reproduced*.

A worse solution never improves a verdict (:func:`rank`, ``tests/core/test_claims.py``): one more solution for which the
statement fails lowers both Wilson bounds, and noisier solutions (the same mean, a wider spread) only widen the
interval, so either can at most leave the claim undecided. One solution that fails outright can still move a mean;
where the paper reports a mean, the scorecard shows the verdict without the solutions that did not learn their task.

"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: The verdict categories, in the scorecard's order.
VERDICTS = (
    "reproduced",
    "reproduced in kind, values differ",
    "undecided",
    "not reproduced",
    "not testable here",
)
#: How a claim's values estimate the paper's number (see the module docstring).
STATISTICS = ("model", "mean", "one")
#: Confidence of every interval (Wilson for k of n, Student t for values).
CONFIDENCE = 0.95
#: The paper's tolerance: half a unit of its last printed digit + this many of the SEMs it prints.
PAPER_SEMS = 2.0
#: The largest number of solutions :func:`solutions_to_decide` searches (beyond it: out of reach).
MAX_SOLUTIONS = 100_000


def wilson(k: float, n: int, z: float = 1.959964) -> tuple[float, float]:
    """95% Wilson score interval of a proportion k/n (``n`` ≥ 1)."""
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"k={k}, n={n}: need n ≥ 1 and 0 ≤ k ≤ n")
    p = k / n
    denom = 1 + z**2 / n
    centre = (p + z**2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / denom
    # exact ends where the algebra gives them (at k = 0 and k = n the rounding of centre ± half can miss 0 or 1)
    return 0.0 if k == 0 else max(0.0, centre - half), 1.0 if k == n else min(1.0, centre + half)


def decide_share(k: int, n: int, level: float) -> bool | None:
    """A per-solution statement holding in ``k`` of ``n``: True when the Wilson interval lies above ``level``, False
    when below, None (undecided) when it straddles it."""
    lo, hi = wilson(k, n)
    return True if lo > level else False if hi < level else None


def solutions_to_decide(k: float, n: int, level: float, limit: int = MAX_SOLUTIONS) -> int | None:
    """The fewest solutions whose Wilson interval, at the observed rate k/n, lies wholly on one side of ``level``;
    None when not within ``limit`` (e.g. the rate is at the line). At a fixed rate the interval narrows as the number
    of solutions grows, so a bisection finds it."""
    rate = k / n
    decided = lambda m: decide_share(rate * m, m, level) is not None  # noqa: E731
    if rate == level or not decided(limit):
        return None
    lo, hi = 0, limit  # not decided at lo (or lo = 0), decided at hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if decided(mid) else (mid, hi)
    return hi


@functools.lru_cache(maxsize=256)
def t_quantile(dof: int) -> float:
    """The two-sided ``CONFIDENCE`` quantile of Student's t with ``dof`` degrees of freedom."""
    from scipy import stats

    return float(stats.t.ppf(0.5 + CONFIDENCE / 2, dof))


def _finite(values: Sequence[float]) -> list[float]:
    return [float(x) for x in values if x is not None and math.isfinite(float(x))]


def clip(lo: float, hi: float, support: Sequence[float | None] | None) -> tuple[float, float]:
    """[lo, hi] ∩ ``support`` ((low, high), None for an unbounded end): what the quantity cannot take is no part of
    an interval for it (the intersection keeps the interval's coverage)."""
    if support is None:
        return lo, hi
    a, b = support
    lo, hi = (lo if a is None else max(lo, a)), (hi if b is None else min(hi, b))
    return lo, hi


def _spread(n: int, sd: float, statistic: str) -> float:
    return t_quantile(n - 1) * sd * (1 / math.sqrt(n) if statistic == "mean" else math.sqrt(1 + 1 / n))


def interval(
    values: Sequence[float], statistic: str, support: Sequence[float | None] | None = None
) -> tuple[float, float]:
    """Our ``CONFIDENCE`` interval for what the paper's number measures (see the module docstring); the finite
    ``values`` only. "model": one value, a point; "mean": mean ± t·SEM; "one": mean ± t·SD·√(1 + 1/n); cut to the
    quantity's ``support`` (e.g. (0, None) for one that cannot be negative). One value gives a point; none gives
    (NaN, NaN)."""
    if statistic not in STATISTICS:
        raise ValueError(f"statistic={statistic!r} must be one of {STATISTICS}")
    v = _finite(values)
    if not v:
        return math.nan, math.nan
    if statistic == "model" or len(v) == 1:
        if statistic == "model" and len(v) != 1:
            raise ValueError(f"statistic='model' takes one value, got {len(v)}")
        return v[0], v[0]
    n = len(v)
    mean = sum(v) / n
    half = _spread(n, math.sqrt(sum((x - mean) ** 2 for x in v) / (n - 1)), statistic)
    return clip(mean - half, mean + half, support)


def values_to_decide(
    values: Sequence[float], statistic: str, band: Sequence[float], support=None, limit: int = MAX_SOLUTIONS
) -> int | None:
    """The fewest solutions whose interval, at the observed mean and spread, lies wholly inside or wholly outside
    ``band``; None when not within ``limit`` (a prediction interval of one solution never narrows below its spread)."""
    v = _finite(values)
    if statistic == "model" or len(v) < 2:
        return None
    mean = sum(v) / len(v)
    sd = math.sqrt(sum((x - mean) ** 2 for x in v) / (len(v) - 1))
    decided = lambda m: decide_band(*clip(mean - _spread(m, sd, statistic), mean + _spread(m, sd, statistic),  # noqa: E731
                                          support), band) is not None  # fmt: skip
    if not decided(limit):
        return None
    lo, hi = 1, limit  # not decided at lo, decided at hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if decided(mid) else (mid, hi)
    return hi


def decide_band(lo: float, hi: float, band: Sequence[float]) -> bool | None:
    """True when [lo, hi] lies inside ``band``, False when wholly outside it (or undefined), None otherwise."""
    a, b = band
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return False
    if a <= lo and hi <= b:
        return True
    return False if hi < a or lo > b else None


def paper_tolerance(half_unit: float, paper_sem: float | None = None) -> float:
    """The paper's tolerance: half a unit of its last printed digit + ``PAPER_SEMS`` × the SEM it prints."""
    return half_unit + PAPER_SEMS * (paper_sem or 0.0)


def factor_band(paper: float, factor: float, below: bool = True) -> tuple[float, float]:
    """[paper/factor, paper·factor] (``below`` False: [0, paper·factor], "at most factor times the paper's")."""
    if not paper > 0 or not factor >= 1:
        raise ValueError(f"paper={paper}, factor={factor}: need paper > 0 and factor ≥ 1")
    return (paper / factor if below else 0.0), paper * factor


def matches_printed(ours: float, paper: float, half_unit: float) -> bool:
    """|ours − paper| ≤ half a unit of the paper's last printed digit (one deterministic computation)."""
    if half_unit < 0:
        raise ValueError(f"half_unit={half_unit} must be ≥ 0")
    return bool(math.isfinite(ours) and abs(ours - paper) <= half_unit)


def _subset(seq: Sequence | None, n: int | None, drop: int | None, keep: Sequence[bool] | None) -> list | None:
    """``seq`` without solution ``drop`` and with only the solutions ``keep`` marks, where ``seq`` is the claim's
    ``n`` solutions (a sequence of another length, e.g. judged only where defined, is left whole by ``keep``)."""
    if seq is None:
        return None
    out = list(seq)
    if keep is not None and len(out) == len(keep):
        out = [x for x, k in zip(out, keep, strict=True) if k]
    if drop is not None and (n is None or len(list(seq)) == n):
        out = out[:drop] + out[drop + 1 :]
    return out


@dataclass(frozen=True)
class Decision:
    """A claim's decision: the statement's (True/False/None undecided, or "absent"), the value's, the interval, the
    kind (one of VERDICTS) and, for per-solution statements, k, n and the solutions that would decide it."""

    kind: str
    statement: bool | None | str
    value: bool | None | str
    interval: tuple[float, float] | None
    k: int | None = None
    n: int | None = None
    needed: int | None = None
    band: tuple[float, float] | None = None  # the paper's value ± its tolerance
    value_n: int | None = None  # how many values the interval is over
    value_needed: int | None = None  # the solutions that would decide an undecided value
    paper_number: float | None = None
    unit: str = "solutions"  # what k of n counts
    kind_band: tuple[float, float] | None = None  # the band "of the paper's kind", where it is the statement


def decide(rec: Mapping[str, Any], drop: int | None = None, keep: Sequence[bool] | None = None) -> Decision:
    """The protocol on a claim's record (:meth:`Claim.record` or its JSON): ``drop`` leaves out solution ``drop``,
    ``keep`` keeps only the solutions it marks (both apply to ``per_solution`` and ``ours_values`` alike)."""
    n_all = len(rec["ours_values"]) if rec.get("ours_values") is not None else None
    per = _subset(rec.get("per_solution"), n_all, drop, keep)
    values = _subset(rec.get("ours_values"), n_all, drop, keep)
    statistic = rec.get("statistic")
    lo_hi = band = value_n = value_needed = None
    value: bool | None | str = "absent"
    kind_band: bool | None | str = "absent"
    if statistic is not None:
        sample = values if statistic != "model" else [rec["ours"]]
        lo_hi = interval(sample, statistic, rec.get("support"))
        tol, paper = rec["tolerance"], rec["paper_number"]
        band = (paper - tol, paper + tol)
        value, value_n = decide_band(*lo_hi, band), len(_finite(sample))
        if value is None:
            value_needed = values_to_decide(sample, statistic, band, rec.get("support"))
        if rec.get("kind_band") is not None:
            kind_band = decide_band(*lo_hi, rec["kind_band"])
    elif rec.get("matches") is not None:
        value = bool(rec["matches"])
    k = n = needed = None
    if per is not None and rec.get("per_solution") is not None:
        k, n = sum(bool(x) for x in per), len(per)
        statement = decide_share(k, n, rec["line"]) if n else None
        if statement is None and n:
            needed = solutions_to_decide(k, n, rec["line"])
    elif rec.get("holds") is not None:
        statement = bool(rec["holds"])
    else:
        statement = kind_band
    if statement == "absent" and value == "absent":
        kind = VERDICTS[4]
    elif statement is False:
        kind = VERDICTS[3]
    elif statement is None:
        kind = VERDICTS[2]
    elif value == "absent" or value is True:
        kind = VERDICTS[0]
    elif value is None:
        kind = VERDICTS[2]
    else:
        kind = VERDICTS[1] if statement is True else VERDICTS[3]
    paper_number = rec.get("paper_number") if statistic is not None else None
    unit = rec.get("unit") or "solutions"
    by_kind = tuple(rec["kind_band"]) if kind_band != "absent" and rec.get("per_solution") is None else None
    return Decision(kind, statement, value, lo_hi, k, n, needed, band, value_n, value_needed, paper_number, unit,
                    by_kind if rec.get("holds") is None else None)  # fmt: skip


def rank(decision: Decision) -> int:
    """How much success a decision guarantees: 2 reproduced; 1 reproduced in kind, or undecided between the two (the
    statement holds, the value is undecided); 0 otherwise (undecided otherwise, not reproduced, not testable)."""
    if decision.kind == VERDICTS[0]:
        return 2
    if decision.kind == VERDICTS[1] or (decision.kind == VERDICTS[2] and decision.statement is True):
        return 1
    return 0


def leave_one_out(rec: Mapping[str, Any]) -> list[tuple[int, str]]:
    """(solution index, verdict) for every solution whose omission changes the claim's verdict kind."""
    n = max(len(rec.get("per_solution") or ()), len(rec.get("ours_values") or ()))
    if n < 2:
        return []
    base = decide(rec).kind
    out = []
    for i in range(n):
        kind = decide(rec, drop=i).kind
        if kind != base:
            out.append((i, kind))
    return out


def without_unlearned(rec: Mapping[str, Any]) -> tuple[int, str] | None:
    """(solutions left out, verdict kind) without the solutions that did not learn their task; None when every
    solution learned it (or the claim has no such record)."""
    learned = rec.get("learned")
    if not learned or all(learned):
        return None
    return sum(not x for x in learned), decide(rec, keep=learned).kind


def contradicts(first: str, second: str) -> bool:
    """Two decided verdicts that differ (undecided and not testable contradict nothing)."""
    open_kinds = (VERDICTS[2], VERDICTS[4])
    return first not in open_kinds and second not in open_kinds and first != second
