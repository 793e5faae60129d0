"""The τ profile of a lift: its residual, rank and size at every cutoff J's spectrum allows, from one decomposition.

A lift keeps the singular values σ_k ≥ τσ₁ (paper B eq. 23), so its answer depends on τ. Every cutoff between two
consecutive singular values keeps the same r directions; the profile therefore has one row per retained rank
r = 1, …, n, at the largest cutoff that keeps it, τ_r = σ_r/σ₁. With β = Uᵀη (the target in J's left singular basis)

    ‖(I − P_r)η‖² = ‖η_⊥‖² + Σ_{k>r} β_k²     (η_⊥: the part of η outside J's column space)
    ‖c_r‖²        = Σ_{k≤r} (β_k/σ_k)²        (the minimum-norm lift at rank r; the gauge changes the split, not P_r)

as tail and head sums of non-negative terms, so the residual keeps its accuracy down to round-off. Which cutoffs a
decomposition can speak for is its *resolution*: the exact SVD resolves σ_k/σ₁ down to max(M, p)·ε, the Gram route
(which squares the condition number) only down to ``lifting.GRAM_MIN_TAU``; rows below are not reported.

The profile says which of four cases holds, by a rule fixed before any network's numbers (:func:`classify`):

- *lifts exactly*: the residual reaches round-off (``lines.round_off``) at some cutoff, by a lift of bounded size
  (float64's error in J c, ε·σ₁‖c_r‖, also below round-off relative to ‖η‖): that τ and ‖c‖ are given;
- *lifts approximately at the paper's cutoff*: not exactly, but at the paper's τ the angle between η and its lift is
  below the authors' representation threshold of 10° (relative residual sin 10°);
- *lifts approximately only below the paper's cutoff*: the residual falls below sin 10° at a smaller τ only;
- *does not lift at any cutoff*: the residual's floor over every resolved cutoff stays above sin 10°.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from lib.core.lines import line
from lib.core.tables import Table

EPS = float(np.finfo(np.float64).eps)
#: An exact lift's relative residual: float64 round-off (the book's line for identities).
EXACT = line("round_off")
#: The authors' representation threshold: a direction is represented by J's resolved image when its principal angle
#: to it is below 10° (notes §9.4), i.e. a relative residual below sin 10°.
REPRESENTED_DEG = 10.0
REPRESENTED = math.sin(math.radians(REPRESENTED_DEG))
CASES = ("exact", "approximate", "below_paper_cutoff", "none")
#: Each case in words, for a sentence or a table cell.
CASE_WORDS = {"exact": "lifts exactly", "approximate": "lifts approximately at the paper's cutoff",
              "below_paper_cutoff": "lifts approximately only below the paper's cutoff",
              "none": "does not lift at any cutoff"}  # fmt: skip


@dataclass(frozen=True)
class CutoffProfile:
    """A lift at every cutoff: row r keeps the r largest singular values, at the largest such τ (σ_r/σ₁).

    ``tau``, ``rel_residual``, ``coef_norm`` (the min-norm ‖c_r‖) and ``attainable`` (what float64 can certify:
    max(relative residual, ε·σ₁‖c_r‖/‖η‖)) are (n,) numpy arrays, ``rank`` = 1..n; ``resolution`` is the smallest
    τ the decomposition speaks for; ``paper_tau`` the cutoff of the lift it came with; ``case`` one of
    :data:`CASES`, chosen by :func:`classify`.
    """

    tau: np.ndarray
    rank: np.ndarray
    rel_residual: np.ndarray
    coef_norm: np.ndarray
    attainable: np.ndarray
    resolution: float
    paper_tau: float
    residual_at_paper_tau: float
    rank_at_paper_tau: int
    eta_norm: float
    case: str

    def __repr__(self) -> str:
        return f"CutoffProfile({self.case}: {self.sentence()})"

    def at(self, tau: float) -> tuple[int, float]:
        """(rank, relative residual) of the lift at cutoff ``tau`` (a row of the profile; rank 0 keeps nothing)."""
        r = int((self.tau >= tau).sum())
        return r, (1.0 if r == 0 else float(self.rel_residual[r - 1]))

    @property
    def floor(self) -> tuple[float, float]:
        """(the smallest attainable relative residual over the resolved cutoffs, the largest τ that reaches it)."""
        if not self.tau.size:
            return 1.0, math.nan
        i = int(np.argmin(self.attainable))
        return float(self.attainable[i]), float(self.tau[i])

    @property
    def exact_at(self) -> tuple[float, float, float] | None:
        """For an exact lift: (the largest τ at which it is exact, the size ‖c‖ of that lift, its relative residual);
        else None."""
        hit = np.flatnonzero(self.attainable <= EXACT)
        if not hit.size:
            return None
        i = hit[0]
        return float(self.tau[i]), float(self.coef_norm[i]), float(self.rel_residual[i])

    def sentence(self) -> str:
        """Which case holds, in words, with the numbers that decide it; then the lift at the paper's cutoff."""
        paper = (f"at the paper's τ = {self.paper_tau:g}: rank {self.rank_at_paper_tau}, relative residual "
                 f"{self.residual_at_paper_tau:.3g}")  # fmt: skip
        floor, where = self.floor
        if self.eta_norm == 0:
            return "is zero: there is nothing to lift (every cutoff gives c = 0)"
        if self.case == "exact":
            tau, size, residual = self.exact_at
            return (f"lifts exactly: the residual reaches round-off ({residual:.2g} relative) at τ = {tau:.3g}, by "
                    f"a lift of size ‖c‖ = {size:.4g} (minimum norm); {paper}")  # fmt: skip
        if self.case == "approximate":
            return (
                f"lifts approximately at the paper's cutoff ({paper}); no exact lift down to τ = {self.resolution:.2g}"
            )
        if self.case == "below_paper_cutoff":
            first = float(self.tau[np.flatnonzero(self.rel_residual <= REPRESENTED)[0]])
            return (
                f"lifts approximately only below the paper's cutoff: the residual falls under "
                f"sin {REPRESENTED_DEG:g}° = {REPRESENTED:.3f} from τ = {first:.3g} (floor {floor:.3g} at "
                f"τ = {where:.3g}); {paper}"
            )
        return (
            f"does not lift at any cutoff: the residual's floor is {floor:.3g} (at τ = {where:.3g}, resolved down "
            f"to τ = {self.resolution:.2g}); {paper}"
        )


