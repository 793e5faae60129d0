"""What the chapter "Two lenses as one" promises, read from the executed book's glued numbers.

The two hypotheses are not paper claims; their computed verdicts must be the ones ``lib.papers.beyond.EXPECTED``
records (a verdict that changes fails here). The rest checks the verdicts against the numbers they are computed
from and the Schur coordinates against what an ordered real Schur form of N_h = 64 or 72 must have.
"""

from __future__ import annotations

import pytest

from lib.lenses.chapter import TASKS
from lib.papers import beyond

pytestmark = pytest.mark.results

CH = "two_lenses::"
N_HIDDEN = {"flipflop": 64, "sine": 64, "context": 64, "copy": 72}  # paper A §4 and §3 (the copy chapter's width)


@pytest.mark.parametrize("hypothesis", sorted(beyond.HYPOTHESES))
def test_verdict_is_the_expected_one(results, hypothesis):
    assert hypothesis in beyond.EXPECTED, f"{hypothesis}: no expected verdict in lib/papers/beyond.py"
    want, reason = beyond.EXPECTED[hypothesis]
    got = results[f"{CH}verdict_{hypothesis}"]
    assert got == want, f"{hypothesis}: verdict {got!r}, expected {want!r} ({reason})"


def test_the_rank_verdict_follows_from_the_correlations(results):
    assert results[CH + "rank_threshold"] == beyond.RANK_THRESHOLD  # the threshold fixed in advance is the one used
    every = all(results[f"{CH}rho_gn_{t}"] >= results[CH + "rank_threshold"] for t in TASKS)
    assert results[CH + "verdict_L2_gn_ranks"] == ("holds" if every else "fails")


def test_the_safe_verdict_follows_from_the_aucs(results):
    better = results[CH + "auc_null"] > max(results[CH + "auc_mass"], results[CH + "auc_identity"])
    assert results[CH + "verdict_L3_null_predicts_safe"] == ("holds" if better else "fails")
    assert sum(results[f"{CH}n_safe_{t}"] for t in TASKS) == results[CH + "n_safe"]


def test_coordinates_are_the_strict_block_upper_entries(results):
    """n(n−1)/2 entries above the diagonal, less one inside each 2×2 diagonal block (at most n/2 of them)."""
    for t in TASKS:
        n = N_HIDDEN[t]
        assert n * (n - 1) // 2 - n // 2 <= results[f"{CH}n_coords_{t}"] <= n * (n - 1) // 2


def test_probe_jacobian_has_enough_rows(results):
    """At least the requested rows, and at least as many rows as coordinates (else the null space is trivial)."""
    for t in TASKS:
        rows = results[f"{CH}n_probe_rows_{t}"]
        assert rows >= results[CH + "probe_rows"]
        assert rows >= results[f"{CH}n_coords_{t}"]


def test_every_ablation_is_counted(results):
    solutions = results[CH + "n_solutions"]
    assert results[CH + "n_cases"] == results[CH + "n_ablations_all"] <= 7 * solutions
    assert sum(results[f"{CH}n_ablations_{t}"] for t in TASKS) == results[CH + "n_ablations_all"]
