"""The annulus system: data, model size, the factored MLP Jacobian, the quarter-turn Reynolds shortcut, flows."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from lib.paper_b import annulus as A
from lib.paper_b import sensitivity as sens
from lib.paper_b import symmetry as sym
from lib.paper_b.annulus.mlp import _gelu_cdf
from lib.paper_b.lifting_problem import LiftingProblem

SMALL = A.AnnulusConfig(hidden=8, epochs=5)


def test_data_draw_order_and_shape():
    x, y = A.make_data(90.0)
    assert x.shape == (200, 2) and x.dtype == np.float32 and y.dtype == np.int64
    assert (y[:100] == 1).all() and (y[100:] == -1).all()
    rng = np.random.default_rng(3)
    theta_in = 2 * np.pi * rng.random(100)
    rad_in = np.sqrt(rng.random(100))
    assert np.allclose(x[:100, 0], (rad_in * np.cos(theta_in)).astype(np.float32))
    r = np.linalg.norm(x, axis=1)
    assert r[:100].max() <= 1.0 + 1e-6 and r[100:].min() >= 2.3 - 1e-6 and r[100:].max() <= 3.0 + 1e-6
    ang = np.degrees(np.arctan2(x[100:, 1], x[100:, 0]))
    assert np.abs(ang).max() <= 45.0 + 1e-4
    xf, _ = A.make_data(360.0)
    assert np.array_equal(xf[:100], x[:100])  # same inner draws
    with pytest.raises(ValueError, match="arc_degrees"):
        A.make_data(0.0)


def test_model_size_and_shared_init():
    m1, m2 = A.init_model(), A.init_model()
    assert sum(p.numel() for p in m1.parameters()) == 19009
    assert all(torch.equal(a, b) for a, b in zip(m1.parameters(), m2.parameters(), strict=True))
    assert next(m1.parameters()).dtype == torch.float32


def _small_problem():
    x, y = A.make_data(90.0, SMALL)
    return A.AnnulusProblem({"wedge": (x, y)}, config=SMALL)


def _theta(seed=0):
    torch.manual_seed(seed)
    model = A.SimpleMLP(SMALL.hidden, SMALL.depth).double()
    return torch.nn.utils.parameters_to_vector(model.parameters()).detach()


def test_factored_jacobian_matches_jacrev_and_finite_differences():
    pb = _small_problem()
    theta = _theta()
    jac = pb.evaluate(theta).jac
    J = jac.dense()
    module = A.theta_to_module(theta, SMALL)
    J_ref = sens.jacobian(module, sens.module_params(module), pb.probes)
    assert J.shape == J_ref.shape == (408, theta.numel())
    assert torch.allclose(J, J_ref, atol=1e-12)
    h = 1e-6
    for i in (0, 17, theta.numel() // 2, theta.numel() - 1):
        e = torch.zeros_like(theta)
        e[i] = h
        fd = (pb.params(theta + e).forward(pb.probes) - pb.params(theta - e).forward(pb.probes)) / (2 * h)
        assert torch.allclose(J[:, i], fd, atol=1e-7)


def test_factored_operator_products():
    pb = _small_problem()
    jac = pb.evaluate(_theta(1)).jac
    J = jac.dense()
    g = torch.Generator().manual_seed(0)
    c = torch.randn(J.shape[1], 3, generator=g, dtype=torch.float64)
    w = torch.randn(408, 4, generator=g, dtype=torch.float64)
    assert torch.allclose(jac.row_gram(), J @ J.T, atol=1e-10)
    assert torch.allclose(jac.gram(), J.T @ J, atol=1e-10)  # this small net has p < N: the smaller Gram is JᵀJ
    assert torch.allclose(jac.col_norms(), J.norm(dim=0), atol=1e-12)
    assert torch.allclose(jac.matmul(c), J @ c, atol=1e-10)
    assert torch.allclose(jac.matmul(c[:, 0]), J @ c[:, 0], atol=1e-10)
    assert torch.allclose(jac.rmatmul(w), J.T @ w, atol=1e-10)


def test_generator_and_quarter_turn_reynolds():
    pb = _small_problem()
    theta = _theta(2)
    ev = pb.evaluate(theta)
    module = A.theta_to_module(theta, SMALL)
    f = lambda z: module(z)[:, 0]  # noqa: E731
    assert torch.allclose(ev.f, f(pb.probes), atol=1e-13)
    assert torch.allclose(ev.xf, sym.generator_scalar(f, pb.probes), atol=1e-12)
    assert torch.allclose(ev.Pf, sym.reynolds_scalar(f, pb.probes), atol=1e-12)
    assert pb.n_reps == 102


def test_blocked_forward_and_gelu():
    """Π f's 6,528 points go through the MLP in blocks of FORWARD_CHUNK rows: the blocks change no logit, and the
    GELU written as z·Φ(z) agrees with torch's to rounding."""
    pb = A.AnnulusProblem({"wedge": A.make_data(90.0)})
    theta = torch.nn.utils.parameters_to_vector(A.init_model().double().parameters()).detach()
    net = pb.params(theta)
    x = pb.orbit_points
    assert x.shape[0] > 2 * A.FORWARD_CHUNK
    torch.testing.assert_close(net.forward(x), net._forward(x), rtol=0, atol=1e-14)
    with torch.no_grad():
        ref = A.theta_to_module(theta)(x)[:, 0]
    torch.testing.assert_close(net.forward(x), ref, rtol=1e-14, atol=1e-15)
    z = torch.linspace(-9, 9, 2001, dtype=torch.float64)
    torch.testing.assert_close(_gelu_cdf(z) * z, torch.nn.functional.gelu(z), rtol=5e-16, atol=1e-15)


