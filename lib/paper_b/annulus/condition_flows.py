"""The annulus flows of paper B §3.1 (notes §8.6–8.8): from each start, resolved and fixed flows along c* and b*,
the (start, direction) pairs run as independent jobs (``lib.core.engine``); each flow by
``lib.paper_b.euler_flows.run_flow``."""

from __future__ import annotations

from dataclasses import dataclass, field

from torch import Tensor

from lib.core import engine
from lib.paper_b.annulus.problem import AnnulusProblem
from lib.paper_b.euler_flows import FlowRecord, run_flow
from lib.paper_b.lifting_problem import KINDS


@dataclass
class ConditionFlows:
    """All flows from one starting point: records keyed (kind, mode, gauge), scored on ``datasets``."""

    name: str
    theta0: Tensor
    datasets: tuple[str, ...]
    records: dict[tuple[str, str, str], FlowRecord] = field(default_factory=dict)


class FlowSet(dict):
    """``{start name: ConditionFlows}`` from ``run_conditions``, with the number of processes that could run them."""

    def __init__(self, flows: dict[str, ConditionFlows], *, workers: int):
        super().__init__(flows)
        self.workers = workers

    def record(self, condition: str, kind: str, mode: str, gauge: str = "sensitivity") -> FlowRecord:
        """The flow of a condition (``wedge_init``, ``full_trained``, …): the initial ones share the "init" start."""
        return self[start_of(condition)].records[(kind, mode, gauge)]

    @property
    def n_resolves(self) -> int:
        """Lifts solved by the resolved flows (one per stop)."""
        return sum(r.steps + 1 for run in self.values() for key, r in run.records.items() if key[1] == "resolved")


def start_of(condition: str) -> str:
    """The start a condition's flows come from: "init" for both initial conditions, else the condition itself."""
    return "init" if condition.endswith("_init") else condition


def run_condition(
    problem: AnnulusProblem,
    name: str,
    theta0: Tensor,
    *,
    datasets: tuple[str, ...],
    **kwargs,
) -> ConditionFlows:
    """Resolved (gauged) and fixed (each gauge in ``fixed_gauges``) flows along c* and b* from θ0, in this process.

    ``kwargs`` are those of :func:`run_conditions` (steps, dt, fixed_gauges, record_every, ...), without ``workers``
    and ``scheduler``.
    """
    return run_conditions(problem, {name: (theta0, tuple(datasets))}, workers=1, **kwargs)[name]


def flow(
    problem: AnnulusProblem,
    theta0: Tensor,
    kind: str,
    mode: str,
    *,
    gauge: str = "sensitivity",
    steps: int = 200,
    dt: float = 0.005,
    record_every: int = 1,
    invariance_every: int = 40,
    datasets: tuple[str, ...] | None = None,
    snapshot_stops=(),
    progress: bool = True,
) -> FlowRecord:
    """One Euler flow along c* or b* (``lib.paper_b.euler_flows.run_flow``) with the §8.7 diagnostics: the runner's,
    the realisation errors, and the annulus's own (``AnnulusProblem.observer``: angular deviation, BCE, accuracy,
    invariance error per dataset, the last every ``invariance_every`` stops, and how far the move of z₀ drifts); a
    resolved flow also records how c* and b* relate at each recorded stop (``lib.paper_b.relations.lift_cosines``:
    the other lift reuses the step's decomposition of J; ``lib.paper_b.annulus.cosines`` reads them off)."""
    datasets = tuple(problem.datasets) if datasets is None else tuple(datasets)
    cosines = mode == "resolved"
    observe = problem.observer(
        datasets, invariance_every=invariance_every, steps=steps, cosines=cosines, frozen=(kind, gauge)
    )
    return run_flow(
        problem, theta0, kind, mode, steps=steps, dt=dt, gauge=gauge, record_every=record_every,
        snapshot_stops=snapshot_stops, realisation=True, observe=observe, progress=progress,
    )  # fmt: skip


def _run_direction(name: str, problem: AnnulusProblem, theta0: Tensor, kind: str, kw: dict) -> dict:
    """Job of ``run_conditions``: the resolved and fixed flows from the start ``name`` along one direction."""
    kw = dict(kw)  # the job's own arguments stay as they were (the serial path runs jobs in this process)
    fixed_gauges = kw.pop("fixed_gauges")
    records = {(kind, "resolved", "sensitivity"): flow(problem, theta0, kind, "resolved", **kw)}
    for gauge in fixed_gauges:
        records[(kind, "fixed", gauge)] = flow(problem, theta0, kind, "fixed", gauge=gauge, **kw)
    return records


def run_conditions(
    problem: AnnulusProblem,
    starts: dict[str, tuple[Tensor, tuple[str, ...]]],
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    steps: int = 200,
    dt: float = 0.005,
    fixed_gauges=("sensitivity", "minnorm"),
    record_every: int = 1,
    invariance_every: int = 40,
    snapshot_stops=(),
    progress: bool = True,
) -> FlowSet:
    """``run_condition`` for every start ``{name: (θ0, datasets)}``, the (start, direction) pairs run as jobs of
    ``lib.core.engine``: ``workers`` processes of a local cluster (default: ``$BOOK_WORKERS`` or one per CPU), or the
    workers of the Dask scheduler at ``scheduler``; ``workers=1`` without a scheduler runs them here, a bar per flow.

    Every flow computes on one thread wherever it runs, so the records are those of ``run_condition``.
    """
    kw = dict(
        steps=steps, dt=dt, fixed_gauges=tuple(fixed_gauges), record_every=record_every,
        invariance_every=invariance_every, snapshot_stops=tuple(snapshot_stops),
    )  # fmt: skip
    where = engine.choose(scheduler, workers)
    pairs = [(name, kind) for name in starts for kind in KINDS]
    here = where.runs_here(len(pairs))  # then a bar per flow; in processes one bar over the pairs
    if not here:  # most expensive first, so the workers end together: a re-solve costs about the retained rank,
        # and b* pays for Π f at every step on top
        rank = {name: problem.rank(theta0) for name, (theta0, _) in starts.items()}
        pairs.sort(key=lambda pair: (-rank[pair[0]], pair[1] != "b"))
    jobs = [
        dict(name=name, problem=problem, theta0=starts[name][0], kind=kind,
             kw={**kw, "datasets": tuple(starts[name][1]), "progress": progress and here})
        for name, kind in pairs
    ]  # fmt: skip
    records = engine.run_jobs(
        _run_direction,
        jobs,
        scheduler=scheduler,
        workers=workers,
        desc=f"flows of {len(pairs)} (start, direction) pairs",
        progress=progress,
        label=lambda job, _: f"{job['kind']}* from {job['name']}",
    )
    by_pair = dict(zip(pairs, records, strict=True))
    out = {name: ConditionFlows(name, theta0, tuple(datasets)) for name, (theta0, datasets) in starts.items()}
    for name in starts:  # in run_condition's order
        for kind in KINDS:
            out[name].records.update(by_pair[(name, kind)])
    return FlowSet(out, workers=records.workers)
