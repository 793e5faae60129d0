"""Figures of the lifting-criterion and annulus chapters (paper B): decision boundaries, defect curves, angular
deviation profiles, per-parameter attributions. Every function takes arrays and returns a matplotlib Figure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.colors as mcolors
import matplotlib.pyplot as plt
import numpy as np

from lib.paper_b.cutoff_profile import EXACT, REPRESENTED, REPRESENTED_DEG


def decision_boundaries(
    scores: Sequence[Sequence[np.ndarray]],
    extent: float,
    x: np.ndarray,
    y: np.ndarray,
    *,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    annotations: Sequence[Sequence[str]] | None = None,
    n_levels: int = 8,
):
    """Grid of decision panels: sign regions, the zero level (black), level sets, training points (notes §8.6).

    ``scores[i][j]`` is the logit on a square mesh over [−extent, extent]² (rows = y, columns = x).
    """
    n_rows, n_cols = len(scores), len(scores[0])
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(2.6 * n_cols, 2.6 * n_rows), squeeze=False)
    for i in range(n_rows):
        for j in range(n_cols):
            ax = axes[i, j]
            s = np.asarray(scores[i][j])
            k = s.shape[0]
            axis = np.linspace(-extent, extent, k)
            xx, yy = np.meshgrid(axis, axis)
            ax.contourf(xx, yy, np.sign(s), levels=[-1.5, 0, 1.5], colors=["#ffdddd", "#ddddff"], alpha=0.6)
            if s.min() < 0 < s.max():
                ax.contour(xx, yy, s, levels=[0], colors="black", linewidths=1.2)
            lo, hi = np.percentile(s, [5, 95])
            if hi - lo < 1e-2:
                hi = lo + 1e-2
            levels = np.linspace(lo, hi, 2 * n_levels + 1)[1:-1]
            ax.contour(
                xx, yy, s, levels=levels, cmap="coolwarm", norm=mcolors.Normalize(lo, hi), linewidths=0.6, alpha=0.8
            )
            pos = y > 0
            ax.scatter(x[pos, 0], x[pos, 1], s=5, c="tab:blue", edgecolors="none")
            ax.scatter(x[~pos, 0], x[~pos, 1], s=7, c="tab:red", marker="x", linewidths=0.7)
            ax.set_aspect("equal")
            ax.set_xticks([])
            ax.set_yticks([])
            if i == 0:
                ax.set_title(col_labels[j], fontsize=9)
            if j == 0:
                ax.set_ylabel(row_labels[i], fontsize=9)
            if annotations is not None:
                ax.text(0.5, -0.03, annotations[i][j], transform=ax.transAxes, ha="center", va="top", fontsize=8)
    fig.tight_layout()
    return fig


def defect_curves(
    curves: Mapping[str, Mapping[str, tuple[np.ndarray, np.ndarray]]],
    predictions: Mapping[str, tuple[np.ndarray, np.ndarray]],
    *,
    ylabel: str = r"$\|(I-\Pi)f_t\|$",
):
    """One panel per key of ``curves`` (condition × direction): lines (t, ‖δ_t‖), the exact prediction dotted.

    Three panels a row and one legend for the figure, so that it reads at the text column's width."""
    keys = list(curves)
    n_cols = min(3, len(keys))
    n_rows = int(np.ceil(len(keys) / n_cols))
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(3.1 * n_cols, 2.5 * n_rows + 0.5), squeeze=False, sharex=True)
    for ax, key in zip(axes.flat, keys, strict=False):
        for label, (t, v) in curves[key].items():
            ax.plot(t, v, label=label, lw=1.6)
        tp, vp = predictions[key]
        ax.plot(tp, vp, "k:", lw=1.4, label="exact flow")
        ax.set_yscale("log")
        ax.set_title(key, fontsize=11)
        ax.tick_params(labelsize=9)
    for ax in axes[:, 0]:
        ax.set_ylabel(ylabel, fontsize=10)
    for ax in axes[-1, :]:
        ax.set_xlabel("t", fontsize=10)
    for ax in list(axes.flat)[len(keys) :]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=len(labels), fontsize=10, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.45 / fig.get_figheight()))
    return fig


def deviation_profiles(
    angles_deg: np.ndarray,
    panels: Mapping[str, Mapping[float, tuple[np.ndarray, np.ndarray]]],
    *,
    t_max: float = 1.0,
):
    """Angular deviation profiles d_t(φ) of the annulus logit at r = 1, per panel {t: (realised, predicted)}; solid
    realised, dotted predicted."""
    keys = list(panels)
    n_cols = 2
    n_rows = int(np.ceil(len(keys) / n_cols))
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(5.2 * n_cols, 3.0 * n_rows), squeeze=False, sharex=True)
    cmap = plt.get_cmap("coolwarm")
    norm = mcolors.Normalize(-t_max, t_max)
    for ax, key in zip(axes.flat, keys, strict=False):
        for t, (real, pred) in panels[key].items():
            ax.plot(angles_deg, real, color=cmap(norm(t)), lw=1.3)
            ax.plot(angles_deg, pred, color=cmap(norm(t)), lw=1.0, ls=":")
        ax.set_title(key, fontsize=9)
        ax.set_ylabel(r"$d_t(\varphi)$ at $r=1$")
    for ax in axes[-1]:
        ax.set_xlabel("angle φ (degrees)")
    for ax in list(axes.flat)[len(keys) :]:
        ax.set_visible(False)
    sm = plt.cm.ScalarMappable(norm=norm, cmap=cmap)
    fig.colorbar(sm, ax=axes, label="t (solid: realised, dotted: predicted)", shrink=0.8)
    return fig


