"""Paper B on a small module of the reader's, as the chapter *Your own network* shows it: the lift of the plane's
rotation (:func:`lib.paper_b.any_module.lift_symmetry`) at the network's present parameters, its table, its glued
values and each lift's τ profile."""

from __future__ import annotations

import math
from typing import Any

import torch

from lib.core.tables import Table
from lib.paper_b import evidence

#: The τ profile's cases in the table's words (``lib.paper_b.cutoff_profile.CASES``).
_CASES = {"exact": "lifts exactly", "approximate": "lifts approximately at τ", "below_paper_cutoff":
          "lifts only below τ", "none": "does not lift"}  # fmt: skip


def tensor_names(names) -> dict[str, str]:
    """Parameter names of an ``nn.Sequential`` in words: ``"0.weight"`` → ``"layer 1 weights"`` (layers counted
    among those with parameters); other names are kept."""
    layers = list(dict.fromkeys(n.rsplit(".", 1)[0] for n in names))
    words = {"weight": "weights", "bias": "biases"}
    out = {}
    for n in names:
        layer, _, kind = n.rpartition(".")
        out[n] = f"layer {layers.index(layer) + 1} {words.get(kind, kind)}" if layer else n
    return out


def lift_rows(lifts: dict[str, Any]) -> tuple[Table, dict[str, Any]]:
    """Paper B's lift of the small network at each state (columns): its defect, rank, residuals and each parameter
    tensor's share of Σ S_i² (rows); and the glued values."""
    values = {}
    for name, lift in lifts.items():
        values.update({f"lift_{name}_defect": float(lift.defect_rel), f"lift_{name}_rank": int(lift.rank),
                       f"lift_{name}_c_residual": float(lift.c.rel_residual),
                       f"lift_{name}_b_residual": float(lift.b.rel_residual),
                       f"lift_{name}_c_case": _CASES[lift.c.profile.case],
                       f"lift_{name}_b_case": _CASES[lift.b.profile.case],
                       f"lift_{name}_c_profile": lift.c.profile.sentence()})  # fmt: skip
        for kind, ev in lift.evidence.items():
            key = f"lift_{name}_{kind}"
            values.update({f"{key}_evidence": ev.sentence(), f"{key}_held_case": evidence.CASE_WORDS[ev.case],
                           f"{key}_held": ev.held_at_tau, f"{key}_quantile": ev.quantile_at_tau})  # fmt: skip
    states = list(lifts.values())
    rows = [
        ("relative defect ‖δ‖/‖f‖", *(x.defect_rel for x in states)),
        ("retained rank of J", *(x.rank for x in states)),
        ("relative residual of c*", *(x.c.rel_residual for x in states)),
        ("relative residual of b*", *(x.b.rel_residual for x in states)),
        ("X f on its probes, at every cutoff (τ profile)", *(_CASES[x.c.profile.case] for x in states)),
        ("−δ on its probes, at every cutoff (τ profile)", *(_CASES[x.b.profile.case] for x in states)),
        ("X f, held out and against the null", *(evidence.CASE_WORDS[x.evidence["c"].case] for x in states)),
        ("−δ, held out and against the null", *(evidence.CASE_WORDS[x.evidence["b"].case] for x in states)),
        ("c* held out at τ (null quantile)", *(_held(x.evidence["c"]) for x in states)),
        ("b* held out at τ (null quantile)", *(_held(x.evidence["b"]) for x in states)),
    ]
    words = tensor_names(list(states[0].shares()))
    rows += [(f"share of Σ S², {words[n]}", *(x.shares()[n] for x in states)) for n in words]
    table = Table(("", *lifts), tuple(rows), ".3g", caption="Paper B's lift of the rotation, before and after training")
    return table, values


def _held(ev) -> str:
    return f"{ev.held_at_tau:.3g} ({ev.quantile_at_tau:.2f})"


#: Probes of paper B's lift on the plane: a polar grid (8 radii × 32 angles), invariant under the rotations by 2π/32.
POLAR_RADII, POLAR_ANGLES = 8, 32


def polar_probes(held_out: bool = False) -> torch.Tensor:
    """The probe points of :func:`rotation_lift`: radii 0.1…1, angles 2πk/32, float64 (256, 2); ``held_out``: as
    many points half a step away in radius and angle, on which the lifts are judged."""
    step = 0.9 / (POLAR_RADII - 1)
    shift = 0.5 if held_out else 0.0
    r = torch.linspace(0.1, 1.0, POLAR_RADII, dtype=torch.float64) - shift * step
    t = (torch.arange(POLAR_ANGLES, dtype=torch.float64) + shift) * (2 * math.pi / POLAR_ANGLES)
    rr, tt = torch.meshgrid(r, t, indexing="ij")
    return torch.stack([rr * torch.cos(tt), rr * torch.sin(tt)], -1).reshape(-1, 2)


def rotation_lift(model: torch.nn.Module):
    """Paper B's lift of the rotation of the plane acting on ``model``'s inputs, at its present parameters, judged on
    the held-out polar probes and against the null (``lib.paper_b.evidence``)."""
    from lib.paper_b.any_module import lift_symmetry
    from lib.paper_b.symmetry import OMEGA

    return lift_symmetry(model, polar_probes(), OMEGA, held_out=polar_probes(held_out=True))
