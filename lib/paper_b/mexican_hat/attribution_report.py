"""What the Mexican-hat chapter cites about per-parameter attribution (issue 16 items 1–3, 7): S_i by layer at
initialisation and trained, where c* and b* sit among V's layers at the start and the end of every walk, how they
relate along the walks, the annulus network beside it, and the sketch gate's counts. Every function returns numbers by
glue name, arrays for ``lib.plots.hamiltonian_attribution`` or a ``lib.core.tables.Table``.
"""

from __future__ import annotations

import numpy as np
from torch import Tensor

from lib.core.tables import Table
from lib.paper_b.lifting import GAUGES
from lib.paper_b.lifting_problem import KINDS
from lib.paper_b.mexican_hat.attribution import LAYER_NAMES, Snapshot, dominant_layer, snapshot
from lib.paper_b.mexican_hat.gate import GatedProblem, SketchGate
from lib.paper_b.mexican_hat.lift import sketched_svd
from lib.paper_b.relations import block_shares, direction_relation

TAGS = {"minnorm": "plain", "sensitivity": "gauged"}
GAUGE_NAMES = {"minnorm": "min-norm", "sensitivity": "sensitivity"}


def short(layer: str) -> str:
    """ "layer 2 (32→32)" -> "layer 2"."""
    return layer.split(" (")[0]


def sensitivity_glue(summaries: dict[str, dict]) -> dict:
    """{"init"/"trained": ``sensitivity_summary``} -> median S_i and share of Σ S_i² per layer, the layer with the
    largest share, and the median participation ratio per layer (trained), by glue name."""
    out = {}
    for when, s in summaries.items():
        for i, name in enumerate(LAYER_NAMES, start=1):
            out[f"S_median_L{i}_{when}"] = s["median"][name]
            out[f"S2_share_L{i}_{when}"] = s["share_S2"][name]
        out[f"S2_top_layer_{when}"] = short(dominant_layer(s["share_S2"]))
        out[f"S_output_bias_{when}"] = float(s["S"][-1])
        if "participation" in s:
            for i, name in enumerate(LAYER_NAMES, start=1):
                out[f"participation_L{i}_{when}"] = s["participation"][name]
    return out


def sensitivity_table(summaries: dict[str, dict]) -> Table:
    """Per layer: median S_i and share of Σ S_i² at initialisation and trained, median participation ratio."""
    rows = tuple(
        (name, summaries["init"]["median"][name], summaries["trained"]["median"][name],
         summaries["init"]["share_S2"][name], summaries["trained"]["share_S2"][name],
         summaries["init"]["participation"][name], summaries["trained"]["participation"][name])
        for name in LAYER_NAMES
    )  # fmt: skip
    return Table(
        ("layer", "median S_i, init", "median S_i, trained", "share of ΣS², init", "share of ΣS², trained",
         "participation, init", "participation, trained"), rows, ("", ".2e", ".2e", ".3f", ".3f", ".2f", ".2f"),
        caption="Aggregate sensitivities S_i of V's parameters by layer, and how evenly each parameter's pointwise "
        "sensitivity spreads over the probes (participation ratio, median over the layer's live parameters)",
    )  # fmt: skip


def snapshot_at(problem: GatedProblem, theta: Tensor) -> Snapshot:
    """c*, b* at θ in both gauges through the sketch (the problem's J scratch)."""
    J = problem.jacobian(theta)
    svd = sketched_svd(J, tau=problem.tau, rank=problem.sketch_rank)
    return snapshot(J, svd, problem.targets(theta), tau=problem.tau)


def walk_snapshots(problem: GatedProblem, gate: SketchGate, walks) -> dict[str, Snapshot]:
    """The start and the end of every min-norm walk: the gate's snapshots of the resolved walks, fresh ones at the
    fixed walks' ends. Keys "start", "end of c* resolved", "end of c* fixed", … ."""
    out = {"start": gate.snapshots["c", 0]}
    for k in KINDS:
        out[f"end of {k}* resolved"] = gate.snapshots[k, gate.steps]
        out[f"end of {k}* fixed"] = snapshot_at(problem, walks.walks[k, "fixed"].theta_final)
    return out


