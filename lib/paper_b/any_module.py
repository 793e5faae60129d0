"""Paper B on any ``torch.nn.Module``: sensitivities, c*, b* and defects for a one-parameter symmetry (issue 33).

A group g_t acts on inputs by a generator A (x ↦ x + εAx: a square matrix, or a callable velocity field) and/or on
outputs by B (y ↦ y + εBy, or a field). In this book's sign (``lib.paper_b.symmetry``; the paper's η is −X f),

    X f(x) = (∂f/∂x)(A x) − B f(x) = d/dt ρ(g_t)⁻¹ f(g_t x) at t = 0,
    Π f(x) = 1/m Σ_k ρ(g_k)⁻¹ f(g_k x),   δ = f − Π f,

with t_k = kT/m over the period T (g_T = identity): A = Ω alone is ``symmetry.generator_scalar``, A = B = Ω
``generator_vector``, Π eq. 21. A matrix acts by ``torch.matrix_exp``, a field by RK4 steps
(:mod:`lib.paper_b.group_action`). A velocity field ``v`` receives float64 points (B, dim) (the analysis runs in
float64; a float32 module used as a field should be given as ``.double()``) and may return any real floating dtype,
which is cast to float64.

Every lift carries its τ profile (``lifting.LiftResult.profile``): the residual at every cutoff, and whether the
direction lifts exactly, approximately at the paper's τ, only below it, or not at all. :func:`lift_symmetry` uses the
exact SVD by default, which resolves that profile down to round-off; read it before trusting one τ.
:class:`ModuleProblem` is the ``LiftingProblem`` of θ (the module's parameters, float64, ``named_parameters`` order);
on the annulus network :func:`lift_symmetry` and :func:`symmetry_flow` give ``annulus.AnnulusProblem``'s numbers.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from functools import cached_property

import torch
from torch import Tensor, nn
from torch.func import functional_call, jvp

from lib.core import devices
from lib.core import progress as book_progress
from lib.core.params import boolean, choice, integer, real
from lib.paper_b import evidence, lifting, module_evidence, streaming
from lib.paper_b.euler_flows import FlowRecord, run_flow
from lib.paper_b.group_action import GroupAction, checked_probes, input_size_hint
from lib.paper_b.lifting_problem import check_kind
from lib.paper_b.linear_factors import LinearFactorJacobian, factors
from lib.paper_b.relations import lift_cosines
from lib.paper_b.sensitivity import aggregate_sensitivity, flatten_params, jacobian, module_params, unflatten_params
from lib.paper_b.streaming import StreamedJacobian
from lib.paper_b.symmetry import cosine, quadrature_angles
from lib.paper_b.symmetry_lift import SymmetryLift

PERIOD = 2 * math.pi  # the default period T of the group: a rotation's
F64 = torch.float64
FLOW_STEPS, FLOW_DT = 200, 0.005  # the paper's flow: t ∈ [0, 1] in 200 forward-Euler steps (notes §8.6)


def _initial_params(model: nn.Module, params) -> dict[str, Tensor]:
    """θ by name, float64 copies: the module's own (``params=None``), a dict of them all, or a flat vector."""
    own = module_params(model)
    if params is None:
        return own
    if isinstance(params, Tensor) and params.ndim == 1 and not params.is_complex():
        return unflatten_params(params.detach().to(F64).clone(), own)
    if not isinstance(params, Mapping):
        raise TypeError(f"params={type(params).__name__} object must be None, a dict of the module's parameters "
                        f"or a real vector of length {sum(v.numel() for v in own.values())}")  # fmt: skip
    bad = [k for k in set(own) | set(params) if k not in own or k not in params or not isinstance(params[k], Tensor)
           or params[k].shape != own[k].shape or params[k].is_complex()]  # fmt: skip
    if bad:
        raise ValueError(f"params{sorted(bad)}: params must name exactly the module's parameters {list(own)}, "
                         "each a real tensor of the parameter's shape")  # fmt: skip
    return {k: params[k].detach().to(F64).clone() for k in own}


