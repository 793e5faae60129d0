"""lib.paper_a.metrics on known answers: Acc_rc, FVU (per-channel ȳ), ΔFVU, S_ΔT, mean ± SEM."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from lib.paper_a import metrics


def test_sign_accuracy_counts_sign_matches_and_zero_as_wrong():
    out = np.array([[[0.3, -2.0], [0.0, 1.0]]])
    tgt = np.array([[[1.0, -1.0], [1.0, -1.0]]])
    assert metrics.sign_accuracy(out, tgt) == 0.5
    mask = np.array([[[1.0, 1.0], [0.0, 0.0]]])
    assert metrics.sign_accuracy(torch.tensor(out), torch.tensor(tgt), torch.tensor(mask)) == 1.0


def test_replay_accuracy_uses_only_the_lags_after_the_symbols():
    n_symbols, lags = 2, 3
    tgt = np.ones((1, n_symbols + lags + 4, 1))
    out = -np.ones_like(tgt)
    out[:, n_symbols : n_symbols + lags] = 1.0  # right exactly on the window
    assert metrics.replay_accuracy(out, tgt, n_symbols=n_symbols, lags=lags) == 1.0
    out[:, n_symbols] = -1.0
    assert metrics.replay_accuracy(out, tgt, n_symbols=n_symbols, lags=lags) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="need n_symbols"):
        metrics.replay_accuracy(out[:, :4], tgt[:, :4], n_symbols=n_symbols, lags=lags)


def test_fvu_known_values():
    rng = np.random.default_rng(0)
    y = rng.normal(size=(7, 5, 3)) + np.array([1.0, -2.0, 5.0])  # channel offsets: ȳ is taken per channel
    assert metrics.fvu(y, y) == 0.0
    ybar = y.mean(axis=(0, 1))
    assert metrics.fvu(np.broadcast_to(ybar, y.shape), y) == pytest.approx(1.0)
    per = metrics.fvu(np.broadcast_to(ybar, y.shape), y, reduce=False)
    assert per.shape == (3,) and np.allclose(per, 1.0)
    noisy = y + 0.1
    expected = (0.01 * y.size) / ((y - ybar) ** 2).sum()
    assert metrics.fvu(noisy, y) == pytest.approx(expected)


def test_fvu_mask_excludes_entries():
    y = np.array([[[1.0], [3.0], [100.0]]])
    out = np.array([[[1.0], [3.0], [-50.0]]])
    mask = np.array([[[1.0], [1.0], [0.0]]])
    assert metrics.fvu(out, y, mask) == 0.0


def test_delta_fvu_and_sensitivity():
    assert metrics.delta_fvu(0.3, 0.1) == pytest.approx(0.2)
    assert metrics.sensitivity(0.2, 0.1) == pytest.approx(2.0)
    assert math.isnan(metrics.sensitivity(0.2, 0.0))
    T = np.diag([3.0, 4.0])
    assert metrics.relative_mass(np.diag([0.0, 4.0]), T) == pytest.approx(0.8)


def test_mean_sem():
    m, s = metrics.mean_sem([1.0, 2.0, 3.0])
    assert m == 2.0 and s == pytest.approx(1 / math.sqrt(3))
    m, s = metrics.mean_sem([5.0])
    assert m == 5.0 and math.isnan(s)
    with pytest.raises(ValueError):
        metrics.mean_sem([])
