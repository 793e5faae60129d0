"""The Mexican hat as a lifting problem (paper B §3.2, notes §9.5): the learned force on the pooled probe rows, its
lifts, and the measures of a walk; with the rollout checks of the trained model.

:class:`MexicanHatProblem` implements ``lib.paper_b.lifting_problem.LiftingProblem`` (walks are run by
``lib.paper_b.euler_flows.run_flow``) and owns the scratch of its re-solves: the 366 MB pooled Jacobian, overwritten by
the next solve (allocating it anew costs 0.2 s of page faults a solve).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import torch
from torch import Tensor

from lib.core import params
from lib.paper_b import lifting
from lib.paper_b.lifting_problem import check_kind
from lib.paper_b.mexican_hat.lift import Solve, pooled_lift
from lib.paper_b.mexican_hat.model import ASRNN, potential, rollout, v_params_of
from lib.paper_b.mexican_hat.probes import (
    Probes,
    force_jacobian,
    generator_field,
    pooled_force,
    reynolds_field,
    tiled_force,
)
from lib.paper_b.mexican_hat.system import (
    UNSEEN_ALPHAS,
    check_potential_alpha,
    leapfrog_true,
    sample_initial_conditions,
)
from lib.paper_b.symmetry import rotation


class ForceEvaluation:
    """F_θ on the pooled probes (N, 2); Π F, δ = F − Π F, X F and the Jacobian computed on first use (float64)."""

    def __init__(self, problem: MexicanHatProblem, theta: Tensor):
        self._problem, self.theta = problem, theta
        self.f = pooled_force(theta, problem.probes)
        self._Pf: Tensor | None = None
        self._jac: Tensor | None = None

    @property
    def Pf(self) -> Tensor:
        """Π F (m-point Reynolds average per α, by orbits)."""
        if self._Pf is None:
            self._Pf = reynolds_field(self.theta, self._problem.probes, self._problem.m)
        return self._Pf

    @property
    def delta(self) -> Tensor:
        """The equivariance defect δ = F − Π F."""
        return self.f - self.Pf

    @property
    def xf(self) -> Tensor:
        """The generator X F = (∂F/∂q)(Ωq) − ΩF (the book's sign)."""
        return generator_field(self.theta, self._problem.probes)

    @property
    def jac(self) -> Tensor:
        """The dense pooled force Jacobian (2N, 2273) (a fresh matrix, not the problem's scratch)."""
        if self._jac is None:
            self._jac = force_jacobian(self.theta, self._problem.probes)
        return self._jac


class MexicanHatProblem:
    """The pooled force of V's parameter vector θ₂ as a lifting problem: targets X F (c*) and −δ (b*), lifted through
    the sketched SVD (``method="sketch"``, ``sketch_rank`` columns) or a ``lifting.lift`` route."""

    def __init__(
        self,
        probes: Probes,
        *,
        tau: float = lifting.TAU,
        sketch_rank: int = 128,
        m: int = 64,
        method: str = "sketch",
        profile_alphas: Sequence[float] = UNSEEN_ALPHAS,
    ):
        self.probes, self.tau, self.m = probes, lifting.check_tau(tau), m
        self.sketch_rank = params.integer("sketch_rank", sketch_rank, min=1)
        self.method = params.choice("method", method, ("sketch", "gram", "svd"))
        self.profile_alphas = tuple(profile_alphas)
        self._scratch: Tensor | None = None
        self._cache: tuple[Tensor, ForceEvaluation] | None = None

    def evaluate(self, theta: Tensor) -> ForceEvaluation:
        """F_θ (and lazily Π F, δ, X F, J) on the probes; cached for the last θ object."""
        if self._cache is not None and self._cache[0] is theta:
            return self._cache[1]
        ev = ForceEvaluation(self, theta)
        self._cache = (theta, ev)
        return ev

    def target(self, ev: ForceEvaluation, kind: str) -> Tensor:
        """X F (kind "c", the paper's η is −X F) or −δ (kind "b"), flattened to J's rows (2N,)."""
        return ev.xf.reshape(-1) if check_kind(kind) == "c" else (-ev.delta).reshape(-1)

    def jacobian(self, theta: Tensor) -> Tensor:
        """J at θ in the problem's scratch buffer: overwritten by the next solve, never handed to the caller's keep."""
        shape = (self.probes.rows, sum(t.numel() for t in v_params_of(theta)))
        if self._scratch is None or tuple(self._scratch.shape) != shape:
            self._scratch = torch.empty(shape, dtype=torch.float64)
        return force_jacobian(theta, self.probes, out=self._scratch)

    def solve(self, theta: Tensor, kind: str, *, gauge: str = "minnorm") -> Solve:
        """One timed re-solve at θ: J (in the scratch), the target, the truncated SVD and the lift."""
        check_kind(kind)
        t0 = time.perf_counter()
        J = self.jacobian(theta)
        sol = pooled_lift(
            theta, self.probes, kind, tau=self.tau, gauge=gauge, method=self.method, sketch_rank=self.sketch_rank,
            m=self.m, J=J,
        )  # fmt: skip
        return Solve(sol.lift, time.perf_counter() - t0, sol.target)

    def lift(self, theta: Tensor, kind: str, *, gauge: str = "minnorm") -> lifting.LiftResult:
        """c* (kind "c") or b* (kind "b") at θ (``solve``)."""
        return self.solve(theta, kind, gauge=gauge).lift

    def rotated(self, theta: Tensor, t: float) -> Tensor:
        """R_t⁻¹ F_θ(R_t q) on the probes (rows): the exact flow along c* at time t."""
        R = rotation(t)
        return tiled_force(theta, self.probes)(self.probes.q @ R.T) @ R

    def observe(self, theta: Tensor, ev: ForceEvaluation, k: int) -> dict:
        """A walk's own measures at a stop: F_t on the probes (2N,) and δ_V(φ) at ``profile_alphas`` (n_alpha, n)."""
        return {"force": ev.f.reshape(-1), "profile": potential_deviation(theta, self.profile_alphas)[2]}


def profile_radius(alpha: float, extent: float = 1.0) -> float:
    """Radius of the angular profile: 0.85·min(√−α, extent) for α < 0, else 0.7·extent (notes §9.5)."""
    alpha = check_potential_alpha(alpha)
    return 0.85 * min(math.sqrt(-alpha), extent) if alpha < 0 else 0.7 * extent


def potential_deviation(theta: Tensor, alphas: Sequence[float], n: int = 240) -> tuple[Tensor, list[float], Tensor]:
    """Angular deviation of V, δ_V(φ) = V(r, φ) − mean_φ V(r, ·), at ``profile_radius(α)`` for each α: (angles (n,),
    radii, (n_alpha, n)) (paper Figs. 3–4)."""
    angles = torch.arange(n, dtype=torch.float64) * (2 * math.pi / n)
    unit = torch.stack([torch.cos(angles), torch.sin(angles)], 1)
    radii = [profile_radius(a) for a in alphas]
    params = v_params_of(theta)
    out = []
    for a, r in zip(alphas, radii, strict=True):
        v = potential(params, r * unit, float(a))
        out.append(v - v.mean())
    return angles, radii, torch.stack(out)


def rollout_comparison(
    model: ASRNN, alphas: Sequence[float], *, n_ic: int, steps: int, seed: int
) -> tuple[list[Tensor], list[Tensor]]:
    """Ground truth and learned rollouts (float64) from seeded initial conditions at each α.

    Returns two lists (one entry per α) of (n_ic, steps + 1, 4) tensors in (q, p) order.
    """
    m64 = model.to(torch.float64)
    truth, learned = [], []
    for j, a in enumerate(alphas):
        q0, p0 = sample_initial_conditions(n_ic, a, seed=seed + 7919 * j)
        truth.append(leapfrog_true(q0, p0, a, steps=steps))
        with torch.no_grad():
            learned.append(rollout(m64, q0, p0, float(a), steps=steps))
    return truth, learned


def relative_rollout_error(truth: Sequence[Tensor], learned: Sequence[Tensor]) -> float:
    """sqrt(mean |x̂ − x|²) / sqrt(mean |x|²) over all trajectories, times and (q, p) components."""
    t = torch.cat([x.reshape(-1) for x in truth])
    s = torch.cat([x.reshape(-1) for x in learned])
    return float((s - t).norm() / t.norm())
