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

from lib.core.claims import ROBUST, wilson
from lib.paper_a import task_analysis as ta

pytestmark = pytest.mark.results

CH = "many_solutions::"
TASKS = ("flipflop", "sine", "context")


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
    for name in ta.ORDERINGS:
        tag = f"{task}_{name}"
        k, n = results[f"{CH}k_{tag}"], results[f"{CH}n_{tag}"]
        assert 0 <= k <= n <= results[CH + "n_solutions"]
        if not n:
            continue
        lo, hi = results[f"{CH}lo_{tag}"], results[f"{CH}hi_{tag}"]
        assert (lo, hi) == pytest.approx(wilson(k, n))
        frac = results[f"{CH}frac_{tag}"]
        assert frac == pytest.approx(k / n) and lo <= frac <= hi
        assert results[f"{CH}width_{tag}"] == pytest.approx(hi - lo)
        needed = results[f"{CH}needed_{tag}"]
        if k / n != ROBUST:
            lo_n, hi_n = wilson(k / n * needed, needed)
            assert lo_n > ROBUST or hi_n < ROBUST  # decided at that many solutions
            lo_p, hi_p = wilson(k / n * (needed - 1), needed - 1) if needed > 1 else (0.0, 1.0)
            assert lo_p <= ROBUST <= hi_p  # and not one fewer


def test_an_interval_narrows_as_solutions_accumulate(results):
    n = results[CH + "n_solutions"]
    lo, hi = wilson(n, n)
    assert results[CH + "all_hold_low"] == pytest.approx(lo)
    assert results[CH + "all_hold_width"] < wilson(1, 1)[1] - wilson(1, 1)[0]
    assert wilson(results[CH + "all_hold_needed"], results[CH + "all_hold_needed"])[0] > ROBUST


@pytest.mark.parametrize("task", TASKS)
def test_width_profile_has_a_point_per_width(results, task):
    widths = [int(w) for w in results[CH + "widths_text"].split(", ")]
    assert len(widths) == results[CH + "n_widths"]
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
