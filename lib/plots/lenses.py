"""Figures of the chapter ``two_lenses``: predicted against real ablations, the λ-path, ROC curves, sensitivity maps.

Every function returns a matplotlib ``Figure`` (never shows it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import LogNorm

from lib.paper_a.schur import BLOCK_NAMES
from lib.plots.tasks import BLOCK_COLOURS, TASK_TITLES

LINTHRESH = 1e-4  # the symmetric-log axes are linear within ±LINTHRESH (a ΔFVU can be slightly negative)
FLOOR = 1e-6  # the scatter's log axes draw smaller (and non-positive) values here


def prediction_scatter(rows: Sequence[Mapping], tolerance: float) -> plt.Figure:
    """Gauss–Newton ΔFVU against the real one (log axes, values below FLOOR drawn at FLOOR), one panel per task,
    coloured by removed mass; the tolerance dashed."""
    tasks = list(dict.fromkeys(r["task"] for r in rows))
    fig, axes = plt.subplots(1, len(tasks), figsize=(3.2 * len(tasks), 3.3), squeeze=False)
    for ax, task in zip(axes[0], tasks, strict=True):
        sub = [r for r in rows if r["task"] == task]
        real = np.maximum([r["dfvu"] for r in sub], FLOOR)
        gn = np.maximum([r["gn"] for r in sub], FLOOR)
        sc = ax.scatter(real, gn, c=[r["mass"] for r in sub], cmap="viridis", vmin=0, vmax=1, s=14)
        hi = max(real.max(), gn.max(), tolerance) * 2
        ax.plot([FLOOR, hi], [FLOOR, hi], color="grey", lw=0.8)
        ax.axvline(tolerance, color="k", ls="--", lw=0.7)
        ax.axhline(tolerance, color="k", ls="--", lw=0.7)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(FLOOR / 2, hi)
        ax.set_ylim(FLOOR / 2, hi)
        ax.set_title(TASK_TITLES.get(task, task), fontsize=9)
        ax.set_xlabel("real ΔFVU")
    axes[0][0].set_ylabel("Gauss–Newton ΔFVU")
    fig.colorbar(sc, ax=axes[0].tolist(), label="removed mass ‖ΔT‖/‖T‖", shrink=0.8)
    return fig


def ablation_paths(lenses: Mapping[str, Sequence]) -> plt.Figure:
    """Real ΔFVU (solid) and its Gauss–Newton parabola (dashed) along W(λ) for each single block, first solution."""
    tasks = [t for t, sols in lenses.items() if sols and sols[0].path]
    fig, axes = plt.subplots(1, len(tasks), figsize=(3.2 * len(tasks), 3.0), squeeze=False)
    for ax, task in zip(axes[0], tasks, strict=True):
        L = lenses[task][0]
        for b, (lam, real, gn) in L.path.items():
            ax.plot(lam, real, color=BLOCK_COLOURS[b], label=f"−{BLOCK_NAMES[b]}")
            ax.plot(lam, gn, color=BLOCK_COLOURS[b], ls="--")
        ax.set_yscale("symlog", linthresh=LINTHRESH)
        ax.set_title(f"{TASK_TITLES.get(task, task)}, seed {L.seed}", fontsize=9)
        ax.set_xlabel("λ (fraction of the block removed)")
    axes[0][0].set_ylabel("ΔFVU (solid real, dashed Gauss–Newton)")
    axes[0][0].legend(fontsize=8)
    return fig


def safe_roc(predictors: Mapping[str, np.ndarray], curves) -> plt.Figure:
    """ROC curves of each predictor of a safe ablation (left); null fraction against real ΔFVU (right)."""
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(9, 3.6))
    for name, (fpr, tpr) in curves.items():
        ax.plot(fpr, tpr, label=name)
    ax.plot([0, 1], [0, 1], color="grey", lw=0.7)
    ax.set_xlabel("false-positive rate")
    ax.set_ylabel("true-positive rate (safe ablations)")
    ax.legend(fontsize=8)
    safe = predictors["safe"].astype(bool)
    bx.scatter(predictors["dfvu"][safe], predictors["null"][safe], s=12, color="#55A868", label="safe")
    bx.scatter(predictors["dfvu"][~safe], predictors["null"][~safe], s=12, color="#C44E52", label="not safe")
    bx.set_xscale("symlog", linthresh=LINTHRESH)
    bx.set_xlabel("real ΔFVU")
    bx.set_ylabel("fraction of ‖δ_S‖² in the near-null space")
    bx.legend(fontsize=8)
    return fig


def sensitivity_maps(lenses: Mapping[str, Sequence]) -> plt.Figure:
    """Per task (first solution): paper B's S_i on the ordered Schur form (top) and |T_ij| (bottom), R/C marked."""
    tasks = list(lenses)
    fig, axes = plt.subplots(2, len(tasks), figsize=(3.0 * len(tasks), 6.0), squeeze=False)
    for j, task in enumerate(tasks):
        L = lenses[task][0]
        for i, (m, name) in enumerate(((L.sens, "S_i"), (L.abs_T, "|T_ij|"))):
            ax = axes[i][j]
            pos = m[np.isfinite(m) & (m > 0)]
            im = ax.imshow(np.where(m > 0, m, np.nan), norm=LogNorm(pos.min(), pos.max()), cmap="magma")
            ax.axhline(L.n_R - 0.5, color="c", lw=0.8)
            ax.axvline(L.n_R - 0.5, color="c", lw=0.8)
            ax.set_title(f"{TASK_TITLES.get(task, task)}: {name}", fontsize=8)
            ax.set_xticks([])
            ax.set_yticks([])
            fig.colorbar(im, ax=ax, shrink=0.7)
    return fig


def flow_trajectories(
    trajectories: Mapping[str, tuple], lenses: Mapping[str, Sequence], tolerance: float
) -> plt.Figure:
    """Per task: ΔFVU against removed mass along the near-null flow (line) and for each block ablation (dots)."""
    tasks = list(trajectories)
    fig, axes = plt.subplots(1, len(tasks), figsize=(3.2 * len(tasks), 3.1), squeeze=False)
    for ax, task in zip(axes[0], tasks, strict=True):
        mass, dfvu = trajectories[task]
        ax.plot(mass, dfvu, "k.-", label="near-null flow")
        L = lenses[task][0]
        ax.scatter([L.mass[k] for k in L.keys], [L.dfvu[k] for k in L.keys], color="#C44E52", s=16, label="blocks")
        ax.axhline(tolerance, color="k", ls="--", lw=0.7)
        ax.set_yscale("symlog", linthresh=LINTHRESH)
        ax.set_title(f"{TASK_TITLES.get(task, task)}, seed {L.seed}", fontsize=9)
        ax.set_xlabel("removed mass ‖ΔT‖/‖T‖")
    axes[0][0].set_ylabel("ΔFVU")
    axes[0][0].legend(fontsize=8)
    return fig
