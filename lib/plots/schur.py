"""Figures of the chapter "Ordered real Schur coordinates": |T| with its sectors, the spectrum with the α·ρ circle,
the split against α and the ablation operator."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure

from lib.paper_a.schur import ABLATION_BLOCKS, SchurForm, SchurSplit, ablate

R_COLOR, C_COLOR = "tab:red", "tab:blue"
TEX = {"RR": r"$T_{RR}$", "CR": r"$T_{C\to R}$", "CC": r"$T_{CC}$"}


def schur_heatmap(sp: SchurSplit, ax: plt.Axes, *, title: str = "", vmin: float = 1e-4) -> None:
    """|T| on a log colour scale, the R/C boundary at n_R drawn, and the eq. (5) blocks named."""
    form = sp.form
    n, n_R = form.n, sp.n_R
    A = np.abs(np.asarray(form.T))
    top = max(float(A.max()), vmin * 10)
    im = ax.imshow(np.maximum(A, vmin), norm=LogNorm(vmin=vmin, vmax=top), cmap="magma_r", interpolation="nearest")
    plt.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label=r"$|T_{ij}|$ (clipped below)")
    if 0 < n_R < n:
        for x in (n_R - 0.5,):
            ax.axvline(x, color="k", lw=1.2)
            ax.axhline(x, color="k", lw=1.2)
        kw = dict(ha="center", va="center", fontsize=9, color="k", bbox=dict(fc="w", ec="none", alpha=0.7, pad=1))
        ax.text(n_R / 2 + n_R / 5, n_R / 5, TEX["RR"], **kw)
        ax.text((n_R + n) / 2, n_R / 2, TEX["CR"], **kw)
        ax.text((n_R + n) / 2 + (n - n_R) / 5, n_R + (n - n_R) / 5, TEX["CC"], **kw)
        ax.text(n_R / 2, (n_R + n) / 2, "0", **kw)
    ax.set_xlabel("Schur coordinate j")
    ax.set_ylabel("Schur coordinate i")
    ax.set_title(title or rf"$|T|$, $n_R$ = {n_R} of {n}")


def eigenvalue_plane(sp: SchurSplit, ax: plt.Axes, *, title: str = "") -> None:
    """Eigenvalues (both members of each pair) coloured by sector, with the circles |λ| = α·ρ and |λ| = ρ."""
    form = sp.form
    lam = np.asarray(form.eigenvalues)
    in_R = np.asarray(sp.in_R)
    for mask, color, name in ((in_R, R_COLOR, "R"), (~in_R, C_COLOR, "C")):
        z = lam[mask]
        z = np.concatenate([z, np.conj(z[z.imag > 0])])
        ax.scatter(z.real, z.imag, s=14, color=color, label=f"{name} ({int(np.sum(mask))} blocks)", zorder=3)
    t = np.linspace(0, 2 * np.pi, 400)
    for r, style, name in ((sp.threshold, "--", f"α·ρ (α = {sp.alpha:g})"), (form.rho, ":", "ρ")):
        ax.plot(r * np.cos(t), r * np.sin(t), style, color="0.3", lw=1, label=name)
    ax.set_aspect("equal")
    ax.axhline(0, color="0.85", lw=0.5, zorder=0)
    ax.axvline(0, color="0.85", lw=0.5, zorder=0)
    ax.set_xlabel("Re λ")
    ax.set_ylabel("Im λ")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_title(title or "spectrum")


def schur_overview(sp: SchurSplit, *, title: str = "") -> Figure:
    """Two panels: the |T| heatmap with the sector boundary and the spectrum with the α·ρ circle."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.4), layout="constrained")
    schur_heatmap(sp, a)
    eigenvalue_plane(sp, b)
    if title:
        fig.suptitle(title)
    return fig


def split_curve(
    alphas: Sequence[float], curves: dict[str, Sequence[int]], *, n: int, marks: Sequence[float] = ()
) -> Figure:
    """n_R against α for each named matrix (step curves: n_R moves only when α·ρ crosses a block modulus)."""
    fig, ax = plt.subplots(figsize=(6.5, 3.6), layout="constrained")
    for (name, n_R), color in zip(curves.items(), ("k", "tab:green", "tab:orange"), strict=False):
        ax.step(alphas, n_R, where="post", color=color, lw=1.3, label=name)
    for a in marks:
        ax.axvline(a, color="0.6", ls="--", lw=0.8)
    ax.set_xlabel("α (threshold α·ρ)")
    ax.set_ylabel(r"$n_R$ (coordinates in R)")
    ax.set_ylim(0, n + 2)
    ax.legend(fontsize=8)
    ax.set_title(f"the R/C split against α (n = {n})")
    return fig


def ablation_gallery(form: SchurForm, alpha: float, *, vmin: float = 1e-4) -> Figure:
    """|T̃| after zeroing each coupling block alone, with the removed mass ‖ΔT‖_F/‖T‖_F in the titles."""
    fig, axes = plt.subplots(1, 3, figsize=(9.4, 3.3), layout="constrained")  # legible at the text column's width
    top = max(float(np.abs(form.T).max()), vmin * 10)
    for ax, name in zip(axes, ABLATION_BLOCKS, strict=True):
        ab = ablate(form, [name], alpha)
        im = ax.imshow(
            np.maximum(np.abs(ab.T), vmin), norm=LogNorm(vmin=vmin, vmax=top), cmap="magma_r", interpolation="nearest"
        )
        n_R = ab.split.n_R
        ax.axvline(n_R - 0.5, color="k", lw=1)
        ax.axhline(n_R - 0.5, color="k", lw=1)
        ax.set_title(f"−{TEX[name]}: removed mass {ab.removed_mass:.3f}", fontsize=10)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.colorbar(im, ax=axes, fraction=0.02, pad=0.01, label=r"$|\widetilde{T}_{ij}|$")
    return fig


__all__ = ["ablation_gallery", "eigenvalue_plane", "schur_heatmap", "schur_overview", "split_curve"]
