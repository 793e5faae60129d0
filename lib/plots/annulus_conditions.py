"""Figures of the annulus chapter that put every condition side by side: the paper's Figs. 5 and 6 (decision
boundaries and angular deviation profiles, rows = conditions), how c* and b* relate along the flows, the §8.7
diagnostics along the flows, and histograms of the aggregate sensitivities by layer. Arrays in, Figure out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

KIND_COLOURS = {"c": "tab:blue", "b": "tab:orange"}
LINE_STYLES = {"c* resolved": ("tab:blue", "-"), "c* fixed": ("tab:blue", "--"),
               "b* resolved": ("tab:orange", "-"), "b* fixed": ("tab:orange", "--")}  # fmt: skip
#: Row labels of :func:`diagnostics_along_flows`, short enough for a panel's height (the chapter has the formulas).
SHORT_LABELS = {
    "inv_err": "invariance\nerror",
    "real_err_z0": "realisation\nerror of z₀",
    "move_drift_z0": "drift of\nz₀'s move",
    "end_dist": "distance to\nthe end",
    "path": "path\nlength",
}


def condition_boundaries(
    scores: Sequence[Sequence[np.ndarray]],
    extent: float,
    data: Mapping[str, tuple[np.ndarray, np.ndarray]],
    *,
    columns: Sequence[str],
    notes: Sequence[Sequence[str]],
    title: str,
    n_levels: int = 6,
):
    """Rows = conditions (the keys of ``data``, each with its own training points), columns = snapshots: sign
    regions, the decision boundary (black) and level sets shared along each row (one colour scale per condition)."""
    rows = list(data)
    n_rows, n_cols = len(rows), len(columns)
    if len(scores) != n_rows or any(len(r) != n_cols for r in scores):
        raise ValueError(f"scores must be {n_rows} rows of {n_cols} meshes (conditions × columns)")
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(2.1 * n_cols, 2.25 * n_rows), squeeze=False)
    for i, name in enumerate(rows):
        lo, hi = np.percentile(np.concatenate([np.ravel(s) for s in scores[i]]), [5, 95])
        levels = np.linspace(lo, hi if hi - lo > 1e-2 else lo + 1e-2, n_levels + 2)[1:-1]
        x, y = data[name]
        for j in range(n_cols):
            ax, s = axes[i, j], np.asarray(scores[i][j])
            axis = np.linspace(-extent, extent, s.shape[0])
            xx, yy = np.meshgrid(axis, axis)
            ax.contourf(xx, yy, np.sign(s), levels=[-1.5, 0, 1.5], colors=["#ffdddd", "#ddddff"], alpha=0.6)
            ax.contour(xx, yy, s, levels=levels, cmap="coolwarm", vmin=lo, vmax=hi, linewidths=0.5, alpha=0.8)
            if s.min() < 0 < s.max():
                ax.contour(xx, yy, s, levels=[0], colors="black", linewidths=1.2)
            pos = y > 0
            ax.scatter(x[pos, 0], x[pos, 1], s=3, c="tab:blue", edgecolors="none")
            ax.scatter(x[~pos, 0], x[~pos, 1], s=5, c="tab:red", marker="x", linewidths=0.6)
            ax.set(aspect="equal", xticks=[], yticks=[])
            ax.text(0.5, -0.03, notes[i][j], transform=ax.transAxes, ha="center", va="top", fontsize=8)
            if i == 0:
                ax.set_title(columns[j], fontsize=8.5)
            if j == 0:
                ax.set_ylabel(name.replace("_", "/"), fontsize=9)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def condition_profiles(
    angles_deg: np.ndarray,
    profiles: Mapping[str, Mapping[str, Mapping[float, tuple[np.ndarray, np.ndarray]]]],
    *,
    title: str,
):
    """Rows = conditions, columns = c*, b*: angular deviation d_t(φ) at r = 1 at each time (light to dark), realised
    solid, the exact flow's prediction dotted; one y scale per row."""
    rows = list(profiles)
    kinds = list(profiles[rows[0]])
    fig, axes = plt.subplots(len(rows), len(kinds), figsize=(4.6 * len(kinds), 2.2 * len(rows)), squeeze=False,
                             sharex=True, sharey="row")  # fmt: skip
    for i, name in enumerate(rows):
        for j, kind in enumerate(kinds):
            ax, curves = axes[i, j], profiles[name][kind]
            times = sorted(curves)
            shades = np.linspace(0.35, 1.0, len(times))
            for t, shade in zip(times, shades, strict=True):
                real, pred = curves[t]
                colour = plt.get_cmap("Blues" if kind == "c" else "Oranges")(shade)
                ax.plot(angles_deg, real, color=colour, lw=1.3, label=f"t = {t:.2f}")
                ax.plot(angles_deg, pred, color="k", lw=0.8, ls=":")
            if i == 0:
                ax.set_title(f"along {kind}*", fontsize=9)
            if j == 0:
                ax.set_ylabel(f"{name.replace('_', '/')}\n" + r"$d_t(\varphi)$", fontsize=8.5)
            if i == 0:
                ax.legend(fontsize=8, loc="upper right")
    for ax in axes[-1]:
        ax.set_xlabel("angle φ (degrees) at r = 1")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def direction_cosine_curves(curves: Mapping[str, Mapping[str, tuple[np.ndarray, ...]]], bounds: Mapping[str, float]):
    """Columns = starts; top: cos(c*, b*) along each resolved flow; bottom: |cos(J c*, J b*)| (solid) and
    |cos(X f, −δ)| (dotted) on a log scale, with the bound eq. 22 allows at t = 0 (grey)."""
    names = list(curves)
    fig, axes = plt.subplots(2, len(names), figsize=(3.6 * len(names), 5.0), squeeze=False, sharex=True)
    for j, name in enumerate(names):
        for kind, (t, cos_param, cos_function, cos_targets) in curves[name].items():
            colour = KIND_COLOURS[kind]
            axes[0, j].plot(t, cos_param, color=colour, lw=1.4, label=f"along {kind}*")
            axes[1, j].semilogy(t, np.abs(cos_function), color=colour, lw=1.4, label=f"|cos(Jc*, Jb*)|, along {kind}*")
            axes[1, j].semilogy(t, np.abs(cos_targets), color=colour, lw=1.0, ls=":")
        axes[1, j].axhline(bounds[name], color="grey", lw=1.0, ls="--", label="eq. 22 bound at t = 0")
        axes[0, j].axhline(0, color="k", lw=0.6)
        axes[0, j].set(title=name, ylim=(-1, 1))
        axes[1, j].set_xlabel("t")
    axes[0, 0].set_ylabel("cos(c*, b*) (parameters)")
    axes[1, 0].set_ylabel("|cos| (function space)")
    axes[0, 0].legend(fontsize=8)
    axes[1, 0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def diagnostics_along_flows(
    curves: Mapping[str, Mapping[str, Mapping[str, tuple]]], rows: Sequence[tuple[str, str, bool]]
):
    """Rows = diagnostics (key, label, log scale), columns = conditions; a line per direction and mode, one legend
    above the panels (legible at the text column's width)."""
    conditions = list(curves)
    fig, axes = plt.subplots(len(rows), len(conditions), figsize=(2.3 * len(conditions), 1.9 * len(rows) + 0.5),
                             squeeze=False, sharex=True, sharey="row")  # fmt: skip
    for i, (key, label, log) in enumerate(rows):
        for j, c in enumerate(conditions):
            ax = axes[i, j]
            for line, (t, v) in curves[c][key].items():
                colour, style = LINE_STYLES.get(line, ("k", "-"))
                ax.plot(t, v, color=colour, ls=style, lw=1.3, marker="." if len(t) < 15 else None, label=line)
            if log:
                ax.set_yscale("log")
            if i == 0:
                ax.set_title(c.replace("_", "/"), fontsize=11)
            if j == 0:
                ax.set_ylabel(SHORT_LABELS.get(key, label), fontsize=10)
            ax.tick_params(labelsize=9)
    for ax in axes[-1]:
        ax.set_xlabel("t", fontsize=10)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=min(4, len(labels)), fontsize=10, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.5 / fig.get_figheight()))
    return fig


