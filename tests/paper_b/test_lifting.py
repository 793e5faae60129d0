"""The truncated gauged lift (``lib.paper_b.lifting``, notes §6.3): known answers, gauges, routes and refusals."""

from __future__ import annotations

import math

import pytest
import torch

from lib.paper_b import lifting

pytestmark = pytest.mark.usefixtures("float64_default")


def _lowrank(m, p, rank, seed=0, tail=1e-6):
    g = torch.Generator().manual_seed(seed)
    A = torch.randn(m, rank, generator=g) @ torch.randn(rank, p, generator=g)
    return A + tail * torch.randn(m, p, generator=g)


@pytest.mark.parametrize("shape", [(30, 80), (80, 30)])
def test_known_answer_exact_lift(shape):
    J = _lowrank(*shape, rank=10)
    c_true = torch.randn(shape[1], generator=torch.Generator().manual_seed(5))
    # make the target exactly reachable within the retained subspace
    res0 = lifting.lift(J, J @ c_true, method="svd")
    eta = res0.projection
    for gauge in lifting.GAUGES:
        for method in ("svd", "gram"):
            r = lifting.lift(J, eta, gauge=gauge, method=method)
            assert r.rank == 10
            assert r.rel_residual < 1e-10
            assert r.principal_angle_deg < 1e-6
            assert torch.allclose(J @ r.coef, eta, atol=1e-6 * eta.norm())


@pytest.mark.parametrize("shape", [(40, 120), (120, 40)])
def test_gauge_changes_only_the_split(shape):
    g = torch.Generator().manual_seed(2)
    J = _lowrank(*shape, rank=15) * torch.logspace(0, -3, shape[1])  # columns of very different scale
    eta = torch.randn(shape[0], generator=g)
    a = lifting.lift(J, eta, gauge="sensitivity", method="svd")
    b = lifting.lift(J, eta, gauge="minnorm", method="svd")
    assert a.rank == b.rank
    assert torch.allclose(a.projection, b.projection, atol=1e-12)
    assert a.residual == pytest.approx(b.residual, rel=1e-10)
    assert not torch.allclose(a.coef, b.coef)
    # both solve the truncated system: V_rᵀ c = Σ_r⁻¹ U_rᵀ η
    svd = lifting.truncated_svd(J, method="svd")
    alpha = (svd.U.T @ eta) / svd.S
    assert torch.allclose(svd.V.T @ a.coef, alpha, atol=1e-8 * alpha.norm())
    assert torch.allclose(svd.V.T @ b.coef, alpha, atol=1e-8 * alpha.norm())
    # the gauged solution has the smaller weighted norm Σ d_i² c_i², the plain one the smaller ‖c‖
    d = J.norm(dim=0)
    assert (d * a.coef).norm() <= (d * b.coef).norm() * (1 + 1e-10)
    assert b.coef.norm() <= a.coef.norm() * (1 + 1e-10)


def test_minnorm_is_truncated_pseudoinverse_and_eq19():
    J = _lowrank(25, 60, rank=8, tail=1e-5)
    eta = torch.randn(25, generator=torch.Generator().manual_seed(3))
    r = lifting.lift(J, eta, gauge="minnorm", method="svd", tau=1e-3)
    U, S, Vh = torch.linalg.svd(J, full_matrices=False)
    k = int((S >= 1e-3 * S[0]).sum())
    c_ref = Vh[:k].T @ ((U[:, :k].T @ eta) / S[:k])
    assert torch.allclose(r.coef, c_ref, atol=1e-10)
    P = U[:, :k] @ U[:, :k].T
    assert r.residual**2 == pytest.approx(float(((torch.eye(25) - P) @ eta).norm() ** 2), rel=1e-10)


def test_full_rank_gauge_equals_scaled_pseudoinverse():
    J = torch.randn(10, 30, generator=torch.Generator().manual_seed(4)) * torch.logspace(0, -2, 30)
    eta = torch.randn(10, generator=torch.Generator().manual_seed(6))
    r = lifting.lift(J, eta, tau=1e-8, method="svd")
    d = J.norm(dim=0)
    c_ref = torch.linalg.pinv(J / d) @ eta / d
    assert r.rank == 10
    assert torch.allclose(r.coef, c_ref, atol=1e-10)


