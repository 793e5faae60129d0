"""The chapter on what paper A left open (chapter ``paper_a_open``): its settings, measurements and first tables.

Every table that names an ablation takes ``labels`` (ablation name → its label, the figures' ``NAMES``), so the
tables and figures name the ablations alike. The controls (raw distance, the λ path, the coordinate systems,
ε-stabilizers) and the chapter's claims are in :mod:`lib.paper_a.chapters.paper_a_controls`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lib.core import budget, params
from lib.core.engine import run_jobs
from lib.core.lines import line
from lib.core.tables import Table
from lib.paper_a import conditioning as cd
from lib.paper_a import confound, rnn
from lib.paper_a import open_questions as oq
from lib.paper_a import perturbation as pt
from lib.paper_a import task_analysis as ta
from lib.paper_a.chapters.copy_task import CopyStudy

#: The three §4 tasks and the copy task (its dense-orthogonal controllers at the paper's width).
TASKS = ("flipflop", "sine", "context", "copy")
#: The ablations measured: each single block, and all three together.
ABLATIONS = tuple(confound.sub.BLOCK_SETS)


@dataclass(frozen=True, kw_only=True)
class OpenStudy:
    """The chapter's settings, validated on construction (``alpha`` by the task analyses' TaskStudy, before training).

    ``solutions``: the task chapters' solutions per task (seeds 0..solutions−1); ``copy_solutions``: the first dense
    orthogonal controllers of the copy chapter (``copy_chapter``: its settings as the book runs it), at most as many
    as it trains. ``lambdas``: the ablation path's grid (``n_lambda`` points from ``lambda_min`` to ``lambda_max``,
    each in [0, 1]); ``scales``: the basis test's ``n_scales`` log-spaced sizes from ``scale_min`` to ``scale_max``,
    each in (0, 1].
    """

    solutions: int = 10
    copy_solutions: int = 3
    alpha: float = 0.9
    n_eval: int = 64
    pc_level: float = 0.95
    draws: int = 20
    lambda_min: float = 0.0
    lambda_max: float = 1.0
    n_lambda: int = 5
    tolerance: float = line("safe_dfvu")
    mass_threshold: float = line("invariance_mass")
    mass_scan: Sequence[float] = (0.01, 0.02, 0.05, 0.1, 0.2)
    scale_min: float = 1e-6
    scale_max: float = 1e-2
    n_scales: int = 5
    stability_draws: int = 3
    draw_seed: int = 0
    copy_chapter: CopyStudy = field(default_factory=CopyStudy, repr=False)
    lambdas: np.ndarray = field(init=False, repr=False)
    scales: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        n_lambda = params.integer("n_lambda", self.n_lambda, min=2)
        n_scales = params.integer("n_scales", self.n_scales, min=1)
        checked = {
            "solutions": params.integer("solutions", self.solutions, min=2),
            "copy_solutions": params.integer(
                "copy_solutions", self.copy_solutions, min=2, max=self.copy_chapter.solutions
            ),
            "n_eval": params.integer("n_eval", self.n_eval, min=8, max=512),
            "pc_level": params.real("pc_level", self.pc_level, min=0.0, max=1.0, min_open=True),
            "draws": params.integer("draws", self.draws, min=2),
            "n_lambda": n_lambda,
            "lambdas": pt.lambda_grid(np.linspace(self.lambda_min, self.lambda_max, n_lambda)),
            "tolerance": params.real("tolerance", self.tolerance, min=0.0),
            "mass_threshold": params.real("mass_threshold", self.mass_threshold, min=0.0, max=1.0),
            "mass_scan": [params.real("mass_scan", m, min=0.0, max=1.0) for m in self.mass_scan],
            "n_scales": n_scales,
            "scales": cd.scale_grid(np.logspace(np.log10(self.scale_min), np.log10(self.scale_max), n_scales)),
            "stability_draws": params.integer("stability_draws", self.stability_draws, min=1),
            "draw_seed": params.integer("draw_seed", self.draw_seed, min=0),
        }
        for name, value in checked.items():
            object.__setattr__(self, name, value)
        self.work()

    def work(self) -> budget.Work:
        """The chapter's size (:func:`lib.core.budget.bound`): per solution, the random perturbations, the ablation
        path's points and the basis test's perturbations, each a roll-out of n_eval held-out trials."""
        book = budget.defaults(OpenStudy)
        per = lambda s: s["draws"] + s["n_lambda"] + s["n_scales"] * s["stability_draws"]  # noqa: E731
        mine = {k: getattr(self, k) for k in ("draws", "n_lambda", "n_scales", "stability_draws")}
        return budget.bound(
            "paper_a_open",
            budget.Term("solutions", 3 * self.solutions + self.copy_solutions,
                        3 * book["solutions"] + book["copy_solutions"], params=("solutions", "copy_solutions")),
            budget.Term("roll-outs per solution", per(mine), per(book),
                        params=("draws", "n_lambda", "n_scales", "stability_draws")),
            budget.Term("held-out trials", self.n_eval, book["n_eval"], params=("n_eval",)),
        )  # fmt: skip

    def glue_values(self) -> dict[str, Any]:
        """The settings the prose cites (held-out trials, PC levels, thresholds, draws, λ and scale grids)."""
        levels = [f"{level:.0%}".replace("%", " %") for level in confound.LEVELS]
        values = {
            "pc_levels_text": f"{', '.join(levels[:-1])} and {levels[-1]}",
            "n_eval": self.n_eval,
            "pc_level_used": self.pc_level,
            "mass_threshold_used": self.mass_threshold,
            "tolerance_used": self.tolerance,
            "draws_used": self.draws,
            "lambda_first": float(self.lambdas[0]),
            "lambda_last": float(self.lambdas[-1]),
            "n_lambda_used": int(self.lambdas.size),
            "stability_draws_used": self.stability_draws,
            "scale_min_used": float(self.scales[0]),
            "scale_max_used": float(self.scales[-1]),
        }
        return values | {f"mass_scan_{i}": float(m) for i, m in enumerate(self.mass_scan)}

    def analyse_solutions(self) -> dict[str, ta.TaskAnalysis]:
        """task → its analysis: the task chapters' solutions and the copy chapter's dense orthogonal controllers."""
        analyses = {t: ta.analyse_task(t, self.solutions, alpha=self.alpha, progress=False) for t in TASKS[:3]}
        copy_configs = self.copy_chapter.first("dense_orthogonal", self.copy_solutions, "copy_solutions")
        analyses["copy"] = ta.analyse_copy(copy_configs, alpha=self.alpha)
        return analyses

    def measure(
        self, analyses: dict[str, ta.TaskAnalysis], *, scheduler: str | None = None
    ) -> dict[str, list[confound.AblationRecord]]:
        """task → the records of every ablation of every solution (subspaces, controls, λ path), one job a solution
        (``lib.core.engine``: a local cluster, or the Dask scheduler at ``scheduler``)."""
        jobs = []
        for t in reversed(TASKS):  # the longest rollouts (copy) first
            a, n = analyses[t], min(self.n_eval, len(analyses[t].batch[0]))
            for p, s in zip(a.profiles, a.solutions, strict=True):
                jobs.append(
                    dict(
                        task=t, seed=p.seed, weights=rnn.as_float64(s.weights), batch=a.batch, alpha=self.alpha,
                        dfvu=p.dfvu, n_eval=n, draws=self.draws, lambdas=self.lambdas, pc_level=self.pc_level,
                        draw_base_seed=self.draw_seed,
                    )
                )  # fmt: skip
        done = run_jobs(confound.study_solution, jobs, scheduler=scheduler, desc="solutions")
        return {t: [r for rs in done for r in rs if r.task == t] for t in TASKS}


def conditions_table(analyses: dict[str, ta.TaskAnalysis]) -> tuple[dict[str, Any], Table]:
    """The solutions per task and the rule that defines each trial's condition; the number of solutions."""
    table = Table(
        ("task", "solutions", "condition of a trial"),
        tuple((t, len(analyses[t].profiles), confound.sub.CONDITION_RULES[t]) for t in TASKS),
        caption="The solutions and the conditions that define each task-conditioned manifold.",
    )
    return {"n_solutions": sum(len(analyses[t].profiles) for t in TASKS)}, table


