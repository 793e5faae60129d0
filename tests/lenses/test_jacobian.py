"""The Jacobian in Schur coordinates (``lib.lenses``) against autograd and finite differences, its two routes against
each other, the predictions against the book's ablations, the scores against known cases, and bad parameters."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from lib.lenses import jacobian as lj
from lib.lenses import scores
from lib.lenses.chapter import LensStudy
from lib.lenses.solution import check_taus, lens_solution, path_dfvu
from lib.paper_a import rnn, schur
from lib.paper_a.task_analysis.profiles import profile_solution, subset_key


def _net(seed=1, n=8, n_x=2, n_y=2, batch=3, steps=6):
    g = torch.Generator().manual_seed(seed)
    w = {
        "W_xh": torch.randn(n, n_x, generator=g, dtype=torch.float64),
        "W_hh": torch.randn(n, n, generator=g, dtype=torch.float64) * 0.5,
        "W_hy": torch.randn(n_y, n, generator=g, dtype=torch.float64),
    }
    x = torch.randn(batch, steps, n_x, generator=g, dtype=torch.float64)
    mask = torch.ones(batch, steps, n_y, dtype=torch.float64)
    mask[:, :2] = 0.0  # the first steps are not scored (as in the copy task's replay window)
    sp = schur.split(schur.ordered_real_schur(w["W_hh"].numpy()), 0.9)
    return w, x, mask, sp


def _rollout_of(w, coords, x):
    Q, T = torch.tensor(coords.Q), torch.tensor(coords.sectors.form.T)
    idx = (torch.as_tensor(coords.rows), torch.as_tensor(coords.cols))

    def f(v):
        dT = torch.zeros_like(T).index_put(idx, v)
        return rnn.rollout({**w, "W_hh": Q @ (T + dT) @ Q.T}, x)[0]

    return f


def test_adjoint_jacobian_matches_autograd_and_finite_differences():
    w, x, mask, sp = _net()
    coords = lj.coordinates(sp)
    J = lj.coupling_jacobian(w, coords, x, mask)
    f = _rollout_of(w, coords, x)
    keep = mask.reshape(-1) > 0
    J_auto = torch.func.jacrev(lambda v: f(v).reshape(-1))(torch.zeros(coords.size, dtype=torch.float64))[keep]
    assert J.shape == (int(keep.sum()), coords.size)
    assert torch.allclose(J, J_auto, rtol=0, atol=1e-12 * J_auto.abs().max())
    eps = 1e-6
    for i in (0, coords.size // 2, coords.size - 1):
        e = torch.zeros(coords.size, dtype=torch.float64)
        e[i] = eps
        fd = ((f(e) - f(-e)) / (2 * eps)).reshape(-1)[keep]
        assert torch.allclose(J[:, i], fd, atol=1e-7)


def test_routes_agree_jvp_loop_and_adjoint():
    w, x, mask, sp = _net(seed=2)
    coords = lj.coordinates(sp)
    J = lj.coupling_jacobian(w, coords, x, mask)
    assert torch.allclose(lj.jacobian_by_columns(w, coords, x, mask), J, atol=1e-12)
    d = coords.removal(["CR", "CC"])
    jd = lj.coupling_jvp(w, coords, d, x)[0]
    assert torch.allclose(jd.reshape(-1)[mask.reshape(-1) > 0], J @ torch.tensor(d), atol=1e-12)


def test_coordinates_rebuild_paper_a_ablation():
    _, _, _, sp = _net(seed=3)
    coords = lj.coordinates(sp)
    assert coords.size == sum(int(sp.masks[b].sum()) for b in schur.ABLATION_BLOCKS)
    for s in (("RR",), ("CR",), ("CC",), ("RR", "CR", "CC")):
        W = coords.Q @ (sp.form.T + coords.matrix(coords.removal(s))) @ coords.Q.T
        assert np.allclose(W, schur.ablate(sp, s).W, atol=1e-13)


def test_lens_reproduces_the_books_ablation_and_its_own_linearisation():
    w, x, mask, sp = _net(seed=4, batch=5)
    y = rnn.rollout(w, x)[0] + 0.1 * torch.randn(5, 6, 2, generator=torch.Generator().manual_seed(0))
    batch = (x, y, mask)
    lens = lens_solution("toy", 0, w, batch, probe_rows=10, taus=(1e-3, 1e-2), path_points=3)
    prof = profile_solution(w, batch, seed=0)
    coords = lj.coordinates(sp)
    J = lj.coupling_jacobian(w, coords, x, mask)
    for s in (s for s in schur.all_subsets() if s):
        k = subset_key(s)
        assert (k in lens.empty) == (k in prof.empty)
        if k in lens.empty:
            continue
        assert lens.dfvu[k] == pytest.approx(prof.dfvu[k], rel=1e-12, abs=1e-15)
        assert lens.change_pred[k] == pytest.approx(float((J @ torch.tensor(coords.removal(s))).norm()), rel=1e-10)
    assert len(lens.keys) >= 3
    block, (lam, real, gn) = next(iter(lens.path.items()))
    assert lam[0] == 0.0 and lam[-1] == 1.0 and gn[0] == 0.0
    assert real[0] == pytest.approx(0.0, abs=1e-12)  # Q T Qᵀ rebuilds W to rounding
    assert real[-1] == pytest.approx(lens.dfvu[block], abs=1e-12)  # λ = 1 is paper A's ablation
    assert gn[-1] == pytest.approx(lens.dfvu_gn[block], rel=1e-12)


def test_null_fraction_is_the_lift_complement():
    """The near-null fraction is 1 − ‖V_rᵀδ‖²/‖δ‖² with V_r from paper B's truncated SVD of the same J."""
    from lib.paper_b.lifting import truncated_svd

    w, x, mask, sp = _net(seed=5, batch=4)
    y = rnn.rollout(w, x)[0]
    lens = lens_solution("toy", 0, w, (x, y, mask), probe_rows=10_000, taus=(1e-2,))
    coords = lj.coordinates(sp)
    V = truncated_svd(lj.coupling_jacobian(w, coords, x, mask), tau=1e-2, method="svd").V.numpy()
    d = coords.removal(["CC"])
    assert lens.null[1e-2]["CC"] == pytest.approx(1 - np.sum((V.T @ d) ** 2) / np.sum(d**2), abs=1e-9)


