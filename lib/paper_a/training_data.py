"""The batches a training run sees: seeded numpy streams of task batches, as torch tensors.

Every draw comes from a :class:`lib.paper_a.training_config.TrainConfig`'s ``seed`` through independent numpy
streams ``default_rng([seed, stream])``: :data:`TRAIN_STREAM` for the training batches (:class:`DataStream`),
:data:`VALIDATION_STREAM` for the early-stop trials (:func:`validation_batch`), :data:`HELDOUT_STREAM` for held-out
analysis (:func:`task_batch`). Both trainings draw from here, so they see the same batches: the textbook loop
(:mod:`lib.paper_a.reference_training`) and the book's seed-batched one (:mod:`lib.paper_a.batched_training`).
"""

from __future__ import annotations

import numpy as np
import torch

from lib.paper_a.tasks import get_task

# Independent numpy streams derived from one seed: default_rng([seed, stream]).
TRAIN_STREAM, VALIDATION_STREAM, HELDOUT_STREAM = 0, 1, 2

#: Training batches drawn at once per solution (``TaskSpec.batches``: the same batches as one call per step).
DATA_CHUNK = 64


def task_batch(task: str, batch_size: int, *, seed: int, stream: int = HELDOUT_STREAM, **task_params):
    """A batch of ``task`` from the numpy stream ``default_rng([seed, stream])`` (default: the held-out stream)."""
    return get_task(task).generate(batch_size, seed=np.random.default_rng([seed, stream]), **task_params)


def as_tensors(batch, dtype, device=None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """``(inputs_btx, targets_bty, mask_bty or None)`` of a task batch in ``dtype`` on ``device`` (None: the CPU)."""
    arrays = (batch.inputs_btx, batch.targets_bty, getattr(batch, "mask_bty", None))
    return tuple(None if a is None else torch.as_tensor(a, dtype=dtype, device=device) for a in arrays)


def validation_batch(config, dtype, device: torch.device | str = "cpu"):
    """The early-stop trials of ``config`` as :func:`as_tensors` (made on the CPU, then moved), or None without a
    stop rule: ``stop_batch_size`` trials of the stream ``VALIDATION_STREAM``, ``stop_task_params`` over
    ``task_params``."""
    if config.stop_accuracy is None:
        return None
    task_params = {**config.task_params, **config.stop_task_params}
    batch = task_batch(config.task, config.stop_batch_size, seed=config.seed, stream=VALIDATION_STREAM, **task_params)
    return tuple(None if t is None else t.to(device) for t in as_tensors(batch, dtype))


class DataStream:
    """A configuration's training batches: the numpy stream ``default_rng([seed, stream])`` drawn :data:`DATA_CHUNK`
    steps at a time (the same batches as one generator call per step); ``next()`` → ``(inputs_btx, targets_bty,
    mask_bty or None)`` in ``dtype`` on ``device``; ``next_chunk()`` → the same with a leading (steps,) axis."""

    def __init__(self, config, dtype, stream: int, device: torch.device | None = None, *, limit: int | None = None):
        self._spec = get_task(config.task)
        self._rng = np.random.default_rng([config.seed, stream])
        self._config, self._dtype, self._device = config, dtype, device
        self._left = limit  # batches still to draw (None: no end), so a short run draws no more than it uses
        self._chunk, self._k = None, 0

    def next_chunk(self):
        n = DATA_CHUNK if self._left is None else min(DATA_CHUNK, self._left)
        if n < 1:
            raise RuntimeError(f"the stream's limit of batches is used up (limit={self._left})")
        if self._left is not None:
            self._left -= n
        batch = self._spec.batches(n, self._config.batch_size, seed=self._rng, **self._config.task_params)
        return as_tensors(batch, self._dtype, self._device)

    def next(self):
        if self._chunk is None or self._k == len(self._chunk[0]):
            self._chunk, self._k = self.next_chunk(), 0
        k, self._k = self._k, self._k + 1
        return tuple(None if a is None else a[k] for a in self._chunk)
