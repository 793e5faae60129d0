"""The evidence of a lift on any module (:mod:`lib.paper_b.evidence` for ``lib.paper_b.any_module``): held-out probes,
the null of random nonlinear input fields, the architecture's own lift of a linear action.

The held-out probes are the caller's second set (``held_out=`` a tensor of at least as many inputs, drawn the way the
probes were), or, by default, a split of the caller's probes: the lift is refitted on the odd-indexed half and judged
on the even-indexed half,
so that the evidence speaks for a lift fitted on half as many probes as the caller's (a lift that holds out at N/2
probes holds at N). Every held-out product J'c is one forward-mode ``jvp`` in parameter space; X f and the null's
X_v f on either set are one ``jvp`` in input space each.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.func import functional_call, jvp

from lib.paper_b import evidence as E
from lib.paper_b.sensitivity import flatten_params, unflatten_params

F64 = torch.float64
SPLIT = "split"


def _recorded(model: nn.Module, params: dict[str, Tensor], x: Tensor) -> dict[str, tuple[Tensor, Tensor]]:
    """Each ``nn.Linear``'s (input, output) on one forward at θ, for the layers called once."""
    seen: dict[str, list] = {}

    def hook(name):
        def record(module, args, output):
            seen.setdefault(name, []).append((args[0].detach(), output.detach()))

        return record

    handles = [m.register_forward_hook(hook(n)) for n, m in model.named_modules() if isinstance(m, nn.Linear)]
    try:
        functional_call(model, params, (x,))
    finally:
        for h in handles:
            h.remove()
    return {n: v[0] for n, v in seen.items() if len(v) == 1}


def architecture_lift(problem, params: dict[str, Tensor]) -> tuple[str, Tensor] | None:
    """(which layers, the direction c (p,)) realising X f through the architecture, for an action by matrices: on a
    linear layer fed the raw input, x ↦ x + εAx is W ↦ W + εWA; on a linear layer whose output is the module's,
    y ↦ y + εBy is (W, b) ↦ (W − εBW, b − εBb). None for a velocity field, or where no such layer is found. The
    direction is a candidate only: :func:`lib.paper_b.evidence.judge` measures what it realises on the probes and held
    out, like any other lift."""
    acts = [a for a in (problem.act_in, problem.act_out) if a is not None]
    if any(a.matrix is None for a in acts):
        return None
    x, f = problem.probes, None
    layers = _recorded(problem.model, params, x)
    tangent = {k: torch.zeros_like(v) for k, v in params.items()}
    words = []
    if problem.act_in is not None:
        firsts = [n for n, (i, _) in layers.items() if i.shape == x.shape and torch.equal(i, x)]
        if not firsts:
            return None
        for n in firsts:
            tangent[f"{n}.weight"] = tangent[f"{n}.weight"] + params[f"{n}.weight"] @ problem.act_in.matrix
        words.append(" and ".join(f"{n}.weight·A" for n in firsts))
    if problem.act_out is not None:
        f = problem.output(params, x)
        lasts = [n for n, (_, o) in layers.items() if o.numel() == f.numel() and torch.equal(o.reshape(f.shape), f)]
        if len(lasts) != 1:
            return None
        (n,) = lasts
        B = problem.act_out.matrix
        tangent[f"{n}.weight"] = tangent[f"{n}.weight"] - B @ params[f"{n}.weight"]
        if f"{n}.bias" in params:
            tangent[f"{n}.bias"] = tangent[f"{n}.bias"] - B @ params[f"{n}.bias"]
        words.append(f"−B·{n}")
    return ", ".join(words), flatten_params(tangent)


def image_on(problem, params: dict[str, Tensor], x: Tensor):
    """C (p, t) ↦ J'C (N'·k, t) on inputs x: one parameter-space ``jvp`` per column."""

    def image(C: Tensor) -> Tensor:
        cols = []
        for j in range(C.shape[1]):
            tangent = unflatten_params(C[:, j].contiguous(), params)
            cols.append(jvp(lambda p: problem.output(p, x), (params,), (tangent,))[1].reshape(-1))
        return torch.stack(cols, 1)

    return image


def null_targets(problem, params: dict[str, Tensor], x: Tensor, fields: E.NullFields) -> Tensor:
    """X_v f = (∂f/∂x) v_k(x) on inputs x for the K null fields: (N·k, K)."""
    vs = fields(x)
    return torch.stack([jvp(lambda y: problem.output(params, y), (x,), (v,))[1].reshape(-1) for v in vs], 1)