class ModuleEvaluation:
    """f_θ and X f on the probes (N, k); J (``jac``), Π f, δ and J's truncated SVD on first use (float64)."""

    def __init__(self, problem: ModuleProblem, theta: Tensor):
        self._problem = problem
        self.params = unflatten_params(theta.detach().to(F64), problem.like)
        self.f, self.xf = problem.direction(self.params)
        self.lifts: dict[tuple[str, str], lifting.LiftResult] = {}

    @cached_property
    def jac(self) -> lifting.DenseJacobian | StreamedJacobian | LinearFactorJacobian:
        """J (N·k, p) behind the operator interface: dense by ``sensitivity.jacobian`` (vmap(jacrev); ``jac.J``), or,
        never formed, streamed by column blocks or kept as per-layer factors (the problem's ``route``)."""
        pb = self._problem
        if pb.route == "factors":
            return LinearFactorJacobian.of(pb.model, self.params, pb.probes)
        if pb.route == "streaming":
            return StreamedJacobian(pb.model, self.params, pb.probes, block_bytes=pb.block_bytes, device=pb.device,
                                    scheduler=pb.scheduler, scratch=pb.scratch)  # fmt: skip
        return lifting.DenseJacobian(jacobian(pb.model, self.params, pb.probes, chunk_size=pb.chunk_size))

    @cached_property
    def Pf(self) -> Tensor:
        """Π f on the probes (N, k); nan for a non-compact group."""
        return self._problem.reynolds(self.params)

    @property
    def delta(self) -> Tensor:
        """The defect δ = f − Π f (N, k)."""
        return self.f - self.Pf

    @cached_property
    def svd(self) -> lifting.TruncatedSVD:
        """J's τ-truncated SVD, computed once per θ and shared by its c* and b*."""
        pb = self._problem
        return lifting.truncated_svd(getattr(self.jac, "J", self.jac), tau=pb.tau, method=pb.method)


