"""Paper B on any module (``lib.paper_b.any_module``): the annulus chapter's numbers from the one call, networks
invariant or equivariant by construction against random ones, the generic group action against the rotation's own
formulas, and every refusal with its message."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch
from torch import nn

from lib.paper_b import annulus as A
from lib.paper_b import any_module as AM
from lib.paper_b import symmetry as sym
from lib.paper_b.annulus import conditions
from lib.paper_b.euler_flows import run_flow
from lib.paper_b.relations import lift_cosines

OMEGA = sym.OMEGA
PROBES = sym.polar_grid(4, 12, extent=2.0)  # invariant under the rotation by 30°, no probe at the origin


def _rel(a, b) -> float:
    return float((a.reshape(-1) - b.reshape(-1)).norm() / b.norm())


@pytest.fixture(scope="module")
def annulus():
    """The chapter's lifting problem on its probe lattice, and its shared initialisation (``init_model``: seed 42,
    width 96; the chapter's θ_init, its "init" conditions) as the float32 module and as θ."""
    problem = A.AnnulusProblem({d: A.make_data(arc) for d, arc in A.ARCS.items()})
    model = A.init_model()
    return problem, model, torch.nn.utils.parameters_to_vector(model.parameters()).detach().to(torch.float64)


@pytest.fixture(scope="module")
def annulus_lift(annulus):
    problem, model, _ = annulus
    return AM.lift_symmetry(model, problem.probes, OMEGA, method="auto")  # the chapter's Gram route (τ = 1e-3)


def test_the_annulus_chapter_numbers_come_out_of_one_call(annulus, annulus_lift):
    """f, X f, δ, the defect, S_i and its shares to 1e-12; c*, b* and their residuals to 1e-9: both take the Gram
    route (J Jᵀ from ``vmap(jacrev)`` here, from the layer factors there), whose rounding is of that order (on this
    model the book's own Gram and SVD lifts of c* differ by about 5e-11)."""
    problem, _, theta = annulus
    res, ev = annulus_lift, problem.evaluate(theta)
    assert torch.equal(torch.cat([p.reshape(-1) for p in res.params.values()]), theta)
    for ours, book in ((res.f, ev.f), (res.xf, ev.xf), (res.delta, ev.delta)):
        assert ours.shape == (problem.probes.shape[0], 1) and _rel(ours, book) < 1e-12
    assert res.defect == pytest.approx(float(ev.delta.norm()), rel=1e-12)
    assert res.defect_rel == pytest.approx(float(ev.delta.norm() / ev.f.norm()), rel=1e-12)
    sens = conditions.sensitivity_by_block(problem, {"init": theta})
    S = torch.as_tensor(sens["S"]["init"])
    assert float((res.sensitivity - S).abs().max()) < 1e-12 * float(S.max())
    blocks = dict(zip(res.params, (b for b, _ in sens["blocks"]), strict=True))  # net.0.weight -> W1, …
    for name, share in res.shares().items():
        assert share == pytest.approx(sens["values"][f"sens_share_{blocks[name]}_init"], rel=1e-12)
    assert res.by_name(res.sensitivity)["net.0.weight"].shape == (96, 2)
    for ours, kind in ((res.c, "c"), (res.b, "b")):
        book = problem.lift(theta, kind)
        assert (ours.rank, ours.method, ours.tau) == (book.rank, "gram", 1e-3)
        assert _rel(ours.coef, book.coef) < 1e-9
        assert ours.rel_residual == pytest.approx(book.rel_residual, rel=1e-9)
    assert res.rank == problem.rank(theta)
    assert res.cos_delta_xf == pytest.approx(sym.cosine(ev.delta, ev.xf), abs=1e-12)
    for key, value in lift_cosines(problem, theta).items():
        assert res.relation[key] == pytest.approx(value, rel=1e-8, abs=1e-10), key


def test_the_exact_svd_route_agrees_closer_than_the_gram_route(annulus):
    problem, model, theta = annulus
    ours = AM.lift_symmetry(model, problem.probes, OMEGA, method="svd").c
    book = problem.lift(theta, "c", method="svd")
    assert ours.method == "svd" and ours.rank == book.rank
    assert _rel(ours.coef, book.coef) < 1e-11


@pytest.mark.parametrize("kind, resolve", [("c", True), ("b", False)])
def test_the_flows_are_the_chapter_flows(annulus, kind, resolve):
    problem, model, theta = annulus
    book = run_flow(problem, theta.clone(), kind, "resolved" if resolve else "fixed", steps=2, dt=0.005, progress=False)
    ours = AM.symmetry_flow(model, problem.probes, OMEGA, kind=kind, resolve=resolve, steps=2, dt=0.005, progress=False)
    assert ours.mode == book.mode and ours.label == book.label
    for key in ("defect", "defect_pred", "exact_dist", "end_dist", "param_dist"):
        np.testing.assert_allclose(ours.diagnostics[key], book.diagnostics[key], rtol=1e-9, atol=1e-13, err_msg=key)
    np.testing.assert_array_equal(ours.direction_info["rank"], book.direction_info["rank"])
    assert _rel(ours.theta_final - theta, book.theta_final - theta) < 1e-9


