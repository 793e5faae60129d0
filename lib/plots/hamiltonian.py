"""Figures of the Mexican-hat chapter (paper B §3.2, Figs. 3–4): training curve, phase portraits, Jacobian column
norms, the two lifts, angular deviation profiles of V along c* and b*, and the walk diagnostics. Every function takes
arrays and returns a matplotlib Figure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib import cm
from matplotlib.colors import Normalize


def training_curve(steps: np.ndarray, train_mse: np.ndarray, val_mse: np.ndarray, *, seconds: float, extra=None):
    """Train (running mean over each evaluation interval) and validation trajectory MSE against Adam steps."""
    fig, ax = plt.subplots(figsize=(6.0, 3.4))
    ax.semilogy(steps[1:], train_mse[1:], color="tab:blue", lw=1.2, label="train (minibatch mean)")
    ax.semilogy(steps, val_mse, color="tab:orange", lw=1.6, label="validation")
    for label, (s, v) in (extra or {}).items():
        ax.semilogy(s, v, lw=1.2, ls="--", label=label)
    ax.set_xlabel("Adam step")
    ax.set_ylabel("trajectory MSE (q, p)")
    ax.set_title(f"ASRNN training ({seconds / 60:.1f} min single-threaded)", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def phase_portraits(
    true_trajs: Sequence[np.ndarray],
    learned_trajs: Sequence[np.ndarray],
    alphas: Sequence[float],
    seen: Sequence[bool],
):
    """Two rows per α column: the q-plane orbit (q₁, q₂) and the (q₁, p₁) phase plane; true solid, learned dashed.

    ``true_trajs[j]`` and ``learned_trajs[j]`` are (B, T, 4) arrays in (q, p) order for ``alphas[j]``.
    """
    n = len(alphas)
    fig, axes = plt.subplots(2, n, figsize=(2.7 * n, 5.2), squeeze=False)
    colors = plt.get_cmap("tab10")
    for j, (tt, ll, a, s) in enumerate(zip(true_trajs, learned_trajs, alphas, seen, strict=True)):
        for b in range(tt.shape[0]):
            c = colors(b % 10)
            axes[0, j].plot(tt[b, :, 0], tt[b, :, 1], color=c, lw=1.0)
            axes[0, j].plot(ll[b, :, 0], ll[b, :, 1], color=c, lw=1.0, ls="--")
            axes[1, j].plot(tt[b, :, 0], tt[b, :, 2], color=c, lw=1.0)
            axes[1, j].plot(ll[b, :, 0], ll[b, :, 2], color=c, lw=1.0, ls="--")
        axes[0, j].set_title(f"α = {a:g} ({'training' if s else 'unseen'})", fontsize=9)
        axes[0, j].set_aspect("equal", adjustable="datalim")
        axes[0, j].set_xlabel("q₁", fontsize=8)
        axes[1, j].set_xlabel("q₁", fontsize=8)
    axes[0, 0].set_ylabel("q₂")
    axes[1, 0].set_ylabel("p₁")
    fig.suptitle("ground truth (solid) and learned leapfrog rollout (dashed), Δt = 0.1", fontsize=10)
    fig.tight_layout()
    return fig


def column_norms(norms: Mapping[str, np.ndarray], *, floor: float = 1e-12):
    """Histograms of log₁₀‖J_{:,i}‖ (force Jacobian columns) for several models; zero columns sit at the floor."""
    fig, ax = plt.subplots(figsize=(6.0, 3.3))
    allv = np.concatenate([np.log10(np.maximum(v, floor)) for v in norms.values()])
    bins = np.linspace(allv.min(), allv.max() + 1e-9, 50)
    for label, v in norms.items():
        ax.hist(np.log10(np.maximum(v, floor)), bins=bins, histtype="step", lw=1.5, label=label)
    ax.set_xlabel("log₁₀ ‖J₍:,i₎‖ (column norm of the pooled force Jacobian)")
    ax.set_ylabel("parameters")
    ax.set_yscale("log")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def lift_gauges(col_norms: np.ndarray, coefs: Mapping[str, np.ndarray]):
    """|c_i| against the column norm ‖J_{:,i}‖ for each gauge of the same lift (log–log)."""
    fig, axes = plt.subplots(1, len(coefs), figsize=(3.4 * len(coefs), 3.2), squeeze=False, sharey=True)
    keep = col_norms > 0
    for ax, (label, c) in zip(axes[0], coefs.items(), strict=True):
        ax.loglog(col_norms[keep], np.abs(c[keep]) + 1e-30, ".", ms=2, alpha=0.5)
        ax.set_title(f"{label}: ‖c‖ = {np.linalg.norm(c):.3g}", fontsize=9)
        ax.set_xlabel("‖J₍:,i₎‖")
    axes[0, 0].set_ylabel("|c_i|")
    fig.tight_layout()
    return fig


def potential_profiles(
    angles: np.ndarray,
    profiles: Mapping[str, np.ndarray],
    alphas: Sequence[float],
    radii: Sequence[float],
    *,
    times: np.ndarray,
    title: str,
):
    """Rows = walks (e.g. "along c*", "along b*"); columns = α. ``profiles[row]`` is (stops, n_alpha, n_angles):
    δ_V(φ) = V(r, φ) − mean_φ V(r, ·) at each stop, coloured by flow time (paper Figs. 3–4)."""
    rows = list(profiles)
    fig, axes = plt.subplots(len(rows), len(alphas), figsize=(2.6 * len(alphas), 2.3 * len(rows)), squeeze=False)
    norm = Normalize(times.min(), times.max())
    cmap = plt.get_cmap("viridis")
    deg = np.degrees(angles)
    for i, row in enumerate(rows):
        prof = profiles[row]
        for j, (a, r) in enumerate(zip(alphas, radii, strict=True)):
            ax = axes[i, j]
            for k in range(prof.shape[0]):
                ax.plot(deg, prof[k, j], color=cmap(norm(times[k])), lw=0.9)
            ax.axhline(0, color="0.6", lw=0.5)
            ax.set_xticks([0, 90, 180, 270, 360])
            ax.tick_params(labelsize=8)
            if i == 0:
                ax.set_title(f"α = {a:g}, r = {r:.2f}", fontsize=9)
            if j == 0:
                ax.set_ylabel(f"{row}\nδ_V(φ)", fontsize=9)
            if i == len(rows) - 1:
                ax.set_xlabel("angle φ (deg)", fontsize=8)
    fig.colorbar(cm.ScalarMappable(norm=norm, cmap=cmap), ax=axes, shrink=0.8, label="flow time t")
    fig.suptitle(title, fontsize=10)
    return fig


def walk_diagnostics(times: np.ndarray, curves: Mapping[str, Mapping[str, np.ndarray]], *, ylabels: Sequence[str]):
    """One panel per entry of ``curves`` (title → {label: (stops,) values}); dotted labels starting with "pred"."""
    fig, axes = plt.subplots(1, len(curves), figsize=(3.6 * len(curves), 3.2), squeeze=False)
    for ax, (title, lines), yl in zip(axes[0], curves.items(), ylabels, strict=True):
        for label, v in lines.items():
            ax.plot(times, v, ls=":" if label.startswith("pred") else "-", lw=1.5, label=label)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("flow time t (rad for c*)")
        ax.set_ylabel(yl, fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
