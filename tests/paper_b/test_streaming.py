"""Paper B's lift with J streamed by column blocks (``lib.paper_b.streaming``) and as per-layer factors
(``lib.paper_b.linear_factors``) against the dense J, on the book's two networks and three constructed ones; the route
an out-of-memory-sized request takes; blocks as Dask jobs and on a GPU.

The bound. The routes decompose J Jᵀ (the Gram route) and differ only in the order of its sums: the dense one forms J
and one Gram, the streamed one adds a Gram per block, the factored one a Hadamard product of factor Grams per layer.
An entry of J Jᵀ is a sum of p products; summed in another order it moves by a few ε times the sum of their
magnitudes, at most about ε·σ₁² for BLAS's blocked sums, so that the whole M × M matrix moves by at most about
M·ε·σ₁² in norm. A lift through the retained directions divides by σ_r², so c*, b*, their residuals and their images
may differ by a relative M·ε·(σ₁/σ_r)², σ_r the smallest retained singular value (at most M·ε/τ² at the cutoff τ).
The ranks agree where no singular value lies within that of the cutoff. A wrong route (a missing block, a wrong gauge,
another D) misses by order one."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn
from torch.func import grad, vmap

from lib.paper_b import any_module as AM
from lib.paper_b import lifting, streaming
from lib.paper_b import symmetry as sym
from lib.paper_b.annulus import init_model
from lib.paper_b.linear_factors import factors, linear_layers
from lib.paper_b.mexican_hat.model import ASRNN, mlp_value

EPS = torch.finfo(torch.float64).eps
OMEGA = sym.OMEGA
PROBES = sym.polar_grid(4, 12, extent=2.0)


def bound(lift: lifting.LiftResult) -> float:
    """M·ε·(σ₁/σ_r)² of a lift (module docstring)."""
    S = lift.singular_values
    return lift.projection.numel() * EPS * float(S[0] / S[lift.rank - 1]) ** 2


def _rel(a, b) -> float:
    return float((a - b).norm() / b.norm())


def both_routes(model, probes, gin, gout=None, **kw):
    """The dense lift of one module and its lifts by the other routes: in column blocks small enough to cut its
    tensors, and as per-layer factors where every parameter is in a linear layer."""
    dense = AM.lift_symmetry(model, probes, gin, gout, method="gram", route="dense", **kw)
    p = sum(t.numel() for t in model.parameters())
    rows = dense.f.numel()
    others = [AM.lift_symmetry(model, probes, gin, gout, method="gram", route="streaming",
                               block_bytes=8 * rows * max(1, p // 5), **kw)]  # fmt: skip
    double = copy.deepcopy(model).double()
    if factors(double, {k: v.detach() for k, v in double.named_parameters()}, probes[:2]) is not None:
        others.append(AM.lift_symmetry(model, probes, gin, gout, method="gram", route="factors", **kw))
    return dense, others


def assert_same_lift(dense, others):
    assert dense.route == "dense" and others[0].route == "streaming"
    for streamed in others:
        assert_same_as_dense(dense, streamed)


def assert_same_as_dense(dense, streamed):
    assert _rel(streamed.sensitivity, dense.sensitivity) < 1e-13
    for kind in ("c", "b"):
        d, s = getattr(dense, kind), getattr(streamed, kind)
        if d is None:
            assert s is None
            continue
        tol = bound(d)
        assert s.rank == d.rank
        assert _rel(s.coef, d.coef) < tol, (kind, _rel(s.coef, d.coef), tol)
        assert abs(s.rel_residual - d.rel_residual) < tol
        assert abs(s.realised_residual - d.realised_residual) < tol * max(1.0, d.realised_residual)
        assert s.profile.case == d.profile.case
    for key, value in dense.relation.items():
        assert streamed.relation[key] == pytest.approx(value, rel=1e-6, abs=1e-9), key


class ForceField(nn.Module):
    """The Mexican hat's learned force −∂V/∂q (ASRNN's V at seed 0) on probes (q₁, q₂, α), as a module."""

    def __init__(self):
        super().__init__()
        v = ASRNN.init(seed=0, dtype=torch.float64).v_params
        self.layers = nn.ParameterList([nn.Parameter(t.clone()) for t in v])

    def forward(self, x):
        def potential(q, a):
            return mlp_value(list(self.layers), torch.cat([q, a])[None])[0]

        return -vmap(grad(potential))(x[:, :2], x[:, 2:])


class Tied(nn.Module):
    """A weight used twice, a 0-d gain, and an unused parameter (zero columns of J)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.W = nn.Parameter(torch.randn(64, 2) / 4)
        self.gain = nn.Parameter(torch.tensor(1.3))
        self.unused = nn.Parameter(torch.ones(3))
        self.out = nn.Linear(2, 2)

    def forward(self, x):
        h = torch.tanh(x @ self.W.T)
        return self.out(self.gain * torch.sin(h @ self.W))  # through W again, (64, 2): 64 → 2


