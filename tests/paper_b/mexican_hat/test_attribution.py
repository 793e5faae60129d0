"""Unit tests for the Mexican hat's attribution, sketch gate and the authors' walk (issue 16 items 1–7)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from lib.paper_b import mexican_hat as H
from lib.paper_b.mexican_hat import attribution as A
from lib.paper_b.mexican_hat import attribution_report as AR
from lib.paper_b.mexican_hat import authors, gate
from tests.paper_b.test_mexican_hat import _small_probes, _theta


def test_layer_blocks_cover_v_and_the_output_bias_is_dead():
    blocks = A.v_layers()
    assert [s.stop - s.start for _, s in blocks] == [128, 1056, 1056, 33]
    assert blocks[-1][1].stop == H.N_V_PARAMS
    J = H.force_jacobian(_theta(1), _small_probes())
    summary = A.sensitivity_summary(J)
    assert summary["S"][-1] == 0.0  # a constant in V exerts no force
    assert summary["S"][0] > 0


def test_participation_ratio_limits():
    J = torch.zeros(8, 3, dtype=torch.float64)
    J[:, 0] = 1.0  # the same at every probe: ratio 1
    J[0, 1] = 2.0  # at one probe only (4 probes of 2 components): ratio 1/4
    pr = A.participation(J, dim_y=2)
    assert pr[0] == pytest.approx(1.0) and pr[1] == pytest.approx(0.25) and torch.isnan(pr[2])
    with pytest.raises(ValueError, match="dim_y=3"):
        A.participation(J, dim_y=3)


def test_orthogonality_bound_holds_for_orthogonal_targets():
    gen = torch.Generator().manual_seed(0)
    J = torch.randn(40, 6, generator=gen, dtype=torch.float64)
    eta = torch.randn(40, generator=gen, dtype=torch.float64)
    delta = torch.randn(40, generator=gen, dtype=torch.float64)
    delta -= (delta @ eta) / (eta @ eta) * eta  # ⟨η, δ⟩ = 0, as eq. 22 gives
    svd = H.sketched_svd(J, rank=6)
    snap = A.snapshot(J, svd, {"c": eta, "b": delta}, tau=1e-3)
    assert abs(snap.relation["minnorm"]["cos_function"]) <= snap.bound * (1 + 1e-12)
    assert snap.contribution("c", "minnorm").sum() >= float((J @ torch.from_numpy(snap.coefs["c", "minnorm"])).norm())
    assert A.orthogonality_bound(45.0, 45.0) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="keys 'c' and 'b'"):
        A.snapshot(J, svd, {"c": eta}, tau=1e-3)


def test_compare_spectra_calls_a_flicker():
    exact = torch.tensor([1.0, 0.5, 1.02e-3, 0.98e-3, 1e-5], dtype=torch.float64)
    same = gate.compare_spectra(exact.clone(), exact, tau=1e-3, band=0.05)
    assert not same["flicker"] and same["rank_sketch"] == 3 and same["margin"] == pytest.approx(0.02)
    moved = exact.clone()
    moved[2] = 0.99e-3  # the sketch puts σ₃ below the cutoff
    out = gate.compare_spectra(moved, exact, tau=1e-3, band=0.05)
    assert out["flicker"] and out["rank_sketch"] == 2 and out["rank_exact"] == 3
    with pytest.raises(ValueError, match="band"):
        gate.compare_spectra(exact, exact, tau=1e-3, band=0.0)


def test_exact_singular_values_match_svd():
    gen = torch.Generator().manual_seed(1)
    J = torch.randn(50, 7, generator=gen, dtype=torch.float64)
    assert torch.allclose(gate.exact_singular_values(J), torch.linalg.svdvals(J), rtol=1e-10)


def test_gated_walks_equal_the_plain_walks_without_a_flicker():
    probes, theta0 = _small_probes(), _theta(3)
    plain = H.run_walks(H.MexicanHatProblem(probes, sketch_rank=64), theta0, steps=2, dt=0.01, progress=False)
    problem = gate.GatedProblem(probes, sketch_rank=64)
    g = problem.start_gate(theta0, every=2, steps=2, snapshot_every=1)
    gated = H.run_walks(problem, theta0, steps=2, dt=0.01, progress=False)
    assert problem.stop_gate() is g and problem.gate is None
    counts = g.counts()
    assert counts["gate_checks"] == 3 and counts["gate_flickers"] == 0  # θ₀ once, both walks' last stops
    assert sorted(g.snapshots) == [("b", 0), ("b", 1), ("b", 2), ("c", 0), ("c", 1), ("c", 2)]
    for key, w in plain.walks.items():
        assert torch.equal(w.theta_final, gated.walks[key].theta_final)
    with pytest.raises(ValueError, match="every"):
        problem.start_gate(theta0, every=0, steps=2)


def test_authors_walk_forward_backward_and_bad_parameters():
    probes, theta0 = _small_probes(), _theta(4)
    problem = H.MexicanHatProblem(probes, sketch_rank=64)
    w = authors.authors_walk(problem, theta0, "b", "minnorm", step=0.01, forward=2, backward=1)
    assert len(w.times) == 4 and w.start == 1 and w.times[0] < 0 < w.times[-1]
    assert w.ratio("forward") < 1 < w.ratio("backward")  # b* reduces the defect, −b* raises it
    assert w.predicted("forward") == pytest.approx(math.exp(-w.times[-1]))
    assert np.all(np.diff(w.times) > 0)
    for kw, name in ((dict(step=0.0), "step"), (dict(backward=-1), "backward"), (dict(forward=1.5), "forward")):
        with pytest.raises((ValueError, TypeError), match=name):  # lib.core.params: a non-integer is a TypeError
            authors.authors_walk(problem, theta0, "c", "minnorm", **kw)
    with pytest.raises(ValueError, match="gauge"):
        authors.authors_walk(problem, theta0, "c", "raw")
    with pytest.raises(ValueError, match="end"):
        w.ratio("sideways")


def test_a_flicker_switches_the_re_solve_to_the_exact_route(monkeypatch):
    probes, theta0 = _small_probes(), _theta(5)
    problem = gate.GatedProblem(probes, sketch_rank=64)
    problem.start_gate(theta0, every=1, steps=0)
    forced = {"rank_sketch": 1, "rank_exact": 2, "flicker": True, "margin": 0.0, "sketch_error": 0.0}
    monkeypatch.setattr(gate, "compare_spectra", lambda *a, **k: forced)
    sol = problem.solve(theta0, "b")
    g = problem.stop_gate()
    exact = H.pooled_lift(theta0, probes, "b", method="gram").lift
    assert torch.allclose(sol.lift.coef, exact.coef, rtol=1e-8, atol=1e-12) and sol.lift.method == "gram"
    assert g.counts()["gate_flickers"] == 1
    assert "switched" in AR.gate_glue(g)["gate_text"]
