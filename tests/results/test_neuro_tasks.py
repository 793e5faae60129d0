"""What the task chapters (paper A §4), "Task dependence and robustness" and the new-task chapter promise beyond the
paper's claims (those are judged in ``test_claims.py``): the chapters agree with each other, and empty ablations are
kept out of the safe fractions and the orderings.
"""

from __future__ import annotations

import json
import math
import statistics

import numpy as np
import pytest

from lib.papers import schur_ablation
from tests.results import evidence as ev

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
def test_orderings_are_judged_from_the_per_solution_values(results, task):
    """Each ordering the paper reports, judged again in every solution from its per-seed ΔFVU and S_ΔT (the values the
    task chapter's claims record; −T_RR from the Many-solutions table): the claim's per-solution list is that reading
    (a solution whose claimed block is empty left out) and its fraction is k of n of it."""
    for name in schur_ablation.TASK_ORDERINGS[task]:
        c = claim(results, f"task_{task}", f"A4_{task}_{name}")
        judged = ev.judgements(results, task, name)
        assert c["per_solution"] == judged, f"{task} {name}: the claim records {c['per_solution']}"
        assert c["ours"] == pytest.approx(sum(judged) / len(judged), rel=1e-12), f"{task} {name}"


def test_safe_fractions_leave_empty_ablations_out(results):
    ch = "task_dependence::"
    n_all = results[f"{ch}n_solutions_all"]
    for key in ("RR", "CR", "CC", "RR_CC", "CR_CC", "RR_CR", "RR_CR_CC"):
        frac, n_empty = results[f"{ch}frac_safe_{key}"], results[f"{ch}n_empty_{key}"]
        assert math.isnan(frac) == (n_empty == n_all), key


def test_no_single_block_is_safe_in_every_solution(results):
    """The safe fractions recounted from the solutions' own ΔFVU (ΔFVU ≤ 0.01 where the block is not empty), and the
    claim "no single block is safe in every solution" decided by a solution that each block damages."""
    ch = "task_dependence::"
    safe_cc = {}
    witness = {}
    for task in TASKS:
        for block in ("RR", "CR", "CC"):
            v = np.array(ev.per_seed(results, task, "dfvu", block))
            v = v[np.isfinite(v)]
            if block == "CC":
                safe_cc[task] = (int(np.sum(v <= ev.SAFE_TOLERANCE)), v.size)
            if np.any(v > ev.SAFE_TOLERANCE):
                witness.setdefault(block, task)
        k, n = safe_cc[task]
        assert results[f"{ch}frac_safe_CC_{task}"] == pytest.approx(k / n, rel=1e-12), task
    # −T_CC pooled over every solution: the copy controllers are the rest (their safe fraction as the chapter glued it)
    n_copy = results[f"{ch}n_solutions_all"] - sum(n for _, n in safe_cc.values())
    k_copy = results[f"{ch}frac_safe_CC_copy"] * n_copy
    k_all, n_all = sum(k for k, _ in safe_cc.values()) + k_copy, results[f"{ch}n_solutions_all"]
    assert results[f"{ch}frac_safe_CC"] == pytest.approx(k_all / (n_all - results[f"{ch}n_empty_CC"]), rel=1e-12)
    assert sorted(witness) == ["CC", "CR", "RR"], f"a block no §4 solution is damaged by: {witness}"
    assert json.loads(results[f"{ch}claim_A4_no_uniformly_safe"])["holds"] is True


def test_new_task_reports_its_cached_solutions(results):
    """The new task's numbers recomputed from its cached models: FVU by an explicit float64 rollout (eqs. 1–2) and the
    FVU of paper A §2.7 in numpy, n_R and the nearest block's distance to α·ρ from the eigenvalues."""
    import bookrun
    from lib.core.paths import REPO_ROOT
    from lib.paper_a import task_analysis as ta
    from lib.paper_a.tasks import available_tasks, load_task_modules

    ch, settings = "new_task::", bookrun.chapter_settings("new_task")
    task, alpha = settings["task"], schur_ablation.ALPHA
    if task not in available_tasks():
        load_task_modules(REPO_ROOT / "book" / "tasks")
    inputs, targets, mask = (None if t is None else t.numpy() for t in ta.heldout_batch(task))
    mask = np.ones_like(targets) if mask is None else mask
    fvu, n_R, gaps = [], [], []
    for w in ev.cached_task_weights(task, settings["solutions"]):
        h = np.zeros((inputs.shape[0], w["W_hh"].shape[0]))
        out = np.empty_like(targets)
        for t in range(inputs.shape[1]):
            h = np.tanh(inputs[:, t] @ w["W_xh"].T + h @ w["W_hh"].T)
            out[:, t] = h @ w["W_hy"].T
        ybar = (targets * mask).sum((0, 1)) / mask.sum((0, 1))
        fvu.append(float((((out - targets) ** 2) * mask).sum() / (((targets - ybar) ** 2) * mask).sum()))
        moduli = np.abs(np.linalg.eigvals(w["W_hh"]))
        n_R.append(ev.n_R_by_eigenvalues(w["W_hh"], alpha))
        gaps.append(float(np.min(np.abs(moduli / moduli.max() - alpha))))
    assert results[ch + "new_fvu_full"] == pytest.approx(np.mean(fvu), rel=1e-9)
    assert (results[ch + "new_nR_min"], results[ch + "new_nR_max"]) == (min(n_R), max(n_R))
    assert results[ch + "new_min_threshold_gap"] == pytest.approx(min(gaps), rel=1e-8)


@pytest.mark.parametrize("task", TASKS)
def test_the_full_models_median_and_worst_solution_are_those_of_the_claims_values(results, task):
    """The sentence beside the FVU verdict (median; worst, with its seed) reads the same solutions as the claim."""
    c, stem = claim(results, f"task_{task}", f"A4_{task}_fvu_full"), f"task_{task}"
    fvu = c["ours_values"]
    assert len(fvu) == results[f"{stem}::n_seeds"]  # seeds 0..n−1, in order
    assert results[f"{stem}::fvu_full_median"] == pytest.approx(statistics.median(fvu))
    assert fvu[results[f"{stem}::fvu_full_worst_seed"]] == max(fvu) == results[f"{stem}::fvu_full_max"]
