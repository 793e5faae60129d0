"""lib.paper_a.train: determinism, early stop, validated configurations, the cache of trained models.

``train.train`` is the textbook loop (autograd, torch.optim.Adam); the kernels of the book's training are tested
against it in tests/kernels/test_recurrence.py, tests/kernels/test_adam.py, tests/kernels/test_seed_batch.py and
tests/paper_a/test_batched_training.py.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest
import torch

from lib.core import cache
from lib.core.paths import REPO_ROOT
from lib.paper_a import batched_training, train
from lib.paper_a.train import TrainConfig


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BOOK_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _tiny(**kw):
    base = dict(
        task="copy",
        task_params={"n_symbols": 2, "dim": 2, "replay_steps": 4},
        n_hidden=6,
        steps=15,
        batch_size=8,
        seed=3,
        lr=1e-2,
    )
    return TrainConfig(**{**base, **kw})


def test_same_seed_identical_weights_and_different_seed_differs():
    a, b = train.train(_tiny(), progress=False), train.train(_tiny(), progress=False)
    assert all(torch.equal(a.weights[k], b.weights[k]) for k in a.weights)
    assert a.weights["W_hh"].dtype == torch.float64 and a.loss_history.shape == (15,)
    c = train.train(_tiny(seed=4), progress=False)
    assert not torch.equal(a.weights["W_hh"], c.weights["W_hh"])
    assert a.loss_history[-1] < a.loss_history[0]


def test_cayley_training_keeps_w_normal():
    r = train.train(_tiny(construction="cayley"), progress=False)
    W = r.weights["W_hh"]
    assert torch.allclose(W @ W.T, W.T @ W, atol=1e-10)
    assert set(r.params) == {"W_xh", "W_hy", "P", "D_a", "D_b", "D_d"}


def test_early_stop_rule_is_part_of_the_config():
    r = train.train(
        _tiny(steps=50, stop_accuracy=0.0, stop_every=5, stop_task_params={"replay_steps": 9}), progress=False
    )
    assert r.steps_run == 5 and r.val_history[0][0] == 5
    assert train.cache_path(_tiny(stop_accuracy=0.9)) != train.cache_path(_tiny(stop_accuracy=0.95))


def test_cache_round_trip_is_bit_identical(_cache):
    cfg = _tiny()
    first = train.load_or_train(cfg, progress=False)
    assert not first.from_cache and first.path == train.cache_path(cfg)
    assert first.path.parent == _cache and first.path.name.startswith("paper_a_rnn-")
    again = train.load_or_train(cfg, progress=False)
    assert again.from_cache
    assert all(torch.equal(first.weights[k], again.weights[k]) for k in first.weights)
    assert (first.loss_history == again.loss_history).all() and again.config == cfg


def test_cache_path_covers_every_field_and_the_code(monkeypatch):
    cfg = _tiny()
    paths = {train.cache_path(cfg)}
    for f in dataclasses.fields(cfg):
        v = getattr(cfg, f.name)
        if f.name in ("task", "stop_task_params", "construction", "dtype"):
            continue
        new = {"n_symbols": 3} if isinstance(v, dict) else (None if v is None else v * 2)
        if f.name == "stop_accuracy":
            new = 0.5
        if f.name == "device":
            new = "cuda"
        paths.add(train.cache_path(cfg.replace(**{f.name: new})))
    assert len(paths) == len(dataclasses.fields(cfg)) - 4 + 1
    monkeypatch.setattr(train, "code_fingerprint", lambda task: "edited")
    assert train.cache_path(cfg) not in paths


def test_corrupt_entry_is_reported_moved_aside_and_retrained(_cache):
    cfg = _tiny()
    path = train.cache_path(cfg)
    path.write_bytes(b"not a torch file")
    with pytest.warns(UserWarning, match=r"cannot be read .*paper_a_rnn-.*moved aside"):
        r = train.load_or_train(cfg, progress=False)
    assert not r.from_cache and train.load_or_train(cfg, progress=False).from_cache
    (aside,) = _cache.glob(path.name + ".corrupt-*")
    assert aside.read_bytes() == b"not a torch file"


def test_interrupted_write_leaves_no_checkpoint(_cache, monkeypatch):
    cfg = _tiny()

    def boom(obj, f, *a, **k):
        with open(f, "wb") as fh:
            fh.write(b"partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(cache.torch, "save", boom)
    with pytest.raises(KeyboardInterrupt):
        train.load_or_train(cfg, progress=False)
    assert not train.cache_path(cfg).exists() and list(_cache.iterdir()) == []


@pytest.mark.parametrize(
    "kw,match",
    [
        ({"task": "banana"}, "available tasks"),
        ({"construction": "dense"}, "construction"),
        ({"n_hidden": 7}, "n_hidden=7"),
        ({"task_params": {"length": 5}}, "task_params"),
        ({"lr": 0.0}, "lr"),
        ({"dtype": "float16"}, "dtype"),
        ({"stop_accuracy": 2.0}, "stop_accuracy"),
        ({"steps": 0}, r"steps=0 is out of range; allowed: \[1, inf\)"),
        ({"batch_size": 0}, "batch_size=0"),
        ({"n_hidden": 0}, "n_hidden=0"),
        ({"seed": -1}, "seed=-1"),
        ({"stop_every": 0}, "stop_every=0"),
        ({"lr": "fast"}, "lr='fast' must be a finite real number"),
        ({"task_params": [("length", 5)]}, "task_params=.* must be a dict"),
    ],
)
def test_bad_configs(kw, match):
    with pytest.raises((ValueError, TypeError), match=match):
        _tiny(**kw)


def test_progress_bar_goes_to_stderr(capsys):
    train.train(_tiny(steps=3), progress=True)
    captured = capsys.readouterr()
    assert captured.out == "" and "N_h=6" in captured.err


def test_cache_key_follows_the_training_code(monkeypatch):
    """The fingerprint covers every source that decides what a configuration trains to, the kernels included, and
    not the textbook loop (reference_training), from which the book's models never come."""
    assert train.code_fingerprint("flipflop") != train.code_fingerprint("sine")
    seen = []
    monkeypatch.setattr(cache, "fingerprint", lambda sources: seen.extend(sources) or "x")
    train.code_fingerprint("flipflop")
    files = [Path(getattr(source, "__file__", source)) for source in seen]  # modules or paths
    names = sorted(f.resolve().relative_to(REPO_ROOT).as_posix() for f in files)
    assert names == [
        "lib/kernels/adam.py",
        "lib/kernels/recurrence.py",
        "lib/kernels/seed_batch.py",
        "lib/paper_a/batched_training.py",
        "lib/paper_a/metrics.py",
        "lib/paper_a/rnn.py",
        "lib/paper_a/tasks/__init__.py",
        "lib/paper_a/tasks/_common.py",
        "lib/paper_a/tasks/flipflop.py",
        "lib/paper_a/train.py",
        "lib/paper_a/training_config.py",
        "lib/paper_a/training_data.py",
    ]


