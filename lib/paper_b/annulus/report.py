"""What the annulus chapter cites and shows, computed from the trained models and the flows (notes §8.5–8.8).

Every function returns numbers (dicts keyed by the chapter's glue names), a ``lib.core.tables.Table`` or the arrays
a ``lib.plots.lifting`` figure takes; the chapter glues and draws them.
"""

from __future__ import annotations

import math

import torch

from lib.core.tables import Table
from lib.paper_b import cutoff_profile, lifting, sensitivity, symmetry
from lib.paper_b.annulus.condition_flows import FlowSet, start_of
from lib.paper_b.annulus.data import ARCS, CONDITIONS
from lib.paper_b.annulus.model import theta_to_module
from lib.paper_b.annulus.problem import AnnulusProblem
from lib.paper_b.lifting_problem import KINDS
from lib.papers import symmetry_lifting

TAGS = (
    ("resolved", "sensitivity", "resolved"),
    ("fixed", "sensitivity", "fixed"),
    ("fixed", "minnorm", "fixed_minnorm"),
)
SIGN = {"c": "+c", "b": "−b"}
FD_COLUMNS, FD_STEP = 24, 1e-6  # random columns and step of the finite-difference check of J


def settings(*, steps: int, dt: float, tau: float) -> dict:
    """The chapter's settings and the paper's printed numbers, by glue name."""
    out = {"steps": steps, "dt": float(dt), "flow_time": float(steps * dt), "flow_degrees": math.degrees(steps * dt)}
    out["tau"] = float(tau)
    for name in ("data_seed", "n_inner", "n_outer", "hidden", "init_seed", "lr", "epochs", "grid_side"):
        out[f"paper_{name}"] = symmetry_lifting.ANNULUS[name]
    out["paper_grid_extent"] = symmetry_lifting.ANNULUS["grid_extent"]
    out["paper_group_order"] = symmetry_lifting.GROUP_ORDER
    out.update({f"arc_{d}": float(degrees) for d, degrees in ARCS.items()})
    out.update({f"paper_bce_{d}": q.text for d, q in symmetry_lifting.ANNULUS_BCE.items()})
    for (kind, c), row in symmetry_lifting.ANNULUS_TABLE.items():
        out.update({f"paper_{k}_{kind}_{c}": q.text for k, q in row.items()})
    out["paper_growth_c"] = symmetry_lifting.FIXED_C_GROWTH.text
    return out


def jacobian_checks(problem: AnnulusProblem, models: dict) -> dict:
    """The factored J against ``vmap(jacrev)`` and central differences, the Gram lift against the SVD lift (full/trained
    model), and cos(δ, X f) on the clipped lattice for each trained model (eq. 22 needs an invariant probe set)."""
    theta = models["full"]["theta"]
    n_params = theta.numel()
    module = theta_to_module(theta)
    J_fast = problem.evaluate(theta).jac.dense()
    J_func = sensitivity.jacobian(module, sensitivity.module_params(module), problem.probes)
    out = {"n_fd_columns": FD_COLUMNS, "fd_step": FD_STEP}
    out["jacobian_func_error"] = float((J_fast - J_func).abs().max() / J_func.abs().max())
    cols = torch.randperm(n_params, generator=torch.Generator().manual_seed(0))[:FD_COLUMNS]
    fd_cols = []
    for i in cols.tolist():
        e = torch.zeros(n_params, dtype=torch.float64)
        e[i] = FD_STEP
        fp = problem.params(theta + e).forward(problem.probes)
        fm = problem.params(theta - e).forward(problem.probes)
        fd_cols.append((fp - fm) / (2 * FD_STEP))
    J_fd = torch.stack(fd_cols, 1)
    out["jacobian_fd_error"] = float((J_fast[:, cols] - J_fd).norm() / J_fast[:, cols].norm())
    fast, exact = problem.lift(theta, "c"), problem.lift(theta, "c", method="svd")
    out["lift_gram_vs_svd"] = float((fast.coef - exact.coef).norm() / exact.coef.norm())
    for d in ARCS:
        ev = problem.evaluate(models[d]["theta"])
        out[f"cos_delta_xf_{d}"] = float(symmetry.cosine(ev.delta, ev.xf))
    return out


