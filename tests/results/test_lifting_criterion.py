"""Numbers glued by book/lifting_criterion.md: the identities of paper B's App. A, checked numerically."""

from __future__ import annotations

import pytest

from tests.results import evidence as ev

pytestmark = pytest.mark.results
C = "lifting_criterion::"


def test_jacobian_matches_finite_differences(results):
    # central differences with step 1e-6 are accurate to about 1e-9 relative; the Jacobian must match that
    assert results[C + "jacobian_fd_error"] < 1e-7


def test_least_squares_identity_eq19(results):
    assert results[C + "eq19_gap"] < 1e-10
    assert results[C + "eq19_perturbed_ok"] is True


def test_defect_orthogonal_to_generator_only_on_invariant_grid(results):
    assert results[C + "cos_polar"] < 1e-5  # 32 angles: exact up to aliasing of harmonics ≥ 32
    assert results[C + "cos_polar_fine"] < 1e-12  # 128 angles: machine precision
    # the square lattice is not rotation-invariant: cos(δ, X f) on the authors' 7 × 7 lattice in [−1, 1]², again for
    # the chapter's network, with Π f as the plain 64-rotation sum and X f by central differences in the angle
    import torch

    import bookrun
    from lib.paper_b import demonstration as demo

    st = bookrun.chapter_settings("lifting_criterion")
    theta = demo.init_params(st["width"], st["seed"])
    assert results[C + "lc_n_params"] == sum(t.numel() for t in theta.values())
    ticks = torch.linspace(-1.0, 1.0, results[C + "square_side"], dtype=torch.float64)
    gx, gy = torch.meshgrid(ticks, ticks, indexing="xy")
    square = torch.stack([gx.reshape(-1), gy.reshape(-1)], 1)
    cos = ev.orbit_cosine(lambda x: demo.mlp(theta, x), square, vector=False)
    assert results[C + "cos_square"] == pytest.approx(cos, abs=1e-8)


def test_gauge_changes_only_the_split(results):
    assert results[C + "gauge_projection_diff"] < 1e-10
    assert results[C + "gauge_residual_diff"] < 1e-10
    assert results[C + "gauge_rank_equal"] is True
    assert results[C + "gauge_coef_diff"] > 0.1


def test_known_answer_exact_lift(results):
    assert results[C + "exact_image_error"] < 1e-12  # the input-layer rotation realises X f exactly
    assert results[C + "known_answer_residual"] < 1e-9  # and the (nearly untruncated) lift finds it


def test_gram_route_agrees_at_the_papers_cutoff(results):
    assert results[C + "gram_svd_diff_1e-3"] < 1e-8
