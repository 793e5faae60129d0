"""The lifting problem both of paper B's systems pose (paper B §2–3, notes §7): one interface, one exact flow.

A system (``lib.paper_b.annulus.AnnulusProblem``, ``lib.paper_b.mexican_hat.MexicanHatProblem``) evaluates its learned
function f_θ on a probe set with the Jacobian operator at θ, lifts a function-space direction through it, and knows
how to rotate f_θ. The two directions, in this book's sign (the paper's η is −X f):

* kind ``"c"``: X f, the rotation generator; the exact flow f_t = f₀ rotated by t (``rotated``);
* kind ``"b"``: −δ with δ = f − Π f, towards the invariant (equivariant) functions; the exact flow Π f₀ + e^{−t} δ₀.

:class:`ExactFlow` holds both flows' closed forms from θ₀; ``lib.paper_b.euler_flows.run_flow`` walks any problem along
either direction and measures it against them.
"""

from __future__ import annotations

import math
from typing import Any, Protocol, runtime_checkable

from torch import Tensor

from lib.paper_b.lifting import LiftResult

KINDS = ("c", "b")


class ProblemEvaluation(Protocol):
    """f_θ on the probes (any shape), the Jacobian operator at θ (``matmul``, ``rmatmul``, ``col_norms``, ``gram``),
    Π f and the defect δ = f − Π f (same shape as f)."""

    f: Tensor

    @property
    def jac(self) -> Any: ...

    @property
    def Pf(self) -> Tensor: ...

    @property
    def delta(self) -> Tensor: ...


@runtime_checkable
class LiftingProblem(Protocol):
    """What ``run_flow`` needs of a system: evaluate at θ, the target direction, the lift, and f_θ rotated."""

    tau: float

    def evaluate(self, theta: Tensor) -> ProblemEvaluation:
        """f, J, Π f and δ at θ."""
        ...

    def target(self, ev: ProblemEvaluation, kind: str) -> Tensor:
        """The function-space direction, flattened to J's rows: X f (kind "c") or −δ (kind "b")."""
        ...

    def lift(self, theta: Tensor, kind: str, *, gauge: str) -> LiftResult:
        """The truncated gauged lift of ``target`` through J at θ (c* or b*)."""
        ...

    def rotated(self, theta: Tensor, t: float) -> Tensor:
        """f_θ rotated by t radians on the probes, shaped like ``f``: the exact flow along c* at time t."""
        ...


def check_kind(kind: str) -> str:
    """``kind`` if it names a direction ("c" or "b"), else ValueError."""
    if kind not in KINDS:
        raise ValueError(f"kind={kind!r} is not allowed; choose one of {list(KINDS)}")
    return kind


class ExactFlow:
    """The exact function-space flow from θ₀ along c* (a rotation) or b* (f_t = Π f₀ + e^{−t} δ₀; notes §8.7)."""

    def __init__(self, problem: LiftingProblem, theta0: Tensor, kind: str):
        self.problem, self.theta0, self.kind = problem, theta0, check_kind(kind)
        ev0 = problem.evaluate(theta0)
        self.f0, self.delta0, self.Pf0 = ev0.f.clone(), ev0.delta.clone(), ev0.Pf.clone()
        self.f0_norm = float(self.f0.norm())
        self.defect0 = float(self.delta0.norm())

    def at(self, t: float) -> Tensor:
        """f_t on the probes."""
        if self.kind == "c":
            return self.problem.rotated(self.theta0.clone(), t)
        return self.Pf0 + math.exp(-t) * self.delta0

    def defect(self, t: float) -> float:
        """‖δ_t‖ of the exact flow: constant along c*, e^{−t}‖δ₀‖ along b*."""
        return self.defect0 if self.kind == "c" else math.exp(-t) * self.defect0

    def end(self, t_end: float) -> Tensor:
        """Where the flow is headed: f₀ rotated by t_end along c* (a rotation never settles), Π f₀ along b*."""
        return self.at(1.0 * t_end) if self.kind == "c" else self.Pf0
