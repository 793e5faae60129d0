"""The book's training: several seeds of one configuration trained together, one batched recurrence per step.

Readable reference: the textbook loop :func:`lib.paper_a.reference_training.train`, one model at a time, autograd
through ``rnn.rollout`` and ``torch.optim.Adam``, a task batch per step. Both read the configuration from
:mod:`lib.paper_a.training_config` and draw their batches from :mod:`lib.paper_a.training_data`; this module depends on
nothing else of the reference, and only its code (not the textbook loop's) is part of the trained-model cache key.
Here the solutions of a configuration that differ only in ``seed`` train side by side:

- the loss and weight gradients of all of them come from one :class:`lib.kernels.seed_batch.SeedBatchedMSE` call
  per step (one batched product per time step, tanh through the logistic function);
- the configuration's ``device`` (``lib.core.devices``) runs the whole loop: the weights are drawn on the CPU (the
  same initial weights everywhere), the batches generated there, and both moved; the results come back as CPU tensors;
- each solution keeps its own initial weights (``config.seed``), its own data stream
  (``default_rng([seed, TRAIN_STREAM])``), its own Adam state and its own early stop: nothing couples them, and a
  solution's weights do not depend on which other seeds it trained beside (tested);
- bookkeeping is paid once per step, not once per solution: dense networks whose parameters are one flat leaf each
  are the rows of one (S, P) leaf under one Adam (:class:`lib.kernels.adam.StackedRows`, bit for bit each row's own
  Adam), and each stream (:class:`lib.paper_a.training_data.DataStream`) draws ``DATA_CHUNK`` steps of batches at
  once (``TaskSpec.batches``, the same batches as a generator call per step), stacked over the solutions once per
  chunk.

``tests/paper_a/test_batched_training.py`` checks a short run against the textbook loop on the same batches: bit for
bit, float32 included, with autograd through ``rnn.rollout_fast`` in the kernel's place (so the kernel's rounding is the
only difference); with the kernel, float64 to relative 1e-10, float32 to float tolerance. It also checks the stacked
rows against one leaf per solution (bit for bit, solutions stopping early included) and the independence of the seeds.
Parameters other than the weights (the Cayley construction's P and D) receive their gradients through autograd from the
kernel's weight gradients."""

from __future__ import annotations

import time

import numpy as np
import torch

from lib.core import devices
from lib.core.progress import bar as progress_bar
from lib.kernels import adam, seed_batch
from lib.paper_a import metrics, rnn
from lib.paper_a.tasks import get_task
from lib.paper_a.training_config import DTYPES
from lib.paper_a.training_data import TRAIN_STREAM, DataStream, validation_batch

#: Most solutions trained together in one process (more gain little: benchmarks/bench_training.py).
SEED_BATCH = 8


def group_key(config) -> tuple:
    """What solutions must share to train together: every field of the configuration but ``seed``."""
    fields = config.to_dict()
    fields.pop("seed")
    return tuple(sorted((k, repr(v)) for k, v in fields.items()))


class SeedData:
    """The training batches of the solutions trained together, stacked: ``next()`` → ``[inputs, targets, mask or
    None]``, each (S, B, T, C) over the active solutions (one stack per chunk of steps, not per step)."""

    def __init__(self, streams: list[DataStream]):
        self._streams, self._active = streams, list(range(len(streams)))
        self._chunk, self._k = None, 0

    def next(self):
        if self._chunk is None or self._k == self._chunk[0].shape[1]:
            parts = [self._streams[i].next_chunk() for i in self._active]
            self._chunk = [None if p[0] is None else torch.stack(p) for p in zip(*parts, strict=True)]
            self._k = 0
        k, self._k = self._k, self._k + 1
        return [None if a is None else a[:, k] for a in self._chunk]

    def keep(self, active: list[int]) -> None:
        """Go on with the solutions ``active`` (a subset of the current ones, in order)."""
        if self._chunk is not None:
            index = torch.tensor([self._active.index(i) for i in active], dtype=torch.long)
            self._chunk = [None if a is None else a.index_select(0, index.to(a.device)) for a in self._chunk]
        self._active = list(active)


