"""A training run: its configuration (:class:`TrainConfig`, checked when built) and result (:class:`TrainResult`).

:data:`DTYPES` maps the training precisions to torch dtypes. Both trainings read these: the textbook loop
(:mod:`lib.paper_a.reference_training`) and the book's seed-batched one (:mod:`lib.paper_a.batched_training`);
:mod:`lib.paper_a.train` caches the book's.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from lib.core import devices, params
from lib.paper_a import rnn
from lib.paper_a.tasks import TaskBatchError, get_task

#: Training precisions (TrainConfig.dtype) and their torch dtypes.
DTYPES = {"float32": torch.float32, "float64": torch.float64}
# TrainConfig's integer fields and their least allowed values
_INTEGER_FIELDS = {"n_hidden": 2, "batch_size": 1, "steps": 1, "seed": 0, "stop_every": 1, "stop_batch_size": 1}


@dataclass(frozen=True, kw_only=True)
class TrainConfig:
    """Everything that determines a trained model (all of it enters the cache key); checked when built; by keyword."""

    task: str  # a registered task name (lib.paper_a.tasks.available_tasks())
    task_params: dict[str, Any] = field(default_factory=dict)  # overrides of the task's defaults for training batches
    n_hidden: int = 64  # N_h (even)
    construction: str = "dense_orthogonal"  # one of lib.paper_a.rnn.CONSTRUCTIONS
    lr: float = 1e-3  # Adam learning rate
    batch_size: int = 64  # trials per Adam step
    steps: int = 3840  # maximum Adam steps (paper A §4: 30 epochs × 128 batches = 3840)
    seed: int = 0  # initial weights (torch) and training batches (numpy stream training_data.TRAIN_STREAM)
    dtype: str = "float32"  # training precision (one of DTYPES); the returned weights are float64
    stop_accuracy: float | None = None  # stop once validation sign accuracy ≥ this (checked every stop_every steps)
    stop_every: int = 250  # steps between validation checks (only with stop_accuracy)
    stop_batch_size: int = 256  # validation trials (numpy stream training_data.VALIDATION_STREAM of seed)
    stop_task_params: dict[str, Any] = field(default_factory=dict)  # overrides for validation (e.g. 128 replay steps)
    device: str = devices.DEFAULT  # where it trains (lib.core.devices): "cpu", "cuda" or "cuda:<index>"

    def __post_init__(self):
        spec = get_task(self.task)
        for name in ("task_params", "stop_task_params"):
            value = getattr(self, name)
            if not isinstance(value, dict):
                raise TypeError(f"{name}={value!r} must be a dict of task parameters")
            params.subset(f"{name} keys", sorted(value), spec.defaults)
            object.__setattr__(self, name, dict(sorted(value.items())))
        for name, least in _INTEGER_FIELDS.items():
            params.integer(name, getattr(self, name), min=least)
        rnn.check_width("n_hidden", self.n_hidden)
        params.choice("construction", self.construction, rnn.CONSTRUCTIONS)
        params.real("lr", self.lr, min=0.0, min_open=True)
        params.choice("dtype", self.dtype, DTYPES)
        devices.check("device", self.device)  # present or not: a GPU-trained model can be read on a CPU
        if self.stop_accuracy is not None:
            params.real("stop_accuracy", self.stop_accuracy, min=0.0, max=1.0)
        # the values too, now rather than at the first training batch: the generator validates them on one trial
        for name, values in (("task_params", self.task_params), ("stop_task_params", self.stop_task_params)):
            try:
                spec.generate(1, seed=0, **{**self.task_params, **values})
            except TaskBatchError:  # the task's own fault, whatever its parameters: said as it is
                raise
            except (TypeError, ValueError) as exc:
                raise type(exc)(f"{name}={values!r} is not valid for task {self.task!r}: {exc}") from None
            except MemoryError as exc:  # e.g. a length of 10⁹: one trial alone does not fit
                raise ValueError(f"{name}={values!r}: one trial of task {self.task!r} alone is too large to draw "
                                 f"({exc})") from None  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python dict of every field."""
        return dataclasses.asdict(self)

    def replace(self, **changes) -> TrainConfig:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)


@dataclass
class TrainResult:
    """A trained model: float64 ``weights`` (W_xh, W_hh, W_hy), raw ``params``, histories, provenance."""

    config: TrainConfig
    weights: dict[str, torch.Tensor]
    params: dict[str, torch.Tensor]
    loss_history: np.ndarray  # (steps_run,) training loss per Adam step
    val_history: list[tuple[int, float]]  # (step, validation accuracy) at each early-stop check
    steps_run: int
    train_seconds: float  # wall time of the original training (varies between machines)
    from_cache: bool = False
    path: Path | None = None
