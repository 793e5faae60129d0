"""How c* and b* relate on the annulus (paper B contribution 3, eq. 22), along the resolved flows.

A resolved flow records at every stop how c* and b* relate there (``lib.paper_b.relations.lift_cosines``: the
cosines in parameter space, of the realised moves and of the targets, each lift's residual and tail, and the bound
``lib.paper_b.relations.realised_cosine_bound`` on how far the realised moves may depart from a right angle). This
module reads those records off the flows: the values a chapter cites, its table, its curves and its claim.
"""

from __future__ import annotations

import math

import numpy as np

from lib.core.claims import Claim
from lib.core.tables import Table
from lib.paper_b.annulus.condition_flows import FlowSet
from lib.paper_b.annulus.data import CONDITIONS
from lib.paper_b.lifting_problem import KINDS
from lib.paper_b.relations import COSINE_KEYS

#: the distinct starting points: both initial conditions share theirs
STARTS = {"init": ("wedge_init", "full_init"), "wedge_trained": ("wedge_trained",), "full_trained": ("full_trained",)}


def _check_runs(runs: FlowSet):
    missing = [c for c in CONDITIONS if "cos_param" not in runs.record(c, "c", "resolved").diagnostics]
    if missing:
        raise ValueError(f"the resolved flows of {missing} recorded no relation: run them with the annulus flows")


def direction_cosines(runs: FlowSet) -> dict:
    """Per condition, by glue name: every :data:`COSINE_KEYS` value at t = 0 (``<key>_start_<condition>``), the
    same at the end of each resolved flow (``<key>_end_<kind>_<condition>``), and the
    largest |cos(J c*, J b*)| and orthogonality bound along both (``max_cos_function_<condition>``, ``max_orth_…``);
    the largest departure of J c*, J b* from a right angle over every flow (``max_right_angle_dev_deg``), and whether
    at t = 0 the targets' own cosine exceeds what the residuals allow in every condition (``cos_departure_source``)."""
    _check_runs(runs)
    out = {}
    for c in CONDITIONS:
        d0 = runs.record(c, "c", "resolved").diagnostics
        out.update({f"{key}_start_{c}": float(d0[key][0]) for key in COSINE_KEYS})
        along = [runs.record(c, kind, "resolved").diagnostics for kind in KINDS]
        for kind, d in zip(KINDS, along, strict=True):
            out.update({f"{key}_end_{kind}_{c}": float(d[key][-1]) for key in COSINE_KEYS})
        out[f"max_cos_function_{c}"] = float(max(np.abs(d["cos_function"]).max() for d in along))
        out[f"max_orth_bound_{c}"] = float(max(d["orth_bound"].max() for d in along))
    largest = max(out[f"max_cos_function_{c}"] for c in CONDITIONS)
    out["max_right_angle_dev_deg"] = math.degrees(math.asin(min(1.0, largest)))
    lattice = all(abs(out[f"cos_targets_start_{c}"]) > out[f"orth_bound_start_{c}"] for c in CONDITIONS)
    out["cos_departure_source"] = "the probe set's, not the lift's" if lattice else "not the probe set's alone"
    return out


def parameter_angle(values: dict) -> dict[str, str]:
    """Whether c* and b* are further from a right angle in parameter space than the moves they realise, at t = 0 in
    every condition (|cos(c*, b*)| > |cos(J c*, J b*)|), from :func:`direction_cosines`'s values."""
    further = all(abs(values[f"cos_param_start_{c}"]) > abs(values[f"cos_function_start_{c}"]) for c in CONDITIONS)
    word = "further" if further else "not further"
    return {"param_angle_text": f"{word} from a right angle than the moves they realise, in every condition"}


def direction_cosines_table(values: dict) -> Table:
    """Per condition, at t = 0 and at the end of each resolved flow: cos(c*, b*), cos(J c*, J b*), the targets'
    cos(X f, −δ) and the bound eq. 22 and the residuals allow."""
    rows = []
    for c in CONDITIONS:
        for where, tag in (("t = 0", "start"), ("end of c* flow", "end_c"), ("end of b* flow", "end_b")):
            keys = ("cos_param", "cos_function", "cos_targets", "orth_bound")
            rows.append((c.replace("_", "/"), where, *(values[f"{k}_{tag}_{c}"] for k in keys)))
    headers = ("condition", "where", "cos(c*, b*)", "cos(Jc*, Jb*)", "cos(Xf, −δ)", "eq. 22 bound")
    fmt = ("", "", ".3f", ".2e", ".2e", ".1e")
    caption = "c* and b* in parameter space and in function space, at the start and at the end of each resolved flow"
    return Table(headers, tuple(rows), fmt, caption=caption)


def direction_cosine_curves(runs: FlowSet) -> tuple[dict, dict]:
    """({start label: {kind: (t, cos(c*, b*), cos(J c*, J b*), cos(X f, −δ))}}, {start label: the eq. 22 bound at
    t = 0}) along the resolved flows, one entry per distinct start (both initial conditions share theirs)."""
    _check_runs(runs)
    curves, bounds = {}, {}
    for conditions in STARTS.values():
        label = " = ".join(c.replace("_", "/") for c in conditions)
        curves[label] = {}
        for kind in KINDS:
            r = runs.record(conditions[0], kind, "resolved")
            d = r.diagnostics
            curves[label][kind] = (r.record_times, d["cos_param"], d["cos_function"], d["cos_targets"])
        bounds[label] = float(runs.record(conditions[0], "c", "resolved").diagnostics["orth_bound"][0])
    return curves, bounds


def annulus_orthogonality_claim(values: dict, link: str) -> Claim:
    """Contribution 3 / eq. 22 on the annulus: J c* ⟂ J b* at t = 0, up to what the lifts' residuals allow, in every
    condition (the bound assumes orthogonal targets, which eq. 22 guarantees on a rotation-invariant probe set)."""
    ours = tuple(values[f"cos_function_start_{c}"] for c in CONDITIONS)
    bounds = tuple(values[f"orth_bound_start_{c}"] for c in CONDITIONS)
    holds = all(abs(o) <= b for o, b in zip(ours, bounds, strict=True))
    return Claim(
        "B_c3_annulus_orthogonal", "B", "contribution 3, eq. 22", "the moves realised by c* and b* are orthogonal in "
        "function space (annulus, t = 0, every condition)", "orthogonal", ours, "|cos(Jc*, Jb*)| ≤ "
        "(r_c r_b + t_c t_b)/(n_c n_b), what the lifts' residuals allow, in every condition", holds=bool(holds),
        link=link,
    )  # fmt: skip
