"""The Mexican hat's walks along c* and b*, resolved and fixed (paper B Figs. 3–4, notes §9.5): each one
``lib.paper_b.euler_flows.run_flow`` of a ``MexicanHatProblem``, and what the chapter reads off them."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from torch import Tensor

from lib.core.tables import Table
from lib.paper_b.euler_flows import FlowRecord, run_flow
from lib.paper_b.lifting_problem import KINDS
from lib.paper_b.mexican_hat.problem import MexicanHatProblem

MODES = ("resolved", "fixed")


@dataclass
class WalkSet:
    """The four min-norm walks keyed (kind, mode) and the fixed c* walk in the sensitivity gauge, from one θ₀."""

    walks: dict[tuple[str, str], FlowRecord]
    fixed_c_gauged: FlowRecord
    f0_norm: float  # ‖F₀‖ on the probes

    @property
    def times(self) -> np.ndarray:
        """Flow times of the stops."""
        return self.walks["c", "resolved"].times

    def drift(self, kind: str) -> np.ndarray:
        """‖F_fixed − F_resolved‖/‖F₀‖ at every stop."""
        diff = self.walks[kind, "fixed"].diagnostics["force"] - self.walks[kind, "resolved"].diagnostics["force"]
        return np.linalg.norm(diff, axis=1) / self.f0_norm

    def defect_ratios(self) -> dict[tuple[str, str], float]:
        """‖δ_end‖/‖δ_0‖ of every walk."""
        return {key: w.ends()["defect_ratio"] for key, w in self.walks.items()}

    def exact_distances(self) -> dict[tuple[str, str], np.ndarray]:
        """‖F_t − F_t^exact‖/‖F₀‖ at every stop of every walk."""
        return {key: w.diagnostics["exact_dist"] for key, w in self.walks.items()}

    def glue(self, *, early: int = 5) -> dict:
        """The walks' ends, their drift apart after ``early`` steps and at the end, by glue name; and
        ``longer_fixed_c_text``: whether the longer of the two fixed c* (min-norm or gauged) ends farther from the
        exact rotation."""
        t = self.times
        steps = len(t) - 1
        out = {f"defect_ratio_{k}_{m}": ratio for (k, m), ratio in self.defect_ratios().items()}
        gauged = self.fixed_c_gauged.diagnostics
        out["defect_ratio_c_fixed_gauged"] = float(gauged["defect"][-1] / gauged["defect"][0])
        out["exact_dist_c_fixed_gauged"] = float(gauged["exact_dist"][-1])
        plain = self.walks["c", "fixed"]
        gauged_longer = self.fixed_c_gauged.direction_info["coef_norm"][0] > plain.direction_info["coef_norm"][0]
        gauged_farther = gauged["exact_dist"][-1] > plain.diagnostics["exact_dist"][-1]
        out["longer_fixed_c_text"] = (
            "the longer of the two ends farther from it" if gauged_longer == gauged_farther
            else "the longer of the two does not end farther from it"
        )  # fmt: skip
        out["defect_ratio_b_predicted"] = float(np.exp(-t[-1]))
        drift = {k: self.drift(k) for k in "cb"}
        out["drift_fixed_vs_resolved"] = float(max(drift["c"][-1], drift["b"][-1]))
        out["drift_c"], out["drift_b"] = float(drift["c"][-1]), float(drift["b"][-1])
        k5 = min(early, steps)
        out["drift_k5"], out["drift_c_5"] = int(k5), float(drift["c"][k5])
        out["walk_T"], out["walk_T_deg"] = float(t[-1]), math.degrees(float(t[-1]))
        out.update({f"exact_dist_{k}_{m}": float(v[-1]) for (k, m), v in self.exact_distances().items()})
        resolved_c = self.walks["c", "resolved"].direction_info
        out["rank_end_c"] = int(resolved_c["rank"][-1])
        out["resid_end_c"] = float(resolved_c["rel_residual"][-1])
        return out

    def resolve_seconds(self) -> float:
        """Median wall time of one re-solve of the resolved walks (a timing: glued where nbval ignores outputs)."""
        return float(np.median(self.walks["c", "resolved"].solve_seconds + self.walks["b", "resolved"].solve_seconds))

    def drifts_grow(self, *, early: int = 5) -> bool:
        """The fixed–resolved gap is larger at the end than after ``early`` steps, for both directions."""
        k5 = min(early, len(self.times) - 1)
        return all(self.drift(k)[k5] < self.drift(k)[-1] for k in "cb")

    def fixed_farther(self) -> bool:
        """Each fixed walk ends farther from the exact flow than its resolved twin."""
        ex = self.exact_distances()
        return all(ex[k, "fixed"][-1] > ex[k, "resolved"][-1] for k in "cb")

    def profiles(self, mode: str) -> dict[str, np.ndarray]:
        """δ_V at every stop of the c* and b* walks in ``mode``, for ``plots.hamiltonian.potential_profiles``."""
        return {f"along {k}* ({mode})": self.walks[k, mode].diagnostics["profile"] for k in KINDS}

    def curves(self) -> dict[str, dict[str, np.ndarray]]:
        """The panels of ``plots.hamiltonian.walk_diagnostics``: defect against prediction, drift, exact distance."""
        t = self.times
        defect = {key: w.diagnostics["defect"] for key, w in self.walks.items()}
        d0 = defect["c", "resolved"][0]
        return {
            "defect ‖δ_t‖ / ‖δ_0‖": {
                **{f"{k}* {m}": defect[k, m] / d0 for k in KINDS for m in MODES},
                "pred. c*": np.ones_like(t),
                "pred. b*: e^(-t)": np.exp(-t),
            },
            "fixed vs resolved": {"c*": self.drift("c"), "b*": self.drift("b")},
            "distance from the exact flow": {f"{k[0]}* {k[1]}": v for k, v in self.exact_distances().items()},
        }

    def table(self) -> Table:
        """Every walk at its end: defect ratio and distance from the exact flow."""
        t = self.times
        ratios, exact = self.defect_ratios(), self.exact_distances()
        return Table(
            ("walk", "‖δ‖ end / start", "‖F − F_exact‖ / ‖F₀‖ at the end"),
            tuple((f"{k[0]}* {k[1]}", ratios[k], exact[k][-1]) for k in self.walks),
            (".4f", ".4f", ".2e"),
            caption=f"Every walk at its end, t = {t[-1]:.2f} (b*'s exact e^(-t) = {np.exp(-t[-1]):.4f})",
        )


def run_walks(problem: MexicanHatProblem, theta0: Tensor, *, steps: int, dt: float, progress: bool = True) -> WalkSet:
    """The resolved and fixed walks along c* and b* (min-norm lift, raw steps), and the fixed c* in the paper's gauge
    (to compare the two gauges over a finite walk)."""
    kw = dict(steps=steps, dt=dt, observe=problem.observe, progress=progress)
    walks = {(k, m): run_flow(problem, theta0, k, m, gauge="minnorm", **kw) for k in KINDS for m in MODES}
    gauged = run_flow(problem, theta0, "c", "fixed", gauge="sensitivity", **kw)
    return WalkSet(walks, gauged, float(problem.evaluate(theta0).f.norm()))