def attribution_scatter(col_norms: np.ndarray, coefs: Mapping[str, np.ndarray], *, max_points: int = 4000):
    """|c_i| against the column norm ‖J_{:,i}‖ (log–log), one panel per gauge; a subsample of live parameters."""
    fig, axes = plt.subplots(1, len(coefs), figsize=(4.0 * len(coefs), 3.3), squeeze=False)
    live = np.flatnonzero(col_norms > 0)
    idx = live[:: max(1, len(live) // max_points)]
    for ax, (label, c) in zip(axes[0], coefs.items(), strict=True):
        keep = idx[np.abs(c[idx]) > 0]
        ax.loglog(col_norms[keep], np.abs(c[keep]), ".", ms=2, alpha=0.5)
        ax.set_xlabel(r"$\|J_{:,i}\|_2$")
        ax.set_ylabel(r"$|c_i|$")
        ax.set_title(label, fontsize=9)
    fig.tight_layout()
    return fig


def layer_shares(layer_names: Sequence[str], shares: Mapping[str, np.ndarray], *, ylabel: str):
    """Grouped bars: the share of an attribution per layer block, one bar group per gauge."""
    fig, ax = plt.subplots(figsize=(7.0, 3.0))
    n = len(shares)
    width = 0.8 / n
    pos = np.arange(len(layer_names))
    for k, (label, v) in enumerate(shares.items()):
        ax.bar(pos + (k - (n - 1) / 2) * width, v, width, label=label)
    ax.set_xticks(pos, layer_names, fontsize=8)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def spectrum(singular_values: Mapping[str, np.ndarray], tau: float):
    """Normalised singular values σ_k/σ₁ of J with the cutoff τ."""
    fig, ax = plt.subplots(figsize=(5.0, 3.0))
    for label, s in singular_values.items():
        s = np.asarray(s)
        ax.semilogy(np.arange(1, len(s) + 1), s / s[0], label=label, lw=1.2)
    ax.axhline(tau, color="k", ls=":", lw=1, label=f"τ = {tau:g}")
    ax.set_xlabel("k")
    ax.set_ylabel(r"$\sigma_k/\sigma_1$")
    ax.set_ylim(1e-17, 2)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def cutoff_profiles(profiles: Mapping[str, object], *, title: str = ""):
    """The τ profile of one or more lifts (``lib.paper_b.cutoff_profile.CutoffProfile``): the relative residual
    ‖(I − P_τ)η‖/‖η‖ against the cutoff τ, one step per singular value, with the lifts' own τ (dotted), the
    round-off line of an exact lift and the 10° representation line (dashed); each label gets its case."""
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    taus = set()
    lowest = 1.0
    for label, prof in profiles.items():
        tau, rel = np.asarray(prof.tau), np.asarray(prof.rel_residual)
        if not tau.size:
            continue
        x = np.concatenate([[1.0], tau])
        y = np.concatenate([[1.0], rel])
        lowest = min(lowest, float(np.min(np.maximum(rel, 1e-17))))
        ax.step(x, np.maximum(y, 1e-17), where="post", lw=1.4, label=f"{label}: {prof.case.replace('_', ' ')}")
        taus.add(prof.paper_tau)
    for t in sorted(taus):
        ax.axvline(t, color="k", ls=":", lw=1)
        ax.annotate(f" τ = {t:g}", (t, 0.97), xycoords=("data", "axes fraction"), fontsize=8, ha="left", va="top")
    for y, text, colour in ((EXACT, "round-off (exact)", "tab:green"),
                            (REPRESENTED, f"{REPRESENTED_DEG:g}° (represented)", "tab:red")):  # fmt: skip
        ax.axhline(y, color=colour, ls="--", lw=0.8)
        ax.annotate(text, (0.99, y), xycoords=("axes fraction", "data"), fontsize=8, ha="right", va="bottom",
                    color=colour)  # fmt: skip
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.invert_xaxis()
    ax.set_ylim(max(min(lowest, 1e-11) / 10, 1e-17), 3)
    ax.set_xlabel(r"cutoff $\tau$ (singular values kept: $\sigma_k \geq \tau\sigma_1$)")
    ax.set_ylabel(r"relative residual $\|(I-P_\tau)\eta\|/\|\eta\|$")
    if title:
        ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    return fig
