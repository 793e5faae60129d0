"""Figures of the chapter "The copy task": accuracy against removed Schur mass (paper A Fig. 1), replay traces."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from lib.paper_a.ablation import AblationResult

SHORT = {(): "full", ("CC",): "−CC", ("RR",): "−RR", ("RR", "CC"): "−RR,CC", ("CR",): "−CR",
         ("CR", "CC"): "−CR,CC", ("RR", "CR"): "−RR,CR", ("RR", "CR", "CC"): "−all"}  # fmt: skip


def ablation_vs_mass(
    profiles: Mapping[str, AblationResult],
    *,
    ylabel: str = "replay accuracy Acc_rc",
    reference: Sequence[float] | None = None,
) -> Figure:
    """One panel per solution: score against removed mass ‖ΔT‖_F/‖T‖_F; gray segments join S and S ∪ {T_CC}.

    ``reference``: scores in the order of ``lib.paper_a.schur.all_subsets()`` drawn as open markers at each point's mass
    (e.g. the paper's accuracies for the dense-orthogonal controller, first panel only).
    """
    fig, axes = plt.subplots(1, len(profiles), figsize=(5.2 * len(profiles), 4.2), squeeze=False, sharey=True)
    for i, (ax, (name, res)) in enumerate(zip(axes[0], profiles.items(), strict=True)):
        pts = {r["subset"]: (r["removed_mass"], r["score"]) for r in res.records}
        masses = np.array([p[0] for p in pts.values()])
        scores = np.array([p[1] for p in pts.values()])
        ax.scatter(masses, scores, s=36, color="tab:blue", zorder=3, label="ours")
        pairs = [s for s in pts if "CC" not in s]
        for k, s in enumerate(pairs):
            with_cc = (*s, "CC")
            (m, a), text = pts[s], SHORT.get(s, str(s))
            if with_cc in pts:
                m2, a2 = pts[with_cc]
                ax.plot([m, m2], [a, a2], color="0.6", lw=2.5, zorder=1)
                text += " (±CC)"
            ax.annotate(text, (m, a), textcoords="offset points", xytext=(4, (5, -14, 5, -26)[k % 4]), fontsize=8)
        if reference is not None and i == 0:
            ax.scatter(
                masses,
                list(reference),
                s=50,
                facecolor="none",
                edgecolor="tab:red",
                zorder=2,
                label="paper (at our mass)",
            )
        ax.set_xlabel("removed Schur mass ‖ΔT‖_F / ‖T‖_F")
        ax.set_title(f"{name}: n_R = {res.n_R}, α = {res.alpha}")
        ax.grid(alpha=0.3)
        ax.legend(loc="lower left", fontsize=8)
    axes[0, 0].set_ylabel(ylabel)
    fig.tight_layout()
    return fig


def replay_traces(
    outputs_bty,
    targets_bty,
    *,
    n_symbols: int = 8,
    channel: int = 0,
    lags: int = 40,
    trial: int = 0,
    labels: Sequence[str] = (),
) -> Figure:
    """Output channel ``channel`` of one trial against its ±1 target over the input and the first ``lags`` replays.

    ``outputs_bty`` is one rollout (B, T, N_y) or a list of them (e.g. full and ablated), each labelled by ``labels``.
    """
    outs = outputs_bty if isinstance(outputs_bty, list | tuple) else [outputs_bty]
    tgt = np.asarray(targets_bty)[trial, : n_symbols + lags, channel]
    fig, ax = plt.subplots(figsize=(9, 2.8))
    t = np.arange(1, tgt.size + 1)
    ax.step(t[n_symbols:], tgt[n_symbols:], where="mid", color="k", lw=1, label="target")
    for k, out in enumerate(outs):
        y = np.asarray(out)[trial, : n_symbols + lags, channel]
        ax.plot(t, y, lw=1.3, label=labels[k] if k < len(labels) else f"output {k}")
    ax.axvspan(0.5, n_symbols + 0.5, color="0.9", label="input symbols")
    ax.set_xlabel("time step")
    ax.set_ylabel(f"ŷ, channel {channel}")
    ax.legend(fontsize=8, ncol=4, loc="lower right")
    fig.tight_layout()
    return fig