def held_out_set(probes: Tensor, held_out) -> tuple[Tensor, Tensor, str]:
    """(the probes to fit, the held-out probes, a note) for ``held_out``: a tensor of at least as many inputs as the
    probes, or "split" (fit on the odd-indexed half, judge on the even-indexed half, which is never the smaller)."""
    if isinstance(held_out, str) and held_out == SPLIT:
        if probes.shape[0] < 2:
            raise ValueError(f"held_out={SPLIT!r} needs at least 2 probes; got {probes.shape[0]}: pass held_out= a "
                             "second set of inputs")  # fmt: skip
        return probes[1::2], probes[0::2], (f"the even-indexed half of the {probes.shape[0]} probes; the lift "
                                            "refitted on the odd-indexed half")  # fmt: skip
    if not isinstance(held_out, Tensor) or held_out.ndim != 2 or held_out.shape[1] != probes.shape[1]:
        raise ValueError(f"held_out={getattr(held_out, 'shape', type(held_out).__name__)}: it must be 'split', None "
                         f"or a tensor of inputs (N', {probes.shape[1]}) like the probes")  # fmt: skip
    if held_out.is_complex() or not held_out.is_floating_point() or not torch.isfinite(held_out).all():
        raise ValueError("held_out must hold real, finite inputs")
    if held_out.shape[0] < probes.shape[0]:
        raise ValueError(f"held_out has {held_out.shape[0]} inputs, fewer than the {probes.shape[0]} probes: judge a "
                         "lift on at least as many inputs as it was fitted to (or held_out='split')")  # fmt: skip
    return probes, held_out.detach().to(F64), "the caller's second set"


def judge_module(fit, held, theta: Tensor, kind: str, *, gauge: str, note: str, fields: E.NullFields) -> E.Evidence:
    """The evidence of the lift of X f (kind "c") or −δ ("b") fitted by the problem ``fit`` at θ, judged on the
    probes of the problem ``held`` (the same module, generators and period)."""
    lift = fit.lift(theta, kind, gauge=gauge)
    ev = fit.evaluate(theta)
    params = ev.params
    hv = held.evaluate(theta)
    held_eta = hv.xf.reshape(-1) if kind == "c" else -hv.delta.reshape(-1)
    arch = architecture_lift(fit, params) if kind == "c" else None
    return E.judge(svd=ev.svd, op=ev.jac, eta=fit.target(ev, kind), coef_at_tau=lift.coef,
                   image=image_on(fit, params, held.probes), held_eta=held_eta,
                   null_fit=null_targets(fit, params, fit.probes, fields),
                   null_held=null_targets(fit, params, held.probes, fields),
                   fit_case=lift.profile.case if lift.profile is not None else "none", tau=fit.tau,
                   probes_fit=fit.probes.shape[0], probes_held=held.probes.shape[0], held_note=note,
                   architecture=arch)  # fmt: skip


class HeldOutResidual:
    """A flow's step judged held out (``symmetry_flow(held_out=...)``): at θ, the relative residual
    ‖J'z − η'‖/‖η'‖ of the step's direction z on the held-out problem's probes, η' its X f (kind "c") or −δ."""

    def __init__(self, fit, held):
        self.fit, self.held = fit, held

    def __call__(self, theta: Tensor, kind: str, z: Tensor) -> float:
        ev = self.held.evaluate(theta)
        target = ev.xf.reshape(-1) if kind == "c" else -ev.delta.reshape(-1)
        image = image_on(self.fit, ev.params, self.held.probes)(z.to(F64)[:, None])[:, 0]
        return float((image - target).norm() / target.norm()) if float(target.norm()) > 0 else float("nan")


def judged_module(problem, held_out, null: int, gauge: str, args: dict) -> dict:
    """c*'s and b*'s evidence (:func:`judge_module`) for ``any_module.lift_symmetry``: fitted on the problem's probes
    (or the odd-indexed half of them, refitted), judged on the held-out set, against ``null`` null fields drawn over
    the probes fitted; ``args`` rebuild the problem (``ModuleProblem``'s arguments but the probes and the route)."""
    make = type(problem)
    fit_probes, held_probes, note = held_out_set(problem.probes, held_out)
    fit = problem if fit_probes is problem.probes else make(probes=fit_probes, route=problem.route, **args)
    held = make(probes=held_probes, route="dense", **{k: v for k, v in args.items() if k != "method"})
    fields = E.NullFields(fit_probes, null)
    kinds = ("c", "b") if problem.period is not None else ("c",)
    return {k: judge_module(fit, held, fit.theta0, k, gauge=gauge, note=note, fields=fields) for k in kinds}


def flow_judge(problem, held_out, args: dict) -> HeldOutResidual:
    """A flow's per-step judge (``any_module.symmetry_flow(held_out=...)``) on a second set of inputs: a tensor only,
    since the flow is fitted on every probe and a split would judge it on probes it was fitted to."""
    if not isinstance(held_out, Tensor):
        raise ValueError(f"held_out={held_out!r}: a flow is judged on a second set of inputs, a tensor (N', "
                         f"{problem.dim_in}) of at least as many as the probes")  # fmt: skip
    _, held, _ = held_out_set(problem.probes, held_out)
    return HeldOutResidual(problem, type(problem)(probes=held, route="dense", **args))