def classify(rel_residual: np.ndarray, attainable: np.ndarray, residual_at_paper_tau: float) -> str:
    """The case (:data:`CASES`) of a profile, by the rule of the module docstring."""
    if attainable.size and float(attainable.min()) <= EXACT:
        return "exact"
    if residual_at_paper_tau <= REPRESENTED:
        return "approximate"
    if rel_residual.size and float(rel_residual.min()) <= REPRESENTED:
        return "below_paper_cutoff"
    return "none"


def profile(singular_values: Tensor, beta: Tensor, outside_sq: float, eta_norm: float, *, resolution: float,
            paper_tau: float) -> CutoffProfile:  # fmt: skip
    """The profile from J's singular values (descending, all of them), the target's coordinates ``beta`` in the
    matching left singular vectors, ‖η_⊥‖² (``outside_sq``), ‖η‖, the decomposition's resolution and the lift's τ."""
    S = singular_values.detach().to(torch.float64).cpu().numpy()
    b = beta.detach().to(torch.float64).cpu().numpy()
    if S.size == 0 or S[0] <= 0 or eta_norm == 0:
        empty = np.zeros(0)
        rel = 0.0 if eta_norm == 0 else 1.0
        return CutoffProfile(empty, empty.astype(int), empty, empty, empty, resolution, paper_tau, rel, 0, eta_norm,
                             "exact" if eta_norm == 0 else "none")  # fmt: skip
    ratio = S / S[0]
    n = int(((ratio >= resolution) & (S > 0)).sum())
    tail = np.concatenate([np.cumsum((b**2)[::-1])[::-1], [0.0]])  # tail[r] = Σ_{k ≥ r} β_k² (0-based)
    rel = np.sqrt(np.maximum(outside_sq, 0.0) + tail[1 : n + 1]) / eta_norm
    with np.errstate(over="ignore"):  # a J far below unit scale: a lift too long for float64 is inf, not a warning
        size = np.sqrt(np.cumsum((b[:n] / S[:n]) ** 2))
    attainable = np.maximum(rel, EPS * S[0] * size / eta_norm)
    r_paper = int((ratio >= paper_tau).sum())
    at_paper = 1.0 if r_paper == 0 else float(np.sqrt(max(outside_sq, 0.0) + tail[r_paper]) / eta_norm)
    case = classify(rel, attainable, at_paper)
    return CutoffProfile(ratio[:n].copy(), np.arange(1, n + 1), rel, size, attainable, float(resolution),
                         float(paper_tau), at_paper, r_paper, float(eta_norm), case)  # fmt: skip


def from_decomposition(svd, op, eta: Tensor, tau: float) -> CutoffProfile | None:
    """η's τ profile from a decomposition's whole basis (a ``lib.paper_b.lifting.TruncatedSVD``; None without one):
    β = Uᵀη and ‖η_⊥‖² by one product with the basis, or with Jᵀ on the Gram route of a tall J (there
    ‖η_⊥‖² = ‖η‖² − ‖β‖², within that route's resolution)."""
    S = svd.singular_values
    if svd.left_basis is not None:
        beta = svd.left_basis.T @ eta
        outside = float((eta - svd.left_basis @ beta).square().sum())
    elif svd.right_basis is not None:
        gamma = svd.right_basis.T @ op.rmatmul(eta)
        positive = S > 0
        beta = torch.where(positive, gamma / torch.where(positive, S, torch.ones_like(S)), torch.zeros_like(S))
        outside = max(float(eta @ eta) - float(beta @ beta), 0.0)
    else:
        return None
    return profile(S, beta, outside, float(eta.norm()), resolution=svd.resolution(op.shape), paper_tau=tau)


def profiles_table(profiles: dict[str, CutoffProfile], caption: str = "The lifts at every cutoff (τ profiles)"):
    """One row per lift: its case, where it is exact (τ and the size of the minimum-norm lift), its residual's floor,
    and the rank and residual at the lift's own τ."""
    rows = []
    for label, prof in profiles.items():
        exact = prof.exact_at
        floor, where = prof.floor
        rows.append((label, CASE_WORDS[prof.case], f"{exact[0]:.3g}" if exact else "—",
                     f"{exact[1]:.4g}" if exact else "—", f"{floor:.3g} (τ = {where:.3g})", prof.rank_at_paper_tau,
                     f"{prof.residual_at_paper_tau:.3g}"))  # fmt: skip
    return Table(("lift", "case", "exact from τ", "its ‖c‖", "floor of the residual", "rank at τ", "residual at τ"),
                 tuple(rows), caption=caption)  # fmt: skip
