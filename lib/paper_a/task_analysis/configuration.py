"""The §4 settings of paper A's task analysis: training, the held-out batch, seeds, the validated study."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from lib.core import budget, params
from lib.paper_a import schur
from lib.paper_a.batched_training import seeds_in_flight
from lib.paper_a.tasks import get_task
from lib.paper_a.train import HELDOUT_STREAM, TrainConfig, TrainResult, load_or_train_many, task_batch
from lib.papers import schur_ablation

#: The held-out evaluation set: seed of the numpy stream (never a training seed's stream, see module docstring).
HELDOUT_SEED = 20_260_000
#: Held-out trials per task.
N_HELDOUT = 1024
#: Paper A §4: N_h = 64, dense orthogonal init, Adam 1e-3, batch 64, 30 epochs × 128 batches, α = 0.9 (lib.papers).
_T = schur_ablation.TASKS_TRAINING
PAPER_TRAINING = {
    "n_hidden": _T["n_hidden"],
    "construction": _T["construction"],
    "lr": _T["lr"],
    "batch_size": _T["batch_size"],
    "steps": _T["epochs"] * _T["batches_per_epoch"],
}
PAPER_ALPHA = schur_ablation.ALPHA
#: The single-block ablations, in the paper's figure order.
SINGLE_BLOCKS = ("RR", "CR", "CC")

#: Paper A §4 numbers as (mean, SEM) per task (a view of ``lib.papers.schur_ablation.TASKS``).
PAPER = {
    task: {
        "fvu_full": d["fvu_full"].value,
        "dfvu": {b: (q.value, q.sem) for b, q in d["dfvu"].items()},
        "sens": {b: (q.value, q.sem) for b, q in d["sens"].items()},
        "claim": d["claim"],
    }
    for task, d in schur_ablation.TASKS.items()
}


def paper_value(task: str, kind: str, block: str) -> tuple[float, float] | None:
    """The paper's (mean, SEM) of ``kind`` ∈ {"dfvu", "sens"} for a block, or None if the paper gives none."""
    return PAPER.get(task, {}).get(kind, {}).get(block)


def task_params_for(task: str, task_params: dict[str, Any] | None = None) -> dict[str, Any]:
    """Validated overrides of a task's defaults: unknown names raise ``ValueError`` listing the allowed ones."""
    spec = get_task(task)
    task_params = dict(task_params or {})
    params.subset("task_params keys", sorted(task_params), spec.defaults)
    return task_params


def train_config(task: str, seed: int, task_params: dict[str, Any] | None = None, **overrides) -> TrainConfig:
    """The paper's §4 training configuration for ``task`` and ``seed`` (``overrides`` change TrainConfig fields)."""
    return TrainConfig(
        task=task, task_params=task_params_for(task, task_params), seed=seed, **{**PAPER_TRAINING, **overrides}
    )


def train_solutions(
    task: str,
    solutions: int | None = None,
    task_params: dict[str, Any] | None = None,
    *,
    seeds: Sequence[int] | None = None,
    progress: bool = True,
    workers: int | None = None,
    **overrides,
) -> list[TrainResult]:
    """Train (or load from the cache) ``solutions`` solutions (seeds 0..solutions−1), or one per seed of ``seeds``.

    Missing solutions train ``workers`` at a time in separate processes (default: one per CPU; the same weights).
    """
    configs = [train_config(task, s, task_params, **overrides) for s in solution_seeds(solutions, seeds)]
    return load_or_train_many(configs, workers=workers, progress=progress)


def heldout_batch(task: str, task_params: dict[str, Any] | None = None, n_trials: int = N_HELDOUT):
    """The task's held-out evaluation batch as float64 (inputs_btx, targets_bty, mask_bty or None)."""
    batch = task_batch(task, n_trials, seed=HELDOUT_SEED, stream=HELDOUT_STREAM, **task_params_for(task, task_params))
    mask = getattr(batch, "mask_bty", None)
    to64 = lambda t: torch.as_tensor(t, dtype=torch.float64)  # noqa: E731
    return to64(batch.inputs_btx), to64(batch.targets_bty), None if mask is None else to64(mask)


def solution_seeds(solutions: int | None = None, seeds: Sequence[int] | None = None, default: int = 10) -> list[int]:
    """The seeds of a set of solutions: 0..``solutions``−1 for a count, or the integers ``seeds``; at most one of the
    two (``default`` solutions when neither is given). ``TypeError``/``ValueError`` naming the argument otherwise."""
    if solutions is not None and seeds is not None:
        raise ValueError(f"solutions={solutions!r} and seeds={seeds!r}: give a count or the seeds, not both")
    if seeds is None:
        return list(range(params.integer("solutions", default if solutions is None else solutions, min=1)))
    if isinstance(seeds, str | bytes) or not isinstance(seeds, Iterable):
        raise TypeError(f"seeds={seeds!r} must be a sequence of seeds (integers ≥ 0); a count is `solutions`")
    listed = [params.integer(f"seeds[{i}]", s, min=0) for i, s in enumerate(seeds)]
    if not listed:
        raise ValueError("seeds=[] must name at least one seed")
    repeated = sorted({s for s in listed if listed.count(s) > 1})
    if repeated:
        raise ValueError(f"seeds={listed} names the seed(s) {repeated} twice; each solution needs its own seed")
    return listed


