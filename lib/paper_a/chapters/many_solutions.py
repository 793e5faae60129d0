"""The chapter ``many_solutions``: the task chapters' single-block ablations over many solutions and over widths.

:class:`SolutionSweep` holds the chapter's settings (validated before any work) and runs the sweep: the task
chapters' configuration (:func:`lib.paper_a.task_analysis.train_config`) for ``solutions`` seeds per task at the
paper's width, and ``width_solutions`` seeds per task at every width of ``widths``, each solution one row of the
results table of :mod:`lib.paper_a.task_analysis.sweeps`. The rest turns the profiles into the chapter's glue values
and tables: how often each §4 ordering holds with its 95% Wilson interval, how the interval narrows as solutions
accumulate, and the ablation profile against width.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from IPython.display import Markdown

from lib.core import budget, devices, engine, params
from lib.core.claims import SECOND_SET_GLUE, SECOND_SET_START
from lib.core.lines import line
from lib.core.tables import Table, as_myst, mean_sem_text
from lib.core.verdicts import solutions_to_decide, wilson
from lib.paper_a import rnn, schur
from lib.paper_a import task_analysis as ta
from lib.paper_a.batched_training import seeds_in_flight
from lib.paper_a.task_analysis import sweeps
from lib.paper_a.train import TrainConfig

#: The three §4 tasks of paper A.
TASKS = ("flipflop", "sine", "context")
#: The widths of the book's width profile (N_h).
WIDTHS = (32, 64, 128)
#: The width of the task chapters (paper A §4).
MAIN_WIDTH = ta.PAPER_TRAINING["n_hidden"]
#: The confidence level (percent) of lib.core.verdicts.wilson's interval.
WILSON_LEVEL = 95
#: The largest sample size searched for "solutions needed" (beyond it: not within reach).
MAX_NEEDED = 100_000
#: The scorecard's line for a statement about solutions ("a majority", lib.core.lines.LINES).
LEVEL = line("majority")


def check_widths(widths: Any) -> tuple[int, ...]:
    """``widths`` as a sorted tuple of distinct even integers ≥ 2 (N_h; the 2×2 blocks need an even width)."""
    if isinstance(widths, str | bytes) or not isinstance(widths, Sequence) or not widths:
        raise TypeError(f"widths={widths!r} must be a non-empty list of even integers ≥ 2 (N_h), e.g. [32, 64, 128]")
    checked = [rnn.check_width(f"widths[{i}]", w) for i, w in enumerate(widths)]
    if len(set(checked)) != len(checked):
        raise ValueError(f"widths={list(widths)!r} lists a width twice; give each N_h once")
    return tuple(sorted(checked))


def check_tasks(tasks: Any) -> tuple[str, ...]:
    """``tasks`` as a tuple of distinct registered task names (at least one)."""
    names = params.subset("tasks", tasks, ta.available_tasks())
    if not names or len(set(names)) != len(names):
        raise ValueError(f"tasks={tasks!r} must name at least one task, each once; allowed: {ta.available_tasks()}")
    return tuple(names)


@dataclass(frozen=True, kw_only=True)
class SolutionSweep:
    """The chapter's settings, validated on construction (before anything runs).

    ``scheduler`` (else ``$BOOK_SCHEDULER``): a Dask scheduler's address, checked to answer; ``None``: a local cluster
    of ``$BOOK_WORKERS`` processes (serial with one). ``device`` (``lib.core.devices``): where the models train and
    roll out, part of every model's configuration (a GPU-trained solution is another solution); checked present.
    """

    solutions: int = 10
    widths: tuple[int, ...] = WIDTHS
    width_solutions: int = 2
    tasks: tuple[str, ...] = TASKS
    alpha: float = schur.PAPER_ALPHA
    scheduler: str | None = None
    device: str = devices.DEFAULT
    second_set: int = 10

    def __post_init__(self):
        checked = {
            "solutions": params.integer("solutions", self.solutions, min=1),
            "widths": check_widths(self.widths),
            "width_solutions": params.integer("width_solutions", self.width_solutions, min=1),
            "tasks": check_tasks(self.tasks),
            "alpha": schur.check_alpha(self.alpha),
            "scheduler": engine.choose(self.scheduler).scheduler,  # also BOOK_WORKERS and $BOOK_SCHEDULER
            "device": str(devices.require("device", self.device)),
            "second_set": params.integer("second_set", self.second_set, min=0),
        }
        for name, value in checked.items():
            object.__setattr__(self, name, value)
        if self.scheduler is not None:  # an unreachable address: an error now, not after the first job
            engine.handshake(self.scheduler, "scheduler")
        self.work()

    def work(self) -> budget.Work:
        """The sweep's size (:func:`lib.core.budget.bound`, refused when out of reach): its models, each weighed by
        N_h² (a model at N_h = 64 is one), and the arrays of the widest one's training and profile."""
        book = budget.defaults(SolutionSweep)

        def weigh(s: dict) -> float:  # as configs(): the main width's seeds, then width_solutions at each width
            seeds = s["solutions"] + sum(1 for k in range(s["second_set"]) if SECOND_SET_START + k >= s["solutions"])
            return len(s["tasks"]) * (seeds + s["width_solutions"] * sum((w / MAIN_WIDTH) ** 2 for w in s["widths"]))

        width, steps = max(MAIN_WIDTH, *self.widths), max(ta.trial_steps(t, None) for t in self.tasks)
        states = (seeds_in_flight(self.width_solutions), ta.PAPER_TRAINING["batch_size"], steps, width)
        named = ("solutions", "widths", "width_solutions", "second_set", "tasks")
        arrays = {
            "the widest models' training states (float32, for BPTT)": budget.floats(*states, itemsize=4, copies=4),
            "the widest model's held-out states, full and ablated": budget.floats(ta.N_HELDOUT, steps, width, copies=5),
            "the widest model's Schur form (W, Q, T and ablated copies)": budget.floats(width, width, copies=8),
        }
        term = budget.Term("models at N_h = 64", weigh(vars(self)), weigh(book), params=named)
        return budget.bound("many_solutions", term, arrays=arrays)

    @property
    def second_seeds(self) -> range:
        """The seeds of the second set (``second_set`` of them from ``SECOND_SET_START``, disjoint from the task
        chapters' seeds 0–9)."""
        return range(SECOND_SET_START, SECOND_SET_START + self.second_set)

    def configs(self) -> list[TrainConfig]:
        """Every solution: ``solutions`` seeds per task at the main width, the second set's seeds (those not among
        them), then ``width_solutions`` at each width."""
        seeds = [*range(self.solutions), *(s for s in self.second_seeds if s >= self.solutions)]
        main = [ta.train_config(t, s, device=self.device) for t in self.tasks for s in seeds]
        widths = [
            ta.train_config(t, s, n_hidden=w, device=self.device)
            for t in self.tasks
            for w in self.widths
            for s in range(self.width_solutions)
        ]
        return main + widths

    def run(self, progress: bool = True) -> ManyProfiles:
        """Train what is missing, profile every solution through the results table; the profiles by task and width."""
        configs = self.configs()
        found = sweeps.profile_sweep(configs, self.alpha, scheduler=self.scheduler, progress=progress)
        by_key = {(c.task, c.n_hidden, c.seed): p for c, p in zip(configs, found, strict=True)}
        pick = lambda t, w, n: ta.TaskAnalysis(t, {}, self.alpha, [by_key[t, w, s] for s in range(n)])  # noqa: E731
        main = {t: pick(t, MAIN_WIDTH, self.solutions) for t in self.tasks}
        widths = {t: {w: pick(t, w, self.width_solutions) for w in self.widths} for t in self.tasks}
        second = {
            t: ta.TaskAnalysis(t, {}, self.alpha, [by_key[t, MAIN_WIDTH, s] for s in self.second_seeds])
            for t in self.tasks
        }
        return ManyProfiles(self, main, widths, second if self.second_set else {})

    def setup_values(self) -> dict[str, Any]:
        """The settings the prose cites."""
        return {
            "n_solutions": self.solutions,
            "n_tasks": len(self.tasks),
            "main_width": MAIN_WIDTH,
            "width_solutions": self.width_solutions,
            "widths_text": ", ".join(str(w) for w in self.widths),
            "n_widths": len(self.widths),
            "alpha_used": self.alpha,
            "robust_level": LEVEL,
            "wilson_level": WILSON_LEVEL,
            "n_second_set": self.second_set,
            "second_set_seeds": (
                f"{self.second_seeds.start}–{self.second_seeds.stop - 1}" if self.second_set else "none"
            ),
        }


