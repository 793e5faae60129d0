"""How well one number predicts another: rank correlation (the book's ``spearman``), ROC AUC, the factor error."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.stats import rankdata

from lib.paper_a.open_questions import spearman  # noqa: F401  (the book's rank correlation, re-exported)


def auc(scores: Sequence[float], positive: Sequence[bool]) -> float:
    """ROC AUC of ``scores`` for the ``positive`` labels (higher score = predicted positive), ties counting ½.

    The Mann–Whitney form: the probability that a random positive outscores a random negative. NaN when one class
    is empty; NaN scores are refused.
    """
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(positive, dtype=bool)
    if s.shape != y.shape:
        raise ValueError(f"scores {s.shape} and positive {y.shape} must have the same shape")
    if not np.isfinite(s).all():
        raise ValueError("scores must be finite (drop the undefined cases first)")
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        return math.nan
    ranks = rankdata(s)
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def roc_curve(scores: Sequence[float], positive: Sequence[bool]) -> tuple[np.ndarray, np.ndarray]:
    """(false-positive rate, true-positive rate) at every threshold, from (0, 0) to (1, 1)."""
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(positive, dtype=bool)
    thresholds = np.unique(s)[::-1]
    tpr = [0.0] + [float((s[y] >= t).mean()) if y.any() else math.nan for t in thresholds]
    fpr = [0.0] + [float((s[~y] >= t).mean()) if (~y).any() else math.nan for t in thresholds]
    return np.array(fpr), np.array(tpr)


def log_factor(predicted: Sequence[float], real: Sequence[float]) -> np.ndarray:
    """log10(predicted / real) where both are positive (NaN elsewhere): the factor by which a prediction errs."""
    p, r = np.asarray(predicted, dtype=np.float64), np.asarray(real, dtype=np.float64)
    ok = (p > 0) & (r > 0)
    out = np.full(p.shape, np.nan)
    out[ok] = np.log10(p[ok] / r[ok])
    return out


def leave_one_out_rates(groups: Sequence[str], owners: Sequence[str], positive: Sequence[bool]) -> np.ndarray:
    """For each case, the positive rate of its group among the *other* owners' cases (NaN if there are none).

    The score of a categorical predictor (here: which blocks an ablation removes) judged without its own solution.
    """
    g, o, y = np.asarray(groups), np.asarray(owners), np.asarray(positive, dtype=bool)
    out = np.full(g.shape, np.nan)
    for i in range(g.size):
        peers = (g == g[i]) & (o != o[i])
        if peers.any():
            out[i] = float(y[peers].mean())
    return out
