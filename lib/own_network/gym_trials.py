"""Trials of a neurogym task as the book's arrays: inputs (B, T, n_in), one-hot targets (B, T, n_actions), a mask.

neurogym (https://github.com/neurogym/neurogym) is installed without its pins (``requirements-neurogym.txt``: its
numpy and matplotlib pins would change every other chapter's numbers); the book uses only its trial interface:
``env.unwrapped.seed``, ``new_trial()``, ``ob`` and ``gt``. Seeding goes through the task's own ``seed`` (its
``RandomState`` and timing samplers): gymnasium's ``reset(seed=)`` does not reach them, and an unseeded
``ngym.Dataset`` draws different trials each time. Its loguru messages and gymnasium's warnings are silenced here,
so that none reaches a chapter's page.
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np

from lib.core import params

#: The neurogym task the chapter *Your own network* trains on by default (a two-alternative perceptual decision).
DEFAULT_TASK = "PerceptualDecisionMaking-v0"


@contextlib.contextmanager
def _quiet():
    """neurogym imported and used without a word on stderr: its loguru logger disabled, gymnasium's warnings off."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            import gymnasium
            import neurogym
            from loguru import logger
        except ModuleNotFoundError as exc:
            raise ModuleNotFoundError(
                f"{exc.name} is not installed: `make venv` installs neurogym and what it imports "
                "(pip install --no-deps -r requirements-neurogym.txt)"
            ) from None

        logger.disable("neurogym")
        gymnasium.logger.set_level(gymnasium.logger.ERROR)
        yield neurogym


def is_neurogym_task(name: str) -> bool:
    """Whether ``name`` is a registered neurogym environment id (e.g. ``PerceptualDecisionMaking-v0``)."""
    with _quiet():
        import gymnasium

        return name in gymnasium.envs.registry and "neurogym" in str(gymnasium.envs.registry[name].entry_point)


def neurogym_tasks() -> list[str]:
    """Every neurogym environment id registered with gymnasium, sorted."""
    with _quiet():
        import gymnasium

        return sorted(k for k, v in gymnasium.envs.registry.items() if "neurogym" in str(v.entry_point))


def _n_actions(name: str, env) -> int:
    """The number of discrete actions of ``env``; ``ValueError`` for a task with continuous actions."""
    n = getattr(env.action_space, "n", None)
    if n is None:
        raise ValueError(
            f"task={name!r} has continuous actions ({type(env.action_space).__name__}); only neurogym tasks with "
            "discrete actions (a one-hot target per step) are supported"
        )
    return int(n)


def check_discrete(name: str) -> None:
    """``ValueError`` unless the neurogym task ``name`` has discrete actions (checked before anything is drawn)."""
    with _quiet() as ngym:
        _n_actions(name, ngym.make(name).unwrapped)


def neurogym_trials(name: str, n_trials: int, *, seed: int, dt: int = 100, length: int | None = None):
    """``n_trials`` whole trials of the neurogym task ``name`` at time step ``dt`` ms, seeded by ``seed``.

    Each trial starts at t = 0 and is padded (mask 0) or cut to ``length`` steps (default: the longest trial drawn).
    Returns float64 arrays ``inputs`` (B, T, n_in), ``targets`` (B, T, n_actions), the one-hot of neurogym's ground
    truth per step (action 0 is fixation), ``mask`` (B, T) and the integer ground truth ``labels`` (B, T; −1 where
    padded).
    """
    params.choice("task", name, neurogym_tasks())
    n_trials = params.integer("n_trials", n_trials, min=1)
    seed = params.integer("seed", seed, min=0)
    dt = params.integer("dt", dt, min=1)
    with _quiet() as ngym:
        env = ngym.make(name, dt=dt).unwrapped
        env.seed(seed)
        n_actions = _n_actions(name, env)
        trials = []
        for _ in range(n_trials):
            env.new_trial()
            trials.append((np.asarray(env.ob, dtype=np.float64), np.asarray(env.gt, dtype=np.int64)))
    longest = max(len(ob) for ob, _ in trials)
    length = longest if length is None else params.integer("length", length, min=1)
    n_in = trials[0][0].reshape(len(trials[0][0]), -1).shape[1]
    inputs = np.zeros((n_trials, length, n_in))
    labels = np.full((n_trials, length), -1, dtype=np.int64)
    for i, (ob, gt) in enumerate(trials):
        n = min(len(ob), length)
        inputs[i, :n] = ob[:n].reshape(n, n_in)
        labels[i, :n] = gt[:n]
    mask = labels >= 0
    targets = np.zeros((n_trials, length, n_actions))
    targets[mask, labels[mask]] = 1.0
    return inputs, targets, mask.astype(np.float64), labels