def test_fast_lift_matches_dense_svd_lift():
    pb = _small_problem()
    theta = _theta(3)
    for kind in A.KINDS:
        fast = pb.lift(theta, kind)
        exact = pb.lift(theta, kind, method="svd")
        assert fast.rank == exact.rank == pb.rank(theta)
        assert torch.allclose(fast.coef, exact.coef, atol=1e-9 * float(exact.coef.norm()))


def test_short_flows_follow_predictions():
    pb = _small_problem()
    theta = _theta(4)
    rec = A.flow(pb, theta, "b", "resolved", steps=4, dt=0.005, progress=False)
    assert rec.diagnostics["defect"].shape == (5,)
    d0, d1 = rec.start_end("defect")
    assert d1 == pytest.approx(d0 * math.exp(-0.02), rel=2e-3)
    rec = A.flow(pb, theta, "c", "fixed", steps=4, dt=0.005, record_every=2, progress=False)
    assert rec.record_stops.tolist() == [0, 2, 4]
    assert rec.diagnostics["profile"].shape == (3, 360)
    assert np.isfinite(rec.diagnostics["inv_err_wedge"][[0, -1]]).all()
    # fixed: the step is z₀ throughout, so its realisation error is z₀'s
    assert np.array_equal(rec.diagnostics["real_err"], rec.diagnostics["real_err_z0"])
    assert isinstance(pb, LiftingProblem)


def test_trained_models_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BOOK_CACHE_DIR", str(tmp_path))
    first = A.trained_models(SMALL)
    assert not first["from_cache"] and len(first["wedge"]["bce"]) == 5
    second = A.trained_models(SMALL)
    assert second["from_cache"]
    assert torch.equal(first["full"]["theta"], second["full"]["theta"])
    assert torch.equal(first["theta_init"], _init_theta())
    (entry,) = tmp_path.glob("annulus_mlp-*.pt")
    entry.write_bytes(b"garbage")
    with pytest.warns(UserWarning, match="cannot be read"):
        third = A.trained_models(SMALL)  # a corrupt cache file is reported, moved aside and recomputed
    assert not third["from_cache"] and torch.equal(third["wedge"]["theta"], first["wedge"]["theta"])
    assert len(list(tmp_path.glob("annulus_mlp-*.pt.corrupt-*"))) == 1


def _init_theta():
    return torch.nn.utils.parameters_to_vector(A.init_model(SMALL).parameters()).detach().double()


def test_layer_blocks_cover_theta():
    blocks = A.layer_blocks()
    assert [n for n, _ in blocks] == ["W1", "b1", "W2", "b2", "W3", "b3", "W4", "b4"]
    assert blocks[-1][1].stop == 19009


def test_flows_in_processes_equal_flows_here():
    pb = _small_problem()
    starts = {"a": (_theta(5), ("wedge",)), "b": (_theta(6), ("wedge",))}
    kw = dict(steps=3, record_every=1, snapshot_stops=(0, 3), progress=False)
    here = A.run_conditions(pb, starts, workers=1, **kw)
    pooled = A.run_conditions(pb, starts, workers=2, **kw)
    assert list(here) == list(pooled) == ["a", "b"]
    for name in starts:
        assert list(here[name].records) == list(pooled[name].records)
        assert len(here[name].records) == 6  # (c, b) × (resolved, fixed sensitivity, fixed minnorm)
        for key, rec in here[name].records.items():
            other = pooled[name].records[key]
            assert rec.diagnostics.keys() == other.diagnostics.keys()
            for k, values in rec.diagnostics.items():
                assert np.array_equal(values, other.diagnostics[k], equal_nan=True), (name, key, k)
    single = A.run_condition(pb, "a", starts["a"][0], datasets=("wedge",), **kw)
    assert all(
        np.array_equal(single.records[key].diagnostics["defect"], rec.diagnostics["defect"])
        for key, rec in pooled["a"].records.items()
    )
