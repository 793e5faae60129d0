"""The task-dependence chapter (chapter ``task_dependence``): every task's solutions side by side, and robustness.

Its settings (:class:`DependenceStudy`), the solutions it reads (the task and copy chapters' cached models, and the
variants of the open task choices), and each section's glue values and table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lib.core import budget, claims, params
from lib.core.claims import Claim
from lib.core.lines import line
from lib.core.tables import Table
from lib.paper_a import schur, train
from lib.paper_a import task_analysis as ta
from lib.paper_a.chapters.copy_task import CopyStudy
from lib.papers import schur_ablation

#: The three §4 tasks (the copy task joins them when the study includes it).
TASKS = ("flipflop", "sine", "context")
#: The section the claim "no single coupling is uniformly safe" links to.
SAFE_SECTION = "Is any coupling uniformly safe to remove?"


@dataclass(frozen=True, kw_only=True)
class DependenceStudy:
    """The chapter's settings, validated on construction (before any training).

    ``steps`` is validated by the solutions' TrainConfig and ``alpha`` by :class:`lib.paper_a.task_analysis.TaskStudy`
    (both before any training); the rest here. ``solutions``: the task chapters' solutions per task (seeds
    0..solutions−1); ``variant_solutions``: per variant of the open task choices; ``copy_solutions``: the first dense
    orthogonal solutions of the copy chapter, at most as many as it trains (``copy_chapter``: its settings as the book
    runs it). ``alphas``: the α-scan's grid, ``alpha_min`` to ``alpha_max``.
    """

    solutions: int = 10
    steps: int = ta.PAPER_TRAINING["steps"]
    alpha: float = schur.PAPER_ALPHA
    alpha_min: float = 0.8
    alpha_max: float = 0.95
    alpha_step: float = 0.01
    safe_tolerance: float = line("safe_dfvu")
    variant_solutions: int = 3
    include_copy: bool = True
    copy_solutions: int = 3
    copy_chapter: CopyStudy = field(default_factory=CopyStudy, repr=False)

    def __post_init__(self):
        alpha_min = params.real("alpha_min", self.alpha_min, min=0.0, max=1.0, min_open=True)
        checked = {
            "solutions": params.integer("solutions", self.solutions, min=2),
            "alpha_min": alpha_min,
            "alpha_max": params.real("alpha_max", self.alpha_max, min=alpha_min, max=1.0),
            "alpha_step": params.real("alpha_step", self.alpha_step, min=0.0, min_open=True),
            "safe_tolerance": params.real("safe_tolerance", self.safe_tolerance, min=0.0),
            "variant_solutions": params.integer("variant_solutions", self.variant_solutions, min=2),
            "include_copy": params.boolean("include_copy", self.include_copy),
            "copy_solutions": params.integer(
                "copy_solutions", self.copy_solutions, min=1, max=self.copy_chapter.solutions
            ),
        }
        for name, value in checked.items():
            object.__setattr__(self, name, value)
        self.work()

    def work(self) -> budget.Work:
        """The chapter's size (:func:`lib.core.budget.bound`): the models it trains where the task chapters have
        not (solutions and variants × Adam steps), then the α-scan over every solution."""
        book = budget.defaults(DependenceStudy)
        scan = lambda lo, hi, step: math.floor((hi - lo) / step + 0.5) + 1  # noqa: E731
        points, book_points = scan(self.alpha_min, self.alpha_max, self.alpha_step), scan(
            book["alpha_min"], book["alpha_max"], book["alpha_step"])  # fmt: skip
        models = len(TASKS) * self.solutions + 4 * self.variant_solutions
        book_models = len(TASKS) * book["solutions"] + 4 * book["variant_solutions"]
        named = ("solutions", "variant_solutions")
        return budget.bound(
            "task_dependence",
            parts=[
                (0.5, (budget.Term("models", models, book_models, params=named),
                       budget.Term("steps", self.steps, book["steps"], params=("steps",)))),
                (0.5, (budget.Term("models", models, book_models, params=named),
                       budget.Term("α values", points, book_points, params=("alpha_min", "alpha_max", "alpha_step")))),
            ],
            arrays={"the α-scan's profiles": budget.floats(models, points, 64)},
        )  # fmt: skip

    @property
    def alphas(self) -> np.ndarray:
        """The α-scan's grid: alpha_min to alpha_max in steps of alpha_step (rounded to 4 decimals)."""
        return np.round(np.arange(self.alpha_min, self.alpha_max + self.alpha_step / 2, self.alpha_step), 4)

    def glue_values(self) -> dict[str, Any]:
        """The copy chapter's width and held-out size, the replay lags scored, the solutions and their triples."""
        return {
            "copy_n_hidden": self.copy_chapter.n_hidden,
            "copy_heldout": self.copy_chapter.heldout_trials,
            "copy_lags": ta.COPY_LAGS,
            "n_seeds": self.solutions,
            "n_triples": math.comb(self.solutions, 3),
        }

    def analyse_every_task(self) -> dict[str, ta.TaskAnalysis]:
        """task → its analysis: the task chapters' solutions and, if included, the copy chapter's (replay FVU)."""
        analyses = {t: ta.analyse_task(t, self.solutions, alpha=self.alpha, steps=self.steps) for t in TASKS}
        if self.include_copy:
            configs = self.copy_chapter.first("dense_orthogonal", self.copy_solutions, "copy_solutions")
            n_heldout = self.copy_chapter.heldout_trials
            analyses["copy"] = ta.analyse_copy(configs, alpha=self.alpha, n_heldout=n_heldout, progress=True)
        return analyses

    def analyse_variants(self) -> dict[str, dict[str, ta.TaskAnalysis]]:
        """task → variant label → the analysis of ``variant_solutions`` solutions trained under that variant."""
        train.load_or_train_many(  # every variant model first, all at once (worker processes)
            ta.train_config(t, seed, tp, steps=self.steps)
            for t, variants in ta.TASK_VARIANTS.items()
            for tp in variants.values()
            for seed in range(self.variant_solutions)
        )
        return {
            t: {
                label: ta.analyse_task(t, self.variant_solutions, alpha=self.alpha, task_params=tp, steps=self.steps)
                for label, tp in variants.items()
            }
            for t, variants in ta.TASK_VARIANTS.items()
        }


