"""Paper B at the size of real networks: the chapter *Paper B at a million parameters* (``book/at_scale.md``).

The annulus classifier of paper B §3.1 (``lib.paper_b.annulus``: GELU MLP, full-batch Adam on BCE, the full annulus)
widened to 2 → W → W → 1, 1,053,697 parameters at W = 1,024, trained by the chapter in plain PyTorch
(``annulus.model.train_model``), then lifted without the dense J: by its per-layer factors
(``lib.paper_b.linear_factors``), and, to compare, by J streamed in column blocks (``lib.paper_b.streaming``):

- *a known answer*: the input rotation. f(R_t x) is f with W₁ replaced by W₁R_t, so the first-layer direction
  dW₁ = W₁Ω (every other parameter still) realises X f exactly: J c = X f to round-off, by one forward-mode product
  (:func:`hand_lift_residual`), whatever τ the truncated lift keeps;
- *answers not known in advance*: −δ, the direction to the rotation-invariant function (b*), and the nonlinear
  radial flow v(x) = x‖x‖²/R² (no parameter of an MLP follows it by construction).
"""

from __future__ import annotations

import time

import numpy as np
import torch
from torch import Tensor, nn
from torch.func import functional_call, jvp

from lib.core.lines import line
from lib.core.tables import Table
from lib.paper_b import any_module, evidence, streaming
from lib.paper_b import symmetry as sym
from lib.paper_b.annulus.data import AnnulusConfig, make_data
from lib.paper_b.annulus.model import SimpleMLP, train_model
from lib.paper_b.cutoff_profile import CASE_WORDS
from lib.paper_b.sensitivity import module_params

EXTENT = 3.0  # the probes' radius: the outer band ends at r = 3 (notes §8.2)


def trained_network(width: int, seed: int, epochs: int, learning_rate: float) -> tuple[nn.Module, dict]:
    """The classifier 2 → width → width → 1 (GELU), ``torch.manual_seed(seed)`` and PyTorch's default
    initialisation, trained on the full annulus (200 points) by full-batch Adam: (model, its training record)."""
    torch.manual_seed(seed)
    model = SimpleMLP(width, depth=3)
    x, y = make_data(360.0)
    start = time.perf_counter()
    history = train_model(model, x, y, AnnulusConfig(hidden=width, depth=3, epochs=epochs, learning_rate=learning_rate))
    with torch.no_grad():
        accuracy = float(((model(torch.as_tensor(x))[:, 0] > 0) == torch.as_tensor(y > 0)).float().mean())
    record = {"parameters": sum(p.numel() for p in model.parameters()), "bce_start": history[0],
              "bce_end": history[-1], "accuracy": accuracy, "train_seconds": time.perf_counter() - start}  # fmt: skip
    return model, record


def probes(rings: int, angles: int) -> Tensor:
    """``rings`` × ``angles`` points of the disc of radius :data:`EXTENT`, invariant under rotations by 2π/angles."""
    return sym.polar_grid(rings, angles, extent=EXTENT)


def held_out_probes(rings: int, angles: int) -> Tensor:
    """The held-out set of :func:`probes`: as many points, half a step away in radius and angle."""
    return sym.held_out_polar_grid(rings, angles, extent=EXTENT)


def radial_field(x: Tensor) -> Tensor:
    """v(x) = x‖x‖²/R² (R = :data:`EXTENT`): a nonlinear radial flow of the plane (no period)."""
    return x * (x * x).sum(1, keepdim=True) / EXTENT**2


def hand_lift_residual(model: nn.Module, x: Tensor) -> tuple[float, float]:
    """(‖J c − X f‖/‖X f‖, ‖c‖) for the first-layer direction c: dW₁ = W₁Ω, every other parameter 0; J c by one
    ``jvp`` in parameter space, X f by one in input space (float64)."""
    module = any_module.ModuleProblem(model, x, sym.OMEGA).model
    theta = module_params(module)
    first = next(iter(theta))
    tangent = {k: torch.zeros_like(v) for k, v in theta.items()}
    tangent[first] = theta[first] @ sym.OMEGA
    _, jc = jvp(lambda p: functional_call(module, p, (x,)), (theta,), (tangent,))
    _, xf = jvp(lambda y: functional_call(module, theta, (y,)), (x,), (x @ sym.OMEGA.T,))
    return float((jc - xf).norm() / xf.norm()), float(tangent[first].norm())


ROUTES = ("dense", "streaming", "factors")
ROUTE_WORDS = {"dense": "dense J", "streaming": "column blocks", "factors": "per-layer factors"}