class Radial(nn.Module):
    """An MLP of |x| (invariant), or with ``field`` h₁(|x|) x + h₂(|x|) Ωx (equivariant): symmetric by construction."""

    def __init__(self, field: bool = False):
        super().__init__()
        self.field = field
        self.mlp = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 2 if field else 1))

    def forward(self, x):
        h = self.mlp(x.norm(dim=-1, keepdim=True))
        return h[:, :1] * x + h[:, 1:] * torch.stack([-x[:, 1], x[:, 0]], 1) if self.field else h


def _mlp(seed: int, out: int) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, out))


@pytest.mark.parametrize("field", [False, True])
def test_a_symmetric_network_has_no_defect_and_a_random_one_a_clear_one(field):
    torch.manual_seed(0)
    outputs = (OMEGA,) if field else ()
    sym_lift = AM.lift_symmetry(Radial(field), PROBES, OMEGA, *outputs)
    assert sym_lift.defect_rel < 1e-12 and float(sym_lift.xf.norm() / sym_lift.f.norm()) < 1e-12
    rand = AM.lift_symmetry(_mlp(1, 2 if field else 1), PROBES, OMEGA, *outputs)
    assert rand.defect_rel > 0.05 and float(rand.xf.norm() / rand.f.norm()) > 0.05


def test_the_rotation_of_an_mlp_lifts_exactly():
    """Rotating the inputs moves W₁ by W₁Ω and rotating the outputs moves W₂, b₂ by −ΩW₂, −Ωb₂, so J c = X f exactly
    for that c: J (vmap(jacrev)) and X f (a jvp) agree with it, and c* realises X f up to the τ-truncation."""
    net = _mlp(2, 2)
    problem = AM.ModuleProblem(net, PROBES, OMEGA, OMEGA)
    ev = problem.evaluate(problem.theta0)
    W1, _, W2, b2 = (p.detach().double() for p in net.parameters())
    exact = torch.cat([(W1 @ OMEGA).reshape(-1), torch.zeros(16), (-OMEGA @ W2).reshape(-1), -OMEGA @ b2])
    assert _rel(ev.jac.matmul(exact), ev.xf) < 1e-12
    assert problem.lift(problem.theta0, "c").rel_residual < 1e-2  # what the τ = 1e-3 cutoff leaves out
    tight = AM.lift_symmetry(net, PROBES, OMEGA, OMEGA, tau=1e-10)
    assert tight.c.rel_residual < 1e-12 and tight.c.method == "svd"
    assert tight.tau == 1e-10 and tight.rank == tight.c.rank


@pytest.mark.parametrize("out", [1, 2])
def test_the_generic_action_is_the_rotation_of_lib_paper_b_symmetry(out):
    """X f and δ of a random MLP against ``generator_scalar``/``defect_scalar`` (invariant scalar) and
    ``generator_vector``/``defect_vector`` (equivariant field, ρ = rotation)."""
    net = _mlp(3, out).double()
    res = AM.lift_symmetry(net, PROBES, OMEGA, OMEGA if out == 2 else None)
    with torch.no_grad():
        if out == 1:
            xf, delta = sym.generator_scalar(lambda x: net(x)[:, 0], PROBES), sym.defect_scalar(net, PROBES)
        else:
            xf, delta = sym.generator_vector(net, PROBES), sym.defect_vector(net, PROBES)
    assert _rel(res.xf, xf) < 1e-12 and _rel(res.delta, delta) < 1e-12


def test_velocity_fields_act_as_their_matrices():
    net = _mlp(4, 2)
    by_matrix = AM.lift_symmetry(net, PROBES, OMEGA, OMEGA, m=8)
    by_field = AM.lift_symmetry(net, PROBES, lambda x: x @ OMEGA.T, lambda y: y @ OMEGA.T, m=8)
    assert _rel(by_field.xf, by_matrix.xf) < 1e-14
    assert _rel(by_field.delta, by_matrix.delta) < 1e-8  # RK4 against matrix_exp
    assert _rel(by_field.c.coef, by_matrix.c.coef) < 1e-12


def test_a_non_compact_group_lifts_c_star_without_a_defect():
    """Scaling x ↦ e^t x never closes: with period=None, c* (an exact move of W₁) but no δ and no b*."""
    net = _mlp(5, 1)
    res = AM.lift_symmetry(net, PROBES, torch.eye(2), period=None, tau=1e-10)
    assert res.b is None and math.isnan(res.defect) and res.relation == {}
    assert res.c.rel_residual < 1e-8 and res.c.rank > 0
    with pytest.raises(ValueError, match="needs a compact group"):
        AM.ModuleProblem(net, PROBES, torch.eye(2), period=None).lift(res.c.coef * 0, "b")
    with pytest.raises(ValueError, match=r"generator_in does not close after period=6\.28"):
        AM.lift_symmetry(net, PROBES, torch.eye(2))


