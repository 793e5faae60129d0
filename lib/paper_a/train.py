"""Training (Adam on masked MSE) with a progress bar, a reproducible early-stop rule, and cached models.

``load_or_train(config)`` returns the model of a :class:`TrainConfig` from the book's one cache
(:mod:`lib.core.cache`), keyed by the full configuration and a fingerprint of the source files that decide what it
trains to (:func:`code_fingerprint`), training and caching it first when it is missing. A corrupt entry is reported,
moved aside and retrained (the cache's policy). Same configuration ⇒ bit-identical weights: every draw comes from
``config.seed`` and training runs on one thread. ``load_or_train_many(configs, workers=2)`` trains the missing models
of a list as independent jobs on :mod:`lib.core.engine` (Dask), the seeds of one configuration together (same weights).

The book's models come from :mod:`lib.paper_a.batched_training` alone (several seeds in one batched recurrence
through the hand-written kernels; ``benchmarks/bench_training.py``), tested against the textbook loop :func:`train`
(:mod:`lib.paper_a.reference_training`: one model, autograd through ``rnn.rollout``, ``torch.optim.Adam``, which
depends on nothing of the fast path). Only the fast path's code is part of the cache key, so editing the textbook loop
retrains nothing. Both read the configuration from :mod:`lib.paper_a.training_config` and their batches from
:mod:`lib.paper_a.training_data`; this module re-exports their public names, so ``lib.paper_a.train`` stays the one
place to import training from.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from lib.core import cache, devices, engine
from lib.core.paths import cache_dir
from lib.core.progress import note as progress_note
from lib.kernels import adam, recurrence, seed_batch
from lib.paper_a import batched_training, metrics, rnn, training_config, training_data
from lib.paper_a import tasks as task_registry
from lib.paper_a.reference_training import train  # noqa: F401 - re-exported: the textbook loop
from lib.paper_a.tasks import _common, get_task
from lib.paper_a.training_config import DTYPES, TrainConfig, TrainResult  # noqa: F401 - re-exported
from lib.paper_a.training_data import HELDOUT_STREAM, TRAIN_STREAM, VALIDATION_STREAM, task_batch  # noqa: F401


@dataclass(frozen=True, kw_only=True)
class CopyTraining:
    """The copy-task chapter's training, defined here once (paper A gives no copy-task settings; these are ours, see
    book/copy_task.md): N_h ``n_hidden``, Adam ``lr`` (3e-3 reaches the target about 2.5× sooner than 1e-3 here),
    ``batch_size`` fresh trials per step, the loss on ``replay_steps`` cyclic replay steps, float32, and a stop rule:
    validation Acc_rc over 128 lags (256 trials) ≥ ``stop_accuracy``, checked every ``stop_every`` steps, at most
    ``max_steps`` steps. The chapter's settings (:class:`lib.paper_a.chapters.copy_task.CopyStudy`) extend it; the
    values are checked by the :class:`TrainConfig` that :meth:`config` builds."""

    n_hidden: int = 72  # N_h (paper A's representative width)
    lr: float = 3e-3
    batch_size: int = 64
    replay_steps: int = 32
    max_steps: int = 4000
    stop_accuracy: float = 0.995
    stop_every: int = 100

    def config(
        self, construction: str = "dense_orthogonal", n_hidden: int | None = None, seed: int = 0, **overrides
    ) -> TrainConfig:
        """One solution's configuration (``n_hidden`` default: this training's; ``overrides``: TrainConfig fields)."""
        fields = dict(
            task="copy", task_params={"replay_steps": self.replay_steps}, construction=construction,
            n_hidden=self.n_hidden if n_hidden is None else n_hidden, lr=self.lr, batch_size=self.batch_size,
            steps=self.max_steps, seed=seed, dtype="float32", stop_accuracy=self.stop_accuracy,
            stop_every=self.stop_every, stop_batch_size=256, stop_task_params={"replay_steps": 128},
        )  # fmt: skip
        return TrainConfig(**{**fields, **overrides})


#: The copy-task chapter's training as the book runs it (:class:`CopyTraining`'s defaults).
COPY_TRAINING = CopyTraining()
#: ``copy_config(construction, n_hidden, seed, **overrides)``: one solution's configuration under COPY_TRAINING.
copy_config = COPY_TRAINING.config


# --------------------------------------------------------------------------------------------------- the cache

CACHE_KIND = "paper_a_rnn"  # cache files: <cache_dir>/paper_a_rnn-<key>.pt
_REQUIRED = ("config", "weights", "params", "loss_history", "val_history", "steps_run", "train_seconds")
_FINITE = ("weights", "params", "loss_history")  # a diverged model is never cached (lib.core.cache.check_finite)


def code_fingerprint(task: str) -> str:
    """Hash of the source files that decide what a configuration of ``task`` trains to.

    The model (``rnn``), the book's training loop with its configuration, batches and cache (``train``,
    ``batched_training``, ``training_config``, ``training_data``), the early-stop metric (``metrics``), the kernels
    (``lib.kernels``), the task's generator module, the task helpers and the registry that fills in its defaults
    (``lib.paper_a.tasks``): an edit to the code of any of them retrains instead of reusing an older model (a comment
    or a docstring does not: :func:`lib.core.cache.fingerprint` hashes the syntax). The textbook loop
    (``reference_training``) is not among them: the book's models never come from it, so editing it retrains nothing.
    """
    task_module = sys.modules[get_task(task).generate.__module__]
    loops = [__file__, batched_training, training_config, training_data]
    sources = [rnn, *loops, seed_batch, recurrence, metrics, adam, task_module, _common, task_registry]
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
    payload, path, from_cache = cache.fetch(
        CACHE_KIND, config.to_dict(), compute, code=code, required=_REQUIRED, finite=_FINITE
    )
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
        poisoned = []
        for config, payload in zip(job["configs"], payloads, strict=True):
            try:
                cache.check_finite(payload, _FINITE, what=cache.describe(CACHE_KIND, config.to_dict()))
            except cache.PoisonedEntryError as exc:
                poisoned.append(exc)
                continue
            cache.save_checkpoint(cache_path(config), payload)  # its good siblings are kept
        if poisoned:
            raise poisoned[0]

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
            raise RuntimeError(
                f"the model trained into {path} cannot be read back (the faults listed at the end of the run say why)"
            )
    return [_result(c, found[p], p, from_cache=p not in missing) for c, p in zip(configs, paths, strict=True)]
