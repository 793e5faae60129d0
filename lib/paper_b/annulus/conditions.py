"""Every condition of the annulus experiment side by side (notes §8.7, §10): the arrays of the paper's Figs. 5 and 6
(decision boundaries and angular deviation profiles of each flow, fixed and resolved), the §8.7 diagnostics at the end
points and along the flows, and the aggregate sensitivities S_i by layer (paper App. A.5).

Everything here reads what the flows recorded (``FlowRecord.diagnostics``, ``snapshots``, ``step_norms``) or
evaluates the network at recorded parameters; no flow and no lift is run again.
"""

from __future__ import annotations

import math

import numpy as np
from torch import Tensor

from lib.core.tables import Table
from lib.paper_b import sensitivity
from lib.paper_b.annulus.condition_flows import FlowSet, start_of
from lib.paper_b.annulus.data import CONDITIONS
from lib.paper_b.annulus.model import layer_blocks
from lib.paper_b.annulus.problem import AnnulusProblem
from lib.paper_b.lifting_problem import KINDS

MODES = ("resolved", "fixed")
SIGN = {"c": "c*", "b": "b*"}
#: §8.7 diagnostics along a flow: (key, axis label, log scale)
DIAGNOSTICS = (
    ("inv_err", r"invariance error $\max_\alpha|f(R_\alpha x)-f(x)|$", True),
    ("real_err_z0", r"$\|J_{\theta_t}z_0-g_t\|/\|g_t\|$", True),
    ("move_drift_z0", r"$\|J_{\theta_t}z_0-J_{\theta_0}z_0\|/\|J_{\theta_0}z_0\|$", True),
    ("end_dist", r"$\|f_t-f_{\rm end}\|/\|f_0\|$", True),
    ("path", r"path length $\sum\|\Delta\theta\|/\|\theta_0\|$", False),
)


def _check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"mode={mode!r} is not allowed; choose one of {list(MODES)}")
    return mode


def _dataset(condition: str) -> str:
    if condition not in CONDITIONS:
        raise ValueError(f"condition={condition!r} is not allowed; choose one of {list(CONDITIONS)}")
    return condition.split("_")[0]


def _index(record, stop: int) -> int:
    """The position of snapshot stop ``stop`` among the recorded stops."""
    k = int(np.searchsorted(record.record_stops, stop))
    if k >= len(record.record_stops) or record.record_stops[k] != stop:
        raise ValueError(f"stop {stop} was not recorded; the recorded stops are {record.record_stops.tolist()}")
    return k


def condition_figure_panels(problem: AnnulusProblem, runs: FlowSet, stops, *, mode: str, n: int = 120) -> dict:
    """The arrays of the paper's Fig. 6 (``mode="resolved"``) or Fig. 5 (``"fixed"``) for every condition.

    Returns {"scores": rows (one per condition) of logit meshes — the start, then c* and b* at each later stop of
    ``stops`` —, "columns", "notes" (‖δ‖/‖f‖ and accuracy per panel), "data" ({condition: (x, y01)}), "profiles"
    ({condition: {kind: {t: (realised, predicted)}}} at the same stops)}."""
    _check_mode(mode)
    stops = sorted(set(stops) | {0})
    later = [s for s in stops if s > 0]
    dt = runs.record(CONDITIONS[0], "c", mode).dt
    columns = ["t = 0"] + [f"{SIGN[k]}, t = {s * dt:.2f}" for k in KINDS for s in later]
    out = {"scores": [], "columns": columns, "notes": [], "data": {}, "profiles": {}}
    for c in CONDITIONS:
        ds = _dataset(c)
        recs = {k: runs.record(c, k, mode) for k in KINDS}
        missing = sorted({s for r in recs.values() for s in stops if s not in r.snapshots})
        if missing:
            raise ValueError(f"stops {missing} were not recorded as snapshots (run the flows with them)")
        row, notes = [], []
        for kind, s in [("c", 0)] + [(k, s) for k in KINDS for s in later]:
            r = recs[kind]
            row.append(problem.decision_scores(r.snapshots[s], n=n))
            d, i = r.diagnostics, _index(r, s)
            notes.append(f"‖δ‖/‖f‖ {d['defect_rel'][i]:.2f}, acc {d[f'acc_{ds}'][i]:.2f}")
        out["scores"].append(row)
        out["notes"].append(notes)
        data = problem.datasets[ds]
        out["data"][c] = (data["x"].numpy(), data["y01"].numpy())
        theta0 = runs[start_of(c)].theta0
        out["profiles"][c] = {
            kind: {
                s * dt: (recs[kind].diagnostics["profile"][_index(recs[kind], s)],
                         problem.predicted_profile(theta0, kind, s * dt).numpy())
                for s in stops
            }
            for kind in KINDS
        }  # fmt: skip
    return out


def _path(record, theta0_norm: float) -> np.ndarray:
    """Σ‖θ_{k+1} − θ_k‖/‖θ₀‖ up to each recorded stop."""
    cumulative = np.concatenate([[0.0], np.cumsum(record.step_norms)])
    return cumulative[record.record_stops] / theta0_norm