def profile_rows(analyses: dict[str, ta.TaskAnalysis]) -> tuple[list[tuple[str, list[float]]], list[str]]:
    """The heatmap's rows (one per solution: its ΔFVU for every ablated subset) and columns (the subsets' labels)."""
    subsets = [s for s in schur.all_subsets() if s]
    rows = [
        (f"{t} s{p.seed}", [p.dfvu[ta.subset_key(s)] for s in subsets]) for t, a in analyses.items() for p in a.profiles
    ]
    return rows, [schur.label(s) for s in subsets]


def safe_ablations(analyses: dict[str, ta.TaskAnalysis], tolerance: float) -> tuple[dict[str, Any], Claim, Table]:
    """How often each ablated subset is safe (ΔFVU ≤ tolerance) per task and overall; the claim that none is always."""
    all_analyses = list(analyses.values())
    n_all = sum(len(a.profiles) for a in all_analyses)
    values, rows, uniformly_safe = {"safe_tolerance": float(tolerance)}, [], []
    for s in (s for s in schur.all_subsets() if s):
        key = ta.subset_key(s)
        per_task = [ta.safe_fraction([a], key, tolerance) for a in all_analyses]
        overall = ta.safe_fraction(all_analyses, key, tolerance)
        n_empty = sum(a.n_empty(key) for a in all_analyses)
        tag = key.replace("+", "_")
        values[f"frac_safe_{tag}"] = overall
        values[f"n_empty_{tag}"] = n_empty
        if overall == 1.0:
            uniformly_safe.append(schur.label(s))
        rows.append((schur.label(s), *per_task, overall, f"{n_empty} of {n_all}"))
    values["n_uniformly_safe"] = len(uniformly_safe)
    values["uniformly_safe"] = ", ".join(uniformly_safe) if uniformly_safe else "none"
    values["n_solutions_all"] = n_all
    for b in ta.SINGLE_BLOCKS:
        values[f"worst_dfvu_{b}"] = max(float(np.nanmax(a.dfvu(b), initial=-np.inf)) for a in all_analyses)
    for t in analyses:
        values[f"frac_safe_CC_{t}"] = ta.safe_fraction([analyses[t]], "CC", tolerance)
    single_safe = [b for b in ta.SINGLE_BLOCKS if ta.safe_fraction(all_analyses, b, tolerance) == 1.0]
    no_safe = Claim(
        "A4_no_uniformly_safe",
        "A",
        "§4",
        "no single Schur coupling is uniformly safe to remove (over every task and solution)",
        "none",
        ", ".join(schur.BLOCK_NAMES[b] for b in single_safe) or "none",
        f"no single block with ΔFVU ≤ {tolerance:g} in every solution where it is not empty",
        holds=not single_safe,
        link="task_dependence.html#" + claims.section_anchor(SAFE_SECTION),
    )
    table = Table(
        ("ablation", *[f"safe in {t}" for t in analyses], "safe overall", "empty"),
        tuple(rows),
        ".2f",
        caption=f"Fraction of solutions in which each ablation is safe (ΔFVU ≤ {tolerance})",
    )
    return values, no_safe, table


