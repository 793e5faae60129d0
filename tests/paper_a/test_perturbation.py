"""Random perturbations of an ablation's size and the ablation path W(λ) (paper A §5)."""

from __future__ import annotations

import numpy as np
import pytest

from lib.paper_a import perturbation as pt
from lib.paper_a import schur


@pytest.fixture(scope="module")
def form():
    return schur.ordered_real_schur(np.random.default_rng(0).standard_normal((10, 10)) / 3)


@pytest.mark.parametrize("kind", pt.KINDS)
def test_draws_have_the_norm_asked_for_and_are_seeded(form, kind):
    sp = schur.split(form, 0.6)
    U = np.linalg.qr(np.random.default_rng(1).standard_normal((10, 3)))[0]
    kw = dict(n=10, form=form, mask_nn=sp.masks["CR"], basis_nr=U)
    a = pt.random_directions(kind, 2.5, 4, np.random.default_rng(7), **kw)
    b = pt.random_directions(kind, 2.5, 4, np.random.default_rng(7), **kw)
    np.testing.assert_allclose(np.linalg.norm(a, axis=(1, 2)), 2.5, rtol=1e-12)
    np.testing.assert_array_equal(a, b)
    if kind == "schur_pattern":  # in Schur coordinates, only the block's entries are nonzero
        inner = form.Q.T @ a @ form.Q
        assert np.abs(inner[:, ~sp.masks["CR"]]).max() < 1e-12
    if kind == "subspace":  # input and output inside span(U)
        P = U @ U.T
        np.testing.assert_allclose(P @ a @ P, a, atol=1e-12)


def test_path_ends_are_the_trained_matrix_and_the_ablation(form):
    sp = schur.split(form, 0.6)
    T_S = np.where(sp.masks["CC"], form.T, 0.0)
    path = pt.ablation_path(form, T_S, [0.0, 0.5, 1.0])
    np.testing.assert_allclose(path[0], form.W, atol=1e-13)
    np.testing.assert_array_equal(path[2], schur.ablate(form, ("CC",), 0.6).W)
    np.testing.assert_allclose(path[1], 0.5 * (path[0] + path[2]), atol=1e-13)


def test_bad_parameters_are_refused(form):
    with pytest.raises(ValueError, match=r"outside \[0, 1\]"):
        pt.lambda_grid([0.0, 1.2])
    with pytest.raises(ValueError, match="empty"):
        pt.lambda_grid([])
    with pytest.raises(ValueError, match="kind='gaussian'"):
        pt.random_directions("gaussian", 1.0, 2, np.random.default_rng(0), n=10)
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        pt.random_directions("isotropic", 1.0, 2, 0, n=10)
    with pytest.raises(ValueError, match="draws=0"):
        pt.random_directions("isotropic", 1.0, 0, np.random.default_rng(0), n=10)


def test_percentile_and_fraction_more_damage_are_complementary():
    draws = np.array([0.1, 0.2, 0.3, 0.4])
    assert pt.fraction_more_damage(0.25, draws) == 0.5
    assert pt.percentile_of(0.25, draws) == 50.0
    assert pt.fraction_more_damage(0.2, draws) + pt.percentile_of(0.2, draws) / 100 == 1.0
