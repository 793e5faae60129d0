"""What the chapter "Two lenses as one" promises, read from the executed book's glued numbers.

The two hypotheses are not paper claims; their computed verdicts must be the ones ``lib.papers.beyond.EXPECTED``
records (a verdict that changes fails here). The rest checks the cases the verdicts are computed over against the
task chapters' own ablations (which ablations remove mass, which are safe) and the Schur coordinates against what an
ordered real Schur form of N_h = 64 or 72 must have. The correlations and AUCs rest on the probe Jacobians, which
only the chapter computes (minutes); they are not recomputed here.
"""

from __future__ import annotations

import numpy as np
import pytest

from lib.lenses.chapter import TASKS
from lib.paper_a.schur import all_subsets
from lib.paper_a.task_analysis import subset_key
from lib.papers import beyond
from tests.results import evidence as ev

pytestmark = pytest.mark.results

CH = "two_lenses::"
N_HIDDEN = {"flipflop": 64, "sine": 64, "context": 64, "copy": 72}  # paper A §4 and §3 (the copy chapter's width)


@pytest.mark.parametrize("hypothesis", sorted(beyond.HYPOTHESES))
def test_verdict_is_the_expected_one(results, hypothesis):
    assert hypothesis in beyond.EXPECTED, f"{hypothesis}: no expected verdict in lib/papers/beyond.py"
    want, reason = beyond.EXPECTED[hypothesis]
    got = results[f"{CH}verdict_{hypothesis}"]
    assert got == want, f"{hypothesis}: verdict {got!r}, expected {want!r} ({reason})"


def test_the_cases_and_safe_ablations_are_the_task_dependence_chapters(results):
    """Every non-empty ablation of every solution is a case, and a safe one when ΔFVU ≤ 0.01: the same solutions
    (the §4 tasks' and the copy controllers') as the task-dependence chapter, whose safe fractions and empty counts
    per ablation give the counts again; each AUC is a count of (safe, unsafe) pairs, ties ½, over exactly them."""
    td = "task_dependence::"
    assert results[CH + "n_solutions"] == results[td + "n_solutions_all"]
    keys = ("RR", "CR", "CC", "RR_CC", "CR_CC", "RR_CR", "RR_CR_CC")
    cases = {k: results[td + "n_solutions_all"] - results[f"{td}n_empty_{k}"] for k in keys}
    safe = {k: results[f"{td}frac_safe_{k}"] * cases[k] for k in keys}
    assert all(abs(v - round(v)) < 1e-9 for v in safe.values()), safe
    assert results[CH + "n_cases"] == sum(cases.values())
    assert results[CH + "n_safe"] == round(sum(safe.values()))
    pairs = 2 * results[CH + "n_safe"] * (results[CH + "n_cases"] - results[CH + "n_safe"])
    for key in [k for k in results if k.startswith(CH + "auc_")]:
        auc = results[key]
        assert abs(auc * pairs - round(auc * pairs)) < 1e-6, f"{key} = {auc} is not a count of {pairs // 2} pairs"


@pytest.mark.slow
@pytest.mark.parametrize("task", TASKS[:3])
def test_the_cases_of_each_task_are_its_solutions_ablations(results, task):
    """Per §4 task, the chapter's ablations and safe ones recounted from the cached solutions, every subset ablated
    and scored on the held-out trials the task chapters' way (not the lenses' own ΔFVU)."""
    profiles = ev.task_profiles(task, results[CH + "seeds"])
    keys = [subset_key(s) for s in all_subsets() if s]
    cases = [p.dfvu[k] for p in profiles for k in keys if k not in p.empty]
    assert results[f"{CH}n_ablations_{task}"] == len(cases)
    assert results[f"{CH}n_safe_{task}"] == sum(v <= ev.SAFE_TOLERANCE for v in cases)


@pytest.mark.parametrize("task", TASKS)
def test_coordinates_are_the_strict_block_upper_entries(results, task):
    """The first solution's coordinates: the n(n−1)/2 entries above the diagonal, less one inside each 2×2 diagonal
    block, i.e. one per complex-conjugate pair of its eigenvalues (counted by ``numpy.linalg.eigvals``)."""
    if task == "copy":
        W = ev.cached_copy_weights("dense_orthogonal", N_HIDDEN["copy"], 0, results)["W_hh"]
    else:
        W = ev.cached_task_weights(task, 1)[0]["W_hh"]
    n, pairs = W.shape[0], int(np.sum(np.linalg.eigvals(W).imag > 0))
    assert n == N_HIDDEN[task]
    assert results[f"{CH}n_coords_{task}"] == n * (n - 1) // 2 - pairs


def test_probe_jacobian_has_enough_rows(results):
    """At least the requested rows, and at least as many rows as coordinates (else the null space is trivial)."""
    for t in TASKS:
        rows = results[f"{CH}n_probe_rows_{t}"]
        assert rows >= results[CH + "probe_rows"]
        assert rows >= results[f"{CH}n_coords_{t}"]
