"""Figures of the chapter *Your own network*: the split and the damage of each ablation; paper B's sensitivities."""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np

from lib.own_network.lift_report import tensor_names
from lib.paper_a import ablation
from lib.paper_a import schur as S
from lib.plots.schur import eigenvalue_plane


def split_and_damage(result, decides, title: str = "") -> plt.Figure:
    """Left: the eigenvalues of the matrix that decides the split (``decides``:
    :func:`lib.own_network.deciding_split`), with |λ| = α·ρ and ρ; right: ΔFVU and S_ΔT of every ablated subset of
    couplings of ``result`` (log scale; an ablation that removes nothing, or changes nothing, is left out)."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10.5, 4.2), gridspec_kw={"width_ratios": [1, 1.5]})
    eigenvalue_plane(decides, left, title=title)
    p = result.profile
    subsets = [s for s in S.all_subsets()[1:] if (k := ablation.subset_key(s)) in p.dfvu and k not in p.empty]
    keys = [ablation.subset_key(s) for s in subsets]
    x = np.arange(len(keys))
    for shift, values, name, color in ((-0.2, p.dfvu, "ΔFVU", "C3"), (0.2, p.sens, "S_ΔT", "C0")):
        heights = np.array([float(values[k]) if float(values[k]) > 0 else np.nan for k in keys])  # log scale
        right.bar(x + shift, heights, width=0.4, label=name, color=color)
    right.set_yscale("log")
    right.set_xticks(x, [S.label(s).replace(", ", "\n") for s in subsets], fontsize=8)
    right.set_ylabel("held-out damage (log scale)")
    right.set_title("Each subset of couplings zeroed; inputs, readout and any biases fixed", fontsize=10)
    right.legend(frameon=False)
    fig.tight_layout()
    return fig


def sensitivity_shares(lifts: Mapping[str, object]) -> plt.Figure:
    """Each parameter tensor's share of Σ S_i², one bar group per network state (before and after training)."""
    names = list(next(iter(lifts.values())).shares())
    fig, ax = plt.subplots(figsize=(7.5, 3.4))
    width = 0.8 / len(lifts)
    for j, (state, lift) in enumerate(lifts.items()):
        shares = lift.shares()
        ax.bar(np.arange(len(names)) + (j - (len(lifts) - 1) / 2) * width, [shares[n] for n in names], width=width,
               label=state)  # fmt: skip
    ax.set_xticks(np.arange(len(names)), [tensor_names(names)[n] for n in names])
    ax.set_ylabel("share of Σ S²")
    ax.set_title("Where the function is sensitive: each parameter tensor's share", fontsize=10)
    ax.legend(frameon=False)
    fig.tight_layout()
    return fig