def test_the_module_at_the_end_of_a_flow_holds_its_final_theta():
    net = _mlp(6, 1)
    record = AM.symmetry_flow(net, PROBES, OMEGA, kind="b", resolve=False, steps=1, dt=0.1, progress=False)
    module = AM.ModuleProblem(net, PROBES, OMEGA).module_at(record.theta_final)
    assert torch.equal(torch.nn.utils.parameters_to_vector(module.parameters()), record.theta_final)
    assert record.diagnostics["defect"][-1] < record.diagnostics["defect"][0]  # b* lowers the defect
    assert next(net.parameters()).dtype == torch.float32  # the caller's module is left alone


SMALL = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))
REFUSALS = [
    ({"model": lambda x: x}, TypeError, "model=function object must be a torch.nn.Module"),
    ({"model": nn.Tanh()}, TypeError, "parameters are none"),
    ({"probes": PROBES.numpy()}, TypeError, "probes must be a real floating-point tensor (N, d) of inputs; got a nd"),
    ({"probes": PROBES.to(torch.complex128)}, TypeError, "got torch.complex128"),
    ({"probes": PROBES.long()}, TypeError, "got torch.int64"),
    ({"probes": PROBES[:, 0]}, ValueError, "probes has shape (48,); it must be a 2-D tensor (N, d)"),
    ({"probes": PROBES * math.nan}, ValueError, "probes contains non-finite entries"),
    ({"generator_in": None}, ValueError, "generator_in=None and generator_out=None: give at least one"),
    ({"generator_in": torch.zeros(2, 3)}, ValueError, "generator_in has shape (2, 3); it must be a square matrix"),
    ({"generator_in": torch.zeros(3, 3)}, ValueError, "acting on the model's inputs (dimension 2)"),
    ({"generator_out": OMEGA}, ValueError, "generator_out has shape (2, 2); it must be a square matrix (1, 1), acting "
     "on the model's outputs (dimension 1)"),
    ({"generator_in": OMEGA.to(torch.complex128)}, TypeError, "generator_in has complex dtype torch.complex128"),
    ({"generator_in": OMEGA * math.inf}, ValueError, "generator_in contains non-finite entries"),
    ({"generator_in": "rotation"}, TypeError, "generator_in=str object must be a square matrix or a callable field"),
    ({"generator_in": lambda x: x[:, :1]}, ValueError, "a velocity field must map points (48, 2) to real velocities"),
    ({"generator_in": 1.5 * OMEGA}, ValueError, "generator_in does not close after period=6.28"),
    ({"tau": 0}, ValueError, "tau=0 must be a number in (0, 1)"),
    ({"gauge": "l1"}, ValueError, "gauge='l1' is not allowed; choose one of ['sensitivity', 'minnorm']"),
    ({"method": "qr"}, ValueError, "method='qr' is not allowed"),
    ({"period": -1.0}, ValueError, "period=-1.0 is out of range"),
    ({"m": 0}, ValueError, "m=0 is out of range"),
    ({"params": {"0.weight": torch.zeros(4, 2)}}, ValueError, "params must name exactly the module's parameters"),
    ({"params": torch.zeros(3)}, ValueError, "vec has shape (3,); expected (17,)"),
    ({"params": [0.0] * 17}, TypeError, "params=list object must be None, a dict of the module's parameters or a real"),
]  # fmt: skip


REFUSAL_IDS = [f"{i}-{'-'.join(c)}" for i, (c, _, _) in enumerate(REFUSALS)]


@pytest.mark.parametrize("change, error, message", REFUSALS, ids=REFUSAL_IDS)
def test_refusals_name_the_argument_the_value_and_what_is_allowed(change, error, message):
    args = {"model": SMALL, "probes": PROBES, "generator_in": OMEGA, **change}
    with pytest.raises(error, match=re.escape(message)):
        AM.lift_symmetry(**args)


@pytest.mark.filterwarnings("ignore:Complex modules:UserWarning")
def test_a_complex_module_is_refused():
    with pytest.raises(TypeError, match=r"model's parameters \{'weight': 'torch.complex64'.*real floating-point"):
        AM.lift_symmetry(nn.Linear(2, 1).to(torch.complex64), PROBES, OMEGA)


@pytest.mark.parametrize(
    "change, message",
    [({"resolve": "yes"}, "resolve='yes' must be True or False"), ({"kind": "a"}, "kind='a' is not allowed"),
     ({"steps": -1}, "steps=-1 is out of range"), ({"dt": 0.0}, "dt=0.0 is out of range")],
)  # fmt: skip
def test_flow_refusals(change, message):
    with pytest.raises((TypeError, ValueError), match=re.escape(message)):
        AM.symmetry_flow(SMALL, PROBES, OMEGA, **{"steps": 1, "dt": 0.1, "progress": False, **change})