def _lib_imports(module: str) -> set[str]:
    """The lib modules ``module`` imports anywhere in its source (functions included), and what they import."""
    seen, todo = set(), [module]
    while todo:
        name = todo.pop()
        path = REPO_ROOT / Path(*name.split("."))
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        if name in seen or not path.is_file():
            continue
        seen.add(name)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                todo += [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                todo += [node.module] + [f"{node.module}.{a.name}" for a in node.names]  # a name may be a module
    return seen - {module}


def test_the_two_trainings_import_only_what_lies_beneath_them():
    """The textbook loop depends on nothing of the fast path (no kernel of its training: the recurrence kernel only
    through rnn.rollout_fast, which it does not call unless asked), and neither on the cache module above both."""
    reference, batched = _lib_imports("lib.paper_a.reference_training"), _lib_imports("lib.paper_a.batched_training")
    assert "lib.paper_a.batched_training" not in reference and "lib.paper_a.train" not in reference
    assert not {"lib.kernels.adam", "lib.kernels.seed_batch"} & reference
    own = ast.parse((REPO_ROOT / "lib" / "paper_a" / "reference_training.py").read_text())
    assert not [n for n in ast.walk(own) if isinstance(n, ast.ImportFrom) and "kernels" in (n.module or "")]
    assert not {"lib.paper_a.reference_training", "lib.paper_a.train"} & batched
    assert {"lib.paper_a.training_config", "lib.paper_a.training_data"} <= reference & batched
    assert {"lib.paper_a.batched_training", "lib.paper_a.reference_training"} <= _lib_imports("lib.paper_a.train")


def test_load_or_train_many_in_processes_matches_serial_training(_cache):
    configs = [_tiny(seed=s) for s in (1, 2, 3)] + [_tiny(seed=1)]  # a duplicate trains once
    serial = [batched_training.train_seeds([c], progress=False)[0] for c in configs[:3]]  # one at a time, here
    pooled = train.load_or_train_many(configs, workers=2, progress=False)
    assert [r.config for r in pooled] == configs
    assert [r.from_cache for r in pooled] == [False, False, False, False]
    for a, b in zip(serial + serial[:1], pooled, strict=True):
        assert all(torch.equal(a["weights"][k], b.weights[k]) for k in a["weights"])
        assert (a["loss_history"] == b.loss_history).all()
    again = train.load_or_train_many(configs, workers=2, progress=False)
    assert all(r.from_cache for r in again)


def test_load_or_train_many_rejects_bad_input_and_retrains_a_corrupt_entry(_cache):
    with pytest.raises(ValueError, match="workers=0"):
        train.load_or_train_many([_tiny()], workers=0)
    with pytest.raises(TypeError, match="TrainConfig"):
        train.load_or_train_many([{"task": "copy"}])
    path = train.cache_path(_tiny())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"not a checkpoint")
    with pytest.warns(UserWarning, match="cannot be read.*moved aside"):
        (r,) = train.load_or_train_many([_tiny()], workers=1, progress=False)
    assert not r.from_cache and r.steps_run == 15