class ModuleProblem:
    """Paper B's lifting problem for any module (``LiftingProblem``; arguments as :func:`lift_symmetry`)."""

    def __init__(self, model, probes, generator_in=None, generator_out=None, *, params=None, tau=lifting.TAU,
                 period: float | None = PERIOD, m: int = 64, method: str = "auto", chunk_size=None, route="auto",
                 memory_budget=None, block_bytes=None, device="cpu", scheduler=None):  # fmt: skip
        if not isinstance(model, nn.Module):
            raise TypeError(f"model={type(model).__name__} object must be a torch.nn.Module")
        bad = {k: str(v.dtype) for k, v in model.named_parameters() if not v.is_floating_point()}
        if bad or not list(model.parameters()):
            raise TypeError(f"model's parameters {bad or 'are none'}: it needs real floating-point parameters")
        self.probes = checked_probes(probes)
        if generator_in is None and generator_out is None:
            raise ValueError("generator_in=None and generator_out=None: give at least one, a square matrix or a "
                             "velocity callable")  # fmt: skip
        self.tau = lifting.check_tau(tau)
        self.period = None if period is None else real("period", period, min=0, min_open=True)
        self.m, self.method = integer("m", m, min=1), choice("method", method, lifting.METHODS)
        self.chunk_size, self.model = chunk_size, copy.deepcopy(model).to(F64)
        self.like = _initial_params(self.model, params)
        self.theta0 = flatten_params(self.like)
        try:
            raw, n = functional_call(self.model, self.like, (self.probes,)), self.probes.shape[0]
        except RuntimeError as exc:
            first = (str(exc).strip().splitlines() or ["failed"])[0][:200]
            hint = input_size_hint(self.model, self.probes)
            shape = tuple(self.probes.shape)
            raise ValueError(f"model cannot be evaluated on probes of shape {shape} ({first}){hint}; probes must "
                             "be (N, d), d the model's input size") from None  # fmt: skip
        if not isinstance(raw, Tensor) or raw.ndim == 0 or raw.shape[0] != n or raw.is_complex():
            raise ValueError(f"model returned {getattr(raw, 'shape', type(raw).__name__)} on {n} probes; it must "
                             "return real outputs (N,) or (N, k), one row per probe")  # fmt: skip
        f0 = raw.reshape(n, -1)
        if not torch.isfinite(f0).all():
            raise ValueError("model's outputs on the probes are not all finite")
        self.dim_in, self.dim_out = self.probes.shape[1], f0.shape[1]
        self.act_in, self.act_out = (
            None if g is None else GroupAction(g, d, name, what, y, self.period)
            for name, g, d, what, y in (("generator_in", generator_in, self.dim_in, "inputs", self.probes),
                                        ("generator_out", generator_out, self.dim_out, "outputs", f0))
        )  # fmt: skip
        self._cache: tuple[Tensor, ModuleEvaluation] | None = None
        self._choose_route(route, memory_budget, block_bytes, device, scheduler)

    def _choose_route(self, route, memory_budget, block_bytes, device, scheduler) -> None:
        """The dense, factored or streaming route (``streaming.choose_route``), its sentence (``route_note``, also on
        the terminal when chosen) and, off the dense route, the Gram route's decomposition (τ down to 1e-5 only)."""
        rows, budget = self.probes.shape[0] * self.dim_out, memory_budget
        factored = factors(self.model, self.like, self.probes[:2]) is not None
        self.route, self.route_note = streaming.choose_route(route, rows, self.theta0.numel(), budget, factored)
        self.device, self.scheduler, self.scratch = devices.check("device", device), scheduler, {}
        budget = streaming.BUDGET_FRACTION * streaming.available_memory() if budget is None else budget
        one_column = 8.0 * rows  # the smallest block: one column of J
        self.block_bytes = max(streaming.BLOCK_FRACTION * budget, one_column) if block_bytes is None else block_bytes
        if self.route == "dense":
            return
        if self.tau < lifting.GRAM_MIN_TAU:
            raise ValueError(f"tau={self.tau:g} is below {lifting.GRAM_MIN_TAU:g}, what the {self.route} route's "
                             "decomposition of J Jᵀ resolves; use route='dense' for it")  # fmt: skip
        if self.method == "svd":
            self.route_note += ("; the exact SVD needs the dense J, so J Jᵀ is decomposed instead (the Gram route) and "
                                "its τ profile resolves cutoffs down to 1e-5")  # fmt: skip
        self.method = "gram"
        if route == "auto":
            book_progress.note(f"paper B's lift: {self.route_note}")

    def output(self, params: dict[str, Tensor], x: Tensor) -> Tensor:
        """f_θ(x) for inputs x (B, d), as (B, k)."""
        return functional_call(self.model, params, (x,)).reshape(x.shape[0], -1)

    def direction(self, params: dict[str, Tensor]) -> tuple[Tensor, Tensor]:
        """f_θ and X f = (∂f/∂x)(A x) − B f on the probes, each (N, k)."""
        x = self.probes
        tangent = torch.zeros_like(x) if self.act_in is None else self.act_in.velocity(x)
        f, xf = jvp(lambda y: self.output(params, y), (x,), (tangent,))
        return f, (xf if self.act_out is None else xf - self.act_out.velocity(f))

    def transformed(self, params: dict[str, Tensor], times: Tensor) -> Tensor:
        """ρ(g_t)⁻¹ f_θ(g_t x) on the probes for each t of ``times`` (T,): (T, N, k); off the dense route one t at a
        time, so that a large network's activations are held for N points, not T·N."""
        if self.route != "dense" and times.shape[0] > 1:
            return torch.cat([self.transformed(params, times[i : i + 1]) for i in range(times.shape[0])])
        x = self.probes.expand(times.shape[0], *self.probes.shape)
        xs = x if self.act_in is None else self.act_in.apply(x, times)
        fs = self.output(params, xs.reshape(-1, self.dim_in)).reshape(times.shape[0], -1, self.dim_out)
        return fs if self.act_out is None else self.act_out.apply(fs, -times)

    def reynolds(self, params: dict[str, Tensor]) -> Tensor:
        """Π f on the probes (N, k) by m-point quadrature over the period; nan for a non-compact group."""
        if self.period is None:
            return torch.full((self.probes.shape[0], self.dim_out), math.nan, dtype=F64)
        return self.transformed(params, quadrature_angles(self.m) * (self.period / (2 * math.pi))).mean(0)

    def evaluate(self, theta: Tensor) -> ModuleEvaluation:
        """f and X f at θ (J, Π f, δ on first use); cached for the last θ object."""
        if self._cache is None or self._cache[0] is not theta:
            self._cache = (theta, ModuleEvaluation(self, theta))
        return self._cache[1]

    def target(self, ev: ModuleEvaluation, kind: str) -> Tensor:
        """X f (kind "c") or −δ (kind "b"), flattened to J's rows (probe-major)."""
        return ev.xf.reshape(-1) if check_kind(kind) == "c" else -ev.delta.reshape(-1)

    def lift(self, theta: Tensor, kind: str, *, gauge: str = "sensitivity") -> lifting.LiftResult:
        """c* (kind "c") or b* (kind "b") at θ, the τ-truncated gauged lift (``lifting.lift``)."""
        if check_kind(kind) == "b" and self.period is None:
            raise ValueError("kind='b' lifts −δ = Π f − f, which needs a compact group: pass its period")
        ev = self.evaluate(theta)
        if (kind, gauge) not in ev.lifts:
            J, target = getattr(ev.jac, "J", ev.jac), self.target(ev, kind)
            ev.lifts[kind, gauge] = lifting.lift(J, target, tau=self.tau, gauge=gauge, method=self.method, svd=ev.svd)
        return ev.lifts[kind, gauge]

    def rotated(self, theta: Tensor, t: float) -> Tensor:
        """ρ(g_t)⁻¹ f_θ(g_t x) on the probes (N, k): the exact flow along c* at time t."""
        return self.transformed(unflatten_params(theta, self.like), torch.tensor([float(t)], dtype=F64))[0]

    def module_at(self, theta: Tensor) -> nn.Module:
        """A float64 copy of the model holding θ (e.g. a flow's ``theta_final``)."""
        module = copy.deepcopy(self.model)
        torch.nn.utils.vector_to_parameters(theta.detach().to(F64), module.parameters())
        return module


