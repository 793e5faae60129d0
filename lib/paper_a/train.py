"""Training (Adam on masked MSE) with a progress bar, a reproducible early-stop rule, and cached models.

``load_or_train(config)`` returns the model of a :class:`TrainConfig` from the book's one cache
(:mod:`lib.core.cache`), keyed by the full configuration and a fingerprint of the source files that decide what it
trains to (:func:`code_fingerprint`), training and caching it first when it is missing. A corrupt entry is reported,
moved aside and retrained (the cache's policy). Same configuration ⇒ bit-identical weights: every draw comes from
``config.seed`` and training runs on one thread. ``load_or_train_many(configs, workers=2)`` trains the missing models
of a list as independent jobs on :mod:`lib.core.engine` (Dask), the seeds of one configuration together (same weights).

Two trainings live here: :func:`train` is the readable reference, one model at a time through
:class:`lib.kernels.recurrence.RolloutMSE`; the book's models come from :mod:`lib.paper_a.batched_training` (several
seeds in one batched recurrence, about twice as fast; ``benchmarks/bench_training.py``), tested against it.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from lib.core import cache, devices, engine, params
from lib.core.paths import cache_dir
from lib.core.progress import bar as progress_bar
from lib.core.progress import note as progress_note
from lib.kernels import adam, recurrence, seed_batch
from lib.paper_a import batched_training, metrics, rnn
from lib.paper_a.tasks import _common, get_task

DTYPES = {"float32": torch.float32, "float64": torch.float64}
# Independent numpy streams derived from one seed: default_rng([seed, stream]).
TRAIN_STREAM, VALIDATION_STREAM, HELDOUT_STREAM = 0, 1, 2
# TrainConfig's integer fields and their least allowed values
_INTEGER_FIELDS = {"n_hidden": 2, "batch_size": 1, "steps": 1, "seed": 0, "stop_every": 1, "stop_batch_size": 1}


@dataclass(frozen=True)
class TrainConfig:
    """Everything that determines a trained model (all of it enters the cache key); checked when built."""

    task: str  # a registered task name (lib.paper_a.tasks.available_tasks())
    task_params: dict[str, Any] = field(default_factory=dict)  # overrides of the task's defaults for training batches
    n_hidden: int = 64  # N_h (even)
    construction: str = "dense_orthogonal"  # one of lib.paper_a.rnn.CONSTRUCTIONS
    lr: float = 1e-3  # Adam learning rate
    batch_size: int = 64  # trials per Adam step
    steps: int = 3840  # maximum Adam steps (paper A §4: 30 epochs × 128 batches = 3840)
    seed: int = 0  # initial weights (torch) and training batches (numpy stream TRAIN_STREAM)
    dtype: str = "float32"  # training precision; the returned weights are float64
    stop_accuracy: float | None = None  # stop once validation sign accuracy ≥ this (checked every stop_every steps)
    stop_every: int = 250  # steps between validation checks (only with stop_accuracy)
    stop_batch_size: int = 256  # validation trials (numpy stream VALIDATION_STREAM of seed)
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
        if self.n_hidden % 2:
            raise ValueError(f"n_hidden={self.n_hidden} must be even (the dense-normal and Cayley D have 2×2 blocks)")
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
            except (TypeError, ValueError) as exc:
                raise type(exc)(f"{name}={values!r} is not valid for task {self.task!r}: {exc}") from None

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


def task_batch(task: str, batch_size: int, *, seed: int, stream: int = HELDOUT_STREAM, **task_params):
    """A batch of ``task`` from the numpy stream ``default_rng([seed, stream])`` (default: the held-out stream)."""
    return get_task(task).generate(batch_size, seed=np.random.default_rng([seed, stream]), **task_params)


def _tensors(batch, dtype) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """``(inputs_btx, targets_bty, mask_bty or None)`` of a task batch in ``dtype``."""
    mask = getattr(batch, "mask_bty", None)
    conv = lambda t: torch.as_tensor(t, dtype=dtype)  # noqa: E731
    return conv(batch.inputs_btx), conv(batch.targets_bty), None if mask is None else conv(mask)


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
    data = batched_training.DataStream(config, dtype, TRAIN_STREAM, limit=config.steps)  # the book's batches
    probe = spec.generate(1, seed=0, **config.task_params)
    n_inputs, n_outputs = probe.inputs_btx.shape[-1], probe.targets_bty.shape[-1]
    initial = rnn.init_params(config.construction, config.n_hidden, n_inputs, n_outputs, seed=config.seed)
    trainable = adam.FlatParameters(initial, dtype)  # torch.optim.Adam's weights, bit for bit (lib.kernels.adam)
    opt = adam.Adam(trainable.leaves, lr=config.lr)
    loss_fn = recurrence.RolloutMSE()  # autograd's arithmetic through rnn.rollout_fast, without the graph
    val = None
    if config.stop_accuracy is not None:
        val_params = {**config.task_params, **config.stop_task_params}
        val_batch = task_batch(
            config.task, config.stop_batch_size, seed=config.seed, stream=VALIDATION_STREAM, **val_params
        )
        val = _tensors(val_batch, dtype)
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


#: The copy-task chapter's training (paper A gives no copy-task settings; these are ours, see book/copy_task.md):
#: Adam 3e-3 (reaches the target about 2.5× sooner than 1e-3 here), batch 64, 32 cyclic replay steps, float32, and a
#: stop rule: validation Acc_rc over 128 lags (256 trials) ≥ 0.995, checked every 100 steps, at most 4000 steps.
COPY_TRAINING: dict[str, Any] = {
    "task": "copy",
    "task_params": {"replay_steps": 32},
    "lr": 3e-3,
    "batch_size": 64,
    "steps": 4000,
    "dtype": "float32",
    "stop_accuracy": 0.995,
    "stop_every": 100,
    "stop_batch_size": 256,
    "stop_task_params": {"replay_steps": 128},
}


def copy_config(construction: str = "dense_orthogonal", n_hidden: int = 72, seed: int = 0, **overrides) -> TrainConfig:
    """The copy-task chapter's configuration of one solution (:data:`COPY_TRAINING` with ``overrides``)."""
    fields = {**COPY_TRAINING, "construction": construction, "n_hidden": n_hidden, "seed": seed, **overrides}
    return TrainConfig(**fields)


