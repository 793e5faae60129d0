"""Every annulus condition side by side (issue #16): how c* and b* relate, the Figs. 5/6 panels, the §8.7 end-point
diagnostics and the aggregate sensitivities by layer, on a small network and short flows."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from lib.paper_b import annulus as A  # noqa: E402
from lib.paper_b import lifting, relations  # noqa: E402
from lib.paper_b.annulus import conditions, cosines  # noqa: E402
from lib.plots import annulus_conditions as cplots  # noqa: E402

SMALL = A.AnnulusConfig(hidden=8, epochs=5)
STEPS = 2


def _theta(seed: int) -> torch.Tensor:
    torch.manual_seed(seed)
    model = A.SimpleMLP(SMALL.hidden, SMALL.depth).double()
    return torch.nn.utils.parameters_to_vector(model.parameters()).detach()


def _problem() -> A.AnnulusProblem:
    return A.AnnulusProblem({d: A.make_data(arc, SMALL) for d, arc in A.ARCS.items()}, config=SMALL)


@pytest.fixture(scope="module")
def flows():
    pb = _problem()
    starts = {"init": (_theta(0), ("wedge", "full")), "wedge_trained": (_theta(1), ("wedge",)),
              "full_trained": (_theta(2), ("full",))}  # fmt: skip
    runs = A.run_conditions(pb, starts, workers=1, steps=STEPS, record_every=1, snapshot_stops=(0, 1, STEPS),
                            invariance_every=1, progress=False)  # fmt: skip
    return pb, runs


# ------------------------------------------------------------------------------------------------- the cosine bound


def test_cosine_bound_refuses_what_is_not_a_residual_or_a_cosine():
    for bad in ({"r_c": 1.0}, {"r_b": -0.1}, {"t_c": -1e-3}, {"t_b": float("nan")}, {"r_c": True}):
        args = {"r_c": 0.1, "r_b": 0.1, "t_c": 0.0, "t_b": 0.0, **bad}
        with pytest.raises(ValueError, match=next(iter(bad))):
            relations.realised_cosine_bound(**args)
    with pytest.raises(ValueError, match="cos_targets"):
        relations.realised_cosine_bound(0.1, 0.1, 0.0, 0.0, cos_targets=1.5)
    assert relations.realised_cosine_bound(0.0, 0.0, 0.0, 0.0, cos_targets=0.3) == 0.0  # exact lifts keep the cosine


def test_cosine_bound_holds_for_truncated_gauged_lifts_of_orthogonal_targets():
    """A random J with a decaying spectrum, cut at τ: the realised moves of two orthogonal targets are orthogonal up
    to the bound, which is not vacuous (it is below one and the cosine is not zero)."""
    g = torch.Generator().manual_seed(0)
    U, _ = torch.linalg.qr(torch.randn(60, 60, generator=g, dtype=torch.float64))
    V, _ = torch.linalg.qr(torch.randn(200, 60, generator=g, dtype=torch.float64))
    J = (U * torch.logspace(0, -6, 60, dtype=torch.float64)) @ V.T * torch.rand(200, generator=g, dtype=torch.float64)
    eta = torch.randn(60, generator=g, dtype=torch.float64)
    delta = torch.randn(60, generator=g, dtype=torch.float64)
    delta -= (delta @ eta) / (eta @ eta) * eta  # orthogonal targets, as eq. 22 makes them
    lifts = [lifting.lift(J, t, tau=1e-3) for t in (eta, delta)]
    tails = [float((J @ lf.coef - lf.projection).norm() / t.norm()) for lf, t in zip(lifts, (eta, delta), strict=True)]
    bound = relations.realised_cosine_bound(lifts[0].rel_residual, lifts[1].rel_residual, *tails)
    cos = float(torch.nn.functional.cosine_similarity(J @ lifts[0].coef, J @ lifts[1].coef, dim=0))
    assert 0 < abs(cos) <= bound * (1 + 1e-9) < 1


def test_lifts_share_one_decomposition_and_equal_fresh_ones():
    pb = _problem()
    theta = _theta(3)
    c = pb.lift(theta, "c")
    assert pb.lift(theta, "c") is c  # kept for this θ
    b = pb.lift(theta, "b")
    fresh = _problem()
    for kind, res in (("c", c), ("b", b)):
        ev = fresh.evaluate(theta)
        ref = lifting.lift(ev.jac, fresh.target(ev, kind), tau=fresh.tau, method="gram")
        assert torch.equal(res.coef, ref.coef) and res.rank == ref.rank


def test_lift_cosines_at_a_point(flows):
    pb, _ = flows
    theta = _theta(4)
    out = relations.lift_cosines(pb, theta)
    assert set(out) == set(relations.COSINE_KEYS)
    bound = relations.realised_cosine_bound(out["rel_res_c"], out["rel_res_b"], out["tail_c"], out["tail_b"],
                                            out["cos_targets"])  # fmt: skip
    assert abs(out["cos_function"] - out["cos_targets"]) <= bound * (1 + 1e-9) + 1e-15
    c, b = pb.lift(theta, "c").coef, pb.lift(theta, "b").coef
    assert out["cos_param"] == pytest.approx(float(c @ b / (c.norm() * b.norm())), abs=1e-12)


# ------------------------------------------------------------------------------------------------- the flows' records


def test_resolved_flows_record_the_cosines_and_fixed_ones_do_not(flows):
    _, runs = flows
    for c in A.CONDITIONS:
        for kind in A.KINDS:
            assert runs.record(c, kind, "resolved").diagnostics["cos_function"].shape == (STEPS + 1,)
            assert "cos_function" not in runs.record(c, kind, "fixed").diagnostics
    values = cosines.direction_cosines(runs)
    assert all(isinstance(v, float) for k, v in values.items() if k != "cos_departure_source")
    assert values["cos_departure_source"] in ("the probe set's, not the lift's", "not the probe set's alone")
    assert values["max_right_angle_dev_deg"] == pytest.approx(
        math.degrees(math.asin(max(values[f"max_cos_function_{c}"] for c in A.CONDITIONS)))
    )
    assert values["cos_param_start_wedge_init"] == values["cos_param_start_full_init"]
    assert len(cosines.direction_cosines_table(values).rows) == 3 * len(A.CONDITIONS)  # start, end of c*, of b*
    curves, bounds = cosines.direction_cosine_curves(runs)
    assert list(curves) == list(bounds) == ["wedge/init = full/init", "wedge/trained", "full/trained"]
    claim = cosines.annulus_orthogonality_claim(values, "annulus.html#x")
    assert claim.holds == all(
        abs(values[f"cos_function_start_{c}"]) <= values[f"orth_bound_start_{c}"] for c in A.CONDITIONS
    )
    plt.close(cplots.direction_cosine_curves(curves, bounds))


def test_direction_cosines_need_resolved_flows_that_recorded_them(flows):
    pb, runs = flows
    bare = A.run_conditions(pb, {"init": (_theta(0), ("wedge", "full"))}, workers=1, steps=1, progress=False)
    bare["init"].records[("c", "resolved", "sensitivity")].diagnostics.pop("cos_param")
    bare.update({k: runs[k] for k in ("wedge_trained", "full_trained")})
    with pytest.raises(ValueError, match="recorded no relation"):
        cosines.direction_cosines(bare)


def test_figure_panels_of_every_condition(flows):
    pb, runs = flows
    for mode in ("resolved", "fixed"):
        p = conditions.condition_figure_panels(pb, runs, (0, 1, STEPS), mode=mode, n=20)
        assert len(p["scores"]) == len(A.CONDITIONS) and all(len(r) == len(p["columns"]) == 5 for r in p["scores"])
        assert p["scores"][0][0].shape == (20, 20)
        dev = conditions.profile_departures(p["profiles"], mode=mode)
        assert {f"profile_dev_max_{mode}_init", f"profile_dev_max_{mode}_trained"} <= set(dev)
        fig = cplots.condition_boundaries(p["scores"], 4.0, p["data"], columns=p["columns"], notes=p["notes"],
                                          title=mode)  # fmt: skip
        plt.close(fig)
        plt.close(cplots.condition_profiles(np.arange(360.0), p["profiles"], title=mode))
    with pytest.raises(ValueError, match="mode"):
        conditions.condition_figure_panels(pb, runs, (0,), mode="frozen")
    with pytest.raises(ValueError, match="not recorded as snapshots"):
        conditions.condition_figure_panels(pb, runs, (0, STEPS + 1), mode="fixed")
    with pytest.raises(ValueError, match="rows"):
        cplots.condition_boundaries([[np.zeros((4, 4))]], 4.0, p["data"], columns=["a"], notes=[["x"]], title="t")


def test_endpoint_diagnostics(flows):
    _, runs = flows
    values = conditions.endpoint_diagnostics(runs)
    for c in A.CONDITIONS:
        for kind in A.KINDS:
            # a fixed flow walks a straight line: its length is the distance travelled; a resolved one is no shorter
            fixed, res = f"{kind}_fixed_{c}", f"{kind}_resolved_{c}"
            assert values[f"path_length_{fixed}"] == pytest.approx(values[f"param_dist_end_{fixed}"], rel=1e-9)
            assert values[f"path_length_{res}"] >= values[f"param_dist_end_{res}"] * (1 - 1e-12)
        # δ₀ = f₀ − Π f₀: the b* flow starts ‖δ₀‖/‖f₀‖ away from where it is headed
        assert values[f"end_dist_start_b_{c}"] == pytest.approx(values[f"defect_rel_start_{c}"], rel=1e-12)
    assert values["z0_locality"].endswith("further for every trained model than for the initial one")
    for c in A.CONDITIONS:  # the move of z₀ at the last stop against the one at the first, recomputed here
        rec = runs.record(c, "b", "fixed")
        pb = flows[0]
        moves = [pb.evaluate(rec.snapshots[s]).jac.matmul(rec.z0) for s in (0, STEPS)]
        drift = float((moves[1] - moves[0]).norm() / moves[0].norm())
        assert values[f"move_drift_z0_end_b_fixed_{c}"] == pytest.approx(drift, rel=1e-9)
    assert len(conditions.endpoint_diagnostics_table(values).rows) == 2 * 2 * len(A.CONDITIONS)
    curves = conditions.diagnostics_along_flows(runs)
    plt.close(cplots.diagnostics_along_flows(curves, conditions.DIAGNOSTICS))


# ------------------------------------------------------------------------------------------------- sensitivities


def test_sensitivity_by_block():
    pb = _problem()
    out = conditions.sensitivity_by_block(pb, {"a": _theta(5), "b": _theta(6)})
    for name in ("a", "b"):
        # ∂f/∂b4 = 1 at every probe, so the output bias has S = 1 whatever the weights (App. A.5)
        assert out["values"][f"sens_median_b4_{name}"] == pytest.approx(1.0, abs=1e-12)
        shares = [out["values"][f"sens_share_{b}_{name}"] for b, _ in out["blocks"]]
        assert math.fsum(shares) == pytest.approx(1.0, abs=1e-12)
        assert out["values"][f"sens_top_share_{name}"] == max(shares)
    bins = conditions.log_bin_edges(out["S"])
    assert bins[0] <= min(s[s > 0].min() for s in out["S"].values())
    plt.close(cplots.block_sensitivity_histograms(out["S"], out["blocks"], bins))
    assert len(conditions.block_sensitivity_table(out).rows) == len(out["blocks"])
    with pytest.raises(ValueError, match="at least one"):
        conditions.sensitivity_by_block(pb, {})
    with pytest.raises(ValueError, match="length"):
        conditions.sensitivity_by_block(pb, {"short": torch.zeros(5, dtype=torch.float64)})
    with pytest.raises(ValueError, match="no positive"):
        conditions.log_bin_edges({"dead": np.zeros(3)})


def test_observer_refuses_an_unknown_frozen_direction():
    with pytest.raises(ValueError, match="kind"):
        _problem().observer(("wedge",), invariance_every=1, steps=1, frozen=("a", "sensitivity"))


def test_move_drift_starts_at_zero_and_equals_a_recomputation(flows):
    pb, runs = flows
    rec = runs.record("full_trained", "c", "resolved")
    drift = rec.diagnostics["move_drift_z0"]
    assert drift[0] == 0.0
    moves = [pb.evaluate(rec.snapshots[s]).jac.matmul(rec.z0) for s in (0, STEPS)]
    assert drift[-1] == pytest.approx(float((moves[1] - moves[0]).norm() / moves[0].norm()), rel=1e-9)
