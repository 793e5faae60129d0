"""One lift of the Mexican hat in the two gauges (notes §9.5–9.6): what a unit-normalised step of the authors' size
does in each, and what forward Euler along a rotation predicts for the defect."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from torch import Tensor

from lib.core.tables import Table
from lib.paper_b.lifting import LiftResult, TruncatedSVD, lift
from lib.paper_b.lifting_problem import KINDS
from lib.paper_b.mexican_hat.lift import Solve, pooled_lift, sketched_svd
from lib.paper_b.mexican_hat.probes import Probes, defect_field, force_jacobian, pooled_force

GAUGE_TAGS = (("min-norm", "plain"), ("sensitivity gauge", "gauged"))


@dataclass
class GaugeComparison:
    """c* and b* at θ₀ in both gauges from one sketched SVD of J₀, with the unit-step table and the glue values."""

    plain: dict[str, LiftResult]  # kind -> min-norm lift
    gauged: dict[str, LiftResult]  # kind -> sensitivity-gauge lift
    svd: TruncatedSVD
    rows: list[tuple]  # (kind, gauge, ‖c‖, rank, rel. residual, ‖ΔF‖/‖F‖ after one unit step, first-order promise)
    glue: dict
    unit_step: float

    def table(self) -> Table:
        """One unit-normalised step along each lift, in the two gauges."""
        return Table(
            ("lift", "gauge", "‖c‖", "rank", "‖(I−P)η‖/‖η‖", "‖ΔF‖/‖F‖ after one step", "first-order"),
            tuple((f"{kind}*", *rest) for kind, *rest in self.rows),
            (".3g", "", ".3g", "", ".2e", ".2e", ".2e"),
            caption=f"One unit-normalised step of length {self.unit_step:g} along each lift, in the two gauges",
        )

    def coefficients(self) -> dict[str, np.ndarray]:
        """c* in the two gauges, for ``plots.hamiltonian.lift_gauges``."""
        return {"c*, min-norm": self.plain["c"].coef.numpy(), "c*, sensitivity gauge": self.gauged["c"].coef.numpy()}


def unit_step_move(theta0: Tensor, probes: Probes, J0: Tensor, F0: Tensor, coef: Tensor, step: float):
    """(‖F(θ₀ + step·ĉ) − F₀‖/‖F₀‖, ‖J ĉ‖·step/‖F₀‖): how far one unit-normalised step moves F, and the first-order
    promise."""
    c_hat = coef / coef.norm()
    moved = float((pooled_force(theta0 + step * c_hat, probes) - F0).norm() / F0.norm())
    promised = float((J0 @ c_hat).norm() * step / F0.norm())
    return moved, promised


def euler_growth(omega: float, *, dt: float, steps: int) -> float:
    """‖δ‖ after ``steps`` forward-Euler steps along a rotation, relative to the start: each step multiplies it by
    sqrt(1 + dt²‖Jc‖²/‖δ‖²), ω = ‖Jc‖/‖δ‖ (second order in the step)."""
    return float((1 + (dt * omega) ** 2) ** (steps / 2))


def compare_gauges(
    theta0: Tensor, probes: Probes, *, tau: float, sketch_rank: int, unit_step: float, walk_dt: float, walk_steps: int,
    exact: Solve | None = None,
) -> GaugeComparison:  # fmt: skip
    """Both lifts at θ₀ in both gauges, the unit-step table, the rotation per unit step, the Euler-growth prediction of
    the c* walk, and (``exact``: the Gram-route solve) the sketch's agreement with the exact lift."""
    J0 = force_jacobian(theta0, probes)
    F0 = pooled_force(theta0, probes)
    sol = {k: pooled_lift(theta0, probes, k, tau=tau, sketch_rank=sketch_rank, J=J0) for k in ("b", "c")}
    svd0 = sketched_svd(J0, tau=tau, rank=sketch_rank)
    gauged = {k: lift(J0, sol[k].target, tau=tau, gauge="sensitivity", svd=svd0) for k in KINDS}
    plain = {k: sol[k].lift for k in KINDS}
    glue = {"rank0": int(plain["c"].rank), "sketch_rank": int(sketch_rank), "tau": float(tau)}
    glue["c_rel_residual"], glue["b_rel_residual"] = float(plain["c"].rel_residual), float(plain["b"].rel_residual)
    for k in ("c", "b"):
        glue[f"{k}_norm_minnorm"] = float(plain[k].coef.norm())
        glue[f"{k}_norm_gauged"] = float(gauged[k].coef.norm())
    glue["sketch_check_text"] = "was not run (exact_check = False)"
    if exact is not None:
        diff = float((exact.lift.coef - plain["c"].coef).norm() / exact.lift.coef.norm())
        glue["sketch_vs_gram"] = diff
        glue["sketch_check_text"] = f"agrees with the sketch to {diff:.0e}"
    rows = []
    for kind in KINDS:
        for (name, tag), res in zip(GAUGE_TAGS, (plain[kind], gauged[kind]), strict=True):
            moved, promised = unit_step_move(theta0, probes, J0, F0, res.coef, unit_step)
            rows.append((kind, name, float(res.coef.norm()), int(res.rank), float(res.rel_residual), moved, promised))
            glue[f"unit_move_{kind}_{tag}"] = moved
            glue[f"unit_promised_{kind}_{tag}"] = promised
    omega = float(plain["c"].projection.norm() / defect_field(theta0, probes).norm())
    glue["euler_growth_pred"] = euler_growth(omega, dt=walk_dt, steps=walk_steps)
    glue["euler_omega"] = omega
    glue["deg_per_unit_step"] = math.degrees(unit_step / float(plain["c"].coef.norm()))
    return GaugeComparison(plain, gauged, svd0, rows, glue, unit_step)
