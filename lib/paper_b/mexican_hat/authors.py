"""The authors' walk (notes §9.5, §11.3; their ``run_potential_walk_experiment.py``): resolved, unit-normalised steps of
0.02 in parameter space, five forward and three backward, beside the book's walk (issue 16 item 6).

Forward: θ_{k+1} = θ_k + s·ẑ(θ_k). Backward: the same walk from θ₀ in the opposite sense, θ_{−k−1} = θ_{−k} −
s·ẑ(θ_{−k}) (the dashed curves of their figure), with ẑ = z/‖z‖ the re-solved lift c* or b* in the named gauge. A
unit step of length s along z is dt = s/‖z‖ of flow time, so the walk's flow time is t = ±Σ_k s/‖z_k‖; at first
order the exact flow keeps ‖δ‖ along c* and scales it by e^{−t} along b* (e^{+|t|} backward).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from torch import Tensor

from lib.core import params
from lib.core.tables import Table
from lib.paper_b.lifting import GAUGES
from lib.paper_b.lifting_problem import KINDS, check_kind
from lib.paper_b.mexican_hat.problem import MexicanHatProblem

GAUGE_NAMES = {"minnorm": "min-norm", "sensitivity": "sensitivity"}


@dataclass
class AuthorsWalk:
    """One walk: flow times (backward stops negative, ascending) and the defect ‖δ‖ there."""

    kind: str
    gauge: str
    step: float
    times: np.ndarray  # (backward + forward + 1,)
    defect: np.ndarray

    @property
    def start(self) -> int:
        """Index of θ₀ in the stops."""
        return int(np.flatnonzero(self.times == 0)[0])

    def ratio(self, end: str) -> float:
        """‖δ‖ at the forward (``end="forward"``) or backward end over ‖δ₀‖."""
        i = {"forward": -1, "backward": 0}[params.choice("end", end, ("forward", "backward"))]
        return float(self.defect[i] / self.defect[self.start])

    def predicted(self, end: str) -> float:
        """The exact flow's ratio at that end: 1 along c*, e^{−t} along b*."""
        t = self.times[-1 if end == "forward" else 0]
        return 1.0 if self.kind == "c" else float(math.exp(-t))


def authors_walk(
    problem: MexicanHatProblem, theta0: Tensor, kind: str, gauge: str, *, step: float = 0.02, forward: int = 5,
    backward: int = 3, z0: Tensor | None = None,
) -> AuthorsWalk:  # fmt: skip
    """The authors' resolved unit-step walk along c* (kind "c") or b* (kind "b") in ``gauge`` from θ₀; ``z0`` is the
    lift at θ₀ if already known."""
    check_kind(kind)
    gauge = params.choice("gauge", gauge, GAUGES)
    step = params.real("step", step, min=0.0, min_open=True)
    forward = params.integer("forward", forward, min=0)
    backward = params.integer("backward", backward, min=0)
    if z0 is None:
        z0 = problem.lift(theta0, kind, gauge=gauge).coef
    d0 = float(problem.evaluate(theta0).delta.norm())
    sides = {}
    for sign, n in ((1.0, forward), (-1.0, backward)):
        theta, t, stops = theta0, 0.0, []
        for k in range(n):
            z = z0 if k == 0 else problem.lift(theta, kind, gauge=gauge).coef
            norm = float(z.norm())
            theta = theta + (sign * step / norm) * z
            t += sign * step / norm
            stops.append((t, float(problem.evaluate(theta).delta.norm())))
        sides[sign] = stops
    rows = [*reversed(sides[-1.0]), (0.0, d0), *sides[1.0]]
    return AuthorsWalk(kind, gauge, step, np.array([r[0] for r in rows]), np.array([r[1] for r in rows]))


def authors_walks(problem: MexicanHatProblem, theta0: Tensor, z0: dict | None = None, **kw) -> dict:
    """``authors_walk`` for both kinds in both gauges, keyed (kind, gauge); ``z0`` maps (kind, gauge) to the lift at
    θ₀ (e.g. from a ``Snapshot``'s coefficients)."""
    z0 = z0 or {}
    return {(k, g): authors_walk(problem, theta0, k, g, z0=z0.get((k, g)), **kw) for k in KINDS for g in GAUGES}


def curves(walks: dict, book) -> tuple[dict, dict]:
    """({"c, min-norm": (t, ‖δ‖/‖δ₀‖), …} of the authors' walks, {kind: (t, ratio)} of the book's resolved walks
    (a ``WalkSet``)) for ``plots.hamiltonian_attribution.authors_walks``."""
    ours = {f"{k}, {GAUGE_NAMES[g]}": (w.times, w.defect / w.defect[w.start]) for (k, g), w in walks.items()}
    theirs = {}
    for k in KINDS:
        d = book.walks[k, "resolved"].diagnostics["defect"]
        theirs[k] = (book.times, d / d[0])
    return ours, theirs


def walks_glue(walks: dict, book_ratios: dict, book_t: float) -> dict:
    """The defect ratios of every authors' walk at both ends, their flow times, and the book's, by glue name."""
    out = {"book_walk_t": float(book_t)}
    for (k, g), w in walks.items():
        tag = f"{k}_{'plain' if g == 'minnorm' else 'gauged'}"
        out[f"authors_ratio_fwd_{tag}"], out[f"authors_ratio_bwd_{tag}"] = w.ratio("forward"), w.ratio("backward")
        out[f"authors_t_fwd_{tag}"], out[f"authors_t_bwd_{tag}"] = float(w.times[-1]), float(-w.times[0])
        out[f"authors_pred_fwd_{tag}"] = w.predicted("forward")
    for k in KINDS:
        out[f"book_ratio_{k}"] = float(book_ratios[k, "resolved"])
    first = next(iter(walks.values()))
    out["authors_step"], out["authors_forward"] = float(first.step), int(len(first.times) - 1 - first.start)
    out["authors_backward"] = int(first.start)
    return out


def walks_table(walks: dict, book_ratios: dict, book_t: float) -> Table:
    """The authors' walks (both gauges) and the book's resolved walks: flow time reached, defect ratio, prediction."""
    rows = []
    for k in KINDS:
        rows.append((f"{k}*", "book: raw steps, min-norm", book_t, book_ratios[k, "resolved"],
                     1.0 if k == "c" else math.exp(-book_t), float("nan"), float("nan")))  # fmt: skip
        for g in GAUGES:
            w = walks[k, g]
            rows.append((f"{k}*", f"authors: unit steps, {GAUGE_NAMES[g]}", float(w.times[-1]), w.ratio("forward"),
                         w.predicted("forward"), float(-w.times[0]), w.ratio("backward")))  # fmt: skip
    return Table(
        ("lift", "walk", "t forward", "‖δ‖/‖δ₀‖ forward", "exact flow", "|t| backward", "‖δ‖/‖δ₀‖ backward"),
        tuple(rows), ("", "", ".3f", ".4f", ".4f", ".3f", ".4f"),
        caption="The book's resolved walks and the authors' unit-step walks (resolved, both gauges): the flow time "
        "each reaches, and the defect there",
    )  # fmt: skip
