"""lib.paper_a.batched_training: the book's training against the textbook loop.

Training must follow the textbook loop ``lib.paper_a.reference_training.train`` on the same batches: bit for bit,
float32 included, once the kernel's arithmetic is taken out (the batched path with autograd in its place, against the
loop through ``rollout_fast``); as it runs, within the kernel's rounding (float64: relative 1e-10; float32: the bound
below). A solution's weights must not depend on the seeds trained beside it (the cache stores one model per
configuration, however it was trained). The seed-batched kernel it trains with (``lib.kernels.seed_batch``) is tested
in ``tests/kernels/test_seed_batch.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lib.core.paths import REPO_ROOT
from lib.kernels import seed_batch
from lib.paper_a import batched_training, reference_training, rnn, train
from lib.paper_a.tasks import load_task_modules
from lib.paper_a.train import TrainConfig


def _config(**kw):
    base = dict(task="flipflop", n_hidden=16, batch_size=8, steps=25, seed=1, lr=1e-2)
    return TrainConfig(**{**base, **kw})


class _AutogradMSE:
    """SeedBatchedMSE's interface computed as the textbook loop computes its loss and gradients, network by network:
    autograd through ``rnn.rollout_fast`` and ``masked_mse`` (what the kernel's arithmetic replaces)."""

    def __call__(self, W_xh, W_hh, W_hy, inputs, targets, mask=None):
        losses, grads = [], []
        for s in range(W_hh.shape[0]):
            weights = zip(rnn.WEIGHT_NAMES, (W_xh, W_hh, W_hy), strict=True)
            named = {k: w[s].detach().requires_grad_(True) for k, w in weights}
            outputs, _ = rnn.rollout_fast(named, inputs[s])
            loss = reference_training.masked_mse(outputs, targets[s], None if mask is None else mask[s])
            grads.append(torch.autograd.grad(loss, [named[k] for k in rnn.WEIGHT_NAMES]))
            losses.append(loss.detach())
        return torch.stack(losses), tuple(torch.stack(g) for g in zip(*grads, strict=True))


@pytest.mark.parametrize("stacked", [True, False])
@pytest.mark.parametrize(
    "group",
    [
        [_config(n_hidden=64, seed=s) for s in (1, 2)],  # flat leaves: the rows of one leaf when stacked
        [_config(task="copy", task_params={"replay_steps": 4}, construction="cayley", n_hidden=8)],
        [train.copy_config("dense_orthogonal", 64, s, steps=260, stop_every=20, stop_accuracy=0.62) for s in range(3)],
        [_config(dtype="float64", task="sine", construction="dense_default")],
    ],
    ids=["flipflop-flat", "copy-cayley", "copy-early-stop", "sine-float64"],
)
def test_without_the_kernel_the_batched_path_is_the_textbook_loop_bit_for_bit(group, stacked, monkeypatch):
    """Everything of the batched path but the kernel's arithmetic is the textbook loop, bit for bit in float32: the
    initial weights, the batches, Adam (flat, stacked rows or per tensor) against torch.optim.Adam over the separate
    tensors, the Cayley parameters' gradients, the early stop and the histories. With autograd through rollout_fast in
    the kernel's place, each solution equals the textbook loop run through rollout_fast."""
    monkeypatch.setattr(batched_training.seed_batch, "SeedBatchedMSE", _AutogradMSE)
    trained = batched_training.train_seeds(group, progress=False, stacked=stacked)
    for config, ours in zip(group, trained, strict=True):
        ref = reference_training.train(config, progress=False, rollout=rnn.rollout_fast)
        assert ours["steps_run"] == ref.steps_run and ours["val_history"] == ref.val_history
        assert np.array_equal(ours["loss_history"], ref.loss_history)
        assert ours["params"].keys() == ref.params.keys()
        assert all(torch.equal(ours["params"][k], ref.params[k]) for k in ref.params)
    if group[0].stop_accuracy is not None:
        assert len({r["steps_run"] for r in trained}) > 1  # some stopped while others went on


@pytest.mark.parametrize(
    "config",
    [
        _config(dtype="float64"),
        _config(dtype="float64", task="sine", construction="dense_default"),
        _config(dtype="float64", task="copy", task_params={"replay_steps": 4}, construction="cayley", n_hidden=8),
        train.copy_config("dense_orthogonal", 8, 1, steps=300, stop_every=50, stop_accuracy=0.3, dtype="float64"),
    ],
    ids=["flipflop", "sine-dense-default", "copy-cayley", "copy-early-stop"],
)
def test_training_follows_the_textbook_loop_on_the_same_batches(config):
    """As it runs: the kernel (tanh through σ, batched products) and autograd through the explicit rnn.rollout round
    differently, by about one float64 ulp an operation (about 1e-15 relative after these runs); the bound, relative
    1e-10 on every loss and on the weights, leaves room for the growth of that over the steps."""
    ref = reference_training.train(config, progress=False)
    (ours,) = batched_training.train_seeds([config], progress=False)
    assert ours["steps_run"] == ref.steps_run and ours["val_history"] == ref.val_history
    np.testing.assert_allclose(ours["loss_history"], ref.loss_history, rtol=1e-10, atol=0)
    for k, w in ref.weights.items():
        assert (ours["weights"][k] - w).abs().max() <= 1e-10 * w.abs().max()


def test_float32_training_stays_within_float_tolerance_of_the_textbook_loop():
    """float32: the kernel's rounding is the only difference (the bit-for-bit test above), now about 1e-7 an
    operation. Adam divides each gradient entry by its running root mean square, so a relative difference of a
    gradient does not shrink with the gradient: where an entry is near zero its sign may differ, and the weight moves
    by up to lr a step. The bound: losses within relative 1e-4, weights within 5 % of that worst case, lr × steps."""
    config = _config(steps=20)
    ref = reference_training.train(config, progress=False)
    (ours,) = batched_training.train_seeds([config], progress=False)
    np.testing.assert_allclose(ours["loss_history"], ref.loss_history, rtol=1e-4)
    for k, w in ref.weights.items():
        assert (ours["weights"][k] - w).abs().max() <= config.lr * config.steps * 0.05


def _same_weights(a: dict, b: dict) -> bool:
    """Same steps, validation and loss histories and weights, bit for bit."""
    if a["steps_run"] != b["steps_run"] or a["val_history"] != b["val_history"]:
        return False
    if not np.array_equal(a["loss_history"], b["loss_history"]):
        return False
    return all(torch.equal(torch.as_tensor(a["weights"][k]), torch.as_tensor(b["weights"][k])) for k in a["weights"])


def test_a_solution_is_the_same_whatever_seeds_train_beside_it():
    rule = dict(steps=120, stop_every=40, stop_accuracy=0.3)
    group = [train.copy_config("dense_orthogonal", 8, s, **rule) for s in (0, 1, 2)]
    together = batched_training.train_seeds(group, progress=False)
    alone = batched_training.train_seeds([group[1]], progress=False)[0]
    assert _same_weights(together[1], alone)


#: The book's sizes with a one-row product (one input or one output: the readout, the input weights' gradient), where
#: torch's bmm of a batch of one rounds otherwise than inside a batch (lib.kernels.seed_batch._bmm).
BOOK_SIZES = [("integrator", 64), ("sine", 72), ("context", 64)]


def _seed_beside(task: str, n_hidden: int, seeds: tuple[int, ...], seed: int, steps: int = 60) -> dict:
    load_task_modules(REPO_ROOT / "book" / "tasks")  # the integrator: a task of the book's own, outside lib
    configs = [TrainConfig(task=task, n_hidden=n_hidden, steps=steps, seed=s) for s in seeds]
    return batched_training.train_seeds(configs, progress=False)[seeds.index(seed)]


@pytest.mark.parametrize(("task", "n_hidden"), BOOK_SIZES, ids=[f"{t}-{n}" for t, n in BOOK_SIZES])
def test_a_seed_is_the_same_bits_alone_beside_others_and_in_any_position(task, n_hidden):
    alone = _seed_beside(task, n_hidden, (2,), 2)
    for seeds in ((2, 0), (0, 2, 5), (7, 6, 5, 4, 3, 2)):
        assert _same_weights(alone, _seed_beside(task, n_hidden, seeds, 2)), seeds


def test_the_seed_test_fails_where_a_lone_network_takes_torch_s_own_bmm(monkeypatch):
    """The plant: without ``_bmm`` (a batch of one through torch.bmm as it is), seed 2 of the integrator at N_h = 64
    alone differs from seed 2 beside seed 0, so the test above can fail."""
    monkeypatch.setattr(seed_batch, "_bmm", torch.bmm)
    assert not _same_weights(_seed_beside("integrator", 64, (2,), 2), _seed_beside("integrator", 64, (0, 2), 2))


def test_a_seed_is_the_same_bits_whichever_worker_split_trains_it():
    """BOOK_WORKERS 1 and 2 split a configuration's seeds into other jobs (one of 3; 2 and 1): the same weights."""
    load_task_modules(REPO_ROOT / "book" / "tasks")
    configs = [TrainConfig(task="integrator", n_hidden=64, steps=60, seed=s) for s in range(3)]
    trained = {}
    for workers in (1, 2):
        jobs = batched_training.training_jobs(configs, workers)
        assert len(jobs) == workers
        trained[workers] = {}
        for job in jobs:
            for config, result in zip(job, batched_training.train_seeds(job, progress=False), strict=True):
                trained[workers][config.seed] = result
    assert all(_same_weights(trained[1][s], trained[2][s]) for s in range(3))


@pytest.mark.parametrize(
    "group",
    [
        [_config(task="context", seed=s, n_hidden=64, steps=30) for s in range(3)],  # flat: the rows of one leaf
        [train.copy_config("dense_orthogonal", 64, s, steps=260, stop_every=20, stop_accuracy=0.62) for s in range(4)],
    ],
    ids=["context", "copy-early-stop"],
)
def test_stacked_rows_train_bit_for_bit_as_one_leaf_per_solution(group):
    """Adam over the (S, P) rows of one leaf is each solution's own Adam, bit for bit, also as solutions stop."""
    stacked = batched_training.train_seeds(group, progress=False)
    apart = batched_training.train_seeds(group, progress=False, stacked=False)
    for a, b in zip(stacked, apart, strict=True):
        assert a["steps_run"] == b["steps_run"] and a["val_history"] == b["val_history"]
        assert np.array_equal(a["loss_history"], b["loss_history"])
        assert all(torch.equal(a["params"][k], b["params"][k]) for k in b["params"])
    if group[0].stop_accuracy is not None:
        assert len({r["steps_run"] for r in stacked}) > 1  # some stopped while others went on


def test_seeds_of_one_configuration_only():
    with pytest.raises(ValueError, match="differ only in seed"):
        batched_training.train_seeds([_config(), _config(seed=2, lr=1e-3)], progress=False)
    with pytest.raises(ValueError, match="each seed once"):
        batched_training.train_seeds([_config(), _config()], progress=False)


def test_training_jobs_group_the_seeds_of_a_configuration_and_share_them_between_workers():
    flipflop = [_config(seed=s) for s in range(20)]
    sine = [_config(task="sine", seed=s) for s in range(3)]
    jobs = batched_training.training_jobs(flipflop + sine, workers=2)
    assert sorted(len(j) for j in jobs) == [1, 2, 6, 7, 7]  # 20 seeds: ⌈20/8⌉ = 3 jobs; 3 seeds, 2 workers: 2
    assert all(len({c.task for c in job}) == 1 for job in jobs)
    assert sorted((c.task, c.seed) for job in jobs for c in job) == sorted((c.task, c.seed) for c in flipflop + sine)
    assert [len(j) for j in batched_training.training_jobs(flipflop[:10], workers=2)] == [5, 5]
