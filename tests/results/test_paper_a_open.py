"""What the chapter "What paper A left open" promises, read from the executed book's glued numbers.

Consistency with the task chapters (the ablation path ends at their ΔFVU), identities a wrong implementation breaks
(the inside and outside parts of a coupling carry its whole direct-action energy), and the counts, extremes and
medians the chapter rests its verdicts on, recounted from the solutions' own per-seed numbers and cached models
(``tests/results/evidence.py``). The verdicts themselves rest on subspaces and random draws the chapter alone computes;
the paper's claims among them are judged in ``test_claims.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl

import bookrun
from lib.papers import schur_ablation
from tests.results import evidence as ev

pytestmark = pytest.mark.results

CH = "paper_a_open::"
TASKS = ("flipflop", "sine", "context", "copy")
NEURO = ("flipflop", "sine", "context")
BLOCKS = ("RR", "CR", "CC")


def r(results, name):
    return results[CH + name]


@pytest.mark.parametrize("task", NEURO)
@pytest.mark.parametrize("block", BLOCKS)
def test_the_path_ends_at_the_task_chapters_ablation(results, task, block):
    ours = r(results, f"dfvu_lambda1_{task}_{block}")
    theirs = results[f"task_{task}::dfvu_{block}"]
    assert ours == pytest.approx(theirs, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("task", TASKS)
def test_the_path_starts_at_the_trained_model(results, task):
    for block in BLOCKS:
        assert abs(r(results, f"dfvu_lambda0_{task}_{block}")) <= 1e-10


@pytest.mark.parametrize("task", TASKS)
def test_inside_and_outside_parts_carry_the_whole_direct_action(results, task):
    e_in, e_out, total = (r(results, f"energy_{p}_{task}") for p in ("in", "out", "total"))
    assert total > 0
    assert e_in + e_out == pytest.approx(total, rel=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("task", NEURO)
def test_the_confound_counts_are_the_solutions(results, task):
    """The ablations the confound study counts (each single block and all three, where they remove mass), recounted
    from the cached solutions: damaging = ΔFVU > tolerance on the first n_eval held-out trials (the study's evaluation
    set), harmless with mass = ΔFVU ≤ tolerance on every held-out trial and removed mass ≥ the mass threshold."""
    tol, m_min, n = r(results, "tolerance_used"), r(results, "mass_threshold_used"), results[f"task_{task}::n_seeds"]
    keys = ("RR", "CR", "CC", "RR+CR+CC")
    full, evaluation = ev.task_profiles(task, n), ev.task_profiles(task, n, r(results, "n_eval"))
    cases = [(p, q, k) for p, q in zip(full, evaluation, strict=True) for k in keys if p.mass[k] > 0]
    assert r(results, f"n_ablations_{task}") == len(cases)
    assert r(results, f"n_damaging_{task}") == sum(q.dfvu[k] > tol for _, q, k in cases)
    assert r(results, f"n_harmless_mass_{task}") == sum(p.dfvu[k] <= tol and p.mass[k] >= m_min for p, _, k in cases)


def _weights(results, task):
    """The W_hh of every solution the chapter studies for ``task`` (copy: its dense orthogonal controllers at 72)."""
    if task == "copy":
        solutions = bookrun.chapter_settings("paper_a_open")["copy_solutions"]
        return [ev.cached_copy_weights("dense_orthogonal", 72, s, results)["W_hh"] for s in range(solutions)]
    return [w["W_hh"] for w in ev.cached_task_weights(task, results[f"task_{task}::n_seeds"])]


@pytest.mark.parametrize("task", TASKS)
def test_the_basis_statistics_are_the_solutions(results, task):
    """κ(V) of the unit-norm eigenvectors, the relative departure from normality as ‖strictly upper triangle‖_F of the
    complex Schur form over ‖W‖_F (not Henrici's formula the chapter uses), and n_R from the eigenvalues."""
    Ws = _weights(results, task)
    kappa = [np.linalg.cond(sl.eig(W)[1]) for W in Ws]
    departure = [np.linalg.norm(np.triu(sl.schur(W, output="complex")[0], 1)) / np.linalg.norm(W) for W in Ws]
    n_R = [ev.n_R_by_eigenvalues(W, schur_ablation.ALPHA) for W in Ws]
    assert r(results, f"basis_median_kappa_{task}") == pytest.approx(np.median(kappa), rel=1e-6)
    assert r(results, f"basis_min_kappa_{task}") == pytest.approx(min(kappa), rel=1e-6)
    assert r(results, f"basis_median_departure_{task}") == pytest.approx(np.median(departure), rel=1e-8)
    assert (r(results, f"basis_n_R_min_{task}"), r(results, f"basis_n_R_max_{task}")) == (min(n_R), max(n_R))
    assert r(results, f"basis_n_R_std_{task}") == pytest.approx(np.std(n_R), abs=1e-12)


@pytest.mark.parametrize("task", NEURO)
def test_eps_star_and_stabilizers_are_the_solutions(results, task):
    """Per single block, over the solutions where it is not empty (their per-seed ΔFVU and removed mass): ε* is the
    largest ΔFVU⁺, the ε-stabilizers at the tolerance are those with ΔFVU ≤ it, the median removed mass."""
    n, tol = results[f"task_{task}::n_seeds"], r(results, "tolerance_used")
    rows = ev.profile_rows(task, n)
    for block in BLOCKS:
        dfvu = np.array(ev.per_seed(results, task, "dfvu", block))
        mass = np.array([row[f"mass_{block}"] for row in rows])
        full = mass > 0
        assert np.array_equal(full, np.isfinite(dfvu)), f"{task} {block}: empty blocks differ"
        assert r(results, f"n_empty_{block}_{task}") == int(np.sum(~full)), block
        assert r(results, f"eps_star_{block}_{task}") == pytest.approx(max(np.max(dfvu[full]), 0.0), rel=1e-12)
        assert r(results, f"n_stabilizer_{block}_{task}") == int(np.sum(dfvu[full] <= tol)), block
        assert r(results, f"median_mass_{block}_{task}") == pytest.approx(np.median(mass[full]), rel=1e-12)


@pytest.mark.parametrize("task", NEURO)
def test_the_mass_scan_counts_candidate_invariances(results, task):
    """Candidate invariances (a single block with ΔFVU ≤ tolerance and removed mass ≥ m) at every m of the scan and
    per block at the chapter's threshold, recounted from the solutions' per-seed ΔFVU and removed mass."""
    n, tol = results[f"task_{task}::n_seeds"], r(results, "tolerance_used")
    rows = ev.profile_rows(task, n)
    dfvu = {b: np.array(ev.per_seed(results, task, "dfvu", b)) for b in BLOCKS}
    mass = {b: np.array([row[f"mass_{b}"] for row in rows]) for b in BLOCKS}

    def count(m, blocks=BLOCKS):
        return int(sum(np.sum((mass[b] > 0) & (dfvu[b] <= tol) & (mass[b] >= m)) for b in blocks))

    i = 0
    while CH + f"mass_scan_{i}" in results:
        assert r(results, f"n_candidates_{i}_{task}") == count(r(results, f"mass_scan_{i}")), i
        i += 1
    assert i >= 2, "the mass scan has fewer than two thresholds"
    for b in BLOCKS:
        assert r(results, f"n_candidates_{task}_{b}") == count(r(results, "mass_threshold_used"), (b,)), b