def seed_robustness(analyses: dict[str, ta.TaskAnalysis], tolerance: float) -> tuple[dict[str, Any], Table]:
    """Each of the paper's orderings over solutions, in the means and over 3-seed subsets; the tasks' verdicts."""
    values, rows = {}, []
    for t in TASKS:
        for name in ta.PAPER_CLAIMS[t]:
            a = analyses[t]
            per_solution = a.fraction(ta.paper_orderings(t)[name])
            in_means = ta.holds_in_means(name, a)
            triples = ta.subset_fraction(a, name, 3)
            values[f"frac_triples_{t}_{name}"] = triples
            values[f"frac_solutions_{t}_{name}"] = per_solution
            values[f"holds_in_means_{t}_{name}"] = bool(in_means)
            values[f"in_means_{t}_{name}"] = "in the means" if in_means else "not in the means"
            rows.append((t, ta.ORDERING_TEXT[name], per_solution, "yes" if in_means else "no", triples))
    for t in TASKS:  # the task chapters' verdicts, recomputed from the same solutions
        for c in ta.task_claims(analyses[t], tolerance):
            values[f"verdict_{c.id}"] = c.verdict
    chain = [analyses["flipflop"].mean_sem("dfvu", b)[0] for b in ("CR", "CC", "RR")]
    values["flipflop_chain_in_means"] = bool(chain[0] > chain[1] > chain[2])
    headers = ("task", "ordering", "fraction of solutions", "in the means", "fraction of 3-seed subsets")
    return values, Table(headers, tuple(rows), ".2f", caption="The paper's orderings over solutions and triples")


def alpha_scan_table(scans: dict[str, ta.AlphaScan]) -> tuple[dict[str, Any], Table]:
    """Per task: the range of n_R, how many solutions' n_R moves, how many flip ΔFVU(−T_CC) − ΔFVU(−T_C→R)."""
    alphas = next(iter(scans.values())).alphas
    values = {
        "alpha_lo": float(alphas[0]),
        "alpha_hi": float(alphas[-1]),
        "paper_alpha": schur_ablation.ALPHA,
        "paper_alpha_lo": min(schur_ablation.TABLE1_ALPHAS),
        "paper_alpha_hi": max(schur_ablation.TABLE1_ALPHAS),
    }
    rows = []
    for t, s in scans.items():
        moves = float(s.n_R_changes().mean())
        flips = float(s.ordering_flips("CC", "CR").mean())
        values[f"frac_nR_moves_{t}"] = moves
        values[f"frac_CC_CR_flips_{t}"] = flips
        rows.append((t, f"{s.n_R.min()}–{s.n_R.max()}", moves, flips))
    headers = (
        "task",
        "n_R over the scan",
        "solutions whose n_R moves",
        "solutions where ΔFVU(−T_CC) − ΔFVU(−T_C→R) flips sign",
    )
    return values, Table(headers, tuple(rows), ".2f", caption="What the α-scan does to each task's solutions")


