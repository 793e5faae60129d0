"""The arrays behind the annulus chapter's figures (``lib.plots.lifting`` draws them): defect curves, decision
panels, angular deviation profiles, and the per-parameter attribution of c* in the two gauges (notes §8.6–8.9)."""

from __future__ import annotations

import numpy as np
from torch import Tensor

from lib.paper_b.annulus.condition_flows import FlowSet
from lib.paper_b.annulus.model import layer_blocks
from lib.paper_b.annulus.problem import AnnulusProblem
from lib.paper_b.lifting_problem import KINDS

SIGN = {"c": "+c", "b": "−b"}
CURVES = (("resolved", "sensitivity", "resolved"), ("fixed", "sensitivity", "fixed (gauged)"),
          ("fixed", "minnorm", "fixed (min-norm)"))  # fmt: skip


def defect_curves(runs: FlowSet, conditions=("wedge_trained", "full_trained", "wedge_init")) -> tuple[dict, dict]:
    """({panel: {line: (t, ‖δ_t‖)}}, {panel: (t, exact ‖δ_t‖)}) for ``plots.lifting.defect_curves``."""
    curves, preds = {}, {}
    for c in conditions:
        for kind in KINDS:
            key = f"{c.replace('_', '/')}, {SIGN[kind]}"
            curves[key] = {label: runs.record(c, kind, mode, gauge).curve("defect") for mode, gauge, label in CURVES}
            preds[key] = runs.record(c, kind, "resolved").curve("defect_pred")
    return curves, preds


def decision_panels(problem: AnnulusProblem, runs: FlowSet, stops, *, dt: float, n: int, dataset: str = "wedge"):
    """Logit meshes of the {dataset}/trained flows at the snapshot ``stops``: (rows, row labels, column labels,
    annotations) for ``plots.lifting.decision_boundaries``."""
    rows, labels, notes = [], [], []
    for kind in KINDS:
        for mode in ("resolved", "fixed"):
            r = runs.record(f"{dataset}_trained", kind, mode)
            row, note = [], []
            for s in stops:
                row.append(problem.decision_scores(r.snapshots[s], n=n))
                k = int(np.searchsorted(r.record_stops, s))
                d = r.diagnostics
                note.append(f"‖δ‖/‖f‖ = {d['defect_rel'][k]:.2f}, acc = {d[f'acc_{dataset}'][k]:.2f}")
            rows.append(row)
            notes.append(note)
            labels.append(f"{SIGN[kind]} {mode}")
    return rows, labels, [f"t = {s * dt:.2f}" for s in stops], notes


def deviation_panels(
    problem: AnnulusProblem, runs: FlowSet, theta0: Tensor, *, t_end: float, condition="wedge_trained"
):
    """{panel: {t: (realised, predicted) angular deviation}} at six equally spaced times, for
    ``plots.lifting.deviation_profiles``."""
    panels = {}
    for kind in KINDS:
        for mode in ("resolved", "fixed"):
            r = runs.record(condition, kind, mode)
            panel = {}
            for t_show in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0):
                k = int(np.argmin(np.abs(r.record_times - t_show * t_end)))
                t = float(r.record_times[k])
                panel[t] = (r.diagnostics["profile"][k], problem.predicted_profile(theta0, kind, t).numpy())
            panels[f"{condition.replace('_', '/')}, {SIGN[kind]}, {mode}"] = panel
    return panels


def deviation_errors(problem: AnnulusProblem, runs: FlowSet, theta0: Tensor, condition="wedge_trained") -> dict:
    """max |d_end − predicted| / max |d_0| of the resolved flows (glue ``profile_error_c``, ``profile_error_b``)."""
    out = {}
    for kind in KINDS:
        r = runs.record(condition, kind, "resolved")
        pred = problem.predicted_profile(theta0, kind, r.record_times[-1]).numpy()
        err = np.abs(r.diagnostics["profile"][-1] - pred).max() / np.abs(r.diagnostics["profile"][0]).max()
        out[f"profile_error_{kind}"] = float(err)
    return out


def gauge_attribution(problem: AnnulusProblem, theta: Tensor) -> dict:
    """c* at θ in both gauges against the column norms: coefficients, column norms, the share of ‖c‖² per layer
    block, the log–log slope of |c_i| against ‖J_{:,i}‖, and the glue values (notes §8.9), among them
    ``gauge_attribution_text``: whether the two slopes differ in sign."""
    ev = problem.evaluate(theta)
    coefs = {g: problem.lift(theta, "c", gauge=g).coef.numpy() for g in ("sensitivity", "minnorm")}
    col_norms = ev.jac.col_norms().numpy()
    blocks = layer_blocks()
    shares = {}
    for g, c in coefs.items():
        total = float((c**2).sum())
        shares[f"{g} gauge"] = np.array([float((c[s] ** 2).sum()) / total for _, s in blocks])
    live = (np.abs(coefs["sensitivity"]) > 0) & (col_norms > 0)
    slope = {
        g: float(np.polyfit(np.log(col_norms[live]), np.log(np.abs(c[live]) + 1e-300), 1)[0]) for g, c in coefs.items()
    }
    glue = {"attr_slope_gauged": slope["sensitivity"], "attr_slope_minnorm": slope["minnorm"]}
    opposite = slope["sensitivity"] * slope["minnorm"] < 0
    glue["gauge_attribution_text"] = (
        "the slopes have opposite signs: one gauge tends to load the weakly sensitive parameters, the other the "
        'strongly sensitive ones, so which parameters "carry" the rotation depends on the gauge, not on the network '
        "alone"
        if opposite
        else "the slopes have the same sign, so they alone do not show the attribution to depend on the gauge"
    )
    glue["coef_norm_gauged_full_trained"] = float(np.linalg.norm(coefs["sensitivity"]))
    glue["coef_norm_minnorm_full_trained"] = float(np.linalg.norm(coefs["minnorm"]))
    return {"coefs": coefs, "col_norms": col_norms, "blocks": [n for n, _ in blocks], "shares": shares, "glue": glue}
