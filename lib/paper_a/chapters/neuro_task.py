"""The task chapter (``book/neuro_task.md``, one page per task): its glue values and tables."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from IPython.display import Markdown

from lib.core import params
from lib.core.claims import Claim
from lib.core.lines import line
from lib.core.tables import Table, as_myst
from lib.paper_a import metrics
from lib.paper_a.task_analysis import (
    PAPER,
    PAPER_TRAINING,
    SINGLE_BLOCKS,
    TaskAnalysis,
    TaskStudy,
    holds_in_means,
    paper_orderings,
)
from lib.paper_a.task_analysis.orderings import GENERIC_ORDERINGS, ORDERING_TEXT
from lib.papers import schur_ablation

#: The title of the chapter's claims section (its anchor links the scorecard to it).
CLAIMS_SECTION = "The paper's claims for this task"


def both(task: str, values: dict[str, Any]) -> dict[str, Any]:
    """Each value under its name and under ``<name>_<task>`` (the other chapters read the task-suffixed names)."""
    out = {}
    for name, value in values.items():
        out[name] = value
        out[f"{name}_{task}"] = value
    return out


def check_safe_tolerance(safe_tolerance: float) -> float:
    """The chapter's ``safe_tolerance`` (ΔFVU at most this is negligible), a real ≥ 0."""
    return params.real("safe_tolerance", safe_tolerance, min=0.0)


def setup_values(study: TaskStudy, steps: int, safe_tolerance: float) -> dict[str, Any]:
    """The study's settings and the paper's training schedule, as glued by the chapter's first cell."""
    values = both(study.task, {"task_name": study.task, "n_seeds": len(study.seeds), "alpha_used": float(study.alpha)})
    training = {**PAPER_TRAINING, "steps": steps}
    for name in ("n_hidden", "lr", "batch_size"):
        values[f"train_{name}"] = training[name]
    values["train_steps"] = steps
    values["paper_epochs"] = schur_ablation.TASKS_TRAINING["epochs"]
    values["paper_batches"] = schur_ablation.TASKS_TRAINING["batches_per_epoch"]
    values["paper_seeds"] = schur_ablation.TASKS_TRAINING["seeds"]
    values["safe_tolerance"] = float(safe_tolerance)
    return values


def full_model_values(analysis: TaskAnalysis, n_heldout: int, task_claims: list[Claim]) -> dict[str, Any]:
    """The full model's held-out FVU (mean, SEM, median, worst and its seed), the paper's, and its claim's verdict."""
    task = analysis.task
    fvu = analysis.fvu_full()
    fvu_mean, fvu_sem = metrics.mean_sem(fvu)
    values = {"n_heldout_used": n_heldout}
    values |= both(task, {"fvu_full": fvu_mean})
    values |= both(task, {"fvu_full_sem": fvu_sem if math.isfinite(fvu_sem) else 0.0})
    values |= both(task, {"fvu_full_median": float(np.median(fvu)), "fvu_full_max": float(fvu.max())})
    values |= both(task, {"fvu_full_worst_seed": int(analysis.seeds[int(np.argmax(fvu))])})
    paper_fvu = schur_ablation.TASKS.get(task, {}).get("fvu_full")
    values["paper_fvu_full"] = "not in the paper" if paper_fvu is None else paper_fvu.text
    verdicts = {c.id: c.verdict for c in task_claims}
    values["verdict_fvu_full"] = verdicts.get(f"A4_{task}_fvu_full", "not testable here")
    return values


