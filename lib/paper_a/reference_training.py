"""The readable reference training: one model, Adam on masked MSE, hand-written BPTT, one thread, on the CPU.

:func:`train` is the loop written to be read: one task batch per step through
:class:`lib.kernels.recurrence.RolloutMSE` (autograd's arithmetic through ``rnn.rollout_fast``, without the graph) and
:class:`lib.kernels.adam.Adam` (``torch.optim.Adam``'s weights bit for bit), with an early stop on validation sign
accuracy. The book's models come from the seed-batched loop :mod:`lib.paper_a.batched_training`, tested against this
one on the same batches; :mod:`lib.paper_a.train` caches them. Nothing here depends on that fast path.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from lib.core.progress import bar as progress_bar
from lib.kernels import adam, recurrence
from lib.paper_a import metrics, rnn
from lib.paper_a.tasks import get_task
from lib.paper_a.training_config import DTYPES, TrainConfig, TrainResult
from lib.paper_a.training_data import TRAIN_STREAM, DataStream, validation_batch


def train(config: TrainConfig, progress: bool = True) -> TrainResult:
    """Train ``config`` from scratch (Adam, masked MSE, hand-written BPTT, one thread); progress bar on stderr."""
    if config.device != "cpu":
        raise ValueError(f"device={config.device!r}: train() is the readable CPU reference; load_or_train trains there")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _train(config, progress)
    finally:
        torch.set_num_threads(threads)


def _train(config: TrainConfig, progress: bool) -> TrainResult:
    start = time.perf_counter()
    spec, dtype = get_task(config.task), DTYPES[config.dtype]
    data = DataStream(config, dtype, TRAIN_STREAM, limit=config.steps)  # the book's batches
    probe = spec.generate(1, seed=0, **config.task_params)
    n_inputs, n_outputs = probe.inputs_btx.shape[-1], probe.targets_bty.shape[-1]
    initial = rnn.init_params(config.construction, config.n_hidden, n_inputs, n_outputs, seed=config.seed)
    trainable = adam.FlatParameters(initial, dtype)  # torch.optim.Adam's weights, bit for bit (lib.kernels.adam)
    opt = adam.Adam(trainable.leaves, lr=config.lr)
    loss_fn = recurrence.RolloutMSE()  # autograd's arithmetic through rnn.rollout_fast, without the graph
    val = validation_batch(config, dtype)  # None without a stop rule
    losses, val_history = [], []
    desc = f"{config.task} {config.construction} N_h={config.n_hidden} seed={config.seed}"
    bar = progress_bar(total=config.steps, desc=desc, disable=not progress, leave=True)
    for step in range(1, config.steps + 1):
        x, y, m = data.next()
        loss = loss_fn(rnn.weights_from_params(trainable.named()), x, y, m)
        opt.zero_grad()
        loss.backward()  # into the parameters: the Cayley W_hh through W_hh = O(A) D O(A)ᵀ
        opt.step()
        losses.append(loss.item())
        bar.update(1)
        if val is not None and step % config.stop_every == 0:
            with torch.no_grad():
                out, _ = rnn.rollout_fast(rnn.weights_from_params(trainable.named()), val[0])
            acc = metrics.sign_accuracy(out, val[1], val[2])
            val_history.append((step, acc))
            bar.set_postfix(loss=f"{losses[-1]:.2e}", val_acc=f"{acc:.4f}")
            if acc >= config.stop_accuracy:
                break
    bar.close()
    params64 = {k: v.detach().to(torch.float64).clone() for k, v in trainable.named().items()}
    with torch.no_grad():
        weights = rnn.as_float64(rnn.weights_from_params(params64))
    losses = np.asarray(losses, dtype=np.float64)
    return TrainResult(config, weights, params64, losses, val_history, len(losses), time.perf_counter() - start)
