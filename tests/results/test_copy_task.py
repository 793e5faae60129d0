"""Numbers the copy-task chapter promises (paper A §3, Fig. 1, Table 1), read from ``_build/results.json``."""

from __future__ import annotations

import pytest

from lib.papers import schur_ablation
from tests.results import evidence as ev

pytestmark = pytest.mark.results

SUBSET_KEYS = ["minus_CC", "minus_RR", "minus_RR_CC", "minus_CR", "minus_CR_CC", "minus_RR_CR", "minus_all"]


def r(results, name):
    return results[f"copy_task::{name}"]


def test_dense_orthogonal_replays(results):
    assert r(results, "acc_full_orth") >= 0.99


def test_minus_T_CC_preserves_replay(results):
    assert abs(r(results, "acc_minus_CC_orth") - r(results, "acc_full_orth")) <= 0.01


@pytest.mark.parametrize("block", ["CR", "RR"])
def test_minus_T_CR_and_T_RR_leave_the_full_class(results, block):
    # paper: −T_C→R 0.639, −T_RR 0.876 against 1.00
    assert r(results, f"acc_minus_{block}_orth") <= r(results, "acc_full_orth") - 0.05


def test_cayley_couplings_negligible_and_every_ablation_harmless(results):
    assert r(results, "acc_full_cayley") >= 0.99
    # W = O D Oᵀ is normal by construction: its Schur couplings are rounding (the Schur chapter's normal matrix: 1e-12)
    assert r(results, "coupling_mass_cayley") <= 1e-12
    assert r(results, "max_ablation_drop_cayley") <= 0.01


def test_n_R_at_the_three_alphas_is_table1s(results):
    # paper Table 1: n_R = 64 for the dense orthogonal controller at α = 0.85, 0.9 and 0.95 (an integer: exact)
    want = int(schur_ablation.TABLE1["dense orthogonal"]["n_R"].text)
    got = {a: r(results, f"nR_orth_{round(100 * a):03d}") for a in schur_ablation.TABLE1_ALPHAS}
    assert got == dict.fromkeys(schur_ablation.TABLE1_ALPHAS, want)


@pytest.mark.parametrize(("construction", "tag"), [("dense_orthogonal", "orth"), ("cayley", "cayley")])
def test_n_R_is_the_representatives_eigenvalue_count(results, construction, tag):
    # the representative controller (seed 0) from the model cache: eigenvalues with |λ| ≥ α·ρ by numpy, not the
    # ordered Schur split the chapter uses
    W = ev.cached_copy_weights(construction, r(results, "n_hidden"), 0, results)["W_hh"]
    for a in schur_ablation.TABLE1_ALPHAS:
        assert r(results, f"nR_{tag}_{round(100 * a):03d}") == ev.n_R_by_eigenvalues(W, a), a
    assert r(results, f"nR_{tag}") == ev.n_R_by_eigenvalues(W, r(results, "alpha"))


def test_cayley_ablations_harmless_at_every_alpha(results):
    # The paper's Cayley n_R = 68 at all three α did not reproduce (ours moves with α: a block sits near α·ρ; the
    # chapter shows both). What we promise instead: with zero couplings, no ablation at any α changes replay.
    assert r(results, "max_drop_cayley_alphas") <= 0.01


def test_every_ablation_removes_mass(results):
    # the dense orthogonal controller has every block non-empty, so each ablation is an intervention
    for key in SUBSET_KEYS:
        assert r(results, f"mass_{key}_orth") > 0.0