def flow_values(problem: AnnulusProblem, runs: FlowSet) -> dict:
    """Per condition: defect and accuracy at the start and the end of every flow, the exact flow's defect, the gap
    between the fixed and resolved end functions, the lift's rank and residual, ‖c gauged‖/‖c min-norm‖ (notes §8.8)."""
    values = {}
    for c in CONDITIONS:
        ds = c.split("_")[0]
        r_c, r_b = runs.record(c, "c", "resolved"), runs.record(c, "b", "resolved")
        values[f"defect_start_{c}"] = r_c.diagnostics["defect"][0]
        values[f"acc_start_{c}"] = r_c.diagnostics[f"acc_{ds}"][0]
        for kind in KINDS:
            for mode, gauge, tag in TAGS:
                d = runs.record(c, kind, mode, gauge).diagnostics
                values[f"defect_end_{kind}_{tag}_{c}"] = d["defect"][-1]
                values[f"acc_end_{kind}_{tag}_{c}"] = d[f"acc_{ds}"][-1]
            values[f"defect_pred_{kind}_{c}"] = (r_c if kind == "c" else r_b).diagnostics["defect_pred"][-1]
            f0 = problem.params(runs[start_of(c)].theta0).forward(problem.probes)
            ends = [
                problem.params(runs.record(c, kind, mode).theta_final).forward(problem.probes)
                for mode in ("fixed", "resolved")
            ]
            values[f"fixed_gap_{kind}_{c}"] = (ends[0] - ends[1]).norm() / f0.norm()
        values[f"rank_start_c_{c}"] = r_c.direction_info["rank"][0]
        values[f"rank_end_c_{c}"] = r_c.direction_info["rank"][-1]
        values[f"rank_end_b_{c}"] = r_b.direction_info["rank"][-1]
        values[f"rel_residual_c_start_{c}"] = r_c.direction_info["rel_residual"][0]
        values[f"rel_residual_b_start_{c}"] = r_b.direction_info["rel_residual"][0]
        for kind in KINDS:
            values[f"coef_norm_ratio_{kind}_{c}"] = (
                runs.record(c, kind, "fixed", "sensitivity").direction_info["coef_norm"][0]
                / runs.record(c, kind, "fixed", "minnorm").direction_info["coef_norm"][0]
            )
    values = {k: int(float(v)) if k.startswith("rank_") else float(v) for k, v in values.items()}
    for c in CONDITIONS:
        for kind in KINDS:
            for tag in ("fixed", "fixed_minnorm"):
                ratio = values[f"defect_end_{kind}_{tag}_{c}"] / values[f"defect_start_{c}"]
                values[f"growth_{kind}_{tag}_{c}"] = float(ratio)
    return values


def claim_values(values: dict, flow_claims: list) -> dict:
    """What the prose cites beside the claims: the largest resolved c* departure, ours and the paper's own (its
    table's |end/start − 1| over the conditions), the paper's tolerances in per cent, and whether each fixed flow
    raises or lowers the defect."""
    by_id = {c.id: c for c in flow_claims}
    out = {"resolved_c_max_dev": float(by_id["B88_resolved_c_2pct"].ours)}
    paper_rows = [symmetry_lifting.ANNULUS_TABLE[("c", c)] for c in CONDITIONS]
    out["paper_resolved_c_max_dev"] = max(abs(r["end"].value / r["start"].value - 1) for r in paper_rows)
    out["paper_tol_c_pct"] = 100 * symmetry_lifting.RESOLVED_C_TOLERANCE.value
    out["paper_tol_b_pct"] = 100 * symmetry_lifting.RESOLVED_B_TOLERANCE.value
    for c in CONDITIONS:
        for kind in KINDS:
            up = values[f"defect_end_{kind}_fixed_{c}"] > values[f"defect_start_{c}"]
            out[f"moves_{kind}_fixed_{c}"] = "raises" if up else "lowers"
    return out


def _fmt(x: float) -> str:
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:.0f}"


