"""Resolved and fixed Euler flows in parameter space, with diagnostics recorded at every stop (paper B §3, notes §7).

:func:`run_flow` is the one flow runner of both of paper B's systems: it walks a
``lib.paper_b.lifting_problem.LiftingProblem`` along c* or b* and returns a :class:`FlowRecord` (the per-stop
diagnostics, its table row, its end values, its curves). It is built on :func:`euler_flow`, the integrator for any
direction field.

``euler_flow`` walks θ_{k+1} = θ_k + dt·z_k for k = 0..steps−1 (steps + 1 stops). In ``"resolved"`` mode z_k is
re-solved at every stop, z_k = direction_fn(θ_k) (including the final stop, so its realisation error can be
recorded); in ``"fixed"`` mode z_k = z_0 = direction_fn(θ_0) throughout, so the path is the straight line
θ_0 + t z_0. With ``normalize=True`` each step is dt·z_k/‖z_k‖ (the Hamiltonian walk's unit steps), and t is then
arc length, not flow time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from torch import Tensor

from lib.core.progress import bar as progress_bar
from lib.paper_b.lifting_problem import ExactFlow, LiftingProblem, check_kind

MODES = ("resolved", "fixed")


@dataclass
class FlowRecord:
    """The record of one Euler flow: times (steps+1,), per-stop diagnostics, step norms, snapshots, final θ.

    From :func:`run_flow` it also names its direction (``kind``, ``gauge``) and times its lifts (``solve_seconds``).
    """

    mode: str
    dt: float
    steps: int
    normalize: bool
    times: np.ndarray  # (steps+1,)
    diagnostics: dict[str, np.ndarray]  # name -> (n_records, ...) stacked over the recorded stops
    record_stops: np.ndarray  # (n_records,) stop indices where diagnostics were recorded
    direction_info: dict[str, np.ndarray]  # name -> (steps+1,) from direction_fn (resolved) or stop 0 (fixed)
    step_norms: np.ndarray  # (steps,) ‖θ_{k+1} − θ_k‖
    theta_final: Tensor
    snapshots: dict[int, Tensor] = field(default_factory=dict)  # stop index -> θ_k
    z0: Tensor | None = None
    kind: str = ""  # "c" or "b" (run_flow)
    gauge: str = ""
    solve_seconds: list[float] = field(default_factory=list)  # wall time of every lift (run_flow)

    def start_end(self, name: str) -> tuple[float, float]:
        """The diagnostic ``name`` at the first and last stop, as floats."""
        v = self.diagnostics[name]
        return float(v[0]), float(v[-1])

    @property
    def record_times(self) -> np.ndarray:
        """Flow times of the recorded stops."""
        return self.record_stops * self.dt

    @property
    def path_length(self) -> float:
        """Σ ‖θ_{k+1} − θ_k‖."""
        return float(self.step_norms.sum())

    @property
    def label(self) -> str:
        """E.g. "c* resolved" (with the gauge when it is not the sensitivity gauge)."""
        gauge = "" if self.gauge in ("", "sensitivity") else f" ({self.gauge})"
        return f"{self.kind}* {self.mode}{gauge}"

    def curve(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Plot data: (flow times of the recorded stops, the diagnostic ``name`` there)."""
        return self.record_times, self.diagnostics[name]

    def at_time(self, name: str, t: float):
        """The diagnostic ``name`` at the recorded stop nearest flow time t."""
        return self.diagnostics[name][int(np.argmin(np.abs(self.record_times - t)))]

    def ends(self) -> dict[str, float]:
        """The values a chapter cites: defect at start and end, the exact flow's defect and distance at the end,
        ‖δ_end‖/‖δ_0‖, and the lift's rank and relative residual at the first and last stop."""
        d0, d1 = self.start_end("defect")
        out = {"defect_start": d0, "defect_end": d1, "defect_ratio": float(d1 / d0)}
        if "defect_pred" in self.diagnostics:
            out["defect_pred"] = float(self.diagnostics["defect_pred"][-1])
        if "exact_dist" in self.diagnostics:
            out["exact_dist"] = float(self.diagnostics["exact_dist"][-1])
        for name, kind in (("rank", int), ("rel_residual", float), ("coef_norm", float)):
            if name in self.direction_info:
                out[f"{name}_start"] = kind(self.direction_info[name][0])
                out[f"{name}_end"] = kind(self.direction_info[name][-1])
        return out

    def table_row(self) -> tuple:
        """(flow, ‖δ‖ end / start, ‖f − f_exact‖ / ‖f₀‖ at the end) for ``lib.core.tables.Table``."""
        ends = self.ends()
        return (self.label, ends["defect_ratio"], ends.get("exact_dist", float("nan")))


