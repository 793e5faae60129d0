"""lib.plots.schur: every figure draws (Agg backend) without error."""

from __future__ import annotations

import numpy as np

from lib.paper_a.schur import (
    ordered_real_schur,
    split,
)
from tests.paper_a.test_schur import make_matrix


def test_plots_smoke():
    """Every figure of lib.plots.schur draws (Agg backend) without error."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lib.plots import schur as P

    form = ordered_real_schur(make_matrix("gauss", 12, 0))
    sp = split(form, 0.9)
    alphas = np.linspace(0.5, 1.0, 11)
    figs = [
        P.schur_overview(sp, title="t"),
        P.ablation_gallery(form, 0.9),
        P.split_curve(alphas, {"a": [split(form, float(a)).n_R for a in alphas]}, n=12, marks=(0.9,)),
    ]
    for fig in figs:
        fig.canvas.draw()
        plt.close(fig)