@dataclass(frozen=True)
class ManyProfiles:
    """The sweep's profiles: ``main`` task → analysis at the main width; ``widths`` task → width → analysis."""

    sweep: SolutionSweep
    main: dict[str, ta.TaskAnalysis]
    widths: dict[str, dict[int, ta.TaskAnalysis]]
    second: dict[str, ta.TaskAnalysis]

    def judgements(self, task: str, ordering: str) -> list[bool | None]:
        """Whether ``ordering`` holds for each solution of ``task`` in seed order (None: undefined, an empty block)."""
        return [ta.holds(ordering, p) for p in self.main[task].profiles]


def distribution_values(profiles: ManyProfiles) -> dict[str, Any]:
    """Per task and block: the median single-block ΔFVU and S_ΔT over solutions and how often the block is empty."""
    values = {}
    for t, a in profiles.main.items():
        for b in ta.SINGLE_BLOCKS:
            for kind in ("dfvu", "sens"):
                v = a.values(kind, b)
                v = v[np.isfinite(v)]
                values[f"median_{kind}_{t}_{b}"] = float(np.median(v)) if v.size else math.nan
            values[f"n_empty_{t}_{b}"] = a.n_empty(b)
    return values


def solutions_needed(frequency: float, level: float = LEVEL, limit: int = MAX_NEEDED) -> int | None:
    """The fewest solutions whose 95% Wilson interval, at the observed ``frequency``, lies wholly on one side of
    ``level`` (so the verdict holds / fails is decided); None when not within ``limit`` (frequency = level)."""
    frequency = params.real("frequency", frequency, min=0.0, max=1.0)
    return solutions_to_decide(frequency, 1, level, limit)