def _split(out) -> tuple[Tensor, dict[str, Any]]:
    if isinstance(out, tuple):
        z, info = out
        return z, dict(info)
    if isinstance(out, Tensor):
        return out, {}
    if hasattr(out, "coef"):  # a LiftResult
        return out.coef, {"residual": out.residual, "rel_residual": out.rel_residual, "rank": out.rank}
    raise TypeError(f"direction_fn must return a Tensor, (Tensor, dict) or a LiftResult; got {type(out).__name__}")


def _stack(rows: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    if not rows:
        return {}
    keys = rows[0].keys()
    out = {}
    for k in keys:
        vals = [r[k] for r in rows]
        vals = [v.detach().cpu().numpy() if isinstance(v, Tensor) else np.asarray(v) for v in vals]
        out[k] = np.stack(vals)
    return out


def euler_flow(
    theta0: Tensor,
    direction_fn: Callable[[Tensor], Any],
    *,
    steps: int,
    dt: float,
    mode: str = "resolved",
    diagnostics_fn: Callable[[Tensor, int, Tensor], dict[str, Any]] | None = None,
    progress: bool = True,
    normalize: bool = False,
    snapshot_stops: Sequence[int] = (),
    record_every: int = 1,
    desc: str | None = None,
) -> FlowRecord:
    """Forward-Euler flow θ_{k+1} = θ_k + dt·z_k, resolved or fixed, recording diagnostics at all steps+1 stops.

    ``direction_fn(θ)`` returns z (p,), or (z, info dict of scalars), or a ``LiftResult``. ``diagnostics_fn(θ_k, k,
    z_k)`` returns a dict of scalars or arrays recorded at every stop. ``snapshot_stops`` lists stop indices whose θ
    is kept. ``record_every`` > 1 calls ``diagnostics_fn`` only at every record_every-th stop and the last one
    (``FlowRecord.record_stops``). A progress bar (``lib.core.progress``) shows progress unless ``progress=False``.
    """
    if mode not in MODES:
        raise ValueError(f"mode={mode!r} is not allowed; choose one of {list(MODES)}")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps={steps!r} must be a non-negative integer")
    if not isinstance(dt, (int, float)) or isinstance(dt, bool) or not np.isfinite(dt) or dt <= 0:
        raise ValueError(f"dt={dt!r} must be a positive finite number")
    if not isinstance(theta0, Tensor) or theta0.ndim != 1:
        raise ValueError(f"theta0 must be a 1-D tensor; got {getattr(theta0, 'shape', type(theta0))}")
    if isinstance(record_every, bool) or not isinstance(record_every, int) or record_every < 1:
        raise ValueError(f"record_every={record_every!r} must be a positive integer")
    bad = [s for s in snapshot_stops if not 0 <= s <= steps]
    if bad:
        raise ValueError(f"snapshot_stops {bad} are outside 0..{steps}")
    theta = theta0.detach().clone()
    z0, info0 = _split(direction_fn(theta))
    if z0.shape != theta.shape:
        raise ValueError(f"direction_fn returned shape {tuple(z0.shape)}; expected {tuple(theta.shape)}")
    diag_rows, info_rows, step_norms, record_stops = [], [], [], []
    snapshots: dict[int, Tensor] = {}
    z, info = z0, info0
    bar = progress_bar(total=steps, desc=desc or mode, disable=not progress, leave=False)
    for k in range(steps + 1):
        if k > 0 and mode == "resolved":
            z, info = _split(direction_fn(theta))
        info_rows.append(info)
        if diagnostics_fn is not None and (k % record_every == 0 or k == steps):
            diag_rows.append(diagnostics_fn(theta, k, z))
            record_stops.append(k)
        if k in snapshot_stops:
            snapshots[k] = theta.clone()
        if k == steps:
            break
        step = z
        if normalize:
            nz = z.norm()
            step = z / nz if nz > 0 else z
        theta = theta + dt * step
        step_norms.append(float(dt * step.norm()))
        bar.update(1)
    bar.close()
    return FlowRecord(
        mode=mode,
        dt=float(dt),
        steps=steps,
        normalize=normalize,
        times=np.arange(steps + 1) * float(dt),
        diagnostics=_stack(diag_rows),
        record_stops=np.asarray(record_stops, dtype=int),
        direction_info=_stack(info_rows),
        step_norms=np.asarray(step_norms),
        theta_final=theta,
        snapshots=snapshots,
        z0=z0,
    )


def run_flow(
    problem: LiftingProblem,
    theta0: Tensor,
    kind: str,
    mode: str,
    *,
    steps: int,
    dt: float,
    gauge: str = "sensitivity",
    record_every: int = 1,
    snapshot_stops: Sequence[int] = (),
    realisation: bool = False,
    observe: Callable[[Tensor, Any, int], dict[str, Any]] | None = None,
    progress: bool = True,
) -> FlowRecord:
    """Euler flow of ``problem`` from θ₀ along its lift c* (kind "c") or b* (kind "b"), resolved or fixed.

    Records (every ``record_every`` stops and the last): the defect ‖δ‖ (plain L2 over the probes), ‖δ‖/‖f‖, the
    exact flow's defect ``defect_pred``, ‖f_t − f_t^exact‖/‖f₀‖ (``exact_dist``), the distance from where the exact
    flow is headed ‖f_t − f_end‖/‖f₀‖ (``end_dist``: f₀ rotated by t_end, or Π f₀), ‖θ_t − θ₀‖/‖θ₀‖; with
    ``realisation`` the realisation errors ‖J z − g‖/‖g‖ of the step z and of z₀ (one product with J a stop); and
    whatever ``observe(θ, evaluation, stop)`` returns (the system's own measures); where the problem has a
    ``held_out(θ, kind, z)`` (``any_module.symmetry_flow(held_out=...)``), the step's relative residual on probes it
    was not fitted to (``held_residual``). The lift's rank, residuals,
    principal angle and ‖c‖ are kept for every stop in ``direction_info``.
    """
    check_kind(kind)
    held_out = getattr(problem, "held_out", None)
    exact = ExactFlow(problem, theta0, kind)
    theta0_norm = float(theta0.norm())
    f_end = exact.end(steps * dt)
    first: dict[str, Tensor] = {}
    seconds: list[float] = []

    def direction(theta):
        t0 = time.perf_counter()
        res = problem.lift(theta, kind, gauge=gauge)
        seconds.append(time.perf_counter() - t0)
        first.setdefault("z0", res.coef)
        info = {
            "rank": res.rank,
            "residual": res.residual,
            "rel_residual": res.rel_residual,
            "principal_angle_deg": res.principal_angle_deg,
            "coef_norm": float(res.coef.norm()),
        }
        return res.coef, info

    def diagnostics(theta, k, z):
        t = k * dt
        ev = problem.evaluate(theta)
        out = {
            "defect": float(ev.delta.norm()),
            "defect_rel": float(ev.delta.norm() / ev.f.norm()),
            "defect_pred": exact.defect(t),
            "exact_dist": float((ev.f - exact.at(t)).norm()) / exact.f0_norm,
            "end_dist": float((ev.f - f_end).norm()) / exact.f0_norm,
            "param_dist": float((theta - theta0).norm()) / theta0_norm,
        }
        if realisation:
            g = problem.target(ev, kind)
            g_norm = float(g.norm())
            out["real_err"] = float((ev.jac.matmul(z) - g).norm()) / g_norm
            out["real_err_z0"] = float((ev.jac.matmul(first["z0"]) - g).norm()) / g_norm
        if held_out is not None:  # the step judged on probes it was not fitted to (lib.paper_b.evidence)
            out["held_residual"] = held_out(theta, kind, z)
        if observe is not None:
            out.update(observe(theta, ev, k))
        return out

    record = euler_flow(
        theta0, direction, steps=steps, dt=dt, mode=mode, diagnostics_fn=diagnostics, progress=progress,
        snapshot_stops=snapshot_stops, record_every=record_every, desc=f"{mode} flow along {kind}* ({gauge})",
    )  # fmt: skip
    record.kind, record.gauge, record.solve_seconds = kind, gauge, seconds
    return record