def three_routes(model: nn.Module, x: Tensor, tau: float, block_bytes: float) -> dict:
    """The rotation's lift by the dense J, by J streamed in column blocks of at most ``block_bytes`` and by J's
    per-layer factors (all on the Gram route, so that they differ only by where J lives), timed: each route's lift,
    seconds, the bytes of J it holds, and how far the other two agree with the dense one. The block size is the
    chapter's, not the machine's: it orders the Grams' sums."""
    out = {}
    for route in ROUTES:
        start = time.perf_counter()
        out[route] = any_module.lift_symmetry(model, x, sym.OMEGA, route=route, method="gram", tau=tau,
                                              block_bytes=block_bytes, held_out=None)  # fmt: skip
        out[f"{route}_seconds"] = time.perf_counter() - start
    d = out["dense"]
    rows, p = d.f.numel(), d.sensitivity.numel()
    S = d.c.singular_values
    out["bound"] = rows * float(torch.finfo(torch.float64).eps) * float(S[0] / S[d.c.rank - 1]) ** 2
    out["agreement"] = max(float((getattr(out[r], k).coef - getattr(d, k).coef).norm() / getattr(d, k).coef.norm())
                           for k in ("c", "b") for r in ROUTES[1:])  # fmt: skip
    widths = sum(m.in_features + m.out_features for m in model.modules() if isinstance(m, nn.Linear))
    grams = 3 * 8.0 * rows * rows
    out["dense_bytes"] = 8.0 * rows * p
    out["streaming_bytes"] = min(8.0 * rows * p, block_bytes) + grams
    out["factors_bytes"] = 8.0 * rows * widths + grams
    return out


def judged(model: nn.Module, x: Tensor, held: Tensor, tau: float) -> dict:
    """The rotation's and the radial flow's lifts on the factors route judged held out on ``held`` and against the
    null (``lib.paper_b.evidence``), timed: {"rotation", "radial": SymmetryLift, "*_seconds": s}."""
    out = {}
    for name, generator, period in (("rotation", sym.OMEGA, any_module.PERIOD), ("radial", radial_field, None)):
        start = time.perf_counter()
        out[name] = any_module.lift_symmetry(model, x, generator, period=period, route="factors", tau=tau,
                                             held_out=held)  # fmt: skip
        out[f"{name}_seconds"] = time.perf_counter() - start
    return out


def evidence_values(judged: dict) -> dict:
    """The glued numbers and words of the lifts judged held out (``scale_ev_*``)."""
    rotation = judged["rotation"]
    out = {}
    for name, ev in (("c", rotation.evidence["c"]), ("b", rotation.evidence["b"]),
                     ("radial", judged["radial"].evidence["c"])):  # fmt: skip
        out.update({f"scale_ev_{name}_case": evidence.CASE_WORDS[ev.case], f"scale_ev_{name}_tau": ev.held_at_tau,
                    f"scale_ev_{name}_null_tau": float(np.median(ev.null_at_tau)),
                    f"scale_ev_{name}_quantile": ev.quantile_at_tau, f"scale_ev_{name}_deep": ev.held_deep,
                    f"scale_ev_{name}_null_deep": float(np.median(ev.null_deep))})  # fmt: skip
    c = rotation.evidence["c"]
    cert = c.certified
    out.update(scale_ev_rows=c.rows, scale_ev_rank=c.rank, scale_ev_held_probes=c.probes_held,
               scale_ev_null=c.null_at_tau.size)  # fmt: skip
    reach = "realises X f to round-off" if c.held_architecture <= evidence.EXACT else "misses X f"
    out["scale_ev_arch_text"] = (
        f"{reach}: {c.held_architecture:.1e} of it unrealised held out ({c.fit_architecture:.1e} on the probes)"
        if c.architecture else "is not found (no linear layer takes the raw input)")  # fmt: skip
    out["scale_ev_cert_text"] = (
        f"reaches {cert.attainable:.1e} on its probes after {cert.steps} conjugate-gradient steps "
        f"(stopping: {cert.stop}), {c.held_certified:.1e} held out"
        if cert else "is not needed (the fit reached round-off)")  # fmt: skip
    return out


def judged_table(judged: dict) -> Table:
    """The three lifts judged held out and against the null."""
    rotation = judged["rotation"]
    lifts = {"X f (c*)": rotation.evidence["c"], "−δ (b*)": rotation.evidence["b"],
             "radial flow": judged["radial"].evidence["c"]}  # fmt: skip
    return evidence.evidence_table(lifts, caption="The three lifts judged on held-out probes and against the null")


