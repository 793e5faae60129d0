"""Unit tests for lib.paper_b.mexican_hat: the true system, data, the force Jacobian, the lifts, the walks, caching.

The hand-written SiLU gradient kernel is tested against autograd in ``tests/kernels/test_silu_mlp.py``."""

from __future__ import annotations

import math

import pytest
import torch
from torch.func import grad, jacrev

from lib.paper_b import mexican_hat as H
from lib.paper_b.symmetry import polar_grid


def _small_probes(n_alpha: int = 3) -> H.Probes:
    return H.pooled_probes(H.POOLED_ALPHAS[:: 21 // n_alpha][:n_alpha], polar_grid(3, 8))


def _theta(seed: int = 0) -> torch.Tensor:
    """A generic (not zero-bias) float64 parameter vector, so every term of the Jacobian is exercised."""
    gen = torch.Generator().manual_seed(seed)
    base = H.v_vector(H.ASRNN.init(seed=seed))
    return base + 0.1 * torch.randn(base.shape, generator=gen, dtype=torch.float64)


def test_leapfrog_conserves_energy():
    q0, p0 = H.sample_initial_conditions(16, -0.8, seed=3)
    traj = H.leapfrog_true(q0, p0, -0.8, steps=50)
    e = H.energy(traj[..., :2], traj[..., 2:], -0.8)
    assert traj.shape == (16, 51, 4) and traj.dtype == torch.float64
    assert float((e - e[:, :1]).abs().max()) < 1e-5  # O(dτ²) with dτ = 1e-3, no drift over t = 5


def test_initial_conditions_respect_energy_bound_and_seed():
    q, p = H.sample_initial_conditions(200, 1.1, seed=7)
    assert float(H.energy(q, p, 1.1).max()) <= 3.0
    assert float(q.abs().max()) <= 2.0 and float(p.abs().max()) <= 2.0
    q2, p2 = H.sample_initial_conditions(200, 1.1, seed=7)
    q3, _ = H.sample_initial_conditions(200, 1.1, seed=8)
    assert torch.equal(q, q2) and torch.equal(p, p2) and not torch.equal(q, q3)


def test_true_force_is_minus_gradient_and_rotation_equivariant():
    q = polar_grid(5, 12).requires_grad_(True)
    for a in (-1.0, 0.0, 0.7):
        (auto,) = torch.autograd.grad(H.energy(q, torch.zeros_like(q), a).sum(), q)
        assert torch.allclose(H.true_force(q, a), -auto, atol=1e-14)
    probes = H.pooled_probes()
    assert H.true_lie_derivative(probes) < 1e-12


def test_windows_are_seeded_split_and_consistent():
    cfg = H.DataConfig(alphas=(-0.6, 0.2), ics_per_alpha=2, window=6, splits=5, instants=3, val_fraction=0.25)
    tr, va = H.make_windows(cfg)
    tr2, va2 = H.make_windows(cfg)
    assert len(tr) + len(va) == 20 and len(va) == 5
    assert torch.equal(tr.start, tr2.start) and torch.equal(va.idx, va2.idx)
    assert bool((tr.idx[:, 0] == 0).all()) and bool((tr.idx.diff(1) > 0).all()) and int(tr.idx.max()) <= 5
    assert torch.equal(tr.target[:, 0], tr.start)
    # a target equals the ground truth integrated from the window start to that instant
    i = 0
    k = int(tr.idx[i, -1])
    gt = H.leapfrog_true(tr.start[i : i + 1, :2], tr.start[i : i + 1, 2:], float(tr.alpha[i]), steps=k)
    assert torch.allclose(gt[0, -1], tr.target[i, -1], atol=1e-12)
    other = H.make_windows(H.DataConfig(**{**cfg.__dict__, "seed": 5}))[0]
    assert not torch.equal(other.start, tr.start)


def test_force_jacobian_matches_torch_func_and_finite_differences():
    theta = _theta(4)
    probes = _small_probes()
    J = H.force_jacobian(theta, probes)
    assert J.shape == (probes.rows, H.N_V_PARAMS)

    def F(th):
        ps = H.v_params_of(th)

        def V(q, a):
            return H.mlp_value(ps, torch.cat([q, a.reshape(1)])[None])[0]

        return -torch.func.vmap(grad(V))(probes.q, probes.alpha).reshape(-1)

    J_func = jacrev(F)(theta)
    assert torch.allclose(J, J_func, atol=1e-12, rtol=1e-10)
    gen = torch.Generator().manual_seed(5)
    for _ in range(3):
        v = torch.randn(theta.shape, generator=gen, dtype=torch.float64)
        h = 1e-6
        fd = (H.pooled_force(theta + h * v, probes) - H.pooled_force(theta - h * v, probes)).reshape(-1) / (2 * h)
        assert torch.allclose(J @ v, fd, atol=1e-7, rtol=1e-6)
    # the output-bias column is identically dead (a constant in V has no force)
    assert float(J[:, -1].abs().max()) == 0.0


def test_sketched_svd_matches_exact_lift():
    from lib.paper_b.lifting import lift

    theta = _theta(6)
    probes = _small_probes(4)
    J = H.force_jacobian(theta, probes)
    eta = H.generator_field(theta, probes).reshape(-1)
    exact = lift(J, eta, gauge="minnorm", method="svd")
    sk = lift(J, eta, gauge="minnorm", svd=H.sketched_svd(J, rank=min(J.shape)))
    assert sk.rank == exact.rank
    assert torch.allclose(sk.coef, exact.coef, atol=1e-8 * float(exact.coef.norm()))
    with pytest.raises(ValueError, match="raise rank"):
        H.sketched_svd(J, rank=max(4, exact.rank // 2))


def test_defect_orthogonal_to_generator_on_polar_grid():
    theta = _theta(7)
    probes = H.pooled_probes((-0.5, 0.3))
    d = H.defect_field(theta, probes).reshape(-1)
    g = H.generator_field(theta, probes).reshape(-1)
    assert abs(float(d @ g)) / float(d.norm() * g.norm()) < 1e-10


@pytest.mark.parametrize("grid", [polar_grid(3, 8), torch.tensor([[0.3, 0.1], [-0.2, 0.5], [0.1, -0.7]])])
def test_reynolds_field_by_orbits_matches_the_direct_average(grid):
    from lib.paper_b.symmetry import reynolds_vector

    theta = _theta(5)
    probes = H.pooled_probes((-0.8, 0.0, 0.6), grid)
    direct = reynolds_vector(H.tiled_force(theta, probes), probes.q, 64)
    assert torch.allclose(H.reynolds_field(theta, probes), direct, atol=1e-14, rtol=0)


def test_rollout_and_loss_shapes_and_training_step_runs():
    model = H.ASRNN.init(seed=1)
    q0, p0 = torch.zeros(4, 2), torch.ones(4, 2)
    traj = H.rollout(model, q0, p0, 0.5, steps=3)
    assert traj.shape == (4, 4, 4) and torch.equal(traj[:, 0, 2:], p0)
    cfg = H.ASRNNConfig(
        data=H.DataConfig(ics_per_alpha=1, window=5, splits=4, instants=2), steps=3, batch=8, eval_every=1
    )
    res = H.train_asrnn(cfg, progress=False)
    assert res.val_mse.shape == (4,) and math.isfinite(res.final_val_mse)


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(TypeError, match="alpha"):
        H.sample_initial_conditions(3, "0.5", seed=0)
    with pytest.raises(TypeError, match="alpha"):
        H.leapfrog_true(torch.zeros(2, 2), torch.zeros(2, 2), [0.1], steps=1)
    with pytest.raises(ValueError, match=r"shape \(\.\.\., 2\)"):
        H.leapfrog_true(torch.zeros(2, 3), torch.zeros(2, 3), 0.1, steps=1)
    with pytest.raises(ValueError, match="alpha must be"):
        H.v_input(torch.zeros(4, 2), torch.zeros(3))
    with pytest.raises(ValueError, match="theta"):
        H.v_params_of(torch.zeros(10))
    with pytest.raises(ValueError, match="kind"):
        H.pooled_lift(_theta(), _small_probes(1), "x")
    with pytest.raises(ValueError, match="lr_final"):
        H.ASRNNConfig(lr=1e-3, lr_final=1e-2)
    with pytest.raises(ValueError, match="tau"):
        H.MexicanHatProblem(_small_probes(1), tau=0.0)
    with pytest.raises(TypeError, match="DataConfig"):
        H.make_windows({"window": 3})


def test_cache_roundtrip_and_corrupt_checkpoint(tmp_path, monkeypatch):
    monkeypatch.setenv("BOOK_CACHE_DIR", str(tmp_path))
    cfg = H.ASRNNConfig(
        data=H.DataConfig(ics_per_alpha=1, window=4, splits=3, instants=2), steps=2, batch=4, eval_every=1,
        snapshot_steps=(1,),
    )  # fmt: skip
    first = H.train_cached(cfg, progress=False)
    again = H.train_cached(cfg, progress=False)
    assert not first.from_cache and again.from_cache and set(again.snapshots) == {1}
    for a, b in zip(first.model.parameters(), again.model.parameters(), strict=True):
        assert torch.equal(a, b)
    (path,) = tmp_path.glob("asrnn-*.pt")
    path.write_bytes(path.read_bytes()[:100])
    with pytest.warns(UserWarning, match="cannot be read"):
        third = H.train_cached(cfg, progress=False)  # reported, moved aside, recomputed: the same weights
    assert not third.from_cache and len(list(tmp_path.glob("asrnn-*.pt.corrupt-*"))) == 1
    for a, b in zip(first.model.parameters(), third.model.parameters(), strict=True):
        assert torch.equal(a, b)


def test_problem_reuses_its_scratch_jacobian_without_touching_the_callers():
    probes = _small_probes()
    problem = H.MexicanHatProblem(probes, method="gram")
    theta_a, theta_b = _theta(1), _theta(2)
    J_a = H.force_jacobian(theta_a, probes)
    kept = J_a.clone()
    first = problem.solve(theta_b, "c")
    buffer = problem._scratch
    again = problem.solve(theta_b, "c")
    assert problem._scratch is buffer  # reused, not reallocated
    assert torch.equal(first.lift.coef, again.lift.coef)
    assert torch.equal(J_a, kept)  # a Jacobian the caller holds is never the scratch buffer
    assert torch.equal(buffer, H.force_jacobian(theta_b, probes))
    assert torch.equal(first.lift.coef, H.pooled_lift(theta_b, probes, "c", method="gram").lift.coef)
    with pytest.raises(ValueError, match="out must be"):
        H.force_jacobian(theta_a, probes, out=torch.empty(3, 3, dtype=torch.float64))


def test_walks_follow_the_exact_flows_and_share_the_runner():
    from lib.paper_b.lifting_problem import LiftingProblem

    probes = _small_probes()
    problem = H.MexicanHatProblem(probes, sketch_rank=probes.rows)
    assert isinstance(problem, LiftingProblem)
    walks = H.run_walks(problem, _theta(3), steps=2, dt=0.01, progress=False)
    resolved_b = walks.walks["b", "resolved"]
    assert resolved_b.diagnostics["defect"][-1] == pytest.approx(resolved_b.diagnostics["defect_pred"][-1], rel=1e-2)
    assert resolved_b.diagnostics["force"].shape == (3, probes.rows)
    assert resolved_b.diagnostics["profile"].shape == (3, len(H.UNSEEN_ALPHAS), 240)
    assert walks.drift("c")[0] == 0.0 and len(walks.table().rows) == 4
    glue = walks.glue()
    assert glue["defect_ratio_b_predicted"] == pytest.approx(math.exp(-0.02))
