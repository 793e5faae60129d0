"""lib.core.devices: where training and rollouts run. The book runs on the CPU; a GPU is asked for by name, is part of
a model's configuration and cache key, and asked for where none is present is an error before any work."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lib.core import devices
from lib.paper_a import batched_training, train
from lib.paper_a.chapters import many_solutions as chapter
from lib.paper_a.task_analysis import profiles
from lib.paper_a.train import TrainConfig

NO_CUDA = not torch.cuda.is_available()


def _config(**kw):
    base = {"task": "flipflop", "n_hidden": 16, "batch_size": 8, "steps": 20, "seed": 1, "lr": 1e-2}
    return TrainConfig(**{**base, **kw})


@pytest.mark.parametrize("value", ["gpu", "cuda:", "cuda:a", "CPU", "", 0, None])
def test_a_bad_device_names_the_parameter_the_value_and_what_is_allowed(value):
    allowed = "allowed: 'cpu', 'cuda' or 'cuda:<index>'"
    with pytest.raises(ValueError, match=rf"device={value!r} is not a device; {allowed}"):
        devices.check("device", value)
    with pytest.raises(ValueError, match=rf"device={value!r} is not a device"):
        _config(device=value)


def test_the_device_is_part_of_the_configuration_and_of_the_cache_key():
    cpu, gpu = _config(), _config(device="cuda")  # a GPU configuration can be built (and read) anywhere
    assert cpu.device == "cpu" and cpu.to_dict()["device"] == "cpu"
    assert train.cache_path(cpu) != train.cache_path(gpu) != train.cache_path(_config(device="cuda:1"))
    assert batched_training.group_key(cpu) != batched_training.group_key(gpu), "never trained in one batch"


@pytest.mark.skipif(not NO_CUDA, reason="this machine has a GPU")
def test_a_gpu_asked_for_where_none_is_present_is_an_error_before_any_work(tmp_path, monkeypatch):
    monkeypatch.setenv("BOOK_CACHE_DIR", str(tmp_path))
    asked = r"device='cuda' asks for a GPU, but this machine has no CUDA device .*; use device='cpu' here"
    with pytest.raises(RuntimeError, match=asked):
        train.load_or_train_many([_config(device="cuda")], workers=1, progress=False)
    assert not list(tmp_path.rglob("*.pt")), "nothing trained, nothing written"
    with pytest.raises(RuntimeError, match=asked):
        batched_training.train_seeds([_config(device="cuda")], progress=False)
    with pytest.raises(RuntimeError, match=asked):
        chapter.SolutionSweep(device="cuda")
    weights = {"W_xh": torch.zeros(4, 1), "W_hh": torch.eye(4) * 0.5, "W_hy": torch.zeros(1, 4)}
    with pytest.raises(RuntimeError, match=asked):
        profiles.profile_solution(weights, (torch.zeros(2, 3, 1), torch.zeros(2, 3, 1), None), device="cuda")
    with pytest.raises(ValueError, match=r"train\(\) is the readable CPU reference"):
        train.train(_config(device="cuda"), progress=False)


@pytest.mark.skipif(NO_CUDA, reason="no GPU on this machine")
def test_training_on_a_gpu_follows_the_cpu_training_to_float_tolerance():
    """Different rounding, the same solution for a few steps (as the float32 test of
    tests/paper_a/test_batched_training.py)."""
    config = _config(dtype="float64")
    (cpu,) = batched_training.train_seeds([config], progress=False)
    (gpu,) = batched_training.train_seeds([config.replace(device="cuda")], progress=False)
    np.testing.assert_allclose(gpu["loss_history"], cpu["loss_history"], rtol=1e-9)
    for k, w in cpu["weights"].items():
        assert gpu["weights"][k].device.type == "cpu" and (gpu["weights"][k] - w).abs().max() <= 1e-9 * w.abs().max()