def lift_symmetry(model, probes, generator_in=None, generator_out=None, *, params=None, tau: float = lifting.TAU,
                  gauge: str = "sensitivity", period: float | None = PERIOD, m: int = 64, method: str = "svd",
                  chunk_size: int | None = None, route: str = "auto", memory_budget: float | None = None,
                  block_bytes: float | None = None, device: str = "cpu", scheduler: str | None = None,
                  held_out="split", null: int = evidence.NULL_SIZE) -> SymmetryLift:  # fmt: skip
    """S_i, c*, b* and the defects of ``model`` on ``probes`` (N, d) for the group generated by ``generator_in``
    and/or ``generator_out`` (square matrices or velocity callables; module docstring).

    ``params``: θ, a dict of every named parameter or a flat vector (default: the module's own); ``period``: T (Π
    averages m points of [0, T)), None for a non-compact group (no δ, no b*); ``tau``, ``gauge``, ``method`` as
    ``lifting.lift`` (default the exact SVD, so that ``profile`` resolves every cutoff down to round-off; "auto"
    takes the Gram route above τ = 1e-5, faster on a large J, and resolves the profile only down to 1e-5);
    ``chunk_size`` bounds the Jacobian's vmap batch. ``summary()`` says first which case the τ profile finds.

    ``route``: "dense" (J formed), "streaming" (J streamed by column blocks, :mod:`lib.paper_b.streaming`: memory
    O(M² + M·block) where the dense J takes 8·M·p bytes; Gram route, τ ≥ 1e-5) or "auto": dense when J and its
    decomposition fit ``memory_budget`` bytes (default half the machine's available memory), else streaming; the
    result's ``route_note`` says which and why. ``block_bytes`` bounds a streamed block (default an eighth of the
    budget), ``device`` computes the blocks on a GPU ("cuda"), ``scheduler`` runs them as Dask jobs.

    ``held_out``: the evidence (:mod:`lib.paper_b.evidence`, ``SymmetryLift.evidence``): every lift judged on probes
    it was not fitted to and against ``null`` random nonlinear input fields. A tensor of inputs drawn the way the
    probes were (at least as many), "split" (default: refitted on the odd-indexed half of the probes, judged on the
    even-indexed half) or None (not judged: ``summary()`` then reports the fit only, which at full row rank proves
    nothing)."""
    gauge = choice("gauge", gauge, lifting.GAUGES)
    null = integer("null", null, min=1)
    problem = ModuleProblem(model, probes, generator_in, generator_out, params=params, tau=tau, period=period, m=m,
                            method=method, chunk_size=chunk_size, route=route, memory_budget=memory_budget,
                            block_bytes=block_bytes, device=device, scheduler=scheduler)  # fmt: skip
    theta, compact = problem.theta0, problem.period is not None
    ev, c = problem.evaluate(theta), problem.lift(theta, "c", gauge=gauge)
    defect, f_norm = float(ev.delta.norm()), float(ev.f.norm())
    both = defect > 0 and float(ev.xf.norm()) > 0  # lift_cosines divides by ‖X f‖ and ‖δ‖
    same = dict(model=model, generator_in=generator_in, generator_out=generator_out, params=params, tau=tau,
                period=period, m=m, method=method, chunk_size=chunk_size, memory_budget=memory_budget,
                block_bytes=block_bytes, device=device, scheduler=scheduler)  # fmt: skip
    judged = {} if held_out is None else module_evidence.judged_module(problem, held_out, null, gauge, same)
    return SymmetryLift(
        params=ev.params, sensitivity=aggregate_sensitivity(getattr(ev.jac, "J", ev.jac), problem.dim_out), c=c,
        b=problem.lift(theta, "b", gauge=gauge) if compact else None, f=ev.f, xf=ev.xf, delta=ev.delta,
        defect=defect, defect_rel=defect / f_norm if f_norm > 0 else math.nan, rank=c.rank, tau=problem.tau,
        cos_delta_xf=cosine(ev.delta, ev.xf), relation=lift_cosines(problem, theta) if compact and both else {},
        route=problem.route, route_note=problem.route_note, passes=getattr(ev.jac, "passes", 0), evidence=judged,
    )  # fmt: skip


