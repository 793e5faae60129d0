"""What the task chapters (paper A §4), "Task dependence and robustness" and the new-task chapter promise beyond the
paper's claims (those are judged in ``test_claims.py``): the chapters agree with each other, and empty ablations are
kept out of the safe fractions and the orderings.
"""

from __future__ import annotations

import json
import math
import statistics

import pytest

from lib.papers import schur_ablation

pytestmark = pytest.mark.results

TASKS = ("flipflop", "sine", "context")
FRACTIONS = {
    "task_flipflop": "frac_flipflop_CR_largest",
    "task_sine": "frac_sine_sens_CR_gt_CC",
    "task_context": "frac_context_CC_gt_CR",
}


def claim(results, stem, claim_id):
    return json.loads(results[f"{stem}::claim_{claim_id}"])


@pytest.mark.parametrize("task", TASKS)
def test_task_dependence_recomputes_the_task_chapters_verdicts(results, task):
    """The side-by-side chapter reloads the same solutions: every verdict it states is the task chapter's."""
    prefix = f"task_{task}::claim_"
    ids = [k[len(prefix) :] for k, v in results.items() if k.startswith(prefix) and str(v).startswith("{")]
    assert ids, f"task_{task} published no claims"
    for cid in ids:
        assert results[f"task_dependence::verdict_{cid}"] == claim(results, f"task_{task}", cid)["verdict"], cid


def test_task_dependence_agrees_with_the_task_chapters(results):
    ch = "task_dependence::"
    for stem, name in FRACTIONS.items():
        task = stem.removeprefix("task_")
        ordering = name.removeprefix(f"frac_{task}_")
        assert results[f"{ch}frac_solutions_{task}_{ordering}"] == pytest.approx(results[f"{stem}::{name}"])
        assert results[f"{ch}min_gap_{task}"] == pytest.approx(results[f"{stem}::min_threshold_gap_{task}"])


@pytest.mark.parametrize("task", TASKS)
def test_orderings_are_judged_where_defined(results, task):
    """A solution whose claimed block is empty is left out: k of n counts only the solutions where it is defined."""
    for name in schur_ablation.TASK_ORDERINGS[task]:
        c = claim(results, f"task_{task}", f"A4_{task}_{name}")
        n = len(c["per_solution"] or [])
        assert n <= results[f"task_{task}::n_seeds"]
        if n:
            assert c["ours"] == pytest.approx(sum(c["per_solution"]) / n)


def test_safe_fractions_leave_empty_ablations_out(results):
    ch = "task_dependence::"
    n_all = results[f"{ch}n_solutions_all"]
    for key in ("RR", "CR", "CC", "RR_CC", "CR_CC", "RR_CR", "RR_CR_CC"):
        frac, n_empty = results[f"{ch}frac_safe_{key}"], results[f"{ch}n_empty_{key}"]
        assert math.isnan(frac) == (n_empty == n_all), key


def test_no_coupling_uniformly_safe_matches_the_table(results):
    ch = "task_dependence::"
    single_safe = [b for b in ("RR", "CR", "CC") if results[f"{ch}frac_safe_{b}"] == 1.0]
    assert json.loads(results[f"{ch}claim_A4_no_uniformly_safe"])["holds"] == (not single_safe)


def test_new_task_runs_end_to_end(results):
    ch = "new_task::"
    for name in ("fvu_full", "min_threshold_gap", "nR_min"):
        assert math.isfinite(results[f"{ch}new_{name}"]), name


@pytest.mark.parametrize("task", TASKS)
def test_the_full_models_median_and_worst_solution_are_those_of_the_claims_values(results, task):
    """The sentence beside the FVU verdict (median; worst, with its seed) reads the same solutions as the claim."""
    c, stem = claim(results, f"task_{task}", f"A4_{task}_fvu_full"), f"task_{task}"
    fvu = c["ours_values"]
    assert len(fvu) == results[f"{stem}::n_seeds"]  # seeds 0..n−1, in order
    assert results[f"{stem}::fvu_full_median"] == pytest.approx(statistics.median(fvu))
    assert fvu[results[f"{stem}::fvu_full_worst_seed"]] == max(fvu) == results[f"{stem}::fvu_full_max"]
