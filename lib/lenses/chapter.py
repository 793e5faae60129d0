"""The chapter ``two_lenses``: its settings, the solutions it reads, and each section's glue values and tables.

The solutions are the task chapters' cached models (the first ``solutions`` of each §4 task) and the copy
chapter's dense-orthogonal controllers (its first ``copy_solutions``), each scored on the held-out set the
task-dependence chapter uses, with its tolerance for "safe" (ΔFVU ≤ ``safe_tolerance``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from IPython.display import Markdown

from lib.core import budget, params
from lib.core.lines import line
from lib.core.progress import bar
from lib.core.tables import Table, as_myst
from lib.lenses import scores
from lib.lenses.solution import SolutionLens, check_taus, lens_solution
from lib.paper_a import schur, train
from lib.paper_a import task_analysis as ta
from lib.paper_a.chapters.copy_task import CopyStudy
from lib.paper_b.lifting import TAU, check_tau

#: The §4 tasks, then the copy task.
TASKS = ("flipflop", "sine", "context", "copy")


@dataclass(frozen=True, kw_only=True)
class LensStudy:
    """The chapter's settings, validated on construction (before anything runs).

    ``solutions``: the task chapters' solutions per §4 task (seeds 0..solutions−1); ``copy_solutions``: the first
    dense orthogonal controllers of the copy chapter (``copy_chapter``: its settings as the book runs it), at most as
    many as it trains.
    """

    solutions: int = 10
    copy_solutions: int = 3
    alpha: float = schur.PAPER_ALPHA
    safe_tolerance: float = line("safe_dfvu")
    probe_rows: int = 4096
    tau: float = TAU
    taus: tuple[float, ...] = (1e-4, 1e-3, 1e-2, 1e-1)
    path_points: int = 6
    rank_threshold: float = line("ranks_ablations")
    flow_steps: int = 5
    flow_rate: float = 0.5
    flow_probe_rows: int = 2048
    copy_chapter: CopyStudy = field(default_factory=CopyStudy, repr=False)

    def __post_init__(self):
        checked = {
            "solutions": params.integer("solutions", self.solutions, min=2, max=10),
            "copy_solutions": params.integer(
                "copy_solutions", self.copy_solutions, min=0, max=self.copy_chapter.solutions
            ),
            "alpha": schur.check_alpha(self.alpha),
            "safe_tolerance": params.real("safe_tolerance", self.safe_tolerance, min=0.0),
            "probe_rows": params.integer("probe_rows", self.probe_rows, min=1),
            "tau": check_tau(self.tau),
            "taus": check_taus(self.taus),
            "path_points": params.integer("path_points", self.path_points, min=2),
            "rank_threshold": params.real("rank_threshold", self.rank_threshold, min=-1.0, max=1.0),
            "flow_steps": params.integer("flow_steps", self.flow_steps, min=1),
            "flow_rate": params.real("flow_rate", self.flow_rate, min=0.0, max=1.0, min_open=True),
            "flow_probe_rows": params.integer("flow_probe_rows", self.flow_probe_rows, min=1),
        }
        for name, value in checked.items():
            object.__setattr__(self, name, value)
        object.__setattr__(self, "taus", tuple(sorted(set(self.taus) | {self.tau})))
        self.work()

    def work(self) -> budget.Work:
        """The chapter's size (:func:`lib.core.budget.bound`): the probe Jacobians (rows × the RNN's parameters) of
        every solution, the near-null flows and the ablation paths; the largest array is one probe Jacobian."""
        book = budget.defaults(LensStudy)
        width = self.copy_chapter.n_hidden
        columns = width * (width + 16)  # W_hh and the widest input and readout (the copy task's 8 + 8)
        solutions = (budget.Term("solutions", 3 * self.solutions + self.copy_solutions, 3 * book["solutions"]
                                 + book["copy_solutions"], params=("solutions", "copy_solutions")))  # fmt: skip
        return budget.bound(
            "two_lenses",
            parts=[
                (0.5, (solutions, budget.Term("probe rows", self.probe_rows, book["probe_rows"], 2,
                                              params=("probe_rows",)))),
                (0.3, (budget.Term("flow steps × probe rows²", self.flow_steps * self.flow_probe_rows ** 2,
                                   book["flow_steps"] * book["flow_probe_rows"] ** 2,
                                   params=("flow_steps", "flow_probe_rows")),)),
                (0.2, (solutions, budget.Term("path points", self.path_points, book["path_points"],
                                              params=("path_points",)))),
            ],
            arrays={
                "a probe Jacobian (rows × parameters), with its SVD's factors": budget.floats(
                    max(self.probe_rows, self.flow_probe_rows), columns, copies=3),
                "its Gram matrix and eigenvectors": budget.floats(self.probe_rows, self.probe_rows, copies=3),
            },
        )  # fmt: skip

    def jobs(self, solutions: int | None = None, copy_solutions: int | None = None):
        """(task, cached solutions, held-out batch) per task: the first ``solutions`` and ``copy_solutions`` (default:
        the study's) of each, the copy task's from the copy chapter's settings (``copy_chapter``)."""
        copy_chapter = self.copy_chapter
        solutions = self.solutions if solutions is None else solutions
        copy_solutions = self.copy_solutions if copy_solutions is None else copy_solutions
        jobs = [(t, ta.train_solutions(t, solutions, progress=False), ta.heldout_batch(t)) for t in TASKS[:3]]
        if copy_solutions:
            configs = copy_chapter.first("dense_orthogonal", copy_solutions, "copy_solutions")
            batch = ta.heldout_batch("copy", {"replay_steps": ta.COPY_LAGS}, copy_chapter.heldout_trials)
            jobs.append(("copy", train.load_or_train_many(configs, progress=False), batch))
        return jobs

    def lenses(self) -> dict[str, list[SolutionLens]]:
        """task → the lens of each of its solutions (the first solution of each task also follows the λ-path)."""
        jobs = self.jobs()
        out: dict[str, list[SolutionLens]] = {}
        with bar(sum(len(j[1]) for j in jobs), desc="two lenses") as progress:
            for task, solutions, batch in jobs:
                out[task] = []
                for i, s in enumerate(solutions):
                    out[task].append(
                        lens_solution(
                            task,
                            s.config.seed,
                            s.weights,
                            batch,
                            alpha=self.alpha,
                            probe_rows=self.probe_rows,
                            taus=self.taus,
                            path_points=self.path_points if i == 0 else 0,
                        )  # fmt: skip
                    )
                    progress.update()
        return out


def records(lenses: dict[str, list[SolutionLens]], study: LensStudy) -> list[dict[str, Any]]:
    """One row per (task, solution, non-empty ablation): real and predicted ΔFVU, mass, null fractions, safe."""
    rows = []
    for task, sols in lenses.items():
        for L in sols:
            for key in L.keys:
                rows.append(
                    {
                        "task": task,
                        "owner": f"{task}:{L.seed}",
                        "key": key,
                        "dfvu": L.dfvu[key],
                        "gn": L.dfvu_gn[key],
                        "mass": L.mass[key],
                        "change": L.change[key],
                        "change_pred": L.change_pred[key],
                        "safe": L.dfvu[key] <= study.safe_tolerance,
                        **{f"null_{t:g}": L.null[t][key] for t in study.taus},
                    }  # fmt: skip
                )
    return rows


def _col(rows, name, task=None):
    return np.array([r[name] for r in rows if task is None or r["task"] == task])


def prediction_values(rows, study: LensStudy) -> tuple[dict[str, Any], Table]:
    """Item 2: per task the rank correlation of predicted and real ΔFVU and output change, the factor error."""
    values: dict[str, Any] = {"rank_threshold": study.rank_threshold, "safe_tolerance": study.safe_tolerance}
    table_rows, ok = [], []
    for task in [*TASKS, None]:
        name = task or "all"
        sub = [r for r in rows if task is None or r["task"] == task]
        if not sub:
            continue
        rho = scores.spearman(_col(sub, "gn"), _col(sub, "dfvu"))
        rho_out = scores.spearman(_col(sub, "change_pred"), _col(sub, "change"))
        f = np.abs(scores.log_factor(_col(sub, "gn"), _col(sub, "dfvu")))
        within = float(np.nanmean(f <= math.log10(2))) if np.isfinite(f).any() else math.nan
        values.update({f"rho_gn_{name}": rho, f"rho_out_{name}": rho_out, f"within2_{name}": within})
        values[f"n_ablations_{name}"] = len(sub)
        if task is not None:
            ok.append(rho >= study.rank_threshold)
        table_rows.append((name, len(sub), rho, rho_out, float(np.nanmedian(f)), within))
    f_all = np.abs(scores.log_factor(_col(rows, "gn"), _col(rows, "dfvu")))
    safe, mass = _col(rows, "safe"), _col(rows, "mass")
    small = mass <= np.median(mass)
    values["within2_safe"] = float(np.nanmean(f_all[safe] <= math.log10(2)))
    values["within2_unsafe"] = float(np.nanmean(f_all[~safe] <= math.log10(2)))
    values["within2_small_mass"] = float(np.nanmean(f_all[small] <= math.log10(2)))
    values["within2_large_mass"] = float(np.nanmean(f_all[~small] <= math.log10(2)))
    values["median_mass"] = float(np.median(mass))
    by_damage = values["within2_safe"] > values["within2_unsafe"]
    by_mass = values["within2_small_mass"] > values["within2_large_mass"]
    values["linear_where"] = (
        ("the linear picture holds more often where the damage is small" if by_damage else
         "the linear picture is no better where the damage is small")
        + (" and where little mass is removed" if by_mass else ", and no better where little mass is removed")
    )  # fmt: skip
    values["verdict_L2_gn_ranks"] = "holds" if all(ok) else "fails"
    headers = ("task", "ablations", "ρ(ΔFVU)", "ρ(‖Δŷ‖)", "median |log₁₀ factor|", "within ×2")
    caption = "Gauss–Newton prediction against the real ablation: Spearman ρ and factor error"
    return values, Table(headers, tuple(table_rows), ".3f", caption)


def safe_values(rows, study: LensStudy) -> tuple[dict[str, Any], Table, Table, dict[str, Any]]:
    """Item 3: ROC AUC of each predictor of "safe" (null fraction at each τ, removed mass, block identity, GN)."""
    safe = _col(rows, "safe").astype(bool)
    identity = scores.leave_one_out_rates(_col(rows, "key"), _col(rows, "owner"), safe)
    predictors = {
        "null": _col(rows, f"null_{study.tau:g}"),
        "mass": -_col(rows, "mass"),
        "identity": np.nan_to_num(identity, nan=0.5),
        "gn": -_col(rows, "gn"),
    }
    values: dict[str, Any] = {"n_cases": int(safe.size), "n_safe": int(safe.sum()), "tau": study.tau}
    values.update({f"auc_{k}": scores.auc(v, safe) for k, v in predictors.items()})
    per_task = []
    for t in TASKS:
        sel = _col(rows, "task") == t
        values[f"n_safe_{t}"] = int(safe[sel].sum())
        aucs = [scores.auc(predictors[k][sel], safe[sel]) for k in ("null", "mass", "identity")]
        aucs = [None if math.isnan(a) else a for a in aucs]
        per_task.append((t, int(safe[sel].sum()), int((~safe[sel]).sum()), *aucs))
    values["n_tasks_with_safe"] = sum(values[f"n_safe_{t}"] > 0 for t in TASKS)
    null = predictors["null"]
    values["null_mean_safe"] = float(null[safe].mean()) if safe.any() else math.nan
    values["null_mean_unsafe"] = float(null[~safe].mean()) if (~safe).any() else math.nan
    larger = values["null_mean_unsafe"] > values["null_mean_safe"]  # False where either kind is missing (NaN)
    values["null_fraction_order"] = (
        "larger for the unsafe ablations" if larger else "not larger for the unsafe ablations"
    )
    rows_tau = []
    for i, tau in enumerate(study.taus):
        a = scores.auc(_col(rows, f"null_{tau:g}"), safe)
        values[f"auc_null_tau{i}"] = a
        rows_tau.append((f"null fraction, τ = {tau:g}", a))
    better = values["auc_null"] > max(values["auc_mass"], values["auc_identity"])
    values["verdict_L3_null_predicts_safe"] = "holds" if better else "fails"
    rows_tab = [("removed mass (less is safer)", values["auc_mass"]), ("block identity", values["auc_identity"])]
    rows_tab += [*rows_tau, ("Gauss–Newton ΔFVU", values["auc_gn"])]
    table = Table(("predictor of ΔFVU ≤ tolerance", "ROC AUC"), tuple(rows_tab), ".3f", "Who predicts a safe ablation")
    head = ("task", "safe", "not safe", "AUC null fraction", "AUC removed mass", "AUC block identity")
    by_task = Table(head, tuple(per_task), ".3f", "Per task (an AUC needs safe and unsafe ablations)")
    return values, table, by_task, {"safe": safe, "dfvu": _col(rows, "dfvu"), **predictors}


def roc_curves(predictors: dict[str, np.ndarray], study: LensStudy) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The ROC curve of each predictor of "safe" (the figure's left panel)."""
    names = {"null": f"null fraction (τ = {study.tau:g})", "mass": "removed mass", "identity": "block identity"}
    names["gn"] = "Gauss–Newton ΔFVU"
    return {label: scores.roc_curve(predictors[k], predictors["safe"]) for k, label in names.items()}


def attribution_values(lenses: dict[str, list[SolutionLens]], study: LensStudy) -> tuple[dict[str, Any], Table]:
    """Item 4: S_i against |T_ij| (rank correlation) and the mean S_i per block, per task (mean over solutions).

    Two verdicts on them: ``sens_follows_T`` says whether S_i follows |T_ij| closely (Spearman ρ ≥ the study's
    ``rank_threshold``, the chapter's bar for a strong monotone relation) in some task; ``top_block_varies`` whether
    the block with the largest relative share of the most sensitive tenth differs between tasks (``n_top_blocks``).
    """
    values, rows = {}, []
    for task, sols in lenses.items():
        rho = [scores.spearman(L.sens.ravel(), L.abs_T.ravel()) for L in sols]
        per_block, share_top = {}, {}
        for b in schur.ABLATION_BLOCKS:
            per_block[b] = float(np.nanmean([_block_mean(L, b) for L in sols]))
            share_top[b] = float(np.nanmean([_top_share(L, b) for L in sols]))
        values[f"rho_sens_T_{task}"] = float(np.nanmean(rho))
        values[f"top_block_{task}"] = schur.BLOCK_NAMES[max(share_top, key=lambda b: np.nan_to_num(share_top[b]))]
        for b in schur.ABLATION_BLOCKS:
            values[f"sens_{b}_{task}"] = per_block[b]
            values[f"top_share_{b}_{task}"] = share_top[b]
        rows.append((task, float(np.nanmean(rho)), *per_block.values(), *share_top.values()))
    close = [t for t in lenses if values[f"rho_sens_T_{t}"] >= study.rank_threshold]
    bar = f"the ranking threshold {study.rank_threshold:g}"
    if close:
        values["sens_follows_T"] = (
            f"follows the size of the coupling closely in {len(close)} of {len(lenses)} tasks (ρ ≥ {bar})"
        )
    else:
        values["sens_follows_T"] = f"follows the size of the coupling only loosely (ρ below {bar} in every task)"
    values["n_top_blocks"] = len({values[f"top_block_{t}"] for t in lenses})
    values["top_block_varies"] = "differs between tasks" if values["n_top_blocks"] > 1 else "is the same in every task"
    for t in lenses:  # the block in the prose's notation, as maths ({glue:md})
        values[f"top_block_{t}_md"] = Markdown(as_myst(values[f"top_block_{t}"]))
    headers = ("task", "ρ(S, |T|)", "mean S in T_RR", "in T_C→R", "in T_CC", "top-decile share T_RR", "T_C→R", "T_CC")
    return values, Table(headers, tuple(rows), ".3g", "Where the function's sensitivity sits in the Schur form")


def _block_mask(L: SolutionLens, b: str) -> np.ndarray:
    """The coupling entries (finite S) of block ``b``: rows and columns in R (RR), R × C (CR) or C (CC)."""
    r = np.arange(L.sens.shape[0]) < L.n_R
    rows, cols = {"RR": (r, r), "CR": (r, ~r), "CC": (~r, ~r)}[b]
    return np.isfinite(L.sens) & rows[:, None] & cols[None, :]


def _block_mean(L: SolutionLens, b: str) -> float:
    m = _block_mask(L, b)
    return float(L.sens[m].mean()) if m.any() else math.nan


def _top_share(L: SolutionLens, b: str) -> float:
    """The block's share of the top decile of S_i, divided by its share of all coupling entries (1 = no bias)."""
    s = L.sens[np.isfinite(L.sens)]
    top = np.isfinite(L.sens) & (L.sens >= np.quantile(s, 0.9))
    m = _block_mask(L, b)
    return float((top & m).sum() / top.sum() / (m.sum() / s.size)) if m.any() else math.nan


def study_values(lenses: dict[str, list[SolutionLens]], study: LensStudy) -> dict[str, Any]:
    """The solutions read, the coordinates per solution (first solution of each task) and the probe rows."""
    values: dict[str, Any] = {"seeds": study.solutions, "copy_seeds": study.copy_solutions}  # the glue's names
    values["probe_rows"] = study.probe_rows
    values["n_solutions"] = sum(len(s) for s in lenses.values())
    for task, sols in lenses.items():
        values[f"n_coords_{task}"] = int(np.isfinite(sols[0].sens).sum())
        values[f"n_probe_rows_{task}"] = sols[0].n_probe_rows
    return values
