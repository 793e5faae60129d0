"""lib.kernels.seed_batch and lib.paper_a.batched_training: the book's training against the readable reference.

The kernel's losses and gradients must be those of ``RolloutMSE`` (itself autograd's, tests/test_kernels.py) network
by network: to rounding in float64, to float32 rounding in float32. Training must follow the reference loop
``lib.paper_a.reference_training.train`` on the same batches, and a solution's weights must not depend on the seeds
trained beside it (the cache stores one model per configuration, however it was trained).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lib.kernels import recurrence, seed_batch
from lib.paper_a import batched_training, reference_training, train
from lib.paper_a.train import TrainConfig

SHAPES = [  # seeds, batch, steps, N_x, N_h, N_y, masked: the task models' and the copy controller's kinds of shape
    (3, 16, 25, 3, 64, 3, False),
    (2, 16, 50, 1, 64, 1, True),
    (2, 8, 12, 4, 16, 1, False),
    (3, 8, 9, 8, 72, 8, True),
]


def _problem(seeds, batch, steps, n_x, n, n_y, masked, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    rand = lambda *shape, scale=1.0: (torch.randn(*shape, generator=g, dtype=torch.float64) * scale).to(dtype)  # noqa: E731
    weights = (rand(seeds, n, n_x, scale=0.5), rand(seeds, n, n, scale=1.2 / n**0.5), rand(seeds, n_y, n, scale=0.3))
    data = [rand(seeds, batch, steps, n_x), rand(seeds, batch, steps, n_y)]
    data.append((torch.rand(seeds, batch, steps, n_y, generator=g) < 0.6).to(dtype) if masked else None)
    return weights, data


def _reference(weights, data, s):
    named = {k: w[s].clone().requires_grad_(True) for k, w in zip(("W_xh", "W_hh", "W_hy"), weights, strict=True)}
    loss = recurrence.RolloutMSE()(named, data[0][s], data[1][s], None if data[2] is None else data[2][s])
    loss.backward()
    return loss.detach(), [named[k].grad for k in ("W_xh", "W_hh", "W_hy")]


@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-12), (torch.float32, 2e-5)])
@pytest.mark.parametrize("shape", SHAPES)
def test_losses_and_gradients_are_the_reference_network_by_network(shape, dtype, tol):
    weights, data = _problem(*shape, dtype)
    losses, grads = seed_batch.SeedBatchedMSE()(*weights, *data)
    for s in range(shape[0]):
        loss, ref_grads = _reference(weights, data, s)
        assert abs(losses[s] - loss) <= tol * abs(loss)
        for ours, ref in zip(grads, ref_grads, strict=True):
            assert ours[s].shape == ref.shape
            assert (ours[s] - ref).abs().max() <= tol * ref.abs().max()


def test_a_network_does_not_depend_on_the_others_in_its_batch():
    weights, data = _problem(3, 8, 10, 3, 16, 2, True, torch.float32)
    losses, grads = seed_batch.SeedBatchedMSE()(*weights, *data)
    alone = [w[1:2] for w in weights], [None if d is None else d[1:2] for d in data]
    losses_1, grads_1 = seed_batch.SeedBatchedMSE()(*alone[0], *alone[1])
    assert torch.equal(losses[1:2], losses_1)
    assert all(torch.equal(g[1:2], g1) for g, g1 in zip(grads, grads_1, strict=True))


def _config(**kw):
    base = dict(task="flipflop", n_hidden=16, batch_size=8, steps=25, seed=1, lr=1e-2)
    return TrainConfig(**{**base, **kw})


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
def test_training_follows_the_reference_loop_on_the_same_batches(config):
    ref = reference_training.train(config, progress=False)
    (ours,) = batched_training.train_seeds([config], progress=False)
    assert ours["steps_run"] == ref.steps_run and ours["val_history"] == ref.val_history
    np.testing.assert_allclose(ours["loss_history"], ref.loss_history, rtol=1e-10, atol=0)
    for k, w in ref.weights.items():
        assert (ours["weights"][k] - w).abs().max() <= 1e-10 * w.abs().max()


def test_float32_training_stays_within_float_tolerance_of_the_reference():
    """Adam normalises each gradient entry, so a rounding difference moves a weight by up to about lr per step."""
    config = _config(steps=20)
    ref = reference_training.train(config, progress=False)
    (ours,) = batched_training.train_seeds([config], progress=False)
    np.testing.assert_allclose(ours["loss_history"], ref.loss_history, rtol=1e-4)
    for k, w in ref.weights.items():
        assert (ours["weights"][k] - w).abs().max() <= config.lr * config.steps * 0.05


def test_a_solution_is_the_same_whatever_seeds_train_beside_it():
    rule = dict(steps=120, stop_every=40, stop_accuracy=0.3)
    group = [train.copy_config("dense_orthogonal", 8, s, **rule) for s in (0, 1, 2)]
    together = batched_training.train_seeds(group, progress=False)
    alone = batched_training.train_seeds([group[1]], progress=False)[0]
    assert together[1]["steps_run"] == alone["steps_run"] and together[1]["val_history"] == alone["val_history"]
    assert (together[1]["loss_history"] == alone["loss_history"]).all()
    assert all(torch.equal(together[1]["weights"][k], alone["weights"][k]) for k in alone["weights"])


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