def train_seeds(configs, progress: bool = True, *, label: str = "", stacked: bool = True) -> list[dict]:
    """Train ``configs`` (one configuration, several seeds) together; per config the fields of a TrainResult.

    Returns, in the order of ``configs``, dicts with ``weights`` (float64), ``params`` (float64), ``loss_history``
    (float64 numpy), ``val_history``, ``steps_run`` and ``train_seconds`` (the group's wall time shared equally).
    One thread; a progress bar over steps on stderr. The configurations' ``device`` must be present (checked first).
    ``stacked``: dense networks whose parameters are one flat leaf each train as the rows of one leaf
    (:class:`lib.kernels.adam.StackedRows`, bit for bit the same weights); False keeps one leaf and one Adam per
    solution (the general route, which Cayley networks always take).
    """
    configs = list(configs)
    keys = {group_key(c) for c in configs}
    if len(keys) != 1 or len({c.seed for c in configs}) != len(configs):
        raise ValueError("train_seeds needs configurations that differ only in seed, each seed once")
    devices.require("device", configs[0].device)  # a GPU asked for and absent: an error before any work
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _train(configs, progress, label, stacked)
    finally:
        torch.set_num_threads(threads)


class _PerSolution:
    """One flat leaf (or separate leaves) and one Adam per solution; Cayley parameters get their gradients through
    autograd from the weight gradients."""

    def __init__(self, trainables, configs):
        self.trainables = trainables
        self.optimisers = [adam.Adam(t.leaves, lr=c.lr) for t, c in zip(trainables, configs, strict=True)]
        self.dense = rnn.construction_of(trainables[0].named()) == "dense"
        self.active = list(range(len(trainables)))

    def weights(self) -> list[torch.Tensor]:
        self._weights = [rnn.weights_from_params(self.trainables[i].named()) for i in self.active]
        return [torch.stack([w[k].detach() for w in self._weights]) for k in rnn.WEIGHT_NAMES]

    def step(self, grads) -> None:
        for s, i in enumerate(self.active):
            self.optimisers[i].zero_grad()
            if self.dense:  # the weights are the parameters
                self.trainables[i].set_grads({k: g[s] for k, g in zip(rnn.WEIGHT_NAMES, grads, strict=True)})
            else:  # Cayley: on to P and D through W_hh = O(A) D O(A)ᵀ
                torch.autograd.backward([self._weights[s][k] for k in rnn.WEIGHT_NAMES], [g[s] for g in grads])
            self.optimisers[i].step()

    def write_back(self) -> None:
        pass

    def keep(self, active: list[int]) -> None:
        self.active = list(active)


class _Stacked:
    """The solutions' flat leaves as the rows of one leaf, one Adam over it (:class:`lib.kernels.adam.StackedRows`)."""

    def __init__(self, trainables, configs):
        self.rows = adam.StackedRows(trainables, lr=configs[0].lr)

    def weights(self) -> list[torch.Tensor]:
        stacked = self.rows.stacked()
        return [stacked[k] for k in rnn.WEIGHT_NAMES]

    def step(self, grads) -> None:
        self.rows.step(dict(zip(rnn.WEIGHT_NAMES, grads, strict=True)))

    def write_back(self) -> None:
        self.rows.write_back()

    def keep(self, active: list[int]) -> None:
        self.rows.keep(active)


