"""What the chapter "Ordered real Schur coordinates" promises, read from the executed book's glued numbers."""

from __future__ import annotations

import math

import pytest

pytestmark = pytest.mark.results

CH = "schur_coordinates::"


def test_decomposition_accuracy(results):
    for which in ("nonnormal", "normal"):
        assert results[f"{CH}rec_err_{which}"] <= 1e-12
        assert results[f"{CH}orth_err_{which}"] <= 1e-12


def test_moduli_ordered_and_scipy_unordered(results):
    assert results[CH + "max_rise_nonnormal"] <= 0.0
    assert results[CH + "min_modulus_step"] > 0.0
    # the point of the ordering: scipy's own order is not by modulus
    assert results[CH + "unordered_rises"] > 0


def test_normal_matrix_has_no_couplings(results):
    assert results[CH + "commutator_normal"] <= 1e-12
    assert results[CH + "coupling_mass_normal"] <= 1e-12
    assert results[CH + "ablate_all_normal"] <= 1e-12


def test_nonnormal_matrix_is_nonnormal(results):
    assert results[CH + "coupling_mass_nonnormal"] > 0.1


def test_split(results):
    n = results[CH + "n"]
    n_R, n_C = results[CH + "n_R_nonnormal"], results[CH + "n_C_nonnormal"]
    assert n_R + n_C == n and 0 < n_R < n
    assert results[CH + "threshold_nonnormal"] == pytest.approx(results[CH + "alpha"] * results[CH + "rho_nonnormal"])
    assert results[CH + "min_gap_nonnormal"] > 1e-12  # no block sits on the threshold up to rounding
    # the three coupling blocks partition N
    parts = sum(results[f"{CH}mass_{b}_nonnormal"] ** 2 for b in ("RR", "CR", "CC"))
    assert math.sqrt(parts) == pytest.approx(results[CH + "coupling_mass_nonnormal"], rel=1e-12)


def test_ablation_masses(results):
    assert results[CH + "removed_mass_none"] == 0.0
    for b in ("RR", "CR", "CC"):
        assert results[f"{CH}removed_mass_{b}"] == pytest.approx(results[f"{CH}mass_{b}_nonnormal"], rel=1e-12)
    assert results[CH + "removed_mass_RR_CR_CC"] == pytest.approx(results[CH + "coupling_mass_nonnormal"], rel=1e-12)
    # masses of disjoint blocks add in squares
    rr, cr, cc = (results[f"{CH}removed_mass_{b}"] for b in ("RR", "CR", "CC"))
    assert results[CH + "removed_mass_RR_CC"] == pytest.approx(math.hypot(rr, cc), rel=1e-12)
    assert results[CH + "removed_mass_CR_CC"] == pytest.approx(math.hypot(cr, cc), rel=1e-12)
    assert results[CH + "removed_mass_RR_CR"] == pytest.approx(math.hypot(rr, cr), rel=1e-12)
    assert results[CH + "max_spectrum_change"] <= 1e-10


def test_basis_independence(results):
    assert results[CH + "basis_change_err"] <= 1e-10


def test_split_against_alpha(results):
    n = results[CH + "n"]
    steps = [results[f"{CH}n_R_at_{a}"] for a in (50, 85, 90, 95, 100)]
    assert steps == sorted(steps, reverse=True)
    assert steps[2] == results[CH + "n_R_nonnormal"] or results[CH + "alpha"] != 0.9
    assert 1 <= steps[-1] <= 2 and steps[0] <= n
    assert results[CH + "n_R_steps"] >= 2


def test_scipy_partition_agrees(results):
    assert results[CH + "scipy_agree"] == results[CH + "scipy_checked"]
    assert results[CH + "subspace_angle"] <= 1e-10
    assert results[CH + "partition_diff_CR"] <= 1e-12  # T_C→R ablation depends only on the two subspaces
    assert results[CH + "partition_diff_RR"] > 1e-3  # T_RR depends on the order inside R