@pytest.mark.parametrize(
    "kw,match",
    [
        ({"task_params": {"n_symbols": 2, "dim": 2, "replay_steps": -4}}, r"task_params=.* is not valid for task"),
        ({"task_params": {"n_symbols": "two"}}, r"task_params=\{'n_symbols': 'two'\} is not valid for task 'copy'"),
        ({"stop_task_params": {"replay_steps": 0}}, r"stop_task_params=\{'replay_steps': 0\} is not valid"),
    ],
)
def test_task_parameter_values_are_checked_when_the_config_is_built(kw, match):
    with pytest.raises((ValueError, TypeError), match=match):
        _tiny(**kw)


def test_unwritable_cache_fails_before_training(monkeypatch):
    def refuse(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(cache.tempfile, "mkstemp", refuse)
    refuse_training = lambda *a, **k: pytest.fail("trained although the cache is not writable")  # noqa: E731
    monkeypatch.setattr(batched_training, "train_seeds", refuse_training)
    with pytest.raises(PermissionError, match="model cache .* is not writable"):
        train.load_or_train(_tiny(), progress=False)
    with pytest.raises(PermissionError, match="model cache .* is not writable"):
        train.load_or_train_many([_tiny(), _tiny(seed=5)], workers=1, progress=False)


def test_an_interrupted_call_keeps_the_models_already_trained(_cache, monkeypatch):
    """This process writes each job's models as the job finishes: a failure later loses none of them."""
    first, second = _tiny(seed=1), _tiny(seed=1, lr=2e-2)  # two configurations: two jobs, the first trained first
    real, calls = batched_training.train_seeds, []

    def fail_second(configs, progress=True, **kw):
        calls.append(configs)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(configs, progress, **kw)

    monkeypatch.setattr(batched_training, "train_seeds", fail_second)
    with pytest.raises(KeyboardInterrupt):
        train.load_or_train_many([first, second], workers=1, progress=False)
    assert train.cache_path(calls[0][0]).is_file() and not train.cache_path(calls[1][0]).is_file()
    monkeypatch.setattr(batched_training, "train_seeds", real)
    again = train.load_or_train_many([first, second], workers=1, progress=False)
    assert [r.from_cache for r in again] == [calls[0][0] == first, calls[0][0] == second]
