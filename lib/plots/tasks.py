"""Figures of the neuroscience-style task chapters: Fig.-2-style ablation bars, profile heatmap, α-scan, threshold gaps.

Every function takes results of :mod:`~lib.paper_a.task_analysis` and returns a matplotlib ``Figure`` (never shows it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import LogNorm

from lib.paper_a.schur import BLOCK_NAMES
from lib.paper_a.task_analysis import SINGLE_BLOCKS, AlphaScan, TaskAnalysis, paper_value

BLOCK_COLOURS = {"RR": "#4C72B0", "CR": "#DD8452", "CC": "#55A868"}
TASK_TITLES = {
    "flipflop": "3-bit flip-flop",
    "sine": "sine generation",
    "context": "context-dependent integration",
    "copy": "copy (replay FVU)",
}


def _title(task: str) -> str:
    return TASK_TITLES.get(task, task)


def _bars(ax, analysis: TaskAnalysis, kind: str, blocks: Sequence[str], show_paper: bool) -> None:
    """Mean ± SEM bars over seeds, one dot per seed, the paper's mean ± SEM as a black diamond where it has one."""
    x = np.arange(len(blocks))
    rng = np.random.default_rng(0)  # fixed jitter: the figure is deterministic
    for i, b in enumerate(blocks):
        v = analysis.values(kind, b)
        v = v[np.isfinite(v)]
        if v.size:
            m = float(v.mean())
            sem = float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else 0.0
            ax.bar(i, m, yerr=sem, color=BLOCK_COLOURS[b], alpha=0.75, capsize=4, width=0.6)
            ax.scatter(i + rng.uniform(-0.18, 0.18, v.size), v, s=9, color="k", alpha=0.6, zorder=3, lw=0)
        ref = paper_value(analysis.task, kind, b) if show_paper else None
        if ref is not None:
            ax.errorbar(i + 0.33, ref[0], yerr=ref[1], fmt="D", color="k", ms=5, capsize=3, zorder=4)
    ax.set_xticks(x, [f"−{BLOCK_NAMES[b]}" for b in blocks])
    ax.axhline(0, color="0.5", lw=0.6)


def ablation_bars(
    analyses: TaskAnalysis | Sequence[TaskAnalysis],
    blocks: Sequence[str] = SINGLE_BLOCKS,
    show_paper: bool = True,
):
    """Paper A Fig. 2: ΔFVU (top) and S_ΔT (bottom) of each single-block ablation, one column per task.

    Bars: mean ± SEM over solutions; dots: single solutions; black diamonds: the paper's mean ± SEM (3 seeds).
    """
    analyses = [analyses] if isinstance(analyses, TaskAnalysis) else list(analyses)
    fig, axes = plt.subplots(2, len(analyses), figsize=(3.4 * len(analyses) + 0.6, 5.6), squeeze=False)
    for j, a in enumerate(analyses):
        _bars(axes[0, j], a, "dfvu", blocks, show_paper)
        _bars(axes[1, j], a, "sens", blocks, show_paper)
        axes[0, j].set_title(f"{_title(a.task)} ({len(a.profiles)} solutions)", fontsize=10)
    axes[0, 0].set_ylabel("ΔFVU (raw degradation)")
    axes[1, 0].set_ylabel("S_ΔT = ΔFVU / removed mass")
    if show_paper:
        axes[0, -1].plot([], [], "D", color="k", label="paper (3 seeds)")
        axes[0, -1].legend(fontsize=8, loc="best")
    fig.tight_layout()
    return fig