def shares_glue(snaps: dict[str, Snapshot], annulus: dict) -> dict:
    """Contribution shares (|c_i|·‖J_{:,i}‖) of each layer for c* and b* at the start, the dominant layers at the start
    and at every walk's end, and the annulus network's, by glue name."""
    out = {}
    for g, tag in TAGS.items():
        for k in KINDS:
            start = snaps["start"].shares[k, g, "contribution"]
            for i, name in enumerate(LAYER_NAMES, start=1):
                out[f"contrib_{k}_L{i}_{tag}"] = start[name]
            out[f"top_layer_{k}_{tag}"] = short(dominant_layer(start))
            ends = {w: s.shares[k, g, "contribution"] for w, s in snaps.items()}
            out[f"top_layer_{k}_{tag}_stable"] = len({dominant_layer(v) for v in ends.values()}) == 1
            out[f"contrib_{k}_top_share_{tag}"] = float(max(start.values()))
            coef2 = snaps["start"].shares[k, g, "coef2"]
            out[f"coef_top_layer_{k}_{tag}"] = short(dominant_layer(coef2))
            out[f"coef_top_share_{k}_{tag}"] = float(max(coef2.values()))
            out[f"annulus_top_layer_{k}_{tag}"] = short(dominant_layer(annulus["shares"][k, g]))
            out[f"annulus_top_share_{k}_{tag}"] = float(max(annulus["shares"][k, g].values()))
    same = out["top_layer_c_plain"] == out["top_layer_b_plain"]
    out["cb_layers_text"] = "the same layer" if same else "different layers"
    for k in KINDS:
        stable = out[f"top_layer_{k}_plain_stable"]
        out[f"stable_text_{k}"] = "stays on top at the end of every walk" if stable else "changes along some walk"
    contrib = {k: snaps["start"].contribution(k, "minnorm") for k in KINDS}
    n_top = max(len(contrib["c"]) // 100, 1)
    top = {k: set(np.argsort(v)[::-1][:n_top].tolist()) for k, v in contrib.items()}
    out["n_top_params"] = int(n_top)
    out["top_overlap_cb"] = len(top["c"] & top["b"])
    for k, v in contrib.items():
        out[f"top_params_share_{k}"] = float(np.sort(v)[::-1][:n_top].sum() / v.sum())
    return out


def shares_for_plot(snaps: dict[str, Snapshot], annulus: dict) -> dict:
    """{"c*, min-norm": {row: {layer: share}}, …} for ``plots.hamiltonian_attribution.layer_move_shares``."""
    out = {}
    for g in GAUGES:
        for k in KINDS:
            rows = {f"Mexican hat, {w}": {short(n): v for n, v in s.shares[k, g, "contribution"].items()}
                    for w, s in snaps.items()}  # fmt: skip
            rows["annulus (full ring)"] = annulus["shares"][k, g]
            out[f"{k}*, {GAUGE_NAMES[g]} gauge"] = rows
    return out


def shares_table(snaps: dict[str, Snapshot], annulus: dict, gauge: str = "minnorm") -> Table:
    """Each layer's share of Σ|c_i|·‖J_{:,i}‖ for c* and b*, at the start and every walk's end, and the annulus."""
    rows = []
    for k in KINDS:
        for where, s in snaps.items():
            rows.append((f"{k}*", f"Mexican hat, {where}", *s.shares[k, gauge, "contribution"].values()))
        rows.append((f"{k}*", "annulus (full, trained)", *annulus["shares"][k, gauge].values()))
    return Table(
        ("lift", "network, where", *(short(n) for n in LAYER_NAMES)), tuple(rows), ".3f",
        caption=f"Each layer's share of the realised move Σ|c_i|·‖J₍:,i₎‖ ({GAUGE_NAMES[gauge]} gauge), at the start "
        "and at the end "
        "of every walk, and on the annulus classifier (four layers too) trained on the full ring",
    )  # fmt: skip


def relation_glue(snaps: dict[str, Snapshot], gate: SketchGate) -> tuple[dict, dict]:
    """cos(c*, b*) and cos(J c*, J b*) at the start (both gauges), the largest |cos(Jc*, Jb*)| over the resolved
    walks' snapshots with its bound, and the curves {walk: {name: (stops,)}} for the figure."""
    start = snaps["start"]
    out = {}
    for g, tag in TAGS.items():
        out[f"cos_cb_param_{tag}"] = start.relation[g]["cos_param"]
        out[f"cos_cb_function_{tag}"] = start.relation[g]["cos_function"]
    out["cos_cb_bound"] = start.bound
    out["cos_cb_targets"] = start.cos_targets  # what the realised moves inherit where eq. 22 does not hold
    rows = sorted(gate.snapshots.items(), key=lambda kv: kv[0][1])
    along = [(s.relation["minnorm"]["cos_function"], s.bound) for _, s in rows]
    out["cos_cb_function_max_walks"] = float(max(abs(c) for c, _ in along))
    out["cos_cb_within_bound_walks"] = bool(all(abs(c) <= b * (1 + 1e-6) for c, b in along))  # rounding slack
    out["cos_cb_param_max_walks"] = float(max(abs(s.relation[g]["cos_param"]) for _, s in rows for g in GAUGES))
    out["n_relation_points"] = len({id(s) for _, s in rows})
    out["random_cos_scale"] = float(1 / np.sqrt(start.rank))
    out["param_cos_text"] = "within" if out["cos_cb_param_max_walks"] <= out["random_cos_scale"] else "beyond"
    curves = {}
    for k in KINDS:
        pts = [(stop, s) for (kk, stop), s in rows if kk == k]
        stops = np.array([p[0] for p in pts])
        curves[f"along {k}*"] = {"stops": stops, "bound": np.array([p[1].bound for p in pts])} | {
            f"{name}, {g}": np.array([p[1].relation[g][key] for p in pts])
            for g in GAUGES for name, key in (("cos(Jc*, Jb*)", "cos_function"), ("cos(c*, b*)", "cos_param"))
        }  # fmt: skip
    return out, curves


def annulus_comparison(condition: str = "full") -> dict:
    """The annulus classifier trained on ``condition`` ("full": rotation-symmetric data, like the Mexican hat): each
    layer's share of Σ|c_i|·‖J_{:,i}‖ for c* and b* in both gauges, and cos(c*, b*), cos(Jc*, Jb*)."""
    from lib.paper_b import annulus

    models = annulus.trained_models()
    problem = annulus.AnnulusProblem({d: (models[d]["x"], models[d]["y"]) for d in annulus.ARCS})
    theta = models[condition]["theta"]
    jac = problem.evaluate(theta).jac
    col = jac.col_norms().numpy()
    blocks = annulus.layer_blocks()
    pairs = zip(blocks[::2], blocks[1::2], strict=True)
    layers = [(f"layer {i + 1}", slice(w.start, b.stop)) for i, ((_, w), (_, b)) in enumerate(pairs)]
    lifts = {(k, g): problem.lift(theta, k, gauge=g).coef for k in KINDS for g in GAUGES}
    shares = {key: block_shares(np.abs(c.numpy()) * col, layers) for key, c in lifts.items()}
    relation = {g: direction_relation(jac, lifts["c", g], lifts["b", g]) for g in GAUGES}
    return {"shares": shares, "relation": relation, "layers": [n for n, _ in layers]}


def gate_glue(gate: SketchGate) -> dict:
    """The gate's counts, settings and the sentence on what a flicker changed, by glue name."""
    out = {**gate.counts(), "gate_every": int(gate.every), "gate_band": float(gate.band)}
    out["gate_snapshot_every"] = int(gate.snapshot_every)
    if out["gate_flickers"] == 0:
        out["gate_text"] = "No re-solve was switched to the exact route, so every walk value above is the sketch's"
    else:
        moved = sorted({f"{c['kind']}* at stop {c['stop']}" for c in gate.checks if c["flicker"]})
        out["gate_text"] = ("These re-solves were switched to the exact Gram route, and the walk values after them "
                            "come from it: " + ", ".join(moved))  # fmt: skip
    return out