def task_second_set(profiles: ManyProfiles) -> dict[str, Any]:
    """Paper A §4's claims computed on the second set of solutions (seeds disjoint from the task chapters'), as the
    glue ``SECOND_SET_GLUE``: {claim id: record} in JSON (the scorecard sets them beside the task chapters')."""
    records = {}
    for analysis in profiles.second.values():
        for c in ta.task_claims(analysis, link="many_solutions.html"):
            records[c.id] = c.record()
    return {SECOND_SET_GLUE: json.dumps(records, ensure_ascii=False, sort_keys=True)}


def second_set_table(profiles: ManyProfiles) -> Table:
    """Paper A §4's claims on the second set: the claim, ours, the evidence and the verdict's kind (the scorecard
    gives each verdict in full, beside the first set's and both pooled)."""
    rows = []
    for analysis in profiles.second.values():
        for c in ta.task_claims(analysis, link="many_solutions.html"):
            ours = c.ours if not isinstance(c.ours, float) else float(c.ours)
            rows.append((c.statement, ours, c.robustness, c.kind))
    caption = "Paper A §4's claims on the second set of solutions, by the scorecard's protocol (in full there)"
    return Table(("claim", "ours", "evidence", "verdict"), tuple(rows), ".3g", caption=caption)


def ordering_values(profiles: ManyProfiles) -> tuple[dict[str, Any], Table]:
    """Every §4 ordering in every task: solutions where it holds (k of n), frequency, Wilson interval, solutions
    needed to decide it against the scorecard's line at that frequency; the paper's own claims marked."""
    values, rows, summary = {}, [], []
    for t in profiles.main:
        for name in ta.ORDERINGS:
            judged = [j for j in profiles.judgements(t, name) if j is not None]
            k, n = sum(judged), len(judged)
            frac = k / n if n else math.nan
            lo, hi = wilson(k, n) if n else (math.nan, math.nan)
            needed = solutions_needed(frac) if n else None
            tag = f"{t}_{name}"
            values |= {f"k_{tag}": k, f"n_{tag}": n, f"frac_{tag}": frac, f"lo_{tag}": lo, f"hi_{tag}": hi}
            values[f"needed_{tag}"] = needed if needed is not None else "out of reach"
            paper = name in ta.PAPER_CLAIMS.get(t, ())
            if paper:
                summary.append(f"{t}, {ta.ORDERING_TEXT[name]}: {k} of {n} (95% interval {lo:.2f}–{hi:.2f})")
            interval = f"{lo:.2f}–{hi:.2f}" if n else None  # as the scorecard writes it
            label = ta.ORDERING_TEXT[name] + (" (paper)" if paper else "")
            rows.append((t, label, f"{k}\u00a0of\u00a0{n}", frac, interval, needed))
    values["paper_orderings_summary"] = "; ".join(summary) or "none of the chosen tasks is in the paper"
    values["paper_orderings_summary_md"] = Markdown(as_myst(values["paper_orderings_summary"]))  # for the prose
    headers = ("task", "ordering", "holds in", "frequency", "95% interval", "solutions to decide")
    caption = "How often each §4 ordering holds over the solutions, with its 95% Wilson interval"
    return values, Table(headers, tuple(rows), ".2f", caption=caption)


