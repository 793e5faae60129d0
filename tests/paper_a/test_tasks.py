"""The neuroscience-style task generators: shapes, seeding, targets, metadata and parameter errors."""

from __future__ import annotations

import inspect
import sys

import numpy as np
import pytest
import torch

from lib.core.paths import REPO_ROOT
from lib.paper_a import tasks
from lib.paper_a.tasks import Batch, available_tasks, get_task, load_task_modules, register_task, rng_for

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
        with pytest.raises(ValueError, match=rf"task '{name}' has no parameter no_such_parameter=1; its parameters"):
            spec.generate(2, seed=0, no_such_parameter=1)
        with pytest.raises(ValueError, match="no_such_parameter"):
            spec.batches(2, 2, seed=0, no_such_parameter=1)

    def test_defaults_stated_once_and_shown_in_the_signature(self, name):
        """The registered generator takes every default as an optional keyword; its module is the task's own."""
        spec = get_task(name)
        shown = list(inspect.signature(spec.generate).parameters.values())[2:]
        assert {p.name: p.default for p in shown} == spec.defaults
        module = sys.modules[spec.generate.__module__]  # what the training cache fingerprints
        assert getattr(module, "DEFAULTS", None) == spec.defaults


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


@pytest.fixture
def registry(monkeypatch):
    """A copy of the registry for the test, so that its own tasks do not outlive it."""
    monkeypatch.setattr(tasks, "_REGISTRY", dict(tasks._REGISTRY))


def test_a_batched_generator_gives_the_single_batch_and_the_defaults(registry):
    @register_task("t_batched", n_inputs=1, n_outputs=1, defaults={"length": 3, "scale": 2.0}, batched=True)
    def generate_many(n_batches, batch_size, *, seed, length, scale):
        x = scale * rng_for(seed).standard_normal((n_batches, batch_size, length, 1))
        return Batch(torch.as_tensor(x), torch.as_tensor(x))

    spec = get_task("t_batched")
    assert spec.defaults == {"length": 3, "scale": 2.0} and spec.many is not None
    assert torch.equal(spec.generate(4, seed=1).inputs_btx, generate_many(1, 4, seed=1).inputs_btx[0])
    assert torch.equal(spec.batches(2, 4, seed=1, length=5).inputs_btx, generate_many(2, 4, seed=1, length=5)[0])
    assert spec.generate(4, seed=1, scale=0.0).inputs_btx.abs().max() == 0
    with pytest.raises(ValueError, match=r"task 't_batched' has no parameter lenght=5; its parameters are \['length'"):
        spec.generate(4, seed=1, lenght=5)


def test_a_single_batch_generator_is_stacked(registry):
    @register_task("t_single", n_inputs=1, n_outputs=1, defaults={"length": 3})
    def generate(batch_size, *, seed, length):
        x = rng_for(seed).standard_normal((batch_size, length, 1))
        return Batch(torch.as_tensor(x), torch.as_tensor(x))

    spec = get_task("t_single")
    assert spec.many is None and spec.generate(2, seed=0).inputs_btx.shape == (2, 3, 1)
    rng = np.random.default_rng(0)
    singles = [generate(2, seed=rng, length=4).inputs_btx for _ in range(3)]
    assert torch.equal(spec.batches(3, 2, seed=0, length=4).inputs_btx, torch.stack(singles))
    with pytest.raises(ValueError, match="n_batches"):
        spec.batches(0, 2, seed=0)


def test_defaults_may_come_from_the_signature(registry):
    @register_task("t_signature", n_inputs=1, n_outputs=1)
    def generate(batch_size, *, seed, length=3):
        x = rng_for(seed).standard_normal((batch_size, length, 1))
        return Batch(torch.as_tensor(x), torch.as_tensor(x))

    assert get_task("t_signature").defaults == {"length": 3}


@pytest.mark.parametrize(
    "defaults,batched,match",
    [
        ({"length": 3, "scale": 1.0}, False, r"differ in \['scale'\]"),  # a default the generator does not take
        ({}, False, r"differ in \['length'\]"),  # a parameter no default is given for
        ({"length": 4}, False, "length=3 in the signature but 4 in defaults"),  # a default stated twice, unalike
        ({"length": 3}, True, r"batched=True\) expects generate\(n_batches, batch_size"),  # not a batched generator
    ],
)
def test_registration_checks_defaults_against_the_signature(registry, defaults, batched, match):
    def generate(batch_size, *, seed, length=3):
        return Batch(torch.zeros(batch_size, length, 1), torch.zeros(batch_size, length, 1))

    with pytest.raises(ValueError, match=match):
        register_task("t_bad", n_inputs=1, n_outputs=1, defaults=defaults, batched=batched)(generate)
    assert "t_bad" not in available_tasks()
    with pytest.raises(ValueError, match="'copy' is already registered"):
        register_task("copy", n_inputs=1, n_outputs=1)(generate)