def _paper_row(kind: str, c: str) -> tuple[float, ...]:
    row = symmetry_lifting.ANNULUS_TABLE[(kind, c)]
    return tuple(row[k].value for k in ("start", "end", "pred", "acc_start", "acc_end", "fixed_end", "fixed_acc"))


def start_end_table(values: dict) -> Table:
    """The notes' §8.8 table: every flow's start and end, ours and the paper's (in brackets)."""
    rows = []
    for kind in KINDS:
        for c in CONDITIONS:
            p, v = _paper_row(kind, c), values
            start, end = v[f"defect_start_{c}"], v[f"defect_end_{kind}_resolved_{c}"]
            acc0, acc1 = v[f"acc_start_{c}"], v[f"acc_end_{kind}_resolved_{c}"]
            rows.append((
                SIGN[kind], c.replace("_", "/"), f"{_fmt(start)} → {_fmt(end)} [{_fmt(p[0])} → {_fmt(p[1])}]",
                f"{_fmt(v[f'defect_pred_{kind}_{c}'])} [{_fmt(p[2])}]",
                f"{acc0:.3f} → {acc1:.3f} [{p[3]:.3f} → {p[4]:.3f}]",
                f"{_fmt(v[f'defect_end_{kind}_fixed_{c}'])} [{_fmt(p[5])}]",
                f"{v[f'acc_end_{kind}_fixed_{c}']:.3f} [{p[6]:.3f}]",
            ))  # fmt: skip
    headers = ("target", "condition", "resolved ‖δ‖ start → end [paper]", "pred. [paper]", "acc. start → end [paper]",
               "fixed ‖δ‖ end [paper]", "fixed acc. end [paper]")  # fmt: skip
    return Table(headers, tuple(rows), caption="Start and end of every flow; the paper's values in brackets")