def profile_heatmap(rows: Sequence[tuple[str, Sequence[float]]], columns: Sequence[str], title: str = ""):
    """Heatmap of ablation profiles: one row per (task, solution), one column per ablation; log colour of the damage.

    ``rows``: (label, values) with values ≥ 0 (ΔFVU); values at or below 1e-4 share the lowest colour; NaN (an empty
    ablation, which removes nothing) is drawn hatched grey, apart from the colour scale.
    """
    labels = [r[0] for r in rows]
    data = np.array([np.asarray(r[1], dtype=float) for r in rows])
    floor = 1e-4
    shown = np.ma.masked_invalid(np.clip(data, floor, None))
    fig, ax = plt.subplots(figsize=(1.0 * len(columns) + 3.0, 0.16 * len(rows) + 1.6))
    cmap = plt.get_cmap("magma_r").with_extremes(bad="0.8")
    vmax = max(1.0, float(shown.max())) if shown.count() else 1.0
    im = ax.imshow(shown, aspect="auto", cmap=cmap, norm=LogNorm(vmin=floor, vmax=vmax))
    ax.set_xticks(range(len(columns)), columns, rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    groups = [lab.split(" ")[0] for lab in labels]
    for i in range(1, len(groups)):
        if groups[i] != groups[i - 1]:
            ax.axhline(i - 0.5, color="w", lw=2)
    fig.colorbar(im, ax=ax, label="ΔFVU (log scale; ≤ 1e-4 clipped; grey: empty)")
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


def alpha_scan_plot(scans: Sequence[AlphaScan], paper_alpha: float = 0.9, blocks: Sequence[str] = SINGLE_BLOCKS):
    """Top: n_R against α for every solution; bottom: ΔFVU of each single-block ablation against α (thin: solutions)."""
    fig, axes = plt.subplots(2, len(scans), figsize=(3.4 * len(scans) + 0.6, 5.6), squeeze=False)
    for j, s in enumerate(scans):
        ax = axes[0, j]
        for row in s.n_R:
            ax.plot(s.alphas, row, "-", color="0.3", lw=0.8, alpha=0.7, drawstyle="steps-mid")
        ax.set_title(_title(s.task), fontsize=10)
        ax.axvline(paper_alpha, color="r", lw=0.8, ls="--")
        ax = axes[1, j]
        for b in blocks:
            for row in s.dfvu[b]:
                ax.plot(s.alphas, row, "-", color=BLOCK_COLOURS[b], lw=0.6, alpha=0.5)
            ax.plot(s.alphas, s.dfvu[b].mean(axis=0), "-", color=BLOCK_COLOURS[b], lw=2.2, label=f"−{BLOCK_NAMES[b]}")
        ax.axvline(paper_alpha, color="r", lw=0.8, ls="--")
        ax.set_yscale("symlog", linthresh=1e-3)
        ax.set_xlabel("α")
    axes[0, 0].set_ylabel("n_R")
    axes[1, 0].set_ylabel("ΔFVU (symlog)")
    axes[1, -1].legend(fontsize=8)
    fig.tight_layout()
    return fig


def threshold_gaps(analyses: Sequence[TaskAnalysis], window: float = 0.1):
    """Each solution's block moduli |λ|/ρ within ``window`` of α, α marked; the nearest block ringed and labelled."""
    fig, axes = plt.subplots(1, len(analyses), figsize=(3.4 * len(analyses) + 0.6, 3.6), squeeze=False)
    for j, a in enumerate(analyses):
        ax = axes[0, j]
        for i, p in enumerate(a.profiles):
            r = p.moduli_over_rho
            near = np.abs(r - a.alpha) <= window
            ax.scatter(r[near], np.full(near.sum(), i), s=8, color="0.35", lw=0)
            k = int(np.argmin(np.abs(p.gaps)))
            ax.scatter([r[k]], [i], s=40, facecolors="none", edgecolors="r", lw=1.0)
        ax.axvline(a.alpha, color="r", lw=0.8)
        ax.set_yticks(range(len(a.profiles)), [f"seed {p.seed}" for p in a.profiles], fontsize=8)
        ax.set_xlim(a.alpha - window, a.alpha + window)
        ax.set_xlabel("|λ| / ρ")
        ax.set_title(f"{_title(a.task)}: min gap {a.min_threshold_gap():.4f}", fontsize=9)
    fig.tight_layout()
    return fig


def variant_dots(groups: Mapping[str, TaskAnalysis], blocks: Sequence[str] = SINGLE_BLOCKS, kind: str = "dfvu"):
    """Robustness over task choices: per variant (x), each block's per-solution values (dots) and mean (bar)."""
    names = list(groups)
    fig, ax = plt.subplots(figsize=(1.3 * len(names) + 2.0, 3.8))
    width = 0.8 / len(blocks)
    for i, name in enumerate(names):
        for k, b in enumerate(blocks):
            v = groups[name].values(kind, b)
            v = v[np.isfinite(v)]
            x = i - 0.4 + width * (k + 0.5)
            if v.size:
                ax.bar(
                    x,
                    v.mean(),
                    width=width * 0.9,
                    color=BLOCK_COLOURS[b],
                    alpha=0.6,
                    label=f"−{BLOCK_NAMES[b]}" if i == 0 else None,
                )
                ax.scatter(np.full(v.size, x), v, s=8, color="k", lw=0, zorder=3)
    ax.set_xticks(range(len(names)), names, rotation=25, ha="right", fontsize=8)
    ax.set_yscale("symlog", linthresh=1e-3)
    ax.set_ylabel("ΔFVU" if kind == "dfvu" else "S_ΔT")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def example_trials(batch, task: str, n_trials: int = 3):
    """Inputs (top) and targets (bottom) of the first ``n_trials`` trials of a batch (inputs_btx, targets_bty, ...)."""
    x, y = np.asarray(batch[0]), np.asarray(batch[1])
    fig, axes = plt.subplots(2, n_trials, figsize=(3.0 * n_trials + 0.6, 4.0), squeeze=False, sharex=True)
    for i in range(n_trials):
        for c in range(x.shape[2]):
            axes[0, i].plot(x[i, :, c], lw=1.0, label=f"x{c + 1}")
        for c in range(y.shape[2]):
            axes[1, i].plot(y[i, :, c], lw=1.2, label=f"y{c + 1}")
        axes[0, i].set_title(f"trial {i + 1}", fontsize=9)
        axes[1, i].set_xlabel("time step")
    axes[0, 0].set_ylabel("inputs")
    axes[1, 0].set_ylabel("targets")
    axes[0, -1].legend(fontsize=8, loc="upper right")
    axes[1, -1].legend(fontsize=8, loc="upper right")
    fig.suptitle(_title(task), fontsize=10)
    fig.tight_layout()
    return fig
