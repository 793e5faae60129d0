"""The neuroscience-style task generators: shapes, seeding, targets, metadata and parameter errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lib.core.paths import REPO_ROOT
from lib.paper_a.tasks import available_tasks, get_task, load_task_modules

load_task_modules(REPO_ROOT / "book" / "tasks")  # the book's example of a task outside lib: the integrator

NEURO = {  # name: (n_inputs, n_outputs, length)
    "flipflop": (3, 3, 25),
    "sine": (1, 1, 50),
    "context": (4, 1, 48),
    "integrator": (1, 1, 25),
}


@pytest.mark.parametrize("name", sorted(NEURO))
class TestEveryTask:
    def test_registered_with_sizes(self, name):
        spec = get_task(name)
        n_x, n_y, _ = NEURO[name]
        assert name in available_tasks()
        assert (spec.n_inputs, spec.n_outputs) == (n_x, n_y)

    def test_shapes_and_dtype(self, name):
        n_x, n_y, length = NEURO[name]
        batch = get_task(name).generate(7, seed=0)
        assert batch.inputs_btx.shape == (7, length, n_x)
        assert batch.targets_bty.shape == (7, length, n_y)
        assert batch.inputs_btx.dtype == torch.float32
        assert torch.isfinite(batch.inputs_btx).all() and torch.isfinite(batch.targets_bty).all()

    def test_same_seed_same_batch(self, name):
        a, b = get_task(name).generate(5, seed=3), get_task(name).generate(5, seed=3)
        assert torch.equal(a.inputs_btx, b.inputs_btx) and torch.equal(a.targets_bty, b.targets_bty)

    def test_train_and_heldout_seeds_differ(self, name):
        a, b = get_task(name).generate(5, seed=0), get_task(name).generate(5, seed=1)
        assert not torch.equal(a.targets_bty, b.targets_bty)

    def test_generator_stream_advances(self, name):
        rng = np.random.default_rng(0)
        a, b = get_task(name).generate(5, seed=rng), get_task(name).generate(5, seed=rng)
        assert not torch.equal(a.targets_bty, b.targets_bty)

    def test_does_not_touch_global_rng(self, name):
        """Generators draw only from their own seeded Generator, never from numpy's legacy global state."""
        before = np.random.get_state()  # noqa: NPY002 (the legacy global state is what is checked)
        get_task(name).generate(3, seed=1)
        after = np.random.get_state()  # noqa: NPY002
        assert np.array_equal(before[1], after[1]) and before[2] == after[2]

    def test_trials_differ_within_a_batch(self, name):
        """Vectorised over the batch: every row is its own trial, not copies of one."""
        y = get_task(name).generate(64, seed=5).targets_bty
        assert len({tuple(row.flatten().tolist()) for row in y}) > 32

    def test_metadata_names_source_and_choices(self, name):
        meta = get_task(name).metadata
        for key in ("source", "anchor", "paper_states", "we_choose", "epochs", "target", "noise"):
            assert meta.get(key), f"{name} metadata lacks {key!r}"

    def test_defaults_match_signature(self, name):
        spec = get_task(name)
        batch = spec.generate(2, seed=0, **spec.defaults)
        assert batch.inputs_btx.shape[1] == spec.defaults["length"]

    def test_bad_parameters(self, name):
        spec = get_task(name)
        with pytest.raises(ValueError, match="batch_size"):
            spec.generate(0, seed=0)
        with pytest.raises(ValueError, match="length"):
            spec.generate(2, seed=0, length=0)
        with pytest.raises(TypeError, match="seed"):
            spec.generate(2, seed=-1)
        with pytest.raises(TypeError):
            spec.generate(2, seed=0, no_such_parameter=1)


def test_unknown_task_lists_names():
    with pytest.raises(ValueError, match=r"available tasks: \[.*'flipflop'.*'sine'"):
        get_task("flip-flop")