# --------------------------------------------------------------------------------------------------- the cache

CACHE_KIND = "paper_a_rnn"  # cache files: <cache_dir>/paper_a_rnn-<key>.pt
_REQUIRED = ("config", "weights", "params", "loss_history", "val_history", "steps_run", "train_seconds")


def code_fingerprint(task: str) -> str:
    """Hash of the source files that decide what a configuration of ``task`` trains to.

    The model (``rnn``), this loop, the early-stop metric (``metrics``), the kernels (``lib.kernels``), the task's
    generator module and the task helpers: an edit to any of them retrains instead of reusing an older model.
    """
    task_module = sys.modules[get_task(task).generate.__module__]
    sources = [rnn, __file__, batched_training, seed_batch, recurrence, metrics, adam, task_module, _common]
    return cache.fingerprint(sources)


def cache_path(config: TrainConfig) -> Path:
    """The cache file of ``config``: ``<cache_dir>/paper_a_rnn-<hash of the config and the code fingerprint>.pt``."""
    return cache.entry_path(CACHE_KIND, config.to_dict(), code=code_fingerprint(config.task))


def _payload(result: TrainResult) -> dict[str, Any]:
    return {
        "config": result.config.to_dict(),
        "weights": result.weights,
        "params": result.params,
        "loss_history": torch.from_numpy(result.loss_history),
        "val_history": [[int(s), float(a)] for s, a in result.val_history],
        "steps_run": int(result.steps_run),
        "train_seconds": float(result.train_seconds),
    }


def _result(config: TrainConfig, payload: dict[str, Any], path: Path, from_cache: bool) -> TrainResult:
    """The model of a cache entry (the fields of a TrainResult; the histories as a tensor and a list of pairs)."""
    fields = {k: payload[k] for k in ("weights", "params", "steps_run", "train_seconds")}
    losses, checks = payload["loss_history"].numpy(), [tuple(check) for check in payload["val_history"]]
    return TrainResult(
        config, **fields, loss_history=losses, val_history=checks, from_cache=from_cache, path=Path(path)
    )