def block_sensitivity_histograms(S: Mapping[str, np.ndarray], blocks: Sequence[tuple[str, slice]], bins: np.ndarray):
    """One panel per layer block (weights on top, biases below): histograms of the aggregate sensitivities S_i of
    each parameter vector over shared logarithmic bins."""
    n_cols = (len(blocks) + 1) // 2
    fig, axes = plt.subplots(2, n_cols, figsize=(2.3 * n_cols, 5.0), squeeze=False, sharex=True)
    weights = [b for b in blocks if b[0].startswith("W")] + [b for b in blocks if not b[0].startswith("W")]
    for ax, (name, sl) in zip(axes.flat, weights, strict=False):
        for label, s in S.items():
            v = s[sl]
            ax.hist(v[v > 0], bins=bins, histtype="step", lw=1.3, label=label.replace("_", "/"))
        ax.set_xscale("log")
        n = sl.stop - sl.start
        ax.set_title(f"{name} ({n} parameter{'' if n == 1 else 's'})", fontsize=10)
        ax.tick_params(labelsize=9)
    for ax in axes[-1]:
        ax.set_xlabel(r"$S_i=\|J_{:,i}\|/\sqrt{N}$", fontsize=10)
    for ax in axes[:, 0]:
        ax.set_ylabel("parameters", fontsize=10)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=len(labels), fontsize=10, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.4 / fig.get_figheight()))
    return fig
