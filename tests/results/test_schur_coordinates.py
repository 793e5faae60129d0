"""What the chapter "Ordered real Schur coordinates" promises, read from the executed book's glued numbers.

The split is checked against the chapter's two matrices rebuilt from its settings, their eigenvalues counted by
``numpy.linalg.eigvals`` (the chapter splits its ordered real Schur form).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pytest

pytestmark = pytest.mark.results

CH = "schur_coordinates::"


@lru_cache(maxsize=1)
def matrices() -> dict[str, np.ndarray]:
    """The chapter's nonnormal and normal example matrices, rebuilt from the parameters it runs with."""
    import bookrun
    from lib.paper_a.chapters.schur_coordinates import SchurExample

    example = SchurExample(**bookrun.chapter_settings("schur_coordinates"))
    return {"nonnormal": example.nonnormal_matrix(), "normal": example.normal_matrix()}


def n_R(W: np.ndarray, alpha: float) -> int:
    """Eigenvalues (with multiplicity) with |λ| ≥ α·ρ(W)."""
    moduli = np.abs(np.linalg.eigvals(W))
    return int(np.sum(moduli >= alpha * moduli.max() * (1 - 1e-12)))


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
    W, alpha = matrices()["nonnormal"], results[CH + "alpha"]
    assert W.shape == (results[CH + "n"],) * 2
    moduli = np.abs(np.linalg.eigvals(W))
    rho = moduli.max()
    assert results[CH + "rho_nonnormal"] == pytest.approx(rho, rel=1e-12)
    assert results[CH + "threshold_nonnormal"] == pytest.approx(alpha * rho, rel=1e-12)
    assert (results[CH + "n_R_nonnormal"], results[CH + "n_C_nonnormal"]) == (n_R(W, alpha), len(W) - n_R(W, alpha))
    # the nearest block to the threshold, | |λ|/ρ − α |; no block sits on it up to rounding
    assert results[CH + "min_gap_nonnormal"] == pytest.approx(np.min(np.abs(moduli / rho - alpha)), rel=1e-9)
    assert results[CH + "min_gap_nonnormal"] > 1e-12
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
    from lib.paper_a.chapters.schur_coordinates import ALPHA_GRID

    W, W_normal = matrices()["nonnormal"], matrices()["normal"]
    for a in (50, 85, 90, 95, 100):
        assert results[f"{CH}n_R_at_{a}"] == n_R(W, a / 100), a
    assert results[CH + "n_R_steps"] == len({n_R(W, a) for a in ALPHA_GRID})
    assert results[CH + "n_R_normal"] == n_R(W_normal, results[CH + "alpha"])
    for a in (85, 95):
        assert results[f"{CH}n_R_normal_at_{a}"] == n_R(W_normal, a / 100), a
    assert results[CH + "rho_normal"] == pytest.approx(np.abs(np.linalg.eigvals(W_normal)).max(), rel=1e-12)


def test_scipy_partition_agrees(results):
    assert results[CH + "scipy_agree"] == results[CH + "scipy_checked"]
    assert results[CH + "subspace_angle"] <= 1e-10
    assert results[CH + "partition_diff_CR"] <= 1e-12  # T_C→R ablation depends only on the two subspaces
    assert results[CH + "partition_diff_RR"] > 1e-3  # T_RR depends on the order inside R
