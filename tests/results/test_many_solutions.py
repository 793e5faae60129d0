"""What the chapter "Many solutions" promises, read from the executed book's glued numbers.

Its first solutions are the task chapters' own (the same configurations, the same held-out trials, the same rule for
empty blocks), so where it profiles as many solutions as they do, every ordering's count must be theirs exactly; its
width profile at the paper's width must be their mean over the first seeds. The intervals are lib.core.claims'
Wilson intervals of the counts it glues.
"""

from __future__ import annotations

import json
import math

import pytest

from lib.paper_a import task_analysis as ta
from tests.results import evidence as ev

pytestmark = pytest.mark.results

CH = "many_solutions::"
TASKS = ("flipflop", "sine", "context")
#: The book's z = 1.959964 (seven digits) against scipy's exact 97.5 % quantile moves a bound by ~3e-9; the chapter
#: prints the bounds to two decimals.
WILSON_ABS = 1e-7


def same(a, b) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


@pytest.mark.parametrize("task", TASKS)
def test_frequencies_are_the_task_chapters_for_the_same_solutions(results, task):
    n_task = results[f"task_{task}::n_seeds"]
    if results[CH + "n_solutions"] != n_task:
        pytest.skip(f"the chapter profiled {results[CH + 'n_solutions']} solutions, the task chapter {n_task}")
    for name in ta.ORDERINGS:
        ours, theirs = results[f"{CH}frac_{task}_{name}"], results[f"task_{task}::frac_{name}_{task}"]
        assert same(ours, theirs), f"{task} {name}: {ours} here, {theirs} in the task chapter"
    for name in ta.PAPER_CLAIMS[task]:
        claim = json.loads(results[f"task_{task}::claim_A4_{task}_{name}"])
        per_solution = claim["per_solution"] or []
        k, n = results[f"{CH}k_{task}_{name}"], results[f"{CH}n_{task}_{name}"]
        assert (k, n) == (sum(per_solution), len(per_solution)), f"{task} {name}: the task chapter's claim differs"


@pytest.mark.parametrize("task", TASKS)
def test_each_interval_is_the_wilson_interval_of_its_count(results, task):
    """k of n recounted from the table's per-solution ΔFVU and S_ΔT (an ordering is undefined where its first block is
    empty); the interval and its final width are scipy's Wilson interval of that count; "solutions needed" is the
    fewest at the observed frequency whose interval clears the scorecard's line (Wilson's closed form)."""
    level = results[CH + "robust_level"]
    n_solutions = results[CH + "n_solutions"]
    rows = ev.profile_rows(task, n_solutions)
    for name, comparisons in ev.orderings().items():
        tag = f"{task}_{name}"
        judged = [ev.judge(comparisons, lambda k, b, row=row: float(row[f"{k}_{b}"])) for row in rows]
        judged = [j for j in judged if j is not None]
        k, n = sum(judged), len(judged)
        assert (results[f"{CH}k_{tag}"], results[f"{CH}n_{tag}"]) == (k, n), tag
        if not n:
            continue
        lo, hi = ev.wilson_scipy(k, n)
        assert (results[f"{CH}lo_{tag}"], results[f"{CH}hi_{tag}"]) == pytest.approx((lo, hi), abs=WILSON_ABS), tag
        assert results[f"{CH}frac_{tag}"] == pytest.approx(k / n, rel=1e-12), tag
        assert results[f"{CH}width_{tag}"] == pytest.approx(hi - lo, abs=2 * WILSON_ABS), tag
        needed = ev.solutions_to_decide(k / n, level)
        assert results[f"{CH}needed_{tag}"] == (needed if needed is not None else "out of reach"), tag


def test_an_interval_narrows_as_solutions_accumulate(results):
    """The interval of an ordering that held in all n solutions (scipy's Wilson interval), and how many such
    solutions it takes to clear the scorecard's line."""
    n = results[CH + "n_solutions"]
    lo, hi = ev.wilson_scipy(n, n)
    assert results[CH + "all_hold_low"] == pytest.approx(lo, abs=WILSON_ABS)
    assert results[CH + "all_hold_width"] == pytest.approx(hi - lo, abs=2 * WILSON_ABS)
    assert results[CH + "all_hold_needed"] == ev.solutions_to_decide(1.0, results[CH + "robust_level"])


@pytest.mark.parametrize("task", TASKS)
def test_width_profile_has_a_point_per_width(results, task):
    widths = [int(w) for w in results[CH + "widths_text"].split(", ")]
    for b in ta.SINGLE_BLOCKS:
        # a width where no solution has the block has no mean: NaN, which results.json does not hold
        points = [results.get(f"{CH}width_dfvu_{task}_{b}_{w}") for w in widths]
        assert results[f"{CH}width_points_{task}_{b}"] == sum(p is not None and math.isfinite(p) for p in points)
    for b in ("CR", "CC"):  # the coupling blocks leave C → R and C in every width
        assert results[f"{CH}width_points_{task}_{b}"] == len(widths), f"{task} −T_{b}: a width without a mean"


@pytest.mark.parametrize("task", TASKS)
def test_width_profile_at_the_papers_width_averages_the_task_chapters_solutions(results, task):
    """At the paper's width the profile's first seeds are the task chapter's: their ΔFVU, as its claims record them."""
    widths = [int(w) for w in results[CH + "widths_text"].split(", ")]
    n, main = results[CH + "width_solutions"], results[CH + "main_width"]
    if main not in widths or n > results[f"task_{task}::n_seeds"]:
        pytest.skip("the width profile does not hold the task chapter's seeds at its width")
    checked = 0
    for b in ta.SINGLE_BLOCKS:
        key = f"task_{task}::claim_A4_{task}_dfvu_{b}"
        if key not in results:
            continue  # the paper gives no value for this block, so no claim records ours
        values = [v for v in json.loads(results[key])["ours_values"][:n] if v is not None]
        ours = results[f"{CH}width_dfvu_{task}_{b}_{main}"]
        assert ours == pytest.approx(sum(values) / len(values), rel=1e-12) if values else math.isnan(ours)
        checked += 1
    assert checked, f"{task}: no claim records the single-block ΔFVU"
