"""The chapter's symmetry-flow section: the re-solved near-null flow of each task's first solution against the
largest safe block ablation of the same solution."""

from __future__ import annotations

from typing import Any

import numpy as np

from lib.core.tables import Table
from lib.lenses import jacobian as lj
from lib.lenses.near_null_flow import FlowResult, shed_mass
from lib.lenses.solution import SolutionLens
from lib.paper_a import rnn, schur

#: Halvings of a flow step that would leave ε before the flow stops.
HALVINGS = 4


def run_flows(study) -> dict[str, FlowResult]:
    """task → the flow of its first solution (ε = the safe tolerance, paper B's τ)."""
    out = {}
    for task, solutions, batch in study.jobs(solutions=1, copy_solutions=min(study.copy_solutions, 1)):
        w = rnn.as_float64(solutions[0].weights)
        coords = lj.coordinates(schur.split(schur.ordered_real_schur(w["W_hh"].numpy()), study.alpha))
        out[task] = shed_mass(
            w, coords, batch, eps=study.safe_tolerance, tau=study.tau, steps=study.flow_steps,
            rate=study.flow_rate, probe_rows=study.flow_probe_rows, halvings=HALVINGS,
        )  # fmt: skip
    return out


def best_safe_block(lens: SolutionLens, tolerance: float) -> float:
    """The largest removed mass among the solution's block ablations with ΔFVU ≤ tolerance (0 if none is safe)."""
    safe = [lens.mass[k] for k in lens.keys if lens.dfvu[k] <= tolerance]
    return float(max(safe, default=0.0))


def shed_values(flows: dict[str, FlowResult], lenses: dict[str, list[SolutionLens]], study) -> tuple[dict, Table]:
    """Per task the mass the flow sheds within ε against the best safe block ablation; the verdict of L5."""
    values: dict[str, Any] = {"flow_steps": study.flow_steps, "flow_rate": study.flow_rate, "flow_halvings": HALVINGS}
    rows, larger = [], []
    for task, f in flows.items():
        block = best_safe_block(lenses[task][0], study.safe_tolerance)
        values[f"flow_shed_{task}"] = f.shed
        values[f"block_shed_{task}"] = block
        values[f"flow_dfvu_{task}"] = float(f.dfvu[f.steps_within])
        larger.append(f.shed > block)
        rows.append((task, lenses[task][0].seed, block, f.shed, float(f.dfvu[f.steps_within]), f.steps_within))
    values["n_flow_larger"] = int(sum(larger))
    values["n_flows"] = len(larger)
    values["verdict_L5_flow_sheds_more"] = "holds" if all(larger) else "fails"
    head = ("task", "seed", "best safe block: mass", "flow: mass shed", "flow: ΔFVU", "steps within ε")
    return values, Table(head, tuple(rows), ".3g", "Schur mass shed within ε: block ablation against the flow")


def trajectories(flows: dict[str, FlowResult]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """task → (mass, ΔFVU) along its flow (the figure)."""
    return {t: (f.mass, f.dfvu) for t, f in flows.items()}
