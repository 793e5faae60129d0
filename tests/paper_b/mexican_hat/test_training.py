"""The fast ASRNN training step (hand-written rollout gradient, flat Adam) against the readable one (autograd,
``torch.optim.Adam``): the same history and weights up to float32 rounding, with and without the L1 penalty, and
the same numbers from two runs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lib.paper_b import mexican_hat as H


def _cfg(l1: float) -> H.ASRNNConfig:
    data = H.DataConfig(ics_per_alpha=2, splits=10)
    return H.ASRNNConfig(data=data, steps=40, batch=64, eval_every=10, l1=l1, snapshot_steps=(20,))


def _flat(model: H.ASRNN) -> torch.Tensor:
    return torch.cat([t.detach().reshape(-1) for t in model.parameters()])


@pytest.mark.parametrize("l1", [0.0, 1e-3])
def test_fast_training_matches_the_reference_to_float_rounding(l1):
    fast = H.train_asrnn(_cfg(l1), progress=False)
    ref = H.train_asrnn(_cfg(l1), progress=False, reference=True)
    assert np.array_equal(fast.steps, ref.steps) and set(fast.snapshots) == set(ref.snapshots) == {20}
    assert np.allclose(fast.val_mse, ref.val_mse, rtol=1e-4, atol=0)
    assert np.allclose(fast.train_mse[1:], ref.train_mse[1:], rtol=1e-4, atol=0)
    moved = float((_flat(ref.model) - _flat(H.ASRNN.init(seed=42))).abs().max())
    assert float((_flat(fast.model) - _flat(ref.model)).abs().max()) < 1e-4 * moved  # Adam moved θ by ~moved
    assert float((_flat(fast.snapshots[20]) - _flat(ref.snapshots[20])).abs().max()) < 1e-4 * moved


def test_fast_training_is_deterministic():
    a, b = (H.train_asrnn(_cfg(0.0), progress=False) for _ in range(2))
    assert np.array_equal(a.val_mse, b.val_mse) and torch.equal(_flat(a.model), _flat(b.model))