def _shown(value) -> str:
    """Numbers to four significant digits (tuples element-wise), a yes/no for a boolean, a dash for no value."""
    if isinstance(value, tuple):
        return " / ".join(_shown(v) for v in value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "—"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def claims_table(flow_claims: list) -> Table:
    """The claims: statement, the paper's value, ours, verdict."""
    return Table(
        ("claim", "paper", "ours", "verdict"),
        tuple((c.statement, _shown(c.paper_value), _shown(c.ours), c.verdict) for c in flow_claims),
        caption="The notes' §8.8 table and its summary as claims: the paper's values, ours, verdict",
    )


#: The distinct starting points of the flows (both initial conditions share one network and its flows).
DISTINCT = ("wedge_init", "wedge_trained", "full_trained")


def gauge_departures(values: dict) -> dict:
    """Does the longer of the two fixed lines (gauged or min-norm) end further from the exact flow's defect?

    Per distinct start and direction, the departure of a fixed flow is |log(‖δ‖ end / the exact flow's ‖δ‖ at t = 1)|;
    ``n_longer_departs_more`` counts the flows where the longer starting direction departs more, of
    ``n_gauge_pairs``."""
    more = []
    for c in DISTINCT:
        for kind in KINDS:
            pred = values[f"defect_pred_{kind}_{c}"]
            off = {
                tag: abs(math.log(values[f"defect_end_{kind}_{tag}_{c}"] / pred)) for tag in ("fixed", "fixed_minnorm")
            }
            gauged_longer = values[f"coef_norm_ratio_{kind}_{c}"] > 1
            longer, shorter = ("fixed", "fixed_minnorm") if gauged_longer else ("fixed_minnorm", "fixed")
            more.append(off[longer] > off[shorter])
    return {"n_longer_departs_more": sum(more), "n_gauge_pairs": len(more)}


def fixed_gauges_table(values: dict) -> Table:
    """Fixed flows in the two gauges, with the paper's values (sensitivity gauge) in brackets."""
    rows = []
    for kind in KINDS:
        for c in CONDITIONS:
            p, v = _paper_row(kind, c), values
            rows.append((
                SIGN[kind], c.replace("_", "/"), _fmt(v[f"defect_start_{c}"]),
                f"{_fmt(v[f'defect_end_{kind}_fixed_{c}'])} [{_fmt(p[5])}]",
                _fmt(v[f"defect_end_{kind}_fixed_minnorm_{c}"]),
                f"{v[f'acc_end_{kind}_fixed_{c}']:.3f} [{p[6]:.3f}]", f"{v[f'acc_end_{kind}_fixed_minnorm_{c}']:.3f}",
                f"{v[f'coef_norm_ratio_{kind}_{c}']:.1f}",
            ))  # fmt: skip
    headers = ("direction", "condition", "‖δ‖ start", "fixed end, gauged [paper]", "fixed end, min-norm",
               "acc. end, gauged [paper]", "acc. end, min-norm", "‖c gauged‖/‖c min-norm‖")  # fmt: skip
    return Table(headers, tuple(rows), caption="Fixed flows in the two gauges; the paper's values in brackets")


def cutoff_profiles(problem: AnnulusProblem, models: dict) -> tuple[dict, dict]:
    """The τ profiles of c* (X f) and b* (−δ) at each trained model, from one exact SVD of its J (so every cutoff
    down to round-off is resolved): ({"c", "b"} × arc → profile, glue values by name)."""
    profiles, values = {}, {}
    for d in ARCS:
        theta = models[d]["theta"]
        ev = problem.evaluate(theta)
        J = ev.jac.dense()
        svd = lifting.truncated_svd(J, tau=problem.tau, method="svd")
        for kind in ("c", "b"):
            prof = lifting.lift(J, problem.target(ev, kind), tau=problem.tau, svd=svd).profile
            profiles[kind, d] = prof
            values[f"profile_{kind}_{d}"] = prof.sentence()
            values[f"profile_{kind}_{d}_case"] = prof.case
            values[f"profile_{kind}_{d}_words"] = cutoff_profile.CASE_WORDS[prof.case]
    return profiles, values


def profile_labels(profiles: dict) -> dict:
    """The profiles of :func:`cutoff_profiles` under the labels the figure and the table show."""
    names = {"c": "Xf (c*)", "b": "−δ (b*)"}
    return {f"{names[kind]}, {d}/trained": prof for (kind, d), prof in profiles.items()}


def judged_lifts(problem: AnnulusProblem, models: dict) -> tuple[dict, dict]:
    """c*'s and b*'s lifts at each trained model judged on probes they were not fitted to (the square lattice moved
    half a step, ``symmetry.held_out_square_grid``) and against the null (``lib.paper_b.evidence``), by
    ``any_module.lift_symmetry`` on the network as a module with the exact SVD: ({(kind, arc): Evidence}, glue values
    ``evidence_{kind}_{arc}_*``)."""
    from lib.paper_b import any_module, evidence

    held = symmetry.held_out_square_grid()
    found, values = {}, {}
    for d in ARCS:
        lift = any_module.lift_symmetry(theta_to_module(models[d]["theta"], problem.config), problem.probes,
                                        symmetry.OMEGA, tau=problem.tau, m=problem.m, method="svd", route="dense",
                                        held_out=held)  # fmt: skip
        for kind, ev in lift.evidence.items():
            found[kind, d] = ev
            values.update({f"evidence_{kind}_{d}_words": evidence.CASE_WORDS[ev.case],
                           f"evidence_{kind}_{d}_case": ev.case, f"evidence_{kind}_{d}_held": ev.held_at_tau,
                           f"evidence_{kind}_{d}_null": float(ev.null_at_tau.min()),
                           f"evidence_{kind}_{d}_quantile": ev.quantile_at_tau,
                           f"evidence_{kind}_{d}_deep": ev.held_deep})  # fmt: skip
        values[f"evidence_c_{d}_arch"] = found["c", d].held_architecture
        values["evidence_held_probes"], values["evidence_rows"] = found["c", d].probes_held, found["c", d].rows
        values["evidence_null"] = int(found["c", d].null_at_tau.size)
        values[f"evidence_rank_{d}"] = found["c", d].rank
    return found, values


def evidence_labels(found: dict) -> dict:
    """The evidence of :func:`judged_lifts` under the labels of the τ profiles' table."""
    names = {"c": "Xf (c*)", "b": "−δ (b*)"}
    return {f"{names[kind]}, {d}/trained": ev for (kind, d), ev in found.items()}
