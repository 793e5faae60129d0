"""The result of paper B's lift of a one-parameter symmetry on any module (``lib.paper_b.any_module.lift_symmetry``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor

from lib.paper_b import lifting
from lib.paper_b.relations import block_shares
from lib.paper_b.sensitivity import unflatten_params


@dataclass
class SymmetryLift:
    """Paper B at θ of a module (:func:`lift_symmetry`); vectors in ``named_parameters`` order, functions (N, k).
    The annulus chapter's ``defect_start``, ``rank_start_c``, ``rel_residual_{c,b}_start``, S_i and ``sens_share``
    (``shares``), ``cos_*_start`` (``relation``: ``relations.lift_cosines``, sensitivity gauge) at a start θ."""

    params: dict[str, Tensor]  # θ by parameter name
    sensitivity: Tensor  # (p,) S_i = ‖J_{:,i}‖₂/√(N·k) (App. A.5)
    c: lifting.LiftResult  # c* = c.coef, the lift of X f, with its rank, residuals, singular values, τ, gauge
    b: lifting.LiftResult | None  # b* = b.coef, the lift of −δ; None for a non-compact group
    f: Tensor
    xf: Tensor  # X f
    delta: Tensor  # δ = f − Π f (nan for a non-compact group)
    defect: float  # ‖δ‖, plain L2 over the probes
    defect_rel: float  # ‖δ‖/‖f‖
    rank: int  # J's retained rank (σ_k ≥ τσ₁)
    tau: float
    cos_delta_xf: float  # cos(δ, X f): 0 by eq. 22 on a group-invariant probe set
    relation: dict[str, float] = field(default_factory=dict)  # empty when X f, δ or b* is missing
    route: str = "dense"  # "dense" or "streaming" (lib.paper_b.streaming)
    route_note: str = ""  # which route, why, and the dense J's memory estimate
    passes: int = 0  # passes over the streamed J (0 on the dense route)
    evidence: dict = field(default_factory=dict)  # "c", "b" → lib.paper_b.evidence.Evidence (empty: not judged)

    @property
    def profile(self):
        """c*'s τ profile (``lifting.LiftResult.profile``): the case it finds and the residual at every cutoff."""
        return self.c.profile

    @property
    def case(self) -> str:
        """X f's case: the evidence's (``lib.paper_b.evidence.CASES``) where judged, else "not judged"."""
        return self.evidence["c"].case if "c" in self.evidence else "not judged"

    def summary(self) -> str:
        """What the evidence finds for X f (and −δ): held out and against the null; then what the τ profiles find on
        the probes, and the numbers at the lift's τ."""
        lines = [f"{name} {self.evidence[k].sentence()}" for k, name in (("c", "X f"), ("b", "−δ"))
                 if k in self.evidence]  # fmt: skip
        if not self.evidence:
            lines.append("not judged held out (held_out=None): on its probes alone, a lift at full row rank proves "
                         "nothing")  # fmt: skip
        fit = "on its probes, " if self.evidence else ""
        profile = self.c.profile
        lines.append(f"{fit}X f {profile.sentence()}" if profile is not None else f"X f: {self.c.summary()}")
        if self.b is not None and self.b.profile is not None:
            lines.append(f"{fit}−δ {self.b.profile.sentence()}")
        b = "" if self.b is None else f", ‖b*‖ = {float(self.b.coef.norm()):.4g}"
        lines.append(f"at τ = {self.tau:g}: rank {self.rank} of {self.sensitivity.numel()} parameters, "
                     f"‖c*‖ = {float(self.c.coef.norm()):.4g}{b}; defect ‖δ‖/‖f‖ = {self.defect_rel:.3g}")  # fmt: skip
        if self.route_note:
            lines.append(self.route_note + (f" ({self.passes} passes over J)" if self.route == "streaming" else ""))
        return "\n".join(lines)

    def __repr__(self) -> str:
        case = f", X f: {self.case}"
        return (f"SymmetryLift({self.sensitivity.numel()} parameters, rank {self.rank} at τ={self.tau:g}{case}, "
                f"defect {self.defect_rel:.3g})")  # fmt: skip

    def by_name(self, vector: Tensor) -> dict[str, Tensor]:
        """A per-parameter vector (p,) (S_i, c*, b*) split into tensors named and shaped as the parameters."""
        return unflatten_params(vector, self.params)

    def shares(self, vector: Tensor | None = None) -> dict[str, float]:
        """Each named parameter tensor's share of Σ v_i² (default v = S_i: the chapter's ``sens_share``)."""
        sizes = np.cumsum([0] + [t.numel() for t in self.params.values()]).tolist()
        blocks = [(name, slice(a, b)) for name, a, b in zip(self.params, sizes[:-1], sizes[1:], strict=True)]
        v = self.sensitivity if vector is None else vector
        return block_shares(v.detach().to(torch.float64) ** 2, blocks)