def test_gram_matches_svd_wide_and_tall():
    for shape in [(50, 300), (300, 50)]:
        J = _lowrank(*shape, rank=20, tail=1e-4)
        eta = torch.randn(shape[0], generator=torch.Generator().manual_seed(8))
        a = lifting.lift(J, eta, method="svd")
        b = lifting.lift(J, eta, method="gram")
        assert a.rank == b.rank
        assert torch.allclose(a.coef, b.coef, atol=1e-9 * a.coef.norm())
        assert a.residual == pytest.approx(b.residual, rel=1e-9)
    assert lifting.lift(J, eta, tau=1e-3).method == "gram"
    assert lifting.lift(J, eta, tau=1e-8).method == "svd"


def test_dead_columns_get_zero_attribution():
    J = torch.randn(10, 20, generator=torch.Generator().manual_seed(9))
    J[:, 3] = 0.0
    J[:, 7] *= 1e-12
    r = lifting.lift(J, torch.randn(10, generator=torch.Generator().manual_seed(1)))
    assert r.n_dead == 2
    assert r.coef[3] == 0 and r.coef[7] == 0


def test_zero_target():
    J = torch.randn(6, 9)
    r = lifting.lift(J, torch.zeros(6))
    assert torch.equal(r.coef, torch.zeros(9)) and r.rel_residual == 0.0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"tau": 0.0}, "tau"),
        ({"tau": 1.5}, "tau"),
        ({"gauge": "l1"}, "gauge"),
        ({"method": "qr"}, "method"),
    ],
)
def test_lift_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        lifting.lift(torch.randn(4, 6), torch.randn(4), **kwargs)


def test_lift_shape_and_finiteness_errors():
    with pytest.raises(ValueError, match="one per row"):
        lifting.lift(torch.randn(4, 6), torch.randn(5))
    with pytest.raises(ValueError, match="non-finite"):
        lifting.lift(torch.full((4, 6), float("nan")), torch.randn(4))
    with pytest.raises(ValueError, match="non-finite"):
        lifting.lift(torch.randn(4, 6), torch.tensor([1.0, float("inf"), 0, 0]))
    with pytest.raises(ValueError, match="2-D"):
        lifting.lift(torch.randn(4), torch.randn(4))


@pytest.mark.parametrize("spread", [1.0, 1e-6])
def test_gauge_gram_and_qr_routes_agree(monkeypatch, spread):
    """The r × r Gram route (its eigendecomposition) and the Householder QR route give the same c̃ = Aᵀ(AAᵀ)⁻¹α; an
    ill-conditioned A (columns spread over six decades, κ(AAᵀ) far above GRAM_SOLVE_MAX_COND) takes the QR route."""
    g = torch.Generator().manual_seed(12)
    At = torch.randn(300, 20, generator=g) * torch.logspace(0, math.log10(spread), 20)
    alpha = torch.randn(20, generator=g)
    w = torch.linalg.eigvalsh(At.T @ At)
    assert (w[-1] / w[0] > lifting.GRAM_SOLVE_MAX_COND) == (spread < 1)
    routes = []
    monkeypatch.setattr(lifting.torch, "geqrf", lambda *a, _f=torch.geqrf: routes.append("qr") or _f(*a))
    ours = lifting._min_norm_solution(At, alpha)
    assert routes == ([] if spread == 1 else ["qr"])
    reference = torch.linalg.pinv(At.T) @ alpha  # minimum-norm solution of A c̃ = α
    assert torch.allclose(ours, reference, atol=1e-9 * reference.norm())
    monkeypatch.setattr(lifting, "GRAM_SOLVE_MAX_COND", 0.0)  # force QR
    assert torch.allclose(lifting._min_norm_solution(At, alpha), ours, atol=1e-9 * reference.norm())
    At[:, 1] = At[:, 0]  # rank-deficient: no route may return a solution
    with pytest.raises(ValueError, match="rank-deficient"):
        lifting._min_norm_solution(At, alpha)


def test_retained_rank_is_the_cutoff_rule():
    S = torch.tensor([4.0, 1.0, 4e-3, 3.9e-3, 0.0], dtype=torch.float64)
    assert lifting.retained_rank(S, 1e-3) == 3  # σ ≥ τσ₁ = 4e-3, the boundary kept
    assert lifting.retained_rank(torch.zeros(3, dtype=torch.float64), 1e-3) == 0
    assert lifting.retained_rank(torch.zeros(0, dtype=torch.float64), 1e-3) == 0
