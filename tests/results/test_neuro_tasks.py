"""What the task chapters (paper A §4), "Task dependence and robustness" and the new-task chapter promise.

Gated: full held-out FVU ≤ 0.02 per task; the flip-flop ordering ΔFVU(−T_C→R) > ΔFVU(−T_CC) > ΔFVU(−T_RR) in the seed
means; both sine ΔFVU above 1; every fraction in [0, 1] and every threshold gap ≥ 0. The fragile claims (sine S_ΔT
ordering, context ΔFVU ordering) are reported by the chapters beside the paper's numbers and are not gated either way.
"""

from __future__ import annotations

import math

import pytest

pytestmark = pytest.mark.results

TASKS = ("flipflop", "sine", "context")
FRACTIONS = {
    "task_flipflop": "frac_flipflop_CR_largest",
    "task_sine": "frac_sine_sens_CR_gt_CC",
    "task_context": "frac_context_CC_gt_CR",
}


def _plain_number(value):
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


@pytest.mark.parametrize("task", TASKS)
def test_every_issue_name_is_glued_as_a_plain_number(results, task):
    ch = f"task_{task}::"
    for name in ("fvu_full", "dfvu_RR", "dfvu_CR", "dfvu_CC", "sens_CR", "sens_CC", "min_threshold_gap"):
        assert _plain_number(results[f"{ch}{name}_{task}"]), f"{ch}{name}_{task}"
        assert results[f"{ch}{name}_{task}"] == results[f"{ch}{name}"]
    assert results[f"{ch}n_seeds"] >= 10


@pytest.mark.parametrize("task", TASKS)
def test_full_model_fvu(results, task):
    assert 0.0 <= results[f"task_{task}::fvu_full_{task}"] <= 0.02  # paper: 0.0048 / 0.0036 / 0.0104


def test_flipflop_ordering_in_the_means(results):
    ch = "task_flipflop::"
    cr, cc, rr = (results[f"{ch}dfvu_{b}_flipflop"] for b in ("CR", "CC", "RR"))
    assert cr > cc > rr  # paper: 9.45e-2 > 4.96e-2 > ≈ 0


def test_sine_both_complement_blocks_catastrophic(results):
    ch = "task_sine::"
    assert results[f"{ch}dfvu_CR_sine"] > 1.0  # paper: 1.73
    assert results[f"{ch}dfvu_CC_sine"] > 1.0  # paper: 2.08


@pytest.mark.parametrize("stem", sorted(FRACTIONS))
def test_fractions_and_gaps(results, stem):
    task = stem.removeprefix("task_")
    frac = results[f"{stem}::{FRACTIONS[stem]}"]
    assert _plain_number(frac) and 0.0 <= frac <= 1.0
    for name in ("frac_CR_largest", "frac_CC_largest", "frac_CC_gt_CR", "frac_sens_CR_gt_CC"):
        assert 0.0 <= results[f"{stem}::{name}_{task}"] <= 1.0
    gap = results[f"{stem}::min_threshold_gap_{task}"]
    assert _plain_number(gap) and gap >= 0.0


def test_sensitivity_is_dfvu_per_mass(results):
    """S_ΔT of a block is ΔFVU per removed mass in every solution, so its sign follows ΔFVU's in the means."""
    for task in TASKS:
        ch = f"task_{task}::"
        for b in ("CR", "CC"):
            if results[f"{ch}dfvu_{b}_{task}"] > 0.01:
                assert results[f"{ch}sens_{b}_{task}"] > 0.0


def test_task_dependence_answers_the_question(results):
    ch = "task_dependence::"
    assert isinstance(results[f"{ch}uniformly_safe"], str)
    assert isinstance(results[f"{ch}n_uniformly_safe"], int)
    for key in ("RR", "CR", "CC", "RR_CC", "CR_CC", "RR_CR", "RR_CR_CC"):
        assert 0.0 <= results[f"{ch}frac_safe_{key}"] <= 1.0
    for t, claim in (("flipflop", "CR_largest"), ("sine", "sens_CR_gt_CC"), ("context", "CC_gt_CR")):
        assert 0.0 <= results[f"{ch}frac_triples_{t}_{claim}"] <= 1.0
        assert 0.0 <= results[f"{ch}frac_nR_moves_{t}"] <= 1.0
        assert 0.0 <= results[f"{ch}frac_CC_CR_flips_{t}"] <= 1.0
        assert results[f"{ch}min_gap_{t}"] >= 0.0


def test_task_dependence_agrees_with_the_task_chapters(results):
    """The side-by-side chapter reloads the same cached solutions: its per-solution fractions match the chapters'."""
    ch = "task_dependence::"
    for stem, name in FRACTIONS.items():
        task = stem.removeprefix("task_")
        claim = name.removeprefix(f"frac_{task}_")
        assert results[f"{ch}frac_solutions_{task}_{claim}"] == pytest.approx(results[f"{stem}::{name}"])
        assert results[f"{ch}min_gap_{task}"] == pytest.approx(results[f"{stem}::min_threshold_gap_{task}"])


def test_new_task_runs_end_to_end(results):
    ch = "new_task::"
    assert _plain_number(results[f"{ch}new_fvu_full"]) and results[f"{ch}new_fvu_full"] >= 0.0
    assert 0.0 <= results[f"{ch}new_frac_CR_largest"] <= 1.0
    assert results[f"{ch}new_min_threshold_gap"] >= 0.0
