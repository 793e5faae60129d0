"""Nothing poisoned is cached (issue 35): a computed entry whose weights or losses hold nan or inf is refused before it
is written, with the solution it belongs to named; the good entries beside it are untouched. Marked ``faults``."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from lib.core import cache
from lib.paper_a import batched_training, train
from lib.paper_a.train import TrainConfig

pytestmark = pytest.mark.faults


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BOOK_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _tiny(seed: int) -> TrainConfig:
    return TrainConfig(task="copy", task_params={"n_symbols": 2, "dim": 2, "replay_steps": 4}, n_hidden=6, steps=5,
                       batch_size=8, seed=seed, lr=1e-2)  # fmt: skip


@pytest.mark.parametrize(
    ("payload", "bad"),
    [
        ({"w": torch.tensor([1.0, math.nan])}, "'w'"),
        ({"w": {"layer": torch.tensor([math.inf])}}, "'w'"),
        ({"w": torch.zeros(2), "loss": np.array([0.5, np.nan])}, "'loss'"),
        ({"w": torch.zeros(2), "loss": [0.1, float("-inf")]}, "'loss'"),
    ],
    ids=["nan-tensor", "inf-in-a-state-dict", "nan-loss-array", "inf-loss-list"],
)
def test_a_non_finite_entry_is_refused_and_never_written(payload, bad, _cache):
    with pytest.raises(cache.PoisonedEntryError, match=rf"demo model seed=4: {bad} hold\(s\) non-finite values"):
        cache.fetch("demo", {"seed": 4}, lambda: payload, code="c0", finite=("w", "loss"))
    assert not list(_cache.glob("demo-*")), "nothing is written, not even a temporary file"
    good, _, hit = cache.fetch("demo", {"seed": 5}, lambda: {"w": torch.ones(2), "n": math.nan}, code="c0",
                               finite=("w",))  # fmt: skip
    assert not hit and torch.equal(good["w"], torch.ones(2)), "an entry outside finite= may hold nan (a history)"


def _poisoned(real, poison_seed: int):
    def train_seeds(configs, progress=True):
        out = real(configs, progress=progress)
        for config, fields in zip(configs, out, strict=True):
            if config.seed == poison_seed:
                fields["weights"]["W_hh"][0, 0] = math.nan  # as a diverged training leaves it
        return out

    return train_seeds


@pytest.mark.parametrize("many", [False, True], ids=["load_or_train", "load_or_train_many"])
def test_a_diverged_paper_a_model_is_named_and_not_cached_its_good_siblings_are(many, monkeypatch, _cache):
    good = train.load_or_train(_tiny(1), progress=False)
    train.cache_path(good.config).unlink()
    monkeypatch.setattr(batched_training, "train_seeds", _poisoned(batched_training.train_seeds, 2))
    with pytest.raises(cache.PoisonedEntryError, match=r"paper_a_rnn model task='copy' seed=2: 'weights' hold"):
        if many:
            train.load_or_train_many([_tiny(2), _tiny(1)], workers=1, progress=False)  # poisoned first
        else:
            train.load_or_train(_tiny(2), progress=False)
    assert not train.cache_path(_tiny(2)).exists()
    if many:  # the sibling trained in the same job is cached, bit for bit what it was alone
        again = train.load_or_train(_tiny(1), progress=False)
        assert again.from_cache and all(torch.equal(good.weights[k], again.weights[k]) for k in good.weights)
