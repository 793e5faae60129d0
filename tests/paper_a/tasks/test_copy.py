"""The copy task (paper A §3): shapes, seeding, ±1 symbols, zero replay input, cyclic targets, mask, metadata."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lib.paper_a.tasks import available_tasks, get_task


def test_registered_with_metadata():
    spec = get_task("copy")
    assert "copy" in available_tasks()
    assert spec.n_inputs == 8 and spec.n_outputs == 8
    assert "paper A §3" in spec.metadata["source"] and "Arjovsky" in spec.metadata["differs_from"]
    assert spec.defaults == {"n_symbols": 8, "dim": 8, "replay_steps": 32}


def test_shapes_and_structure():
    b = get_task("copy").generate(16, seed=3, replay_steps=20)
    assert b.inputs_btx.shape == b.targets_bty.shape == b.mask_bty.shape == (16, 28, 8)
    assert b.inputs_btx.dtype == torch.float32
    x, y, m = (t.numpy() for t in b)
    assert set(np.unique(x[:, :8])) == {-1.0, 1.0}
    assert np.all(x[:, 8:] == 0) and np.all(m[:, :8] == 0) and np.all(m[:, 8:] == 1) and np.all(y[:, :8] == 0)
    for lag in range(20):  # replay step ℓ = lag + 1 repeats symbol (ℓ − 1) mod 8
        assert np.array_equal(y[:, 8 + lag], x[:, lag % 8])


def test_seeding():
    gen = get_task("copy").generate
    a, b, c = gen(4, seed=1), gen(4, seed=1), gen(4, seed=2)
    assert torch.equal(a.inputs_btx, b.inputs_btx) and not torch.equal(a.inputs_btx, c.inputs_btx)
    # a threaded Generator gives successive, different batches
    rng = np.random.default_rng(0)
    assert not torch.equal(gen(4, seed=rng).inputs_btx, gen(4, seed=rng).inputs_btx)


def test_other_sizes():
    b = get_task("copy").generate(2, seed=0, n_symbols=3, dim=5, replay_steps=7)
    assert b.inputs_btx.shape == (2, 10, 5)
    assert torch.equal(b.targets_bty[:, 3 + 3], b.inputs_btx[:, 0])


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"replay_steps": 0}, "replay_steps"),
        ({"n_symbols": 2.5}, "n_symbols"),
        ({"seed": -1}, "seed"),
        ({"n_symbol": 3}, r"task 'copy' has no parameter n_symbol=3; its parameters are \['n_symbols', 'dim'"),
    ],
)
def test_bad_parameters(kwargs, match):
    kw = {"seed": 0, **kwargs}
    with pytest.raises((ValueError, TypeError), match=match):
        get_task("copy").generate(2, **kw)


def test_unknown_task_lists_available():
    with pytest.raises(ValueError, match="available tasks"):
        get_task("copyy")
