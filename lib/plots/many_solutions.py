"""Figures of the chapter "Many solutions": distributions over solutions, narrowing intervals, the width profile.

Every function returns a matplotlib ``Figure`` (never shows it).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import matplotlib.pyplot as plt
import numpy as np

from lib.paper_a.schur import BLOCK_NAMES
from lib.paper_a.task_analysis import SINGLE_BLOCKS, TaskAnalysis
from lib.plots.tasks import BLOCK_COLOURS, TASK_TITLES

KIND_LABELS = {"dfvu": "ΔFVU", "sens": "S_ΔT"}
ORDERING_COLOURS = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860")


def _title(task: str) -> str:
    return TASK_TITLES.get(task, task)


def ablation_ecdfs(analyses: Mapping[str, TaskAnalysis], kinds=("dfvu", "sens"), linthresh: float = 1e-3):
    """Empirical distribution over solutions of each single-block ablation: one column per task, a row per kind
    (ΔFVU, S_ΔT), a step line per block (empty blocks left out; the legend gives how many solutions are shown)."""
    tasks = list(analyses)
    fig, axes = plt.subplots(len(kinds), len(tasks), figsize=(3.6 * len(tasks) + 0.4, 2.9 * len(kinds)), squeeze=False)
    for j, t in enumerate(tasks):
        for i, kind in enumerate(kinds):
            ax = axes[i, j]
            for b in SINGLE_BLOCKS:
                v = np.sort(analyses[t].values(kind, b))
                v = v[np.isfinite(v)]
                if v.size:
                    y = np.arange(1, v.size + 1) / v.size
                    label = f"−{BLOCK_NAMES[b]} (n = {v.size})"
                    ax.step(np.r_[v[0], v], np.r_[0.0, y], where="post", color=BLOCK_COLOURS[b], label=label)
            ax.set_xscale("symlog", linthresh=linthresh)
            ax.set_ylim(0, 1.02)
            ax.set_xlabel(f"{KIND_LABELS[kind]} of the ablation")
            ax.legend(fontsize=8, loc="lower right")
            if j == 0:
                ax.set_ylabel("fraction of solutions ≤ x")
            if i == 0:
                ax.set_title(_title(t))
    fig.tight_layout()
    return fig


def interval_narrowing(
    curves: Mapping[str, Mapping[str, tuple[np.ndarray, ...]]],
    level: float | None = None,
    marked: Collection[tuple[str, str]] = (),
):
    """How each ordering's frequency and its 95% Wilson band evolve as solutions accumulate: a row per ordering, a
    column per task. ``curves``: task → ordering → (n, frequency, low, high) after each solution; ``level``: a dotted
    reference line; ``marked``: (task, ordering) pairs whose panel is titled as the paper's claim."""
    tasks = list(curves)
    names = list(next(iter(curves.values())))
    fig, axes = plt.subplots(
        len(names), len(tasks), figsize=(3.4 * len(tasks) + 0.6, 1.9 * len(names) + 0.5), squeeze=False,
        sharex=True, sharey=True,
    )  # fmt: skip
    for i, name in enumerate(names):
        c = ORDERING_COLOURS[i % len(ORDERING_COLOURS)]
        for j, t in enumerate(tasks):
            ax = axes[i, j]
            n, f, lo, hi = curves[t][name]
            if n.size:
                ax.fill_between(n, lo, hi, step="mid", color=c, alpha=0.25, lw=0)
                ax.plot(n, f, color=c, lw=1.5, drawstyle="steps-mid")
            if level is not None:
                ax.axhline(level, color="0.3", ls=":", lw=0.9)
            ax.set_ylim(-0.03, 1.03)
            paper = " (paper)" if (t, name) in marked else ""
            ax.set_title(f"{_title(t)}: {name}{paper}" if i == 0 else f"{name}{paper}", fontsize=9)
            if i == len(names) - 1:
                ax.set_xlabel("solutions")
        axes[i, 0].set_ylabel("holds in")
    fig.tight_layout()
    return fig


def width_profile(widths: Mapping[str, Mapping[int, TaskAnalysis]], linthresh: float = 1e-3):
    """Mean ± SEM single-block ΔFVU against N_h, one panel per task, a line per block (log scale; symmetric log
    where a mean minus its SEM is not positive)."""
    tasks = list(widths)
    fig, axes = plt.subplots(1, len(tasks), figsize=(3.6 * len(tasks) + 0.4, 3.3), squeeze=False)
    for ax, t in zip(axes[0], tasks, strict=True):
        ns, lowest = sorted(widths[t]), np.inf
        for k, b in enumerate(SINGLE_BLOCKS):
            stats = np.array([widths[t][w].mean_sem("dfvu", b)[:2] for w in ns], dtype=float)
            x = np.asarray(ns, dtype=float) * (1 + 0.03 * (k - 1))  # a little apart, so the bars do not overlap
            sem = np.nan_to_num(stats[:, 1])
            ax.errorbar(x, stats[:, 0], yerr=sem, marker="o", ms=4, capsize=3, color=BLOCK_COLOURS[b],
                        label=f"−{BLOCK_NAMES[b]}")  # fmt: skip
            lowest = min(lowest, float(np.nanmin(stats[:, 0] - sem, initial=np.inf)))
        ax.set_xscale("log", base=2)
        ax.set_xticks(ns, [str(w) for w in ns])
        if lowest > 0:
            ax.set_yscale("log")
        else:  # a mean at or below zero: a symmetric log scale
            ax.set_yscale("symlog", linthresh=linthresh)
        ax.set_xlabel("N_h")
        ax.set_title(_title(t))
    axes[0, 0].set_ylabel("ΔFVU (mean ± SEM)")
    axes[0, -1].legend(fontsize=8)
    fig.tight_layout()
    return fig