def test_scores_on_known_cases():
    assert scores.auc([1, 2, 3, 4], [False, False, True, True]) == 1.0
    assert scores.auc([4, 3, 2, 1], [False, False, True, True]) == 0.0
    assert scores.auc([1, 1, 1, 1], [False, True, False, True]) == 0.5
    assert math.isnan(scores.auc([1, 2], [True, True]))
    assert scores.spearman([1, 2, 3, 4], [10, 20, 30, 45]) == pytest.approx(1.0)
    assert scores.log_factor([2.0], [1.0])[0] == pytest.approx(math.log10(2))
    rates = scores.leave_one_out_rates(["a", "a", "b", "b"], ["s1", "s2", "s1", "s2"], [True, False, True, True])
    assert rates.tolist() == [0.0, 1.0, 1.0, 1.0]


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: check_taus([0.0]), "tau"),
        (lambda: check_taus([-1e-3]), "tau"),
        (lambda: LensStudy(tau=0.0), "tau"),
        (lambda: LensStudy(taus=(1e-3, 2.0)), "tau"),
        (lambda: lj.check_lam(1.5), "lam"),
        (lambda: lj.check_lam(-0.1), "lam"),
        (lambda: lj.check_blocks(["RR", "XX"]), "blocks"),
        (lambda: lj.coordinates(_net()[3], ["TT"]), "blocks"),
        (lambda: LensStudy(solutions=1), "solutions"),
        (lambda: LensStudy(alpha=1.5), "alpha"),
    ],
)
def test_bad_parameters_are_refused(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_path_refuses_lambda_outside_the_unit_interval():
    w, x, mask, sp = _net(seed=6)
    coords = lj.coordinates(sp)
    with pytest.raises(ValueError, match="lam"):
        path_dfvu(w, coords, ["CC"], 1.2, (x, rnn.rollout(w, x)[0], mask), 0.0)


def test_screening_is_the_gauss_newton_of_each_single_entry():
    from lib.lenses import screening

    w, x, mask, sp = _net(seed=7, batch=5)
    y = rnn.rollout(w, x)[0] + 0.1
    coords = lj.coordinates(sp)
    pred = screening.single_entry_predictions(w, coords, (x, y, mask), chunk_trials=2)
    real = screening.single_entry_real(w, coords, (x, y, mask))
    m = mask
    J = lj.coupling_jacobian(w, coords, x, mask)
    out = rnn.rollout(w, x)[0]
    var = float((((y - (y * m).sum((0, 1)) / m.sum((0, 1))) ** 2) * m).sum())
    r = (out - y).reshape(-1)[mask.reshape(-1) > 0]
    for i in (0, coords.size - 1):
        d = torch.zeros(coords.size, dtype=torch.float64)
        d[i] = -coords.values[i]
        jd = J @ d
        assert pred[i] == pytest.approx(float((2 * r @ jd + jd @ jd) / var), rel=1e-10)
    small = np.abs(coords.values) < 0.05  # tiny entries: first order is exact to O(T_i²)
    if small.any():
        assert np.allclose(pred[small], real[small], atol=1e-4)
    assert screening.top_k_overlap(pred, pred, 3) == 1.0
    with pytest.raises(ValueError, match="k="):
        screening.top_k_overlap(pred, real, 0)


def test_null_step_leaves_the_retained_directions_alone():
    from lib.lenses.near_null_flow import null_step
    from lib.paper_b.lifting import truncated_svd

    for batch in (1, 6):  # a wide J (Gram J Jᵀ) and a tall one (Gram Jᵀ J)
        w, x, mask, sp = _net(seed=8, batch=batch, steps=8)
        coords = lj.coordinates(sp)
        J = lj.coupling_jacobian(w, coords, x, mask)
        step = null_step(J, coords.values, 1e-3)
        V = truncated_svd(J, tau=1e-3, method="svd").V.numpy()
        assert np.abs(V.T @ step).max() <= 1e-8 * np.abs(coords.values).max()
        if J.shape[0] < J.shape[1]:  # a null space exists: the step shrinks the couplings
            assert np.dot(step, -coords.values) > 0.01 * np.dot(coords.values, coords.values)


def test_flow_sheds_mass_and_refuses_bad_parameters():
    from lib.lenses.near_null_flow import shed_mass

    w, x, mask, sp = _net(seed=9, batch=2)
    coords = lj.coordinates(sp)
    batch = (x, rnn.rollout(w, x)[0] + 0.1, mask)
    f = shed_mass(w, coords, batch, eps=10.0, tau=1e-3, steps=3, rate=0.5, probe_rows=4)
    assert f.steps_within == 3 and np.all(np.diff(f.mass) > 0) and f.shed == f.mass[-1]
    for kwargs, name in (({"rate": 0.0}, "rate"), ({"rate": 1.5}, "rate"), ({"eps": -1.0}, "eps"), ({"tau": 0}, "tau")):
        with pytest.raises(ValueError, match=name):
            shed_mass(w, coords, batch, **{"eps": 0.01, "tau": 1e-3, **kwargs})
