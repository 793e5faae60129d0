"""The annulus as a lifting problem (paper B §3.1, notes §8.5–8.7): probe grid, Reynolds average, generator, lifts.

The analysis runs in float64 on the parameter vector θ (p = 19,009, ordered as the module's ``named_parameters``) over
the clipped 24 × 24 square lattice (408 probes). The Reynolds average uses that the lattice is invariant under quarter
turns, which lie in C_64: Π f is evaluated on the 102 orbit representatives × 64 angles instead of 408 × 64 and spread
over the orbits (``lib.paper_b.symmetry.spread_over_orbits``).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor, nn

from lib.kernels.cpu_linalg import column_norms
from lib.paper_b import lifting
from lib.paper_b import symmetry as sym
from lib.paper_b.annulus.data import DEFAULT_CONFIG, AnnulusConfig
from lib.paper_b.annulus.mlp import MLPJacobian, MLPParams
from lib.paper_b.lifting_problem import check_kind
from lib.paper_b.relations import lift_cosines


class Evaluation:
    """f_θ on the probes with the factored Jacobian and X f; Π f and δ = f − Π f computed on first use (float64)."""

    def __init__(self, problem: AnnulusProblem, net: MLPParams):
        x = problem.probes
        self._problem, self._net = problem, net
        self.f, factors, self.xf = net.forward_factors(x, torch.stack([-x[:, 1], x[:, 0]], 1))
        self.jac = MLPJacobian(factors, problem.workspace)
        self._Pf: Tensor | None = None
        self.lifts: dict[tuple[str, str], lifting.LiftResult] = {}  # (kind, gauge) -> the Gram-route lift at θ
        self._svd: lifting.TruncatedSVD | None = None

    def truncated_svd(self, tau: float) -> lifting.TruncatedSVD:
        """J's τ-truncated SVD by the Gram route, computed once per θ and shared by its c* and b* lifts."""
        if self._svd is None:
            self._svd = lifting.truncated_svd(self.jac, tau=tau, method="gram")
        return self._svd

    @property
    def Pf(self) -> Tensor:
        """Π f on the probes (C_64 quadrature at one point per quarter-turn orbit)."""
        if self._Pf is None:
            pb = self._problem
            at_reps = self._net.forward(pb.orbit_points).reshape(pb.m, pb.n_reps).mean(0)
            self._Pf = sym.spread_over_orbits(at_reps, pb.orbits, vector=False)
        return self._Pf

    @property
    def delta(self) -> Tensor:
        """The equivariance defect δ = f − Π f on the probes."""
        return self.f - self.Pf


