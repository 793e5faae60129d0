"""Figures of the Mexican-hat chapter's attribution sections (issue 16): S_i by layer, each layer's share of the
lifted moves, cos(c*, b*) along the walks, the authors' unit-step walks beside the book's, and the sketch gate's
spectra. Every function takes arrays and returns a matplotlib Figure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np


def sensitivity_histograms(S: Mapping[str, np.ndarray], blocks: Sequence[tuple[str, slice]]):
    """One panel per layer: histograms of log₁₀ S_i for each labelled θ (e.g. initialisation, trained); exactly zero
    S_i (dead columns) are left out and counted in the panel title."""
    fig, axes = plt.subplots(1, len(blocks), figsize=(2.3 * len(blocks), 3.3), squeeze=False, sharey=False)
    live = np.concatenate([v[v > 0] for v in S.values()])
    bins = np.linspace(np.log10(live.min()), np.log10(live.max()) + 1e-9, 40)
    for ax, (name, sl) in zip(axes[0], blocks, strict=True):
        dead = 0
        for label, v in S.items():
            x = v[sl]
            dead += int((x <= 0).sum())
            ax.hist(np.log10(x[x > 0]), bins=bins, histtype="step", lw=1.5, label=label)
        ax.set_title(name + (f" ({dead} zero)" if dead else ""), fontsize=10)
        ax.set_xlabel("log₁₀ S_i", fontsize=10)
        ax.tick_params(labelsize=9)
    axes[0, 0].set_ylabel("parameters", fontsize=10)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=len(labels), fontsize=10, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.4 / fig.get_figheight()))
    return fig


def layer_move_shares(shares: Mapping[str, Mapping[str, Mapping[str, float]]], *, xlabel: str):
    """One panel per lift (``shares[lift][row][layer]``): stacked horizontal bars of each layer's share per row."""
    ncols = min(len(shares), 2)
    nrows = -(-len(shares) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.4 * ncols, 2.9 * nrows), squeeze=False, sharey=True)
    colors = plt.get_cmap("viridis")
    for ax, (lift, rows) in zip(axes.flat, shares.items(), strict=False):
        labels = list(rows)
        layers = list(next(iter(rows.values())))
        left = np.zeros(len(labels))
        for j, layer in enumerate(layers):
            w = np.array([rows[r][layer] for r in labels])
            ax.barh(labels, w, left=left, color=colors(j / max(len(layers) - 1, 1)), label=layer)
            left += w
        ax.set_xlim(0, 1)
        ax.set_title(lift, fontsize=11)
        ax.set_xlabel(xlabel, fontsize=10)
        ax.tick_params(labelsize=9)
    axes[0, 0].invert_yaxis()
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=len(labels), fontsize=10, frameon=False)  # off the bars
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.4 / fig.get_figheight()))
    return fig


def relations_along(curves: Mapping[str, Mapping[str, np.ndarray]], *, dt: float):
    """One panel per walk: cos(Jc*, Jb*) and cos(c*, b*) in both gauges against flow time, with ± the bound
    tan∠(η, Pη)·tan∠(δ, Pδ) that eq. 22 sets on the min-norm cos(Jc*, Jb*)."""
    fig, axes = plt.subplots(1, len(curves), figsize=(4.4 * len(curves), 3.3), squeeze=False, sharey=True)
    for ax, (walk, lines) in zip(axes[0], curves.items(), strict=True):
        t = lines["stops"] * dt
        ax.fill_between(t, -lines["bound"], lines["bound"], color="0.85", label="±bound (eq. 22)")
        for label, v in lines.items():
            if label not in ("stops", "bound"):
                ax.plot(t, v, marker="o", ms=3, lw=1.2, ls="-" if "J" in label else "--", label=label)
        ax.axhline(0, color="0.5", lw=0.5)
        ax.set_title(f"resolved walk {walk}", fontsize=10)
        ax.set_xlabel("flow time t")
        ax.grid(True, alpha=0.3)
    axes[0, 0].set_ylabel("cosine")
    axes[0, -1].legend(fontsize=8)
    fig.tight_layout()
    return fig


def authors_walks(walks: Mapping[str, tuple[np.ndarray, np.ndarray]], book: Mapping[str, tuple], *, kinds=("c", "b")):
    """One panel per lift: ‖δ‖/‖δ₀‖ against flow time for the authors' unit-step walks (``walks["c, min-norm"]`` =
    (t, ratio), backward stops at t < 0) and the book's walk (``book[kind]`` = (t, ratio)), with the exact flow."""
    fig, axes = plt.subplots(1, len(kinds), figsize=(4.6 * len(kinds), 3.3), squeeze=False)
    for ax, k in zip(axes[0], kinds, strict=True):
        t_book, r_book = book[k]
        ax.plot(t_book, r_book, color="0.3", lw=1.8, label="book (raw steps, min-norm)")
        lo = min([t_book.min()] + [w[0].min() for key, w in walks.items() if key.startswith(k)])
        for key, (t, r) in walks.items():
            if key.startswith(k):
                ax.plot(t, r, marker="o", ms=4, lw=1.0, label=f"authors ({key.split(', ')[1]})")
        tt = np.linspace(lo, t_book.max(), 100)
        ax.plot(tt, np.ones_like(tt) if k == "c" else np.exp(-tt), ":", color="k", label="exact flow")
        ax.axvline(0, color="0.6", lw=0.5)
        ax.set_title(f"along {k}*", fontsize=10)
        ax.set_xlabel("flow time t (backward steps: t < 0)")
        ax.set_ylabel("‖δ_t‖ / ‖δ₀‖")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def gate_spectra(checks: Sequence[Mapping], *, tau: float, band: float, width: int = 8):
    """σ_k/σ₁ around the cutoff τ at every gated re-solve: exact (line) and sketched (markers), the band ±band·τ."""
    fig, ax = plt.subplots(figsize=(6.2, 3.4))
    for i, c in enumerate(checks):
        r = c["rank_exact"]
        k = np.arange(max(r - width, 0), min(r + width, len(c["exact_sv"])))
        color = plt.get_cmap("tab10")(i % 10)
        ax.semilogy(k + 1, c["exact_sv"][k] / c["exact_sv"][0], color=color, lw=1.0,
                    label=f"{c['kind']}* walk, stop {c['stop']}")  # fmt: skip
        ax.semilogy(k + 1, c["sketch_sv"][k] / c["sketch_sv"][0], "x", color=color, ms=5)
    ax.axhline(tau, color="k", lw=1.0, label="τ")
    ax.axhspan(tau * (1 - band), tau * (1 + band), color="0.85", label=f"band ±{band:g}τ")
    ax.set_xlabel("k")
    ax.set_ylabel("σ_k / σ₁ (line: exact, ×: sketch)")
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    return fig