def cost_table(routes: dict) -> Table:
    """One row per route: seconds, passes over J, the bytes of J it holds, c*'s rank."""
    k = routes["dense"].f.shape[1]
    passes = {"dense": "—", "streaming": str(routes["streaming"].passes),
              "factors": f"none (1 forward, {k} backward)"}  # fmt: skip
    rows = [(ROUTE_WORDS[name], f"{routes[f'{name}_seconds']:.1f}", passes[name],
             streaming.gib(routes[f"{name}_bytes"]), routes[name].c.rank) for name in ROUTES]  # fmt: skip
    return Table(("J as", "time (s)", "passes over J", "J held in memory", "rank of c* at τ"), tuple(rows),
                 caption="The rotation's lift by each route (all three decompose J Jᵀ)")  # fmt: skip


def flow_curves(records: dict) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(t, ‖f_t − f₀∘R_t‖/‖f₀‖) of each flow record, for a figure."""
    return {label: rec.curve("exact_dist") for label, rec in records.items()}


def values(record: dict, hand: tuple[float, float], routes: dict, radial, flows: dict) -> dict:
    """Every number and computed sentence the chapter glues (``scale_*``) but the times (:func:`timings`)."""
    exact_line = line("round_off")
    s = routes["factors"]
    resolved, frozen = (flows[k].ends()["exact_dist"] for k in ("resolved", "frozen"))
    out = {f"scale_{k}": v for k, v in record.items() if not k.endswith("seconds")}
    out["scale_example_gb"] = 1000 * 10 * 10**6 * 8 / 1e9  # J of 1,000 probes × 10 outputs × 10⁶ parameters
    out["scale_width"] = next(iter(s.params.values())).shape[0]
    out.update(scale_hand_residual=hand[0], scale_hand_norm=hand[1], scale_round_off=exact_line,
               scale_c_norm=float(s.c.coef.norm()), scale_rank=s.rank, scale_rows=s.f.numel(),
               scale_defect_rel=s.defect_rel, scale_passes=routes["streaming"].passes,
               scale_dense_gib=routes["dense_bytes"] / 2**30, scale_streaming_gib=routes["streaming_bytes"] / 2**30,
               scale_factors_mib=routes["factors_bytes"] / 2**20, scale_agreement=routes["agreement"],
               scale_bound=routes["bound"], scale_resolved_dist=resolved, scale_frozen_dist=frozen,
               scale_flow_time=float(flows["resolved"].times[-1]))  # fmt: skip
    for name, rec in flows.items():
        if "held_residual" in rec.diagnostics:
            out[f"scale_flow_held_{name}"] = float(np.max(rec.curve("held_residual")[1]))
    out["scale_known_answer"] = (
        f"confirmed: it realises X f to a relative {hand[0]:.1e}, within round-off ({exact_line:g})"
        if hand[0] <= exact_line
        else f"not confirmed: it misses X f by a relative {hand[0]:.2e}, beyond round-off"
    )
    prof = s.c.profile
    out.update(scale_exact_verdict="finds it" if prof.case == "exact" else "does not find it",
               scale_c_case=CASE_WORDS[prof.case], scale_c_res=prof.residual_at_paper_tau, scale_c_floor=prof.floor[0],
               scale_resolution=prof.resolution)  # fmt: skip
    for name, lift in (("b", s.b), ("radial", radial.c)):
        out.update({f"scale_{name}_case": CASE_WORDS[lift.profile.case], f"scale_{name}_res": lift.rel_residual,
                    f"scale_{name}_floor": lift.profile.floor[0]})  # fmt: skip
    out["scale_agreement_text"] = (
        f"agree to {routes['agreement']:.1e}, within the bound {routes['bound']:.1e}"
        if routes["agreement"] <= routes["bound"] else
        f"differ by {routes['agreement']:.1e}, beyond the bound {routes['bound']:.1e}")  # fmt: skip
    out["scale_flow_text"] = (
        "stays closer to the rotated function than the frozen one" if resolved < frozen else
        "does not stay closer to the rotated function than the frozen one")  # fmt: skip
    return out


def timings(record: dict, routes: dict, judged: dict | None = None) -> dict:
    """The chapter's wall times (``scale_*_seconds``): this build's, so nbval does not compare them. With ``judged``
    (:func:`judged`) also the rotation's lift with its evidence, and the evidence's share over the factors lift."""
    out = {"scale_train_seconds": record["train_seconds"],
           **{f"scale_{r}_seconds": routes[f"{r}_seconds"] for r in ROUTES}}  # fmt: skip
    if judged is not None:
        out["scale_judged_seconds"] = judged["rotation_seconds"]
        lift = routes["factors_seconds"]
        out["scale_evidence_time_ratio"] = (judged["rotation_seconds"] - lift) / lift
    return out