def test_the_annulus_network_streams_to_the_dense_lift():
    model = init_model()
    assert_same_lift(*both_routes(model, PROBES, OMEGA))


def test_the_mexican_hat_force_streams_to_the_dense_lift():
    alphas = torch.tensor([0.5, 1.0], dtype=torch.float64)
    q = sym.polar_grid(3, 8, extent=1.5)
    probes = torch.cat([torch.cat([q, a.expand(q.shape[0], 1)], 1) for a in alphas])
    A = torch.zeros(3, 3, dtype=torch.float64)
    A[:2, :2] = OMEGA  # the rotation acts on q and leaves α alone; on the force as a vector
    assert_same_lift(*both_routes(ForceField(), probes, A, OMEGA))


@pytest.mark.parametrize("case", ["mlp", "tied", "dead"])
def test_constructed_models_stream_to_the_dense_lift(case):
    torch.manual_seed(0)
    if case == "mlp":  # three outputs, the rotation on two of them
        model = nn.Sequential(nn.Linear(2, 40), nn.Tanh(), nn.Linear(40, 40), nn.Tanh(), nn.Linear(40, 3))
        out = torch.zeros(3, 3, dtype=torch.float64)
        out[:2, :2] = OMEGA
        assert_same_lift(*both_routes(model, PROBES, OMEGA, out))
    elif case == "tied":
        assert_same_lift(*both_routes(Tied(), PROBES, OMEGA, OMEGA))
    else:  # columns far below the largest: dead (zeroed by the gauge), which needs K again in a second pass
        model = nn.Sequential(nn.Linear(2, 30), nn.Tanh(), nn.Linear(30, 1))
        with torch.no_grad():
            model[2].weight[0, :4] = 1e-12
        dense, others = both_routes(model, PROBES, OMEGA)
        assert [o.route for o in others] == ["streaming", "factors"]
        assert all(dense.c.n_dead == o.c.n_dead > 0 for o in others)
        assert_same_lift(dense, others)


def test_a_request_beyond_the_memory_budget_takes_the_streaming_route_and_says_so():
    model = Tied()  # a weight used twice: not a network of linear layers
    rows, p = PROBES.shape[0] * 2, sum(t.numel() for t in model.parameters())
    need = streaming.DENSE_COPIES * 8 * rows * p
    small = AM.lift_symmetry(model, PROBES, OMEGA, OMEGA, memory_budget=need / 2)
    assert small.route == "streaming" and small.c.method == "gram"
    assert f"{rows:,} × {p:,}" in small.route_note and "over the budget" in small.route_note
    assert (
        "the exact SVD needs the dense J" in small.route_note
        and "resolves cutoffs down to 1e-5" in small.route_note
        and small.route_note in small.summary()
    )
    assert small.passes == 3  # J Jᵀ with D and K; then c* and J c*; then b* and J b*
    large = AM.lift_symmetry(model, PROBES, OMEGA, OMEGA, memory_budget=need * 2)
    assert large.route == "dense" and "within the budget" in large.route_note and large.passes == 0
    assert large.c.method == "svd"


def test_a_network_of_linear_layers_beyond_the_budget_is_kept_as_factors():
    model = nn.Sequential(nn.Linear(2, 30), nn.Tanh(), nn.Linear(30, 1))
    res = AM.lift_symmetry(model, PROBES, OMEGA, memory_budget=1.0)
    assert res.route == "factors" and "per-layer factors" in res.route_note and res.passes == 1
    with pytest.raises(ValueError, match="route='factors' needs a module whose parameters are all in nn.Linear"):
        AM.lift_symmetry(Tied(), PROBES, OMEGA, OMEGA, route="factors")