def threshold_gap_table(analyses: dict[str, ta.TaskAnalysis]) -> tuple[dict[str, Any], Table]:
    """Per task: the smallest and median distance of the nearest block modulus to α·ρ, and how often it is small."""
    values, rows, cut = {}, [], line("split_gap")  # a block at the threshold: a gap below the line
    for t in TASKS:
        a = analyses[t]
        gaps = np.array([p.min_gap for p in a.profiles])
        values[f"median_gap_{t}"] = float(np.median(gaps))
        values[f"min_gap_{t}"] = a.min_threshold_gap()
        rows.append((t, a.min_threshold_gap(), float(np.median(gaps)), float(np.mean(gaps < cut))))
    table = Table(
        ("task", "smallest gap", "median gap", f"solutions with a gap < {cut}"),
        tuple(rows),
        (".4f", ".4f", ".4f", ".2f"),
        caption="Distance of the nearest block modulus to the threshold, | |λ|/ρ − α |",
    )
    return values, table


def variant_comparison(
    study: DependenceStudy,
    analyses: dict[str, ta.TaskAnalysis],
    variants: dict[str, dict[str, ta.TaskAnalysis]],
    own_label: str,
) -> tuple[dict[str, Any], dict[str, ta.TaskAnalysis], Table]:
    """Each task's first solutions under the task chapters' own choices (labelled ``own_label``) and under each variant:
    the glue values, the figure's groups (label → analysis) and the table."""
    values, rows, groups = {"variant_seeds": study.variant_solutions}, [], {}  # the glue keeps its name
    for t in TASKS:
        main = ta.TaskAnalysis(t, {}, analyses[t].alpha, analyses[t].profiles[: study.variant_solutions])
        for label, a in {own_label: main, **variants[t]}.items():
            groups[f"{t}: {label}"] = a
            fractions = "; ".join(
                f"{ta.ORDERING_TEXT[n]}: {a.fraction(f):.2f}" for n, f in ta.paper_orderings(t).items()
            )
            dfvu = [a.mean_sem("dfvu", b)[0] for b in ta.SINGLE_BLOCKS]
            rows.append((t, label, float(a.fvu_full().mean()), *dfvu, fractions))
    for t, vs in variants.items():
        main = analyses[t].profiles[: study.variant_solutions]
        base = ta.TaskAnalysis(t, {}, analyses[t].alpha, main)
        for kind, b in ((kind, b) for kind in ("dfvu", "sens") for b in ta.SINGLE_BLOCKS):
            # the book's choice on the same seeds, beside each variant (the findings page's discrepancy causes)
            values[f"variant_base_{kind}_{t}_{b}"] = float(base.mean_sem(kind, b)[0])
        for i, (label, a) in enumerate(vs.items()):
            values[f"variant_label_{t}_{i}"] = label
            values[f"variant_fvu_{t}_{i}"] = float(a.fvu_full().mean())
            for kind, b in ((kind, b) for kind in ("dfvu", "sens") for b in ta.SINGLE_BLOCKS):
                values[f"variant_{kind}_{t}_{i}_{b}"] = float(a.mean_sem(kind, b)[0])
            for n, f in ta.paper_orderings(t).items():
                values[f"variant_frac_{t}_{i}_{n}"] = a.fraction(f)
    headers = ("task", "variant", "FVU", "ΔFVU −T_RR", "ΔFVU −T_C→R", "ΔFVU −T_CC", "paper's orderings: fraction")
    table = Table(headers, tuple(rows), ".3g", caption="Seeds 0–2 under each variant of the open choices")
    return values, groups, table
