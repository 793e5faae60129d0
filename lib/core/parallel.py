"""Transitional: the old entry point of independent jobs, now a thin alias of :mod:`lib.core.engine`.

``map_in_processes`` remains only until ``lib.paper_a.train`` calls :func:`lib.core.engine.run_jobs` itself; it has
no pool of its own. New code imports :mod:`lib.core.engine`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lib.core.engine import available_cpus, default_workers, run_jobs  # noqa: F401 - the old names, kept


def _positional(fn: Callable[..., Any], args: tuple) -> Any:
    return fn(*args)


def map_in_processes(
    fn: Callable[..., Any],
    jobs: Sequence[tuple],
    *,
    workers: int | None = None,
    desc: str = "jobs",
    progress: bool = True,
    label: Callable[[tuple, Any], str] | None = None,
) -> list[Any]:
    """``[fn(*args) for args in jobs]`` through :func:`lib.core.engine.run_jobs` (deprecated: use it directly)."""
    return run_jobs(
        _positional,
        [{"fn": fn, "args": tuple(args)} for args in jobs],
        workers=workers,
        desc=desc,
        progress=progress,
        label=None if label is None else (lambda job, result: label(job["args"], result)),
    )
