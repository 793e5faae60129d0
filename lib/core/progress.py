"""Progress bars that show while work runs and never land in the executed book.

Where a bar goes is set by ``$BOOK_PROGRESS``:

- unset or ``notebook``: the cell's stderr, as usual (a reader running a chapter in Jupyter sees it);
- ``off``: no bar (nbval's re-execution);
- an absolute file path: appended to that file. The executor points each chapter's kernel at its own file and relays
  the bars to the terminal, so ``make book`` shows progress while the executed notebooks stay free of it.

(The kernel's own ``sys.__stderr__`` is no way out: ipykernel forwards file-descriptor-level output to the notebook.)
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from tqdm import tqdm

from lib.core import settings

ENV = settings.PROGRESS
MODES = ("notebook", "off")


def destination() -> str:
    """The validated ``$BOOK_PROGRESS``: ``"notebook"``, ``"off"`` or an absolute file path."""
    value = settings.progress()
    if value in MODES:
        return value
    path = Path(value)
    if not path.is_absolute() or not path.parent.is_dir():
        raise ValueError(
            f"${ENV}={value!r} is not allowed; use 'notebook' (the default), 'off', "
            "or an absolute path to a file in an existing folder"
        )
    return value


_files: dict[str, IO[str]] = {}


@atexit.register
def close() -> None:
    """Close the progress files this process opened."""
    while _files:
        _files.popitem()[1].close()


def _stream(where: str) -> IO[str] | None:
    if where == "notebook":
        return sys.stderr
    if where == "off":
        return None
    if where not in _files:
        _files[where] = open(where, "a", buffering=1, encoding="utf-8")  # noqa: SIM115 (kept open for the session)
    return _files[where]


def bar(total: int | None = None, desc: str | None = None, *, disable: bool = False, **kwargs) -> tqdm:
    """A ``tqdm`` bar sent where ``$BOOK_PROGRESS`` says (``disable=True`` always silences it)."""
    stream = _stream(destination())
    kwargs.setdefault("mininterval", 1.0)
    return tqdm(total=total, desc=desc, file=stream, disable=disable or stream is None, **kwargs)


def note(message: str) -> None:
    """A one-line status message (e.g. "loaded from cache") sent where the bars go."""
    stream = _stream(destination())
    if stream is not None:
        print(message, file=stream, flush=True)


@contextlib.contextmanager
def child_stderr() -> Iterator[None]:
    """While open, child processes started here write their stderr where the bars go (a nested kernel's log lines
    would otherwise be captured into this notebook by ipykernel); in ``notebook`` mode nothing changes."""
    where = destination()
    if where == "notebook":
        yield
        return
    target = os.open(os.devnull if where == "off" else where, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    saved = os.dup(2)
    try:
        os.dup2(target, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(target)
