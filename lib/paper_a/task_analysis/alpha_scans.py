"""The α-scan of a task analysis: every solution re-split and re-ablated over a grid of thresholds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lib.core import params
from lib.paper_a import schur
from lib.paper_a.task_analysis.analysis import TaskAnalysis
from lib.paper_a.task_analysis.configuration import SINGLE_BLOCKS
from lib.paper_a.task_analysis.profiles import profile_solution


@dataclass(frozen=True)
class AlphaScan:
    """n_R and single-block ΔFVU of every solution over a grid of α.

    ``n_R``: (n_seeds, n_alpha) int; ``dfvu``: block → (n_seeds, n_alpha); ``seeds``, ``alphas`` label the axes.
    """

    task: str
    alphas: np.ndarray
    seeds: list[int]
    n_R: np.ndarray
    dfvu: dict[str, np.ndarray]

    def n_R_changes(self) -> np.ndarray:
        """(n_seeds,) bool: whether n_R takes more than one value over the scanned α."""
        return np.array([len(np.unique(row)) > 1 for row in self.n_R])

    def ordering_flips(self, a: str, b: str) -> np.ndarray:
        """(n_seeds,) bool: whether the sign of ΔFVU(−a) − ΔFVU(−b) changes over the scanned α."""
        s = np.sign(self.dfvu[a] - self.dfvu[b])  # NaN where either block is empty: left out
        return np.array([len(np.unique(row[np.isfinite(row) & (row != 0)])) > 1 for row in s])


def alpha_scan(analysis: TaskAnalysis, alphas: Sequence[float], blocks: Sequence[str] = SINGLE_BLOCKS) -> AlphaScan:
    """Re-split and re-ablate every solution of ``analysis`` at each α (the Schur form is computed once per solution;
    α is validated by :func:`lib.paper_a.schur.split`, at the first solution).

    A split is fixed by its n_R (the R blocks are the leading ones, the masks follow from n_R), so the α's of one
    solution that give the same n_R share one ablation profile: the same rollouts, computed once.
    """
    alphas = np.asarray([float(a) for a in alphas])
    params.subset("blocks", blocks, schur.ABLATION_BLOCKS)
    n_R = np.zeros((len(analysis.solutions), len(alphas)), dtype=int)
    dfvu = {b: np.zeros((len(analysis.solutions), len(alphas))) for b in blocks}
    subsets = [(), *[(b,) for b in blocks]]
    for i, sol in enumerate(analysis.solutions):
        form = schur.ordered_real_schur(sol.weights["W_hh"])
        by_n_R = {}  # n_R → the profile of that split
        for j, a in enumerate(alphas):
            sectors = schur.split(form, float(a))
            prof = by_n_R.get(sectors.n_R)
            if prof is None:
                prof = by_n_R[sectors.n_R] = profile_solution(
                    sol.weights, analysis.batch, subsets=subsets, sectors=sectors
                )
            n_R[i, j] = prof.n_R
            for b in blocks:
                dfvu[b][i, j] = prof.dfvu[b]
    return AlphaScan(analysis.task, alphas, [s.config.seed for s in analysis.solutions], n_R, dfvu)
