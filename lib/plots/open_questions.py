"""Figures of "What paper A left open": projections against ΔFVU, random controls, λ-paths, κ(V) against departure.

Every function takes :class:`lib.paper_a.confound.AblationRecord` lists (or plain arrays) keyed by task and returns a
matplotlib ``Figure`` (never shows it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

from lib.paper_a.confound import AblationRecord
from lib.paper_a.perturbation import KINDS
from lib.plots.tasks import BLOCK_COLOURS, _title

COLOURS = {**BLOCK_COLOURS, "all": "#8172B3"}
NAMES = {"RR": "−T_RR", "CR": "−T_C→R", "CC": "−T_CC", "all": "all three"}
KIND_COLOURS = {"isotropic": "0.55", "schur_pattern": "#C44E52", "subspace": "#64B5CD"}
FLOOR = 1e-6


def _panels(n: int, rows: int = 1, height: float = 3.0):
    """One column per task, 2.5 inches each: at the text column's width (about 950 px) the 9–11 pt text of these
    figures stays legible."""
    fig, axes = plt.subplots(rows, n, figsize=(2.5 * n + 0.6, height * rows + 0.4), squeeze=False)
    for ax in axes.flat:
        ax.tick_params(labelsize=9)
    return fig, axes


def _legend_on_top(fig, ax, ncol: int):
    """One legend for the figure, above the panels (the handles of ``ax``, then any other panel's new labels)."""
    handles, labels = ax.get_legend_handles_labels()
    for other in fig.axes:
        for h, label in zip(*other.get_legend_handles_labels(), strict=True):
            if label not in labels:
                handles.append(h)
                labels.append(label)
    fig.legend(handles, labels, loc="upper center", ncol=ncol, fontsize=10, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.4 / fig.get_figheight()))


def projection_vs_dfvu(records: Mapping[str, Sequence[AblationRecord]], tolerance: float):
    """ΔFVU against the share of the direct action ΔW h in the readout/PC subspace U (top) and in the readout row
    space alone (bottom); one column per task, one colour per ablation; the dashed line is the harmless tolerance."""
    fig, axes = _panels(len(records), rows=2, height=2.8)
    for j, (task, recs) in enumerate(records.items()):
        for i, key in enumerate(("union", "readout")):
            ax = axes[i, j]
            for name, colour in COLOURS.items():
                rs = [r for r in recs if r.ablation == name and r.mass > 0]
                x = [r.frac_dw[key] for r in rs]
                ax.scatter(x, [max(r.dfvu, FLOOR) for r in rs], s=14, color=colour, label=NAMES[name], alpha=0.8)
            ax.axhline(tolerance, color="k", lw=0.7, ls="--")
            ax.set_yscale("log")
            ax.set_xlim(-0.02, 1.02)
            ax.set_xlabel("share of ΔW h in\n" + ("readout ∪ PCs" if key == "union" else "readout rows"), fontsize=10)
        axes[0, j].set_title(_title(task), fontsize=11)
    axes[0, 0].set_ylabel("ΔFVU (log)", fontsize=10)
    axes[1, 0].set_ylabel("ΔFVU (log)", fontsize=10)
    _legend_on_top(fig, axes[0, 0], ncol=len(COLOURS))
    return fig


def random_controls(examples: Mapping[str, Sequence[AblationRecord]]):
    """For one solution per task: each ablation's ΔFVU (black bar) beside the ΔFVU of random perturbations of the
    same Frobenius norm, one strip per kind (dots: draws)."""
    fig, axes = _panels(len(examples), height=3.2)
    rng = np.random.default_rng(0)  # fixed jitter: the figure is deterministic
    for j, (task, recs) in enumerate(examples.items()):
        ax = axes[0, j]
        recs = [r for r in recs if r.mass > 0]
        for i, r in enumerate(recs):
            for k, kind in enumerate(KINDS):
                x = i + (k - 1) * 0.25
                v = np.maximum(r.draws[kind], FLOOR)
                ax.scatter(x + rng.uniform(-0.06, 0.06, v.size), v, s=6, color=KIND_COLOURS[kind], lw=0)
            ax.plot([i - 0.4, i + 0.4], [max(r.dfvu_eval, FLOOR)] * 2, color="k", lw=2)
        ax.set_xticks(range(len(recs)), [NAMES[r.ablation] for r in recs], fontsize=9, rotation=30, ha="right")
        ax.set_yscale("log")
        ax.set_title(f"{_title(task)}\n(seed {recs[0].seed})", fontsize=11)
    for kind in KINDS:
        axes[0, -1].scatter([], [], s=16, color=KIND_COLOURS[kind], label=kind.replace("_", " "))
    axes[0, -1].plot([], [], color="k", lw=2, label="the ablation")
    axes[0, 0].set_ylabel("ΔFVU (log)", fontsize=10)
    _legend_on_top(fig, axes[0, -1], ncol=len(KINDS) + 1)
    return fig


def lambda_paths(records: Mapping[str, Sequence[AblationRecord]]):
    """ΔFVU(λ) along W(λ) = Q(T − λT_S)Qᵀ for each single block: thin lines solutions, thick the mean."""
    fig, axes = _panels(len(records), height=3.0)
    for j, (task, recs) in enumerate(records.items()):
        ax = axes[0, j]
        for name in ("RR", "CR", "CC"):
            rs = [r for r in recs if r.ablation == name and r.dfvu_path.size]
            if not rs:
                continue
            curves = np.array([r.dfvu_path for r in rs])
            for c in curves:
                ax.plot(rs[0].lambdas, c, color=COLOURS[name], lw=0.6, alpha=0.4)
            ax.plot(rs[0].lambdas, curves.mean(axis=0), color=COLOURS[name], lw=2.2, label=NAMES[name])
        ax.set_yscale("symlog", linthresh=1e-5)
        ax.set_xlabel("λ", fontsize=10)
        ax.set_title(_title(task), fontsize=11)
    axes[0, 0].set_ylabel("ΔFVU(λ) (symlog)", fontsize=10)
    _legend_on_top(fig, axes[0, 0], ncol=3)
    return fig


def kappa_vs_departure(points: Mapping[str, tuple[Sequence[float], Sequence[float]]]):
    """κ(V) (log) against Henrici's relative departure from normality, one colour per task."""
    fig, ax = plt.subplots(figsize=(4.6, 3.4))
    for task, (dep, kappa) in points.items():
        ax.scatter(dep, kappa, s=16, label=_title(task), alpha=0.85)
    ax.set_yscale("log")
    ax.set_xlabel("departure from normality dep(W)/‖W‖_F")
    ax.set_ylabel("κ(V) of the eigenvectors")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
