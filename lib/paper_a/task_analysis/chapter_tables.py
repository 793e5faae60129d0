"""The tables the task chapters show: the task's specification and ours beside the paper's numbers."""

from __future__ import annotations

from typing import Any

from lib.core.tables import Table, mean_sem_text, paths_as_code
from lib.paper_a import schur
from lib.paper_a.task_analysis.analysis import TaskAnalysis
from lib.paper_a.task_analysis.configuration import SINGLE_BLOCKS, paper_value, task_params_for
from lib.paper_a.tasks import get_task


def spec_table(task: str, task_params: dict[str, Any] | None = None) -> Table:
    """The task's specification (sizes, parameters, epochs, noise, target, source, choices) as a two-column table."""
    spec = get_task(task)
    values = {**spec.defaults, **task_params_for(task, task_params)}
    meta = spec.metadata
    rows = [
        ("inputs / outputs", f"{spec.n_inputs} / {spec.n_outputs}"),
        ("parameters", ", ".join(f"`{k}` = {v}" for k, v in values.items())),  # names a reader types: code
        *[(label, paths_as_code(str(meta[k]))) for k, label in _META_ROWS if k in meta],
    ]
    return Table(("", task), tuple(rows))


_META_ROWS = (
    ("epochs", "epochs"),
    ("noise", "noise"),
    ("target", "target"),
    ("source", "source"),
    ("anchor", "anchor code"),
    ("paper_states", "the paper states"),
    ("we_choose", "we choose"),
)


def comparison_table(analysis: TaskAnalysis, first: int = 3) -> Table:
    """Single-block ΔFVU and S_ΔT: ours over all solutions, ours over the first ``first`` seeds, the paper's."""
    head = analysis.profiles[:first]
    sub = TaskAnalysis(analysis.task, analysis.task_params, analysis.alpha, head)
    rows = []
    for kind, name in (("dfvu", "ΔFVU"), ("sens", "S_ΔT")):
        for b in SINGLE_BLOCKS:
            ref = paper_value(analysis.task, kind, b)
            rows.append(
                (
                    f"{name}(−{schur.BLOCK_NAMES[b]})",
                    mean_sem_text(*analysis.mean_sem(kind, b)),
                    mean_sem_text(*sub.mean_sem(kind, b)),
                    "—" if ref is None else f"{ref[0]:.3g} ± {ref[1]:.2g}",
                )
            )
    n = len(analysis.profiles)
    headers = ("", f"ours ({n} seeds)", f"ours (seeds 0–{len(head) - 1})", "paper (3 seeds)")
    return Table(headers, tuple(rows), caption="Single-block ΔFVU and S_ΔT, mean ± SEM")
