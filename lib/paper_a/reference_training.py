"""The readable training loop: one model, autograd through the explicit rollout, ``torch.optim.Adam``, one thread.

:func:`train` is paper A's training as a textbook writes it: the initial weights of :func:`lib.paper_a.rnn.init_params`,
one task batch per step (:class:`lib.paper_a.training_data.DataStream`), the masked mean squared error of
:func:`lib.paper_a.rnn.rollout` (the loop of eqs. 1–2), ``loss.backward()`` and ``torch.optim.Adam`` over the separate
parameter tensors, and every ``stop_every`` steps an early stop on validation sign accuracy.

The book's models come from :mod:`lib.paper_a.batched_training` (several seeds at once through the hand-written kernels
of :mod:`lib.kernels`), tested against this loop on the same batches (``tests/paper_a/test_batched_training.py``); the
kernels are tested against it bit for bit through ``rnn.rollout_fast`` (``tests/kernels/``). This file is not part of
the trained-model cache key (:func:`lib.paper_a.train.code_fingerprint`): editing it retrains nothing."""

from __future__ import annotations

import time

import numpy as np
import torch

from lib.core.progress import bar as progress_bar
from lib.paper_a import metrics, rnn
from lib.paper_a.tasks import get_task
from lib.paper_a.training_config import DTYPES, TrainConfig, TrainResult
from lib.paper_a.training_data import TRAIN_STREAM, DataStream, validation_batch


def masked_mse(outputs_bty: torch.Tensor, targets_bty: torch.Tensor, mask_bty: torch.Tensor | None) -> torch.Tensor:
    """The training loss: mean((ŷ − y)²), or Σ m (ŷ − y)² / Σ m over the steps the task scores (its mask)."""
    squared = (outputs_bty - targets_bty) ** 2
    return torch.mean(squared) if mask_bty is None else torch.sum(squared * mask_bty) / torch.sum(mask_bty)


def train(config: TrainConfig, progress: bool = True, *, rollout=rnn.rollout) -> TrainResult:
    """Train ``config`` from scratch on the CPU, one thread; a progress bar on stderr.

    ``rollout`` is the rollout differentiated through: the explicit loop :func:`lib.paper_a.rnn.rollout`, or
    ``rnn.rollout_fast`` (the same function with hand-written BPTT), which the tests use to compare the kernels with
    this loop bit for bit.
    """
    if config.device != "cpu":
        raise ValueError(f"device={config.device!r}: train() is the readable CPU reference; load_or_train trains there")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one thread: the same weights on every machine
    try:
        start, dtype = time.perf_counter(), DTYPES[config.dtype]
        trial = get_task(config.task).generate(1, seed=0, **config.task_params)  # one trial: the channel counts
        n_inputs, n_outputs = trial.inputs_btx.shape[-1], trial.targets_bty.shape[-1]
        initial = rnn.init_params(config.construction, config.n_hidden, n_inputs, n_outputs, seed=config.seed)
        params = {name: value.to(dtype).requires_grad_(True) for name, value in initial.items()}
        optimiser = torch.optim.Adam(params.values(), lr=config.lr)
        batches = DataStream(config, dtype, TRAIN_STREAM, limit=config.steps)  # the same batches as the book's
        validation = validation_batch(config, dtype)  # None without a stop rule
        losses, checks = [], []
        desc = f"{config.task} {config.construction} N_h={config.n_hidden} seed={config.seed}"
        bar = progress_bar(total=config.steps, desc=desc, disable=not progress, leave=True)
        for step in range(1, config.steps + 1):
            inputs, targets, mask = batches.next()
            outputs, _ = rollout(rnn.weights_from_params(params), inputs)
            loss = masked_mse(outputs, targets, mask)
            optimiser.zero_grad()
            loss.backward()  # Cayley: on to P and D through W_hh = O(A) D O(A)ᵀ
            optimiser.step()
            losses.append(loss.item())
            bar.update(1)
            if validation is not None and step % config.stop_every == 0:
                inputs, targets, mask = validation
                with torch.no_grad():
                    outputs, _ = rollout(rnn.weights_from_params(params), inputs)
                accuracy = metrics.sign_accuracy(outputs, targets, mask)
                checks.append((step, accuracy))
                bar.set_postfix(loss=f"{losses[-1]:.2e}", val_acc=f"{accuracy:.4f}")
                if accuracy >= config.stop_accuracy:
                    break
        bar.close()
        params64 = {name: value.detach().to(torch.float64).clone() for name, value in params.items()}
        weights = rnn.as_float64(rnn.weights_from_params(params64))
        seconds = time.perf_counter() - start
        return TrainResult(config, weights, params64, np.asarray(losses, np.float64), checks, len(losses), seconds)
    finally:
        torch.set_num_threads(threads)