def dimension_table(records: dict[str, list[confound.AblationRecord]]) -> Table:
    """The subspaces' dimensions per task (medians over solutions)."""
    return Table(
        ("task", "readout", "PCs at 90 %", "95 %", "99 %", "manifold", "U"),
        tuple((t, *oq.dimension_rows(records[t])) for t in TASKS),
        ".0f",
        caption="Dimensions of the subspaces (medians over solutions; N_h = 64, copy 72).",
    )


def share_table(records: dict[str, list], which: str, labels: dict[str, str], caption: str) -> Table:
    """The energy share of Δh(t) (``which="dh"``) or of ΔW h(t) (``"dw"``) in each subspace, per task and ablation."""
    rows = [(t, labels[row[0]], *row[1:]) for t in TASKS for row in oq.fraction_rows(records[t], ABLATIONS, which)]
    heads = ("task", "ablation", "mass", "ΔFVU", "readout", "PC90", "PC95", "PC99", "manifold", "U")
    return Table(heads, tuple(rows), (".3g", ".3g", ".3f", ".3g", *[".2f"] * 6), caption=caption)


def confound_table(records: dict[str, list], tolerance: float, mass_threshold: float) -> tuple[dict[str, Any], Table]:
    """Per task and pooled: does the projection on U explain ΔFVU better than the block? (§5's confound)"""
    values = {}
    summaries = {t: oq.confound_summary(records[t], tolerance, mass_threshold) for t in TASKS}
    for t, s in summaries.items():
        values |= {f"{key}_{t}": value for key, value in s.items()}
        for part in ("in", "out", "total"):  # the direct action's energy inside U, outside, in all
            values[f"energy_{part}_{t}"] = float(sum(getattr(r, f"energy_{part}") for r in records[t]))
    pooled = [r for t in TASKS for r in records[t] if r.mass > 0]
    y_all = oq.log_damage([r.dfvu for r in pooled])
    values["r2_identity_pooled"] = oq.adjusted_r2(y_all, oq.one_hot([r.ablation for r in pooled]))
    values["r2_task_identity_pooled"] = oq.adjusted_r2(y_all, oq.one_hot([f"{r.task} {r.ablation}" for r in pooled]))
    values["r2_projection_pooled"] = oq.adjusted_r2(y_all, np.log10([max(r.action_in, 1e-300) for r in pooled]))
    values["rho_dw_union_pooled"] = oq.spearman([r.frac_dw["union"] for r in pooled], [r.dfvu for r in pooled])
    cols = ("rho_dw_union", "rho_dh_union", "rho_dw_readout", "r2_identity", "r2_projection",
            "r2_action", "n_damaging", "frac_outside_harmless", "median_share_inside",
            "n_harmless_mass", "median_enrichment_harmless", "median_enrichment_damaging", "verdict")  # fmt: skip
    heads = ("task", "ρ(ΔFVU, ΔW h in U)", "ρ(ΔFVU, Δh in U)", "ρ(ΔFVU, ΔW h in readout)", "R² block",
             "R² projection", "R² action size", "damaging", "outside part harmless",
             "median damage share inside", "harmless with mass", "enrichment: harmless",
             "enrichment: damaging", "the confound")  # fmt: skip
    table = Table(
        heads,
        tuple((t, *[summaries[t][c] for c in cols]) for t in TASKS),
        ".2f",
        caption="The confound per task: rank correlations, adjusted R², the inside/outside control.",
    ).transposed("per task")
    return values, table