@pytest.mark.parametrize("shape", [{}, {"n_bits": 2, "length": 7}])
def test_flipflop_target_holds_latest_pulse(shape):
    """Every trial and channel against the definition (the generator reads the targets through flat indices)."""
    batch = get_task("flipflop").generate(64, seed=2, pulse_prob=0.2, **shape)
    x, y = batch.inputs_btx.numpy(), batch.targets_bty.numpy()
    assert np.all(x[:, 0, :] != 0)  # pulse forced at t = 0
    assert set(np.unique(y)) <= {-1.0, 1.0}
    for b in range(x.shape[0]):
        for c in range(x.shape[2]):
            state = 0.0
            for t in range(x.shape[1]):
                state = x[b, t, c] if x[b, t, c] != 0 else state
                assert y[b, t, c] == state


def test_flipflop_pulse_rate_and_noise():
    x = get_task("flipflop").generate(2000, seed=0, pulse_prob=0.1).inputs_btx.numpy()
    assert abs((x[:, 1:] != 0).mean() - 0.1) < 0.005
    noisy = get_task("flipflop").generate(50, seed=0, input_noise=0.1).inputs_btx.numpy()
    assert 0.05 < noisy[np.abs(noisy) < 0.5].std() < 0.15
    with pytest.raises(ValueError, match="pulse_prob"):
        get_task("flipflop").generate(2, seed=0, pulse_prob=1.5)


def test_sine_grid_cue_and_target():
    batch = get_task("sine").generate(500, seed=0)
    cue, y = batch.inputs_btx.double().numpy()[:, :, 0], batch.targets_bty.numpy()[:, :, 0]
    assert np.allclose(cue, cue[:, :1])  # static cue
    j = np.rint((cue[:, 0] - 0.25) * 51)
    assert j.min() >= 1 and j.max() <= 51 and len(np.unique(j)) > 40
    omega = 0.1 + 0.01 * (j - 1)
    assert np.allclose(y, np.sin(omega[:, None] * np.arange(50)), atol=1e-5)
    cont = get_task("sine").generate(500, seed=0, frequencies="continuous").inputs_btx.numpy()[:, 0, 0]
    assert len(np.unique(cont)) == 500
    with pytest.raises(ValueError, match=r"frequencies='log' is not allowed; choose one of \['grid', 'continuous'\]"):
        get_task("sine").generate(2, seed=0, frequencies="log")


def test_context_integrates_cued_stream_only():
    batch = get_task("context").generate(100, seed=0)
    x, y = batch.inputs_btx.numpy().astype(float), batch.targets_bty.numpy()[:, :, 0]
    ctx = x[:, :, 2:]
    assert np.all(ctx.sum(axis=2) == 1) and np.all(ctx == ctx[:, :1])
    cued = ctx[:, 0].argmax(axis=1)
    assert 20 < cued.sum() < 80
    expected = np.cumsum(x[np.arange(100), :, cued], axis=1)
    assert np.allclose(y, expected, atol=1e-4)


def test_integrator_is_running_sum():
    batch = get_task("integrator").generate(10, seed=0)
    assert np.allclose(batch.targets_bty.numpy(), np.cumsum(batch.inputs_btx.numpy(), axis=1), atol=1e-5)


@pytest.mark.parametrize(
    "name,task_params",
    [
        ("flipflop", {}),
        ("flipflop", {"input_noise": 0.1}),
        ("sine", {}),
        ("sine", {"frequencies": "continuous"}),
        ("context", {}),
        ("copy", {"replay_steps": 12}),
        ("integrator", {}),  # the book's own task of book/tasks/: no generator of many batches, the fallback's stack
    ],
)
def test_many_batches_at_once_are_the_successive_batches_bit_for_bit(name, task_params):
    """TaskSpec.batches (what training draws) gives the batches of successive generate calls on one Generator and
    leaves it where they leave it."""
    spec = get_task(name)
    one, many = np.random.default_rng([3, 0]), np.random.default_rng([3, 0])
    singles = [spec.generate(7, seed=one, **task_params) for _ in range(5)]
    stacked = spec.batches(5, 7, seed=many, **task_params)
    for k, batch in enumerate(singles):
        for single, all_of_them in zip(batch, stacked, strict=True):
            assert all_of_them.shape == (5, *single.shape) and all_of_them.dtype == single.dtype
            assert torch.equal(all_of_them[k], single)
    assert one.random() == many.random()  # the stream goes on alike
