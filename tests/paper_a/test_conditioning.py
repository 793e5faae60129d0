"""κ(V), Henrici's departure and the stability of the two coordinate systems (paper A §2.8)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import schur as scipy_schur

from lib.paper_a import conditioning as cd
from lib.paper_a import schur


def normal_matrix(n=8, seed=0):
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
    D = np.zeros((n, n))
    for i in range(0, n, 2):
        a, b = rng.standard_normal(2)
        D[i : i + 2, i : i + 2] = [[a, -b], [b, a]]
    return Q @ D @ Q.T


def test_normal_matrix_is_perfectly_conditioned_and_has_no_departure():
    W = normal_matrix()
    assert cd.eigenvector_condition(W) == pytest.approx(1.0, abs=1e-10)
    assert cd.henrici_departure(W) < 1e-6
    assert schur.coupling_mass(schur.ordered_real_schur(W)) < 1e-12


def test_departure_is_the_strictly_upper_part_of_the_complex_schur_form():
    W = np.random.default_rng(1).standard_normal((9, 9))
    T, _ = scipy_schur(W, output="complex")
    assert cd.henrici_departure(W) == pytest.approx(np.linalg.norm(np.triu(T, 1)), rel=1e-10)
    assert cd.henrici_departure(W, relative=True) == pytest.approx(cd.henrici_departure(W) / np.linalg.norm(W))
    assert cd.eigenvector_condition(W) > 1.0


def test_principal_angles_of_a_subspace_with_itself_are_zero():
    A = np.linalg.qr(np.random.default_rng(2).standard_normal((7, 3)))[0]
    assert cd.max_sine(A, A @ np.linalg.qr(np.random.default_rng(3).standard_normal((3, 3)))[0]) < 1e-7
    assert cd.max_sine(A, A[:, :2]) == 1.0
    W = np.random.default_rng(4).standard_normal((8, 8))
    assert cd.eigenvector_change(W, W) < 1e-7


def test_stability_grows_with_the_perturbation_and_refuses_bad_scales():
    W = np.random.default_rng(5).standard_normal((10, 10)) / 3
    st = cd.stability(W, 0.9, [1e-8, 1e-3], 2, np.random.default_rng(0))
    assert st.r_sine.shape == (2, 2) and st.eig_sine.shape == (2, 2)
    assert np.all(st.r_sine[0] < st.r_sine[1]) and np.all(st.r_sine[0] < 1e-5)
    with pytest.raises(ValueError, match=r"scales=\[0.0\]"):
        cd.scale_grid([0.0])
    with pytest.raises(ValueError, match="alpha=1.5"):
        cd.stability(W, 1.5, [1e-3], 1, np.random.default_rng(0))


def test_spectrum_similarity_of_identical_solutions_is_exact():
    f = schur.ordered_real_schur(np.random.default_rng(6).standard_normal((6, 6)))
    sim = cd.spectrum_similarity([f, f], 0.9)
    assert sim["spectrum_max_diff"] == 0.0 and sim["n_R_min"] == sim["n_R_max"]
    with pytest.raises(ValueError, match="at least 2"):
        cd.spectrum_similarity([f], 0.9)