def diagnostics_along_flows(runs: FlowSet) -> dict:
    """{condition: {key of :data:`DIAGNOSTICS`: {"c* resolved" …: (t, values)}}}; the invariance error only where it
    was measured."""
    out = {}
    for c in CONDITIONS:
        ds, norm = _dataset(c), float(runs[start_of(c)].theta0.norm())
        out[c] = {key: {} for key, _, _ in DIAGNOSTICS}
        for kind in KINDS:
            for mode in MODES:
                r = runs.record(c, kind, mode)
                label, d, t = f"{kind}* {mode}", r.diagnostics, r.record_times
                inv = d[f"inv_err_{ds}"]
                keep = np.isfinite(inv)
                out[c]["inv_err"][label] = (t[keep], inv[keep])
                out[c]["real_err_z0"][label] = (t, d["real_err_z0"])
                out[c]["move_drift_z0"][label] = (t[1:], d["move_drift_z0"][1:])  # zero at t = 0
                out[c]["end_dist"][label] = (t, d["end_dist"])
                out[c]["path"][label] = (t, _path(r, norm))
    return out


def endpoint_diagnostics(runs: FlowSet) -> dict:
    """The §8.7 diagnostics at the end points, by glue name, per condition c, kind k, mode m: ``inv_err_start_c``,
    ``inv_err_end_k_m_c``, ``real_err_z0_end_k_m_c``, ``real_err_end_k_resolved_c`` (the step's own),
    ``move_drift_z0_end_k_m_c``,
    ``end_dist_start_k_c``, ``end_dist_end_k_m_c``, ``exact_dist_end_k_m_c`` (to the exact flow at t = 1),
    ``path_length_k_m_c`` and ``param_dist_end_k_m_c`` (both over ‖θ₀‖), ``defect_rel_start_c``; and
    ``z0_locality`` (str): whether the move of every trained model's frozen z₀ drifts further along the fixed line than
    the initial model's, in both directions; ``resolved_realises`` (str): whether at t = 1 every resolved flow's own
    step realises its target better than the frozen z₀ would (``real_err_end`` < ``real_err_z0_end``)."""
    out = {}
    for c in CONDITIONS:
        ds, norm = _dataset(c), float(runs[start_of(c)].theta0.norm())
        d0 = runs.record(c, "c", "resolved").diagnostics
        out[f"inv_err_start_{c}"] = d0[f"inv_err_{ds}"][0]
        out[f"defect_rel_start_{c}"] = d0["defect_rel"][0]
        for kind in KINDS:
            out[f"end_dist_start_{kind}_{c}"] = runs.record(c, kind, "resolved").diagnostics["end_dist"][0]
            out[f"real_err_end_{kind}_resolved_{c}"] = runs.record(c, kind, "resolved").diagnostics["real_err"][-1]
            for mode in MODES:
                r = runs.record(c, kind, mode)
                d, tag = r.diagnostics, f"{kind}_{mode}_{c}"
                out[f"inv_err_end_{tag}"] = d[f"inv_err_{ds}"][-1]
                out[f"real_err_z0_end_{tag}"] = d["real_err_z0"][-1]
                out[f"move_drift_z0_end_{tag}"] = d["move_drift_z0"][-1]
                out[f"end_dist_end_{tag}"] = d["end_dist"][-1]
                out[f"exact_dist_end_{tag}"] = d["exact_dist"][-1]
                out[f"path_length_{tag}"] = r.path_length / norm
                out[f"param_dist_end_{tag}"] = d["param_dist"][-1]
    out = {k: float(v) for k, v in out.items()}
    further = all(
        out[f"move_drift_z0_end_{k}_fixed_{t}"] > out[f"move_drift_z0_end_{k}_fixed_{i}"]
        for k in KINDS
        for t in ("wedge_trained", "full_trained")
        for i in ("wedge_init", "full_init")
    )
    out["z0_locality"] = (
        "further for every trained model than for the initial one"
        if further
        else "not further for every trained model than for the initial one"
    )
    closer = all(
        out[f"real_err_end_{k}_resolved_{c}"] < out[f"real_err_z0_end_{k}_resolved_{c}"]
        for k in KINDS
        for c in CONDITIONS
    )
    out["resolved_realises"] = (
        "in every resolved flow, the re-solved step ends closer to its target than the frozen z₀ would"
        if closer
        else "in some resolved flow, the frozen z₀ would end at least as close to its target as the re-solved step"
    )
    return out


def _short(x: float) -> str:
    """A table number without an exponent: two significant digits below 10, one decimal below 100, else whole."""
    return f"{x:.2g}" if abs(x) < 10 else f"{x:.1f}" if abs(x) < 100 else f"{x:.0f}"