def test_blocks_stay_within_their_budget(monkeypatch):
    seen = []
    real = streaming.block_jacobian

    def spy(*args, **kw):
        out = real(*args, **kw)
        seen.append(out.numel() * 8)
        return out

    monkeypatch.setattr(streaming, "block_jacobian", spy)
    model = nn.Sequential(nn.Linear(2, 30), nn.Tanh(), nn.Linear(30, 1))
    budget = 8 * PROBES.shape[0] * 50
    AM.lift_symmetry(model, PROBES, OMEGA, route="streaming", method="gram", block_bytes=budget, held_out=None)
    assert seen and max(seen) <= budget and len(seen) == 3 * 3  # 121 entries in blocks of 50: 3 blocks


def test_bad_route_arguments_are_refused_with_what_is_allowed():
    model = nn.Linear(2, 1)
    with pytest.raises(ValueError, match="route='sparse'.*allowed"):
        AM.lift_symmetry(model, PROBES, OMEGA, route="sparse")
    with pytest.raises(ValueError, match="no more rows than parameters"):
        AM.lift_symmetry(model, PROBES, OMEGA, route="streaming", method="gram")
    with pytest.raises(ValueError, match="tau=1e-07 is below 1e-05"):
        AM.lift_symmetry(nn.Sequential(nn.Linear(2, 60), nn.Tanh(), nn.Linear(60, 1)), PROBES, OMEGA,
                         route="streaming", method="gram", tau=1e-7)  # fmt: skip
    with pytest.raises(ValueError, match="memory_budget=-1"):
        AM.lift_symmetry(model, PROBES, OMEGA, memory_budget=-1)
    with pytest.raises(ValueError, match="device='tpu'"):
        AM.lift_symmetry(model, PROBES, OMEGA, device="tpu")


@pytest.mark.slow
def test_blocks_run_as_dask_jobs_to_the_same_lift():
    from distributed import LocalCluster

    model = nn.Sequential(nn.Linear(2, 30), nn.Tanh(), nn.Linear(30, 30), nn.Tanh(), nn.Linear(30, 1))
    here = AM.lift_symmetry(model, PROBES, OMEGA, route="streaming", method="gram", block_bytes=8 * 48 * 400)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        there = AM.lift_symmetry(model, PROBES, OMEGA, route="streaming", method="gram", block_bytes=8 * 48 * 400,
                                 scheduler=cluster.scheduler_address)  # fmt: skip
    assert there.c.rank == here.c.rank and _rel(there.c.coef, here.c.coef) < bound(here.c)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device on this machine")
def test_blocks_on_a_gpu_give_the_same_lift():
    model = nn.Sequential(nn.Linear(2, 30), nn.Tanh(), nn.Linear(30, 30), nn.Tanh(), nn.Linear(30, 1))
    here = AM.lift_symmetry(model, PROBES, OMEGA, route="streaming", method="gram")
    gpu = AM.lift_symmetry(model, PROBES, OMEGA, route="streaming", method="gram", device="cuda")
    assert gpu.c.rank == here.c.rank and _rel(gpu.c.coef, here.c.coef) < bound(here.c)


class Twice(nn.Module):
    """Every parameter in one linear layer, called twice: J's rows do not factor by layer."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(2)
        self.lin = nn.Linear(2, 2)
        self.head = nn.Linear(2, 40)
        self.out = nn.Linear(40, 1)

    def forward(self, x):
        return self.out(torch.tanh(self.head(torch.tanh(self.lin(torch.tanh(self.lin(x)))))))


def test_a_layer_called_twice_is_not_factored_and_auto_streams_it():
    model = Twice().double()
    theta = {k: v.detach() for k, v in model.named_parameters()}
    assert linear_layers(model) is not None and factors(model, theta, PROBES) is None
    res = AM.lift_symmetry(Twice(), PROBES, OMEGA, memory_budget=1.0)
    assert res.route == "streaming" and "column blocks" in res.route_note
    dense, others = both_routes(Twice(), PROBES, OMEGA)
    assert_same_lift(dense, others)
