"""lib.kernels.adam against the readable reference it replaces, torch.optim.Adam: flat parameters as views of one leaf,
and the kernels' training (RolloutMSE and flat Adam) against the textbook loop, bit for bit and to float tolerance."""

from __future__ import annotations

import pytest
import torch

from lib.kernels import adam, recurrence
from lib.paper_a import reference_training, rnn, train, training_config, training_data
from lib.paper_a.tasks import get_task


def test_flat_parameters_are_views_of_one_leaf_when_aligned():
    aligned = {"a": torch.zeros(8, 8, dtype=torch.float64), "b": torch.ones(64, dtype=torch.float64)}
    flat = adam.FlatParameters(aligned, torch.float32)
    assert flat.is_flat and len(flat.leaves) == 1 and flat.leaves[0].shape == (128,)
    named = flat.named()
    assert named["a"].shape == (8, 8) and named["b"].dtype == torch.float32
    assert named["b"].data_ptr() == flat.leaves[0].data_ptr() + 64 * 4
    ragged = adam.FlatParameters({"a": torch.zeros(3, 3), "b": torch.ones(64)}, torch.float32)
    assert not ragged.is_flat and [t.shape for t in ragged.leaves] == [(3, 3), (64,)]


def _kernel_training(config: train.TrainConfig) -> dict[str, torch.Tensor]:
    """The kernels' training: RolloutMSE (BPTT without the graph) and Adam on FlatParameters, on the textbook loop's
    initial weights and batches (no stop rule)."""
    dtype = training_config.DTYPES[config.dtype]
    stream = training_data.DataStream(config, dtype, training_data.TRAIN_STREAM)
    trial = get_task(config.task).generate(1, seed=0, **config.task_params)
    n_x, n_y = trial.inputs_btx.shape[-1], trial.targets_bty.shape[-1]
    trainable = adam.FlatParameters(
        rnn.init_params(config.construction, config.n_hidden, n_x, n_y, seed=config.seed), dtype
    )
    opt, loss_fn = adam.Adam(trainable.leaves, lr=config.lr), recurrence.RolloutMSE()
    for _ in range(config.steps):
        loss = loss_fn(rnn.weights_from_params(trainable.named()), *stream.next())
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {k: v.detach().double() for k, v in trainable.named().items()}


def _tiny(**kw):
    base = dict(task="copy", task_params={"n_symbols": 2, "dim": 2, "replay_steps": 4}, n_hidden=6, steps=25)
    return train.TrainConfig(**{**base, "batch_size": 8, "seed": 3, "lr": 1e-2, **kw})


@pytest.mark.parametrize(
    "overrides",
    [
        {"task": "flipflop", "task_params": {"length": 6}, "n_hidden": 64},  # sizes 192, 4096, 192: one flat vector
        {"construction": "cayley"},  # ragged sizes: Adam over the separate tensors
        {},
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_training_is_bitwise_torch_adam_over_the_separate_tensors(overrides, dtype):
    """Flat Adam + RolloutMSE = the textbook loop (torch.optim.Adam per tensor, autograd) through rollout_fast, bit for
    bit: same initial weights, same batches, every one of the steps."""
    cfg = _tiny(**overrides, dtype=dtype)
    ours = _kernel_training(cfg)
    reference = reference_training.train(cfg, progress=False, rollout=rnn.rollout_fast).params
    assert ours.keys() == reference.keys()
    assert all(torch.equal(ours[k], reference[k]) for k in ours)


@pytest.mark.parametrize("construction", ["dense_orthogonal", "cayley"])
def test_training_matches_the_readable_loop_to_float_tolerance(construction):
    """In float64, the kernels' training against the textbook loop as it runs: autograd through the explicit rollout."""
    cfg = _tiny(construction=construction, dtype="float64")
    ours = _kernel_training(cfg)
    reference = train.train(cfg, progress=False).params
    assert all(torch.allclose(ours[k], reference[k], atol=1e-10, rtol=0) for k in ours)
    assert not torch.equal(ours["W_xh"], rnn.init_params(construction, 6, 2, 2, seed=3)["W_xh"])  # it trained