def symmetry_flow(model, probes, generator_in=None, generator_out=None, *, kind: str = "c", resolve: bool = True,
                  steps: int = FLOW_STEPS, dt: float = FLOW_DT, gauge: str = "sensitivity", params=None,
                  tau: float = lifting.TAU,
                  period: float | None = PERIOD, m: int = 64, method: str = "auto", record_every: int = 1,
                  realisation: bool = False, progress: bool = True, held_out=None, **route) -> FlowRecord:  # fmt: skip
    """The Euler flow from θ along c* (kind "c") or b* ("b"), re-solved at every step (``resolve=True``) or frozen
    at the first direction: ``euler_flows.run_flow`` on a :class:`ModuleProblem` (arguments as :func:`lift_symmetry`).
    ``steps`` and ``dt`` default to the paper's flow (notes §8.6): t from 0 to 1 in 200 forward-Euler steps of
    dt = 0.005, along the raw (not normalised) direction, so that t is the rotation angle in radians along c* and the
    defect should decay as e^(−t) along b*; shorten dt where the direction changes faster than that.
    The record holds ‖δ‖, the exact flow's defect and distance and the lift's rank and residuals per stop;
    ``ModuleProblem.module_at(record.theta_final)`` gives the module at the end. ``route`` takes
    :func:`lift_symmetry`'s ``route``, ``memory_budget``, ``block_bytes``, ``device`` and ``scheduler``.
    ``held_out`` (inputs (N', d)): every stop also records its step's relative residual on these probes, which it
    was not fitted to (``held_residual``, :mod:`lib.paper_b.evidence`)."""
    mode, kind = "resolved" if boolean("resolve", resolve) else "fixed", check_kind(kind)
    steps, dt = integer("steps", steps, min=0), real("dt", dt, min=0, min_open=True)
    gauge = choice("gauge", gauge, lifting.GAUGES)
    problem = ModuleProblem(model, probes, generator_in, generator_out, params=params, tau=tau, period=period, m=m,
                            method=method, **route)  # fmt: skip
    if held_out is not None:
        problem.held_out = module_evidence.flow_judge(problem, held_out, dict(
            model=model, generator_in=generator_in, generator_out=generator_out, params=params, tau=tau, period=period,
            m=m))  # fmt: skip
    return run_flow(problem, problem.theta0, kind, mode, steps=steps, dt=dt, gauge=gauge, record_every=record_every,
                    realisation=realisation, progress=progress)  # fmt: skip
