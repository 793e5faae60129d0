"""The copy task's solutions profiled like the §4 tasks: the FVU of the autonomous replay."""

from __future__ import annotations

from collections.abc import Sequence

from lib.paper_a.task_analysis.analysis import TaskAnalysis
from lib.paper_a.task_analysis.configuration import PAPER_ALPHA, heldout_batch
from lib.paper_a.task_analysis.profiles import profile_solution
from lib.paper_a.train import TrainConfig, load_or_train_many

#: Replay lags scored in the copy task (paper A §3.2: the first 128 generated steps).
COPY_LAGS = 128


def analyse_copy(
    configs: Sequence[TrainConfig],
    *,
    alpha: float = PAPER_ALPHA,
    n_heldout: int = 512,
    progress: bool = False,
    workers: int | None = None,
) -> TaskAnalysis:
    """Profile cached copy-task solutions like the §4 tasks: the score is the FVU of the autonomous replay.

    ``configs`` are the copy-task chapter's training configurations (loaded from the cache, trained if missing). The
    held-out batch replays ``COPY_LAGS`` steps with zero input; its mask selects exactly those lags, so the FVU is
    E‖ŷ − y‖² / E‖y − ȳ‖² over the 128 lags × 8 channels (ȳ ≈ 0 for ±1 symbols).
    """
    configs = list(configs)
    if not configs or any(c.task != "copy" for c in configs):
        raise ValueError(f"configs must be copy-task TrainConfigs; got tasks {[c.task for c in configs]}")
    solutions = load_or_train_many(configs, workers=workers, progress=progress)
    base = {k: v for k, v in configs[0].task_params.items() if k != "replay_steps"}
    batch = heldout_batch("copy", {**base, "replay_steps": COPY_LAGS}, n_heldout)
    profiles = [profile_solution(s.weights, batch, alpha=alpha, seed=s.config.seed) for s in solutions]
    return TaskAnalysis("copy", {**base, "replay_steps": COPY_LAGS}, alpha, profiles, solutions, batch)