def ablation_values(analysis: TaskAnalysis, first: int = 3) -> dict[str, Any]:
    """Mean, SEM and count of ΔFVU, S_ΔT and removed mass per single block; the means over the first seeds."""
    task, values = analysis.task, {}
    for b in SINGLE_BLOCKS:
        for kind in ("dfvu", "sens", "mass"):
            m, s, n = analysis.mean_sem(kind, b)
            values |= both(task, {f"{kind}_{b}": m})
            values |= both(task, {f"{kind}_{b}_sem": s if math.isfinite(s) else 0.0})
            values |= both(task, {f"{kind}_{b}_n": n})
    head = TaskAnalysis(task, analysis.task_params, analysis.alpha, analysis.profiles[:first])
    for b in SINGLE_BLOCKS:
        values |= both(task, {f"dfvu_{b}_first3": head.mean_sem("dfvu", b)[0]})
        values |= both(task, {f"sens_{b}_first3": head.mean_sem("sens", b)[0]})
    return values


def ordering_fractions(analysis: TaskAnalysis) -> tuple[dict[str, Any], Table]:
    """How often each ordering holds over the solutions: the paper's claims for the task, then the generic ones."""
    task, values, rows = analysis.task, {}, []
    for name, test in paper_orderings(task).items():
        frac = analysis.fraction(test)
        values[f"frac_{task}_{name}"] = frac
        rows.append((f"the paper's claim: {ORDERING_TEXT[name]}", frac))
    for name, test in GENERIC_ORDERINGS.items():
        frac = analysis.fraction(test)
        values |= both(task, {f"frac_{name}": frac})
        rows.append((ORDERING_TEXT[name], frac))
    values["paper_claim"] = PAPER.get(task, {}).get("claim", "(not in the paper)")
    values["paper_claim_md"] = Markdown(as_myst(values["paper_claim"]))  # for the prose: its notation as maths
    table = Table(
        ("ordering", "fraction of solutions"),
        tuple(rows),
        ".2f",
        caption="How often each ordering holds, over the solutions",
    )
    return values, table


def claims_in_means(analysis: TaskAnalysis) -> tuple[dict[str, Any], Table]:
    """Each of the paper's claims for the task: solutions where it holds, and whether it holds in the seed means."""
    task, values, rows = analysis.task, {}, []
    for name, test in paper_orderings(task).items():
        k, n = analysis.count(test)
        in_means = holds_in_means(name, analysis)
        values[f"holds_in_means_{task}_{name}"] = bool(in_means)
        rows.append((ORDERING_TEXT[name], f"{k} of {n}", "holds" if in_means else "does not hold"))
    table = Table(
        ("the paper's claim", "solutions where it holds", "in the seed means"),
        tuple(rows) or (("none: the paper does not study this task", "—", "—"),),
        caption="The paper's claims for this task, per solution and in the means",
    )
    return values, table


def threshold_values(analysis: TaskAnalysis, gap_cut: float = line("split_gap")) -> dict[str, Any]:
    """The nearest block to the threshold, the n_R range, and the fraction of solutions with a block within gap_cut
    (the line "split_gap")."""
    task = analysis.task
    values = both(task, {"min_threshold_gap": analysis.min_threshold_gap()})
    values |= both(task, {"nR_min": int(analysis.n_R().min())})
    values |= both(task, {"nR_max": int(analysis.n_R().max())})
    values["gap_cut"] = gap_cut
    values |= both(task, {"frac_gap_below_001": analysis.fraction(lambda p: p.min_gap < gap_cut)})
    return values


def claims_table(task_claims: list[Claim]) -> tuple[dict[str, Any], Table]:
    """The one-line summary of the claims' verdicts (``claims_summary``; ``claims_summary_md``, the same as MyST
    Markdown with its notation as maths, for the prose's ``{glue:md}``) and the claims table."""
    summary = "; ".join(f"{c.statement}: {c.verdict_short}" for c in task_claims)  # in full: the scorecard
    table = Table(
        ("claim", "paper", "ours", "verdict", "robustness"),
        tuple((c.statement, c.paper_value, c.ours, c.verdict_short, c.robustness) for c in task_claims)
        or (("none: the paper does not study this task", "—", "—", "—", "—"),),
        ".3g",
        caption="The paper's claims for this task and their verdicts",
    )
    summary = summary or "none: the paper does not study it"
    return {"claims_summary": summary, "claims_summary_md": Markdown(as_myst(summary))}, table
