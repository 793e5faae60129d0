"""Paper A's metrics: replay accuracy Acc_rc (§3.2), FVU, ΔFVU and S_ΔT (§2.7), and mean ± SEM over seeds.

Every function accepts torch tensors or numpy arrays and returns plain Python floats (or a float array for
``fvu(..., reduce=False)`` and ``fvu(..., stacked=True)``), computed in float64. :func:`fvu` is the book's one FVU:
the per-network ablations, the batched controls (:func:`lib.paper_a.subspace.fvu_many`) and the lenses' Gauss–Newton
terms (through :func:`target_variance`, its denominator) all call it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch


def _np(x) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=np.float64)


def sign_accuracy(outputs_bty, targets_bty, mask_bty=None) -> float:
    """Fraction of (masked) entries with sgn(ŷ) = y for ±1 targets; sgn(0) = 0 counts as wrong."""
    out, tgt = _np(outputs_bty), _np(targets_bty)
    hit = (np.sign(out) == tgt).astype(np.float64)
    if mask_bty is None:
        return float(hit.mean())
    mask = _np(mask_bty)
    return float((hit * mask).sum() / mask.sum())


def replay_accuracy(outputs_bty, targets_bty, *, n_symbols: int = 8, lags: int = 128) -> float:
    """Acc_rc (paper A §3.2): sign agreement over replay lags ℓ = 1..lags × all channels, after the n_symbols inputs.

    ``outputs_bty``/``targets_bty`` are full rollouts (B, n_symbols + L, d) with L ≥ lags.
    """
    out, tgt = _np(outputs_bty), _np(targets_bty)
    if out.shape[1] < n_symbols + lags:
        raise ValueError(f"rollout has {out.shape[1]} steps; need n_symbols + lags = {n_symbols + lags}")
    window = slice(n_symbols, n_symbols + lags)
    return sign_accuracy(out[:, window], tgt[:, window])


def fvu(outputs_bty, targets_bty, mask_bty=None, *, reduce: bool = True, stacked: bool = False):
    """FVU = E‖ŷ − y‖² / E‖y − ȳ‖² (paper A §2.7), expectations over held-out trials and (masked) time steps.

    ȳ is the per-channel mean target over all held-out trials and (masked) time steps of the evaluation set;
    the squared norms sum over channels. ``reduce=False`` returns the per-channel ratios instead (N_y,).

    Two summation orders, both float64, equal up to rounding: by default numpy sums each channel over trials and
    steps, then the channels. ``stacked=True`` takes the outputs (D, B, T, N_y) of D networks on the same trials and
    returns their (D,) FVUs, torch summing every trial, step and channel at once against :func:`target_variance`
    (the batched controls' order).
    """
    if stacked:
        if not reduce:
            raise ValueError("reduce=False gives per-channel ratios of one network; with stacked=True use reduce=True")
        y = torch.as_tensor(targets_bty, dtype=torch.float64)
        m = torch.ones_like(y) if mask_bty is None else torch.as_tensor(mask_bty, dtype=torch.float64)
        err = (((torch.as_tensor(outputs_bty, dtype=torch.float64) - y) ** 2) * m).sum(dim=(1, 2, 3))
        return (err / target_variance(y, m)).numpy()
    out, tgt = _np(outputs_bty), _np(targets_bty)
    mask = np.ones_like(tgt) if mask_bty is None else _np(mask_bty)
    n = mask.sum(axis=(0, 1))  # (N_y,)
    ybar = (tgt * mask).sum(axis=(0, 1)) / n
    err = (((out - tgt) ** 2) * mask).sum(axis=(0, 1))
    var = (((tgt - ybar) ** 2) * mask).sum(axis=(0, 1))
    if reduce:
        return float(err.sum() / var.sum())
    return err / var


def target_variance(targets_bty, mask_bty=None) -> torch.Tensor:
    """V = Σ m ‖y − ȳ‖², the denominator of the FVU (ȳ the masked per-channel mean target), a float64 torch scalar.

    Torch sums every trial, step and channel at once (the order of ``fvu(..., stacked=True)``); the lenses' Gauss–Newton
    ΔFVU divides by it.
    """
    y = torch.as_tensor(targets_bty, dtype=torch.float64)
    m = torch.ones_like(y) if mask_bty is None else torch.as_tensor(mask_bty, dtype=torch.float64)
    ybar = (y * m).sum(dim=(0, 1)) / m.sum(dim=(0, 1))
    return (((y - ybar) ** 2) * m).sum()


def delta_fvu(fvu_ablated: float, fvu_full: float) -> float:
    """ΔFVU = FVU(W̃_hh) − FVU(W_hh) (paper A §2.7)."""
    return float(fvu_ablated) - float(fvu_full)


def relative_mass(delta_T, T) -> float:
    """‖ΔT‖_F / ‖T‖_F (the relative Schur mass removed)."""
    return float(np.linalg.norm(_np(delta_T)) / np.linalg.norm(_np(T)))


def sensitivity(dfvu: float, removed_mass: float) -> float:
    """S_ΔT = ΔFVU / (‖ΔT‖_F / ‖T‖_F) (paper A §2.7); NaN when nothing was removed."""
    return float(dfvu) / float(removed_mass) if removed_mass > 0 else math.nan


def mean_sem(values: Sequence[float]) -> tuple[float, float]:
    """(mean, standard error of the mean with ddof = 1) over seeds; SEM is NaN for a single value."""
    v = _np(values).ravel()
    if v.size == 0:
        raise ValueError("mean_sem needs at least one value")
    sem = float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else math.nan
    return float(v.mean()), sem
