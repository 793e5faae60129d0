"""The book's settings that come from the environment: the one module of ``lib`` that reads ``os.environ``.

The executor (``bookrun``) sets these variables for every chapter kernel it starts, and a reader may set them in a
shell. Everything else in ``lib`` asks this module, or takes the value as an argument, so that each variable's name,
default and check are written once (``tests/test_layout.py`` fails on ``os.environ`` anywhere else in ``lib``).

==================  ==========================================================================================
variable            what it decides
==================  ==========================================================================================
BOOK_BUILD_DIR      everything generated (default ``<repo>/_build``)
BOOK_CACHE_DIR      the cache of trained models and results tables (default ``$BOOK_BUILD_DIR/cache``)
BOOK_WORKERS        processes for a chapter's independent jobs (default: one per CPU)
BOOK_SCHEDULER      a Dask scheduler's address for those jobs (default: none, a local cluster)
BOOK_PROGRESS       where progress bars go: ``notebook`` (default), ``off`` or an absolute file path
BOOK_ARITHMETIC     the floating-point arithmetic: ``pinned`` (default) or ``native`` (:mod:`lib.core.arithmetic`)
BOOK_TASK_MODULES   the reader's task modules this process loaded, inherited by the processes it starts
BOOK_FAULTS         a file where a chapter's kernel and workers log what they recovered from (:mod:`lib.core.faults`)
BOOK_CHECKING       ``1`` in the executor's up-front check of the values given (nothing is computed there)
BOOK_ALLOW_LONG     ``1``: run a chapter whose estimated time is far over its budget (``--allow-long``)
BOOK_CELL_TIMEOUT   seconds one cell of a chapter may run (``--cell-timeout``; default 1 hour, 1 day with the above)
==================  ==========================================================================================

Kept free of heavy imports: the executor reads it before any chapter starts.
"""

from __future__ import annotations

import os
from pathlib import Path

BUILD_DIR = "BOOK_BUILD_DIR"
CACHE_DIR = "BOOK_CACHE_DIR"
WORKERS = "BOOK_WORKERS"
SCHEDULER = "BOOK_SCHEDULER"
PROGRESS = "BOOK_PROGRESS"
ARITHMETIC = "BOOK_ARITHMETIC"
TASK_MODULES = "BOOK_TASK_MODULES"
FAULTS = "BOOK_FAULTS"
CHECKING = "BOOK_CHECKING"
ALLOW_LONG = "BOOK_ALLOW_LONG"
CELL_TIMEOUT = "BOOK_CELL_TIMEOUT"
#: Seconds one cell may run by default, and with ``--allow-long``.
CELL_SECONDS, LONG_CELL_SECONDS = 3600, 86400


def variable(name: str) -> str | None:
    """The value of the environment variable ``name`` in this process, or ``None`` when it is not set."""
    return os.environ.get(name)


def environment() -> dict[str, str]:
    """A copy of this process's environment (what :mod:`lib.core.arithmetic` checks its pins against)."""
    return dict(os.environ)


def path(name: str, default: Path) -> Path:
    """The folder in the variable ``name`` (``BOOK_BUILD_DIR``, ``BOOK_CACHE_DIR``), or ``default`` when it is unset
    or empty; resolved."""
    return Path(os.environ.get(name) or default).resolve()


def workers() -> int | None:
    """``$BOOK_WORKERS`` as a positive integer, ``None`` when it is not set; ``ValueError`` naming it otherwise."""
    value = os.environ.get(WORKERS)
    if value is None:
        return None
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{WORKERS}={value!r} must be a positive integer (processes for independent jobs)")
    return int(value)


def scheduler() -> str | None:
    """``$BOOK_SCHEDULER`` stripped, ``None`` when it is unset or empty (the engine checks the address)."""
    return os.environ.get(SCHEDULER, "").strip() or None


def progress() -> str:
    """``$BOOK_PROGRESS`` stripped, ``"notebook"`` when it is unset or empty (:mod:`lib.core.progress` checks it)."""
    return os.environ.get(PROGRESS, "").strip() or "notebook"


def arithmetic(environ: dict[str, str] | None = None) -> str:
    """``$BOOK_ARITHMETIC`` of ``environ`` (default: this process's) stripped, ``"pinned"`` when unset or empty."""
    return (os.environ if environ is None else environ).get(ARITHMETIC, "").strip() or "pinned"


def task_modules() -> list[str]:
    """The paths in ``$BOOK_TASK_MODULES`` (``os.pathsep``-separated), in order."""
    return [p for p in os.environ.get(TASK_MODULES, "").split(os.pathsep) if p]


def add_task_module(path: str | os.PathLike) -> None:
    """Add ``path`` to ``$BOOK_TASK_MODULES`` (once), so that the processes this one starts load it too."""
    os.environ[TASK_MODULES] = os.pathsep.join(dict.fromkeys([*task_modules(), str(path)]))


def faults_file() -> Path | None:
    """``$BOOK_FAULTS`` as a path (set by the executor for every chapter it runs), ``None`` when unset or empty."""
    value = os.environ.get(FAULTS, "").strip()
    return Path(value) if value else None


def checking() -> bool:
    """Whether this process only checks a chapter's values (the executor's up-front check, before any kernel starts):
    a computation that would start here stops instead (:class:`lib.core.cache.CheckedOnly`)."""
    return os.environ.get(CHECKING, "").strip() == "1"


def allow_long() -> bool:
    """Whether a run estimated far over its time budget may start (``python -m bookrun --allow-long`` sets it;
    :mod:`lib.core.budget`)."""
    return os.environ.get(ALLOW_LONG, "").strip() == "1"


def cell_timeout() -> float:
    """Seconds one cell of a chapter may run: ``$BOOK_CELL_TIMEOUT`` (``--cell-timeout``), else one hour (a day with
    ``--allow-long``); ``ValueError`` naming the variable for a value that is not a positive number."""
    value = os.environ.get(CELL_TIMEOUT, "").strip()
    if not value:
        return float(LONG_CELL_SECONDS if allow_long() else CELL_SECONDS)
    try:
        seconds = float(value)
    except ValueError:
        seconds = float("nan")
    if not seconds > 0 or seconds == float("inf"):
        raise ValueError(f"${CELL_TIMEOUT}={value!r} is not allowed: give the seconds one cell may run, a positive "
                         "number (--cell-timeout)")  # fmt: skip
    return seconds
