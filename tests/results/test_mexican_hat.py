"""Numbers the Mexican-hat chapter promises (paper B §3.2, App. C.1; issue 6), read from ``_build/results.json``.

The paper prints no numbers for this experiment; the bounds come from the physics and the lifting theory:
* the true force is exactly rotation-equivariant, so its Lie derivative is zero up to rounding;
* on a rotation-invariant probe set the defect is orthogonal to the orbit direction (eq. 22) up to rounding, while on
  a square lattice the 64-point Reynolds average no longer matches the grid and the cosine is clearly non-zero;
* a resolved walk along c* is (to first order per step) a rotation of the force, which keeps the defect norm: 5%;
* a resolved walk along b* follows F_t = ΠF₀ + e^{−t}δ₀, so the defect must fall, to about e^{−t};
* the fixed walk is a straight line in parameter space and must separate from the resolved one.
The paper's and its notes' claims are judged in ``test_claims.py``.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.results

K = "mexican_hat::"


def test_true_force_has_zero_lie_derivative(results):
    assert results[K + "lie_derivative_true_force"] <= 1e-10


def test_defect_orthogonal_to_orbit_on_polar_grid_only(results):
    assert abs(results[K + "cos_delta_eta_polar"]) <= 1e-8
    assert abs(results[K + "cos_delta_eta_square"]) >= 1e-3  # trial: 0.075; the authors' repo: about −0.1


def test_learned_model_is_accurate_and_nearly_equivariant(results):
    # Relative RMS rollout error over the training horizon at α never seen in training: a model that has learned
    # the flow tracks trajectories to a few percent of the state scale (an untrained one is off by O(1)).
    assert 0 < results[K + "rollout_error_unseen_alpha"] <= 0.05
    # A 73° rotation of a learned, not built-in, symmetry: small but not zero (authors' notes 4e-3 to 9e-3).
    assert 0 < results[K + "equivariance_error_73deg"] <= 0.05
    assert results[K + "val_mse"] < 6.7e-5  # the chapter says: below the authors' 6.7e-5 (trial: 3.5e-5)


def test_resolved_walks_follow_the_predicted_flows(results):
    assert abs(results[K + "defect_ratio_c_resolved"] - 1) <= 0.05
    b = results[K + "defect_ratio_b_resolved"]
    assert b < 1
    assert abs(b - results[K + "defect_ratio_b_predicted"]) <= 0.1  # exact flow: e^{-t}
    assert results[K + "defect_ratio_b_predicted"] < 0.9  # the walk is long enough to show the decay


def test_fixed_walk_drifts_from_resolved(results):
    assert results[K + "drift_fixed_vs_resolved"] > 1e-4


def test_the_gauge_matters_for_a_fixed_walk(results):
    # Jc is the same in both gauges, but the straight line θ₀ + t c is not: the frozen walks end apart
    plain, gauged = results[K + "exact_dist_c_fixed"], results[K + "exact_dist_c_fixed_gauged"]
    assert abs(plain - gauged) > 0.01 * max(plain, gauged)


def test_the_exact_check_is_reported(results):
    assert results[K + "sketch_vs_gram"] < 1e-6
    assert results[K + "sketch_check_text"].startswith("agrees")


# ------------------------------------------------------------------ issue 16: attribution, relations, walks, gate


def test_the_output_bias_of_v_is_dead(results):
    # a constant in V exerts no force: its column of the force Jacobian, hence S_i, is exactly zero
    assert results[K + "S_output_bias_trained"] == 0.0
    assert results[K + "S_output_bias_init"] == 0.0


def test_realised_moves_of_c_and_b_obey_the_truncated_orthogonality(results):
    # eq. 22: ⟨δ, XF⟩ = 0 on the polar grid, so |cos(Pη, Pδ)| ≤ tan∠(η, Pη)·tan∠(δ, Pδ) (min-norm lifts: J c = Pη)
    assert abs(results[K + "cos_cb_function_plain"]) <= results[K + "cos_cb_bound"]
    assert results[K + "cos_cb_within_bound_walks"] is True
    # the bound itself is informative only when both targets are mostly reachable (angles well below 45°)
    assert results[K + "cos_cb_bound"] < 1


def test_authors_walk_moves_the_defect_as_the_flows_predict(results):
    for tag in ("plain", "gauged"):
        # along b* the defect falls (e^{−t}), backward (−b*) it rises (e^{+|t|})
        fwd, bwd = results[K + f"authors_ratio_fwd_b_{tag}"], results[K + f"authors_ratio_bwd_b_{tag}"]
        assert fwd < 1 < bwd
        assert abs(fwd - results[K + f"authors_pred_fwd_b_{tag}"]) <= 0.1
        # along c* a rotation keeps the defect (first order per step): the book's own 5 % for the c* walk
        assert abs(results[K + f"authors_ratio_fwd_c_{tag}"] - 1) <= 0.05
    # the walk compared is the authors' (notes §9.5)
    from lib.papers.symmetry_lifting import AUTHORS_WALK

    assert results[K + "authors_step"] == AUTHORS_WALK["unit_step"]
    assert results[K + "authors_forward"] == AUTHORS_WALK["forward"]
    assert results[K + "authors_backward"] == AUTHORS_WALK["backward"]


def test_the_sketch_gate_ran_and_the_sketch_is_accurate(results):
    # the start and the end of both resolved walks at least (θ₀ counted once)
    assert results[K + "gate_checks"] >= 3
    # a range finder of 96 columns with one power iteration, for a retained rank near 40, resolves the retained
    # singular values to far better than the band (Halko, Martinsson & Tropp 2011, thm. 10.8 with fast decay)
    assert results[K + "gate_max_sketch_error"] < 1e-6
    assert results[K + "gate_text"].startswith("No re-solve") == (results[K + "gate_flickers"] == 0)