def endpoint_diagnostics_table(values: dict) -> Table:
    """The §8.7 diagnostics at t = 0 and t = 1 for every condition, direction and mode."""
    rows = []
    for kind in KINDS:
        for c in CONDITIONS:
            for mode in MODES:
                tag = f"{kind}_{mode}_{c}"
                rows.append((
                    c.replace("_", "/"), f"{SIGN[kind]} {'res.' if mode == 'resolved' else mode}",
                    f"{_short(values[f'inv_err_start_{c}'])} → {_short(values[f'inv_err_end_{tag}'])}",
                    values[f"real_err_z0_end_{tag}"], values[f"move_drift_z0_end_{tag}"], values[f"end_dist_end_{tag}"],
                    values[f"path_length_{tag}"],
                ))  # fmt: skip
    headers = ("condition", "flow", "invariance error", "z₀ realisation", "z₀ move drift", "to f_end", "path length")
    fmt = ("", "", "", ".3g", ".3g", ".2g", ".3g")
    caption = ("The §8.7 diagnostics at t = 1 (res.: resolved; the invariance error from t = 0): ‖J₁z₀ − g₁‖/‖g₁‖, "
               "‖J₁z₀ − J₀z₀‖/‖J₀z₀‖, ‖f₁ − f_end‖/‖f₀‖ and Σ‖Δθ‖/‖θ₀‖")  # fmt: skip
    return Table(headers, tuple(rows), fmt, caption=caption)


def sensitivity_by_block(problem: AnnulusProblem, thetas: dict[str, Tensor]) -> dict:
    """Aggregate sensitivities S_i = ‖J_{:,i}‖/√N (App. A.5) of each named θ over the probes, by layer block.

    Returns {"S": {name: (p,) array}, "blocks": [(block, slice)], "values": glue values ``sens_median_<block>_<name>``,
    ``sens_share_<block>_<name>`` (the block's share of Σ S_i²), ``sens_top_block_<name>`` and ``sens_top_share_…``}."""
    if not thetas:
        raise ValueError("thetas must name at least one parameter vector")
    blocks = layer_blocks(problem.config)
    p = blocks[-1][1].stop
    out = {"S": {}, "blocks": blocks, "values": {}}
    for name, theta in thetas.items():
        if not isinstance(theta, Tensor) or theta.shape != (p,):
            shape = getattr(theta, "shape", theta)
            raise ValueError(f"thetas[{name!r}] must be a parameter vector of length {p}; got {shape}")
        S = sensitivity.aggregate_sensitivity(problem.evaluate(theta).jac).numpy()
        out["S"][name] = S
        total = float((S**2).sum())
        shares = {b: float((S[s] ** 2).sum()) / total for b, s in blocks}
        for b, s in blocks:
            out["values"][f"sens_median_{b}_{name}"] = float(np.median(S[s]))
            out["values"][f"sens_share_{b}_{name}"] = shares[b]
        top = max(shares, key=shares.get)
        out["values"][f"sens_top_block_{name}"] = top
        out["values"][f"sens_top_share_{name}"] = shares[top]
    return out


def block_sensitivity_table(sens: dict) -> Table:
    """Per layer block: the median S_i and the block's share of Σ S_i², for each parameter vector of
    ``sens`` (the output of :func:`sensitivity_by_block`)."""
    names, values = list(sens["S"]), sens["values"]
    rows = tuple(
        (b, *(f"{values[f'sens_median_{b}_{n}']:.3g} ({100 * values[f'sens_share_{b}_{n}']:.1f} %)" for n in names))
        for b, _ in sens["blocks"]
    )
    headers = ("block", *(n.replace("_", "/") for n in names))
    caption = "Aggregate sensitivities by layer block: the median S_i (the block's share of Σ S_i²)"
    return Table(headers, rows, caption=caption)


def log_bin_edges(S: dict[str, np.ndarray], n_bins: int = 60) -> np.ndarray:
    """Common logarithmic bin edges over the positive S_i of every vector (for the histograms)."""
    pos = np.concatenate([s[s > 0] for s in S.values()])
    if pos.size == 0:
        raise ValueError("no positive sensitivity to bin")
    lo, hi = math.floor(np.log10(pos.min())), math.ceil(np.log10(pos.max()))
    return np.logspace(lo, hi, n_bins + 1)


def profile_departures(profiles: dict, *, mode: str) -> dict:
    """max_φ |d_end − d_end^exact| / max_φ |d_0| of every condition and direction (``condition_figure_panels``'s
    profiles), by glue name ``profile_dev_<kind>_<mode>_<condition>``, and the largest over the initial and over the
    trained conditions (``profile_dev_max_<mode>_init``, ``profile_dev_max_<mode>_trained``)."""
    _check_mode(mode)
    out = {}
    for c, by_kind in profiles.items():
        _dataset(c)
        for kind, curves in by_kind.items():
            times = sorted(curves)
            real, pred = curves[times[-1]]
            out[f"profile_dev_{kind}_{mode}_{c}"] = float(np.abs(real - pred).max() / np.abs(curves[times[0]][0]).max())
    for stage in ("init", "trained"):
        devs = [v for k, v in out.items() if k.endswith(f"_{stage}")]
        out[f"profile_dev_max_{mode}_{stage}"] = max(devs)
    return out
