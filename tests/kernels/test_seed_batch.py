"""lib.kernels.seed_batch against the textbook loop's arithmetic: the kernel's losses and gradients must be those of
autograd through ``rnn.rollout_fast`` and the textbook loop's ``masked_mse`` network by network, to rounding in float64
and to float32 rounding in float32, and a network must not depend on the others in its batch.

The training built on it (``lib.paper_a.batched_training``) is tested in ``tests/paper_a/test_batched_training.py``."""

from __future__ import annotations

import pytest
import torch

from lib.kernels import seed_batch
from lib.paper_a import reference_training, rnn

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
    """Network ``s``'s loss and weight gradients as the textbook loop computes them: autograd through rollout_fast
    (bit for bit RolloutMSE's, tests/kernels/test_recurrence.py)."""
    named = {k: w[s].clone().requires_grad_(True) for k, w in zip(rnn.WEIGHT_NAMES, weights, strict=True)}
    outputs, _ = rnn.rollout_fast(named, data[0][s])
    loss = reference_training.masked_mse(outputs, data[1][s], None if data[2] is None else data[2][s])
    return loss.detach(), list(torch.autograd.grad(loss, [named[k] for k in rnn.WEIGHT_NAMES]))


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