class AnnulusProblem:
    """Probe grid, C_64 Reynolds average, generator, lifts and the §8.7 measures for the annulus MLP (float64).

    Implements ``lib.paper_b.lifting_problem.LiftingProblem``; flows are run by ``lib.paper_b.euler_flows.run_flow``.
    """

    def __init__(
        self,
        datasets: dict[str, tuple[np.ndarray, np.ndarray]],
        *,
        config: AnnulusConfig = DEFAULT_CONFIG,
        m: int = 64,
        tau: float = lifting.TAU,
        profile_radius: float = 1.0,
        n_profile: int = 360,
        n_rotations: int = 40,
        rotation_seed: int = 42,
    ):
        self.config = config
        self.widths = (2,) + (config.hidden,) * (config.depth - 1) + (1,)
        self.probes = sym.square_grid()
        self.m, self.tau = m, lifting.check_tau(tau)
        self.orbits = sym.quadrature_orbits(self.probes, m)  # the quarter turns: Π f is averaged once per orbit
        if self.orbits is None or self.orbits[0] != 4:
            raise ValueError("the probe set is not invariant under quarter turns")
        reps = self.orbits[1]
        self.orbit_points = sym.rotate_points(self.probes[reps], sym.quadrature_angles(m)).reshape(-1, 2)
        self.n_reps = len(reps)
        self.profile_angles, self.profile_points = sym.circle(profile_radius, n_profile)
        g = torch.Generator().manual_seed(rotation_seed)
        self.rotation_angles = 2 * math.pi * torch.rand(n_rotations, generator=g, dtype=torch.float64)
        self.datasets = {}
        for name, (x, y) in datasets.items():
            x64 = torch.as_tensor(x, dtype=torch.float64)
            self.datasets[name] = {
                "x": x64,
                "y01": torch.as_tensor(y > 0, dtype=torch.float64),
                "x_rot": sym.rotate_points(x64, self.rotation_angles).reshape(-1, 2),
            }
        self._cache: tuple[Tensor, Evaluation] | None = None
        self.workspace: dict = {}  # scratch of MLPJacobian.rmatmul, shared by the evaluations

    def __getstate__(self):
        """Pickled (for worker processes) without the last evaluation and the scratch buffers."""
        return {**self.__dict__, "_cache": None, "workspace": {}}

    def params(self, theta: Tensor) -> MLPParams:
        """The layers of θ."""
        return MLPParams(theta, self.widths)

    def evaluate(self, theta: Tensor) -> Evaluation:
        """f, X f, the factored J (and lazily Π f, δ) on the probes; cached for the last θ object."""
        if self._cache is not None and self._cache[0] is theta:
            return self._cache[1]
        ev = Evaluation(self, self.params(theta))
        self._cache = (theta, ev)
        return ev

    def rank(self, theta: Tensor) -> int:
        """The retained rank of J at θ (singular values ≥ τσ₁), from the eigenvalues of J Jᵀ."""
        w = torch.linalg.eigvalsh(self.evaluate(theta).jac.row_gram()).clamp_min(0).sqrt()
        return lifting.retained_rank(w.flip(0), self.tau)

    def target(self, ev: Evaluation, kind: str) -> Tensor:
        """The function-space direction: X f for c (our sign; the paper's η is −X f), −δ for b (paper's b*)."""
        return ev.xf if check_kind(kind) == "c" else -ev.delta

    def lift(self, theta: Tensor, kind: str, *, gauge: str = "sensitivity", method: str = "gram") -> lifting.LiftResult:
        """c* (kind "c") or b* (kind "b") at θ: truncated gauged lift through the factored J (Gram route).

        The Gram route decomposes J once per θ and keeps each lift, so c* and b* at one θ cost one decomposition."""
        ev = self.evaluate(theta)
        if method != "gram":
            return lifting.lift(ev.jac.dense(), self.target(ev, kind), tau=self.tau, gauge=gauge, method=method)
        if (kind, gauge) not in ev.lifts:
            svd = ev.truncated_svd(self.tau)
            ev.lifts[kind, gauge] = lifting.lift(ev.jac, self.target(ev, kind), tau=self.tau, gauge=gauge, svd=svd)
        return ev.lifts[kind, gauge]

    def rotated(self, theta: Tensor, t: float) -> Tensor:
        """f_θ ∘ R_t on the probes: the exact flow along c* at time t."""
        return self.params(theta).forward(sym.rotate_points(self.probes, t))

    def train_metrics(self, theta: Tensor, dataset: str, *, invariance: bool = True) -> dict[str, float]:
        """BCE, accuracy (logit > 0) and max_α |f(R_α x) − f(x)| over the 40 seeded angles on the training points."""
        d = self.datasets[dataset]
        net = self.params(theta)
        logits = net.forward(d["x"])
        out = {
            "bce": float(torch.nn.functional.binary_cross_entropy_with_logits(logits, d["y01"])),
            "acc": float(((logits > 0).double() == d["y01"]).double().mean()),
        }
        if invariance:
            rot = net.forward(d["x_rot"]).reshape(-1, d["x"].shape[0])
            out["inv_err"] = float((rot - logits).abs().max())
        return out

    def angular_deviation(self, theta: Tensor) -> Tensor:
        """d(φ) = f(r cos φ, r sin φ) − mean_φ f on the profile circle, (n_profile,)."""
        f = self.params(theta).forward(self.profile_points)
        return f - f.mean()

    def observer(
        self,
        datasets: tuple[str, ...],
        *,
        invariance_every: int,
        steps: int,
        cosines: bool = False,
        frozen: tuple[str, str] | None = None,
    ):
        """The annulus's own measures at a stop (for ``run_flow(observe=…)``): the angular deviation at r = 1 and,
        per dataset, BCE, accuracy and (every ``invariance_every`` stops and the last; nan elsewhere) the invariance
        error; with ``cosines``, how c* and b* at the stop relate (``lib.paper_b.relations.lift_cosines``;
        in a resolved flow one of the two lifts is the step's own); with ``frozen`` = (kind, gauge), how far the
        move of the flow's first direction z₀ has changed, ‖J_θ z₀ − J_θ₀ z₀‖/‖J_θ₀ z₀‖ (``move_drift_z0``: how
        local J is along the path; z₀ is the lift the flow made at its first stop)."""
        if frozen is not None:
            check_kind(frozen[0])
        first: dict[str, Tensor] = {}

        def observe(theta: Tensor, ev: Evaluation, k: int) -> dict:
            out = {"profile": self.angular_deviation(theta)}
            if frozen is not None:
                if k == 0:
                    first["z0"] = self.lift(theta, frozen[0], gauge=frozen[1]).coef
                    first["move0"] = ev.jac.matmul(first["z0"])
                move = ev.jac.matmul(first["z0"])
                out["move_drift_z0"] = float((move - first["move0"]).norm() / first["move0"].norm())
            if cosines:
                out.update(lift_cosines(self, theta))
            heavy = k % invariance_every == 0 or k == steps
            for name in datasets:
                tm = self.train_metrics(theta, name, invariance=heavy)
                out[f"acc_{name}"] = tm["acc"]
                out[f"bce_{name}"] = tm["bce"]
                out[f"inv_err_{name}"] = tm.get("inv_err", float("nan"))
            return out

        return observe

    def predicted_profile(self, theta0: Tensor, kind: str, t: float) -> Tensor:
        """The exact flow's angular deviation at time t: d_0(φ + t) along c, e^{−t} d_0(φ) along b* (notes §8.7)."""
        if check_kind(kind) == "c":
            f = self.params(theta0).forward(sym.rotate_points(self.profile_points, t))
            return f - f.mean()
        return math.exp(-t) * self.angular_deviation(theta0)

    def decision_scores(self, theta: Tensor, *, extent: float = 4.0, n: int = 120) -> np.ndarray:
        """Logits on an n × n mesh over [−extent, extent]² (rows = y), float64 numpy, for decision-boundary panels."""
        axis = torch.linspace(-extent, extent, n, dtype=torch.float64)
        yy, xx = torch.meshgrid(axis, axis, indexing="ij")
        pts = torch.stack([xx.reshape(-1), yy.reshape(-1)], 1)
        return self.params(theta).forward(pts).reshape(n, n).numpy()


def authors_resolve(
    model: nn.Module, probes: Tensor, target: Tensor, *, tau: float = lifting.TAU
) -> lifting.LiftResult:
    """The paper code's way of one re-solve: one backward pass per probe, a full SVD of J, then the gauged lift.

    ``model`` is a float64 module; used as the benchmark baseline and as a cross-check of the fast route.
    """
    weights = list(model.parameters())
    rows = []
    for x in probes:
        out = model(x[None])[0, 0]
        grads = torch.autograd.grad(out, weights)
        rows.append(torch.cat([g.reshape(-1) for g in grads]))
    J = torch.stack(rows)
    U, S, Vh = torch.linalg.svd(J, full_matrices=False)  # SVD(J) of the (N, p) matrix itself, as the paper's code
    r = lifting.retained_rank(S, tau)
    svd = lifting.TruncatedSVD(U[:, :r], S[:r], Vh[:r].T, S, column_norms(J), "svd")
    return lifting.lift(J, target, tau=tau, svd=svd)