def _trained_payloads(configs: list[TrainConfig], progress: bool) -> list[dict[str, Any]]:
    """Cache payloads of ``configs`` (one configuration, several seeds) trained together (the book's training)."""
    trained = batched_training.train_seeds(configs, progress=progress)
    return [_payload(TrainResult(c, **fields)) for c, fields in zip(configs, trained, strict=True)]


def load_or_train(config: TrainConfig, progress: bool = True) -> TrainResult:
    """The cached model of ``config``, or one trained now and cached (also when the entry was corrupt)."""
    compute, code = lambda: _trained_payloads([config], progress)[0], code_fingerprint(config.task)
    payload, path, from_cache = cache.fetch(CACHE_KIND, config.to_dict(), compute, code=code, required=_REQUIRED)
    if from_cache and progress:
        progress_note(f"loaded from cache: {path.name} ({payload['steps_run']} steps)")
    return _result(config, payload, path, from_cache)


def _train_job(configs: list[TrainConfig], progress: bool) -> list[dict[str, Any]]:
    """A job of ``load_or_train_many``: the cache payloads of ``configs`` trained together (a worker writes none)."""
    return _trained_payloads(configs, progress)


def load_or_train_many(
    configs, *, workers: int | None = None, scheduler: str | None = None, progress: bool = True
) -> list[TrainResult]:
    """``load_or_train`` for every configuration in ``configs``, training the missing ones as independent jobs.

    The missing models train as ``batched_training.training_jobs`` (seeds of one configuration together, shared out
    over ``workers``), each job on one thread wherever :func:`lib.core.engine.run_jobs` runs it: here (one worker),
    a LocalCluster of ``workers`` processes (default :func:`lib.core.engine.default_workers`) or the cluster of
    ``scheduler`` (else ``$BOOK_SCHEDULER``). This process, not the workers, writes each model to the cache as its job
    finishes, so an interrupted call keeps every finished model; then all are read back. Results follow the order of
    ``configs``; the weights are the same whichever way and wherever they were trained.
    """
    configs = list(configs)
    if not all(isinstance(c, TrainConfig) for c in configs):
        raise TypeError(f"configs must be TrainConfig objects; got {sorted({type(c).__name__ for c in configs})}")
    where = engine.choose(scheduler, workers)  # bad workers or scheduler: an error before anything else
    paths = [cache_path(c) for c in configs]
    unique = dict(zip(paths, configs, strict=True))  # a configuration listed twice trains once
    found = {path: cache.read(path, _REQUIRED) for path in unique}  # a corrupt entry: reported, moved aside, None
    missing = [path for path in unique if found[path] is None]
    for device in sorted({unique[path].device for path in missing}):
        devices.require("device", device)  # a GPU asked for and absent: an error before any training
    jobs = batched_training.training_jobs([unique[p] for p in missing], where.workers)
    if jobs:
        cache.ensure_writable(cache_dir(), "model cache")  # before training, not after it
    here = where.runs_here(len(jobs))  # then the bar over steps; on a cluster one bar over the jobs

    def store(i: int, job: dict[str, Any], payloads: list[dict[str, Any]]) -> None:
        for config, payload in zip(job["configs"], payloads, strict=True):
            cache.save_checkpoint(cache_path(config), payload)

    engine.run_jobs(
        _train_job,
        [{"configs": job, "progress": progress and here} for job in jobs],
        scheduler=where.scheduler,
        workers=where.workers,
        desc=f"training {len(missing)} models in {len(jobs)} jobs",
        progress=progress,
        label=lambda job, payloads: (
            f"{job['configs'][0].task} seeds={[c.seed for c in job['configs']]} "
            f"{sum(p['train_seconds'] for p in payloads):.0f} s"
        ),
        on_result=store,
    )
    for path in missing:
        found[path] = cache.read(path, _REQUIRED)
        if found[path] is None:
            raise RuntimeError(f"the model trained into {path} cannot be read back (see the warning above)")
    return [_result(c, found[p], p, from_cache=p not in missing) for c, p in zip(configs, paths, strict=True)]