def _train(configs, progress: bool, label: str, stacked: bool) -> list[dict]:
    start = time.perf_counter()
    first = configs[0]
    spec, dtype, device = get_task(first.task), DTYPES[first.dtype], torch.device(first.device)
    probe = spec.generate(1, seed=0, **first.task_params)
    n_inputs, n_outputs = probe.inputs_btx.shape[-1], probe.targets_bty.shape[-1]
    initial = [rnn.init_params(c.construction, c.n_hidden, n_inputs, n_outputs, seed=c.seed) for c in configs]
    trainables = [adam.FlatParameters(_to(weights, device), dtype) for weights in initial]  # drawn on the CPU
    dense = rnn.construction_of(trainables[0].named()) == "dense"
    if stacked and dense and all(t.is_flat for t in trainables):
        solutions = _Stacked(trainables, configs)
    else:
        solutions = _PerSolution(trainables, configs)
    data = SeedData([DataStream(c, dtype, TRAIN_STREAM, device, limit=c.steps) for c in configs])
    validation = [validation_batch(c, dtype, device) for c in configs]
    kernel = seed_batch.SeedBatchedMSE()
    losses = [[] for _ in configs]
    checks = [[] for _ in configs]
    steps_run = [first.steps] * len(configs)
    active = list(range(len(configs)))
    desc = label or f"{first.task} {first.construction} N_h={first.n_hidden} seeds={[c.seed for c in configs]}"
    bar = progress_bar(total=first.steps, desc=desc, disable=not progress, leave=True)
    for step in range(1, first.steps + 1):
        step_losses, grads = kernel(*solutions.weights(), *data.next())
        solutions.step(grads)
        for i, value in zip(active, step_losses.tolist(), strict=True):
            losses[i].append(value)
        bar.update(1)
        if first.stop_accuracy is not None and step % first.stop_every == 0:
            solutions.write_back()
            finished = _early_stop(active, trainables, validation, checks, step, first.stop_accuracy)
            for i in finished:
                steps_run[i] = step
            active = [i for i in active if i not in finished]
            bar.set_postfix(active=len(active), loss=f"{np.mean([losses[i][-1] for i in active] or [0]):.2e}")
            if not active:
                break
            if finished:
                solutions.keep(active)
                data.keep(active)
    solutions.write_back()
    bar.close()
    seconds = (time.perf_counter() - start) / len(configs)
    return [_fields(trainables[i], losses[i], checks[i], steps_run[i], seconds) for i in range(len(configs))]


def _to(tensors: dict, device: torch.device) -> dict:
    return {k: v.to(device) for k, v in tensors.items()}


def _early_stop(active, trainables, validation, checks, step: int, target: float) -> set[int]:
    """Validation accuracy of every active solution (the reference's rollout); the ones that reached ``target``."""
    finished = set()
    for i in active:
        x, y, m = validation[i]
        with torch.no_grad():
            out, _ = rnn.rollout_fast(rnn.weights_from_params(trainables[i].named()), x)
        accuracy = metrics.sign_accuracy(out, y, m)
        checks[i].append((step, accuracy))
        if accuracy >= target:
            finished.add(i)
    return finished


def _fields(trainable, losses, checks, steps_run: int, seconds: float) -> dict:
    params64 = {k: v.detach().to("cpu", torch.float64).clone() for k, v in trainable.named().items()}
    with torch.no_grad():
        weights = rnn.as_float64(rnn.weights_from_params(params64))
    return {
        "weights": weights,
        "params": params64,
        "loss_history": np.asarray(losses[:steps_run], dtype=np.float64),
        "val_history": checks,
        "steps_run": steps_run,
        "train_seconds": seconds,
    }


def _expected_cost(configs: list) -> int:
    """Work of training ``configs`` up to a constant: seeds × steps × batch × trial length × N_h²."""
    c = configs[0]
    length = get_task(c.task).generate(1, seed=0, **c.task_params).inputs_btx.shape[1]
    return len(configs) * c.steps * c.batch_size * length * c.n_hidden**2


def training_jobs(configs: list, workers: int) -> list[list]:
    """The missing ``configs`` as jobs: the seeds of one configuration together, at most :data:`SEED_BATCH` a job.

    A configuration with n seeds splits into max(⌈n / SEED_BATCH⌉, min(n, workers)) near-equal jobs, so the
    workers share it; the jobs come longest first, so they finish together. A solution's weights do not depend on
    its job.
    """
    groups: dict[tuple, list] = {}
    for config in configs:
        groups.setdefault(group_key(config), []).append(config)
    jobs = []
    for group in groups.values():
        n_jobs = max(-(-len(group) // SEED_BATCH), min(len(group), workers))
        jobs += [group[k::n_jobs] for k in range(n_jobs)]
    return sorted(jobs, key=_expected_cost, reverse=True)


def seeds_in_flight(n: int) -> int:
    """How many of ``n`` seeds train at once: :data:`SEED_BATCH` a job, one job per worker (what a run's memory
    estimate counts, :mod:`lib.core.budget`)."""
    from lib.core import engine

    return min(n, SEED_BATCH * engine.default_workers())