#: Robustness variants of the choices the paper leaves open (label → task_params), a few seeds each.
TASK_VARIANTS: dict[str, dict[str, dict[str, Any]]] = {
    "flipflop": {
        "pulse rate 0.5 (Golub)": {"pulse_prob": 0.5},
        "input noise σ = 0.1": {"input_noise": 0.1},
    },
    "sine": {"continuous ω ~ U(0.1, 0.6)": {"frequencies": "continuous"}},
    "context": {"dt = 1/48 (T = 1, noise ×1.39 per step)": {"dt": 1 / 48}},
}


@dataclass(frozen=True, kw_only=True)
class TaskStudy:
    """One task's study at one α: which task and parameters, which seeds, the held-out size and training overrides.

    ``solutions``: how many (seeds 0..solutions−1, 10 by default), or ``seeds``: which (:func:`solution_seeds`); once
    built, ``seeds`` holds the seeds and ``solutions`` their number. Validates itself on construction (before any
    training): an unregistered ``task`` or unknown ``task_params`` (``ValueError`` listing the allowed ones),
    ``solutions`` (≥ 1) or ``seeds`` (integers ≥ 0), ``alpha`` in (0, 1] (the same
    check as :func:`lib.paper_a.schur.split`) and ``n_heldout`` ≥ 1. ``training`` overrides TrainConfig fields
    (validated by TrainConfig here, on one configuration, with a probe batch of the task: its parameters' values, and
    a batch of the right shapes and finite, :func:`lib.paper_a.tasks.checked_batch`).
    """

    task: str
    solutions: int | None = None
    seeds: Sequence[int] | None = None
    alpha: float = PAPER_ALPHA
    task_params: dict[str, Any] | None = None
    n_heldout: int = N_HELDOUT
    training: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        get_task(self.task)
        if self.task_params is not None and not isinstance(self.task_params, dict):
            raise TypeError(f"task_params={self.task_params!r} must be a dict of task parameters")
        object.__setattr__(self, "seeds", tuple(solution_seeds(self.solutions, self.seeds)))
        object.__setattr__(self, "solutions", len(self.seeds))
        object.__setattr__(self, "task_params", task_params_for(self.task, self.task_params))
        object.__setattr__(self, "alpha", schur.check_alpha(self.alpha))
        object.__setattr__(self, "n_heldout", params.integer("n_heldout", self.n_heldout, min=1))
        if not isinstance(self.training, dict):
            raise TypeError(f"training={self.training!r} must be a dict of TrainConfig fields")
        object.__setattr__(self, "training", dict(self.training))
        # before any training: the training settings, on one configuration (which draws a probe batch of the task)
        config = train_config(self.task, self.seeds[0], self.task_params, **self.training)
        self.work(config)

    def work(self, config: TrainConfig) -> budget.Work:
        """The task chapter's size (:func:`lib.core.budget.bound`, refused when out of reach): solutions × Adam steps ×
        N_h² × trials × time steps per Adam step, and the arrays of training and of the held-out evaluation."""
        steps, book_steps = trial_steps(self.task, self.task_params), trial_steps(self.task, None)
        return budget.bound(
            f"task_{self.task}",
            budget.Term("solutions", self.solutions, 10, params=("solutions",)),
            budget.Term("steps", config.steps, PAPER_TRAINING["steps"], params=("steps",)),
            budget.Term("N_h", config.n_hidden, PAPER_TRAINING["n_hidden"], 2),
            budget.Term(
                "trials × time steps",
                config.batch_size * steps,
                PAPER_TRAINING["batch_size"] * book_steps,
                params=("task_params",),
            ),  # fmt: skip
            arrays={
                "the seed-batched training's states (float32, kept for backpropagation)": budget.floats(
                    seeds_in_flight(self.solutions), config.batch_size, steps, config.n_hidden, itemsize=4, copies=4
                ),
                "the held-out trials' states, full and ablated": budget.floats(
                    self.n_heldout, steps, config.n_hidden, copies=5
                ),
            },  # fmt: skip
        )


def trial_steps(task: str, task_params: dict[str, Any] | None) -> int:
    """Time steps of one trial of ``task`` with ``task_params`` (one trial drawn)."""
    return int(get_task(task).generate(1, seed=0, **task_params_for(task, task_params)).inputs_btx.shape[1])