def running_intervals(profiles: ManyProfiles, task: str, ordering: str) -> tuple[np.ndarray, ...]:
    """(n, frequency, low, high) after each solution of ``task`` in seed order (solutions where it is undefined are
    skipped): how the 95% Wilson interval of ``ordering``'s frequency narrows as solutions accumulate."""
    judged = [bool(j) for j in profiles.judgements(task, ordering) if j is not None]
    n = np.arange(1, len(judged) + 1)
    k = np.cumsum(judged)
    bands = np.array([wilson(int(a), int(b)) for a, b in zip(k, n, strict=True)]).reshape(-1, 2)
    return n, k / np.maximum(n, 1), bands[:, 0], bands[:, 1]


def narrowing_curves(profiles: ManyProfiles) -> dict[str, dict[str, tuple[np.ndarray, ...]]]:
    """task → ordering → :func:`running_intervals` (the figure's curves)."""
    return {t: {name: running_intervals(profiles, t, name) for name in ta.ORDERINGS} for t in profiles.main}


def claimed_orderings(tasks: Sequence[str]) -> set[tuple[str, str]]:
    """The (task, ordering) pairs that paper A's §4 claims for its tasks (the figure marks them)."""
    return {(t, name) for t in tasks for name in ta.PAPER_CLAIMS.get(t, ())}


def narrowing_values(profiles: ManyProfiles) -> dict[str, Any]:
    """The interval's width after all solutions, per task and ordering, and for an ordering that always held."""
    values = {}
    for t in profiles.main:
        for name in ta.ORDERINGS:
            n, _, lo, hi = running_intervals(profiles, t, name)
            values[f"width_{t}_{name}"] = float(hi[-1] - lo[-1]) if n.size else math.nan
    lo, hi = wilson(profiles.sweep.solutions, profiles.sweep.solutions)
    values |= {"all_hold_low": lo, "all_hold_width": hi - lo, "all_hold_needed": solutions_needed(1.0)}
    return values


def width_values(profiles: ManyProfiles) -> tuple[dict[str, Any], Table]:
    """Mean ± SEM single-block ΔFVU per task, block and width (the width profile), and how many widths have a mean."""
    values, rows = {}, []
    for t, by_width in profiles.widths.items():
        for b in ta.SINGLE_BLOCKS:
            points = 0
            cells = []
            for w, a in by_width.items():
                m, s, n = a.mean_sem("dfvu", b)
                values[f"width_dfvu_{t}_{b}_{w}"] = m
                values[f"width_dfvu_sem_{t}_{b}_{w}"] = s if math.isfinite(s) else 0.0
                points += int(n > 0)
                cells.append(mean_sem_text(m, s, n))
            values[f"width_points_{t}_{b}"] = points
            rows.append((t, f"−{schur.BLOCK_NAMES[b]}", *cells))
    summary = []
    for t, by_width in profiles.widths.items():
        for name in ta.PAPER_CLAIMS.get(t, ()):
            where = [str(w) for w, a in by_width.items() if ta.holds_in_means(name, a)]
            summary.append(f"{t}, {ta.ORDERING_TEXT[name]}: {'N_h = ' + ', '.join(where) if where else 'at no width'}")
    values["width_orderings_summary"] = "; ".join(summary) or "none of the chosen tasks is in the paper"
    values["width_orderings_summary_md"] = Markdown(as_myst(values["width_orderings_summary"]))  # for the prose
    headers = ("task", "ablation", *(f"ΔFVU, N_h = {w}" for w in profiles.sweep.widths))
    n = profiles.sweep.width_solutions
    caption = f"Single-block ΔFVU against width: mean ± SEM over {n} solutions (fewer where a block is empty)"
    return values, Table(headers, tuple(rows), caption=caption)
