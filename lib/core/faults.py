"""Faults a computation recovered from, told where the reader looks: the terminal that ran the book, not the page.

A chapter run by ``python -m bookrun`` has ``$BOOK_FAULTS`` (:func:`lib.core.settings.faults_file`), a file private
to that run; :func:`report` appends one JSON line per fault to it, from the kernel or any worker process it started
(they inherit the variable), and the executor prints them all at the end of the run with the chapter they came from
(``bookrun.faults``). Outside the executor (Jupyter, a script, a test) :func:`report` warns instead, so a fault is
never silent. What a computation cannot recover from is an exception, not a fault: it fails the chapter.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

from lib.core import settings


class FaultWarning(UserWarning):
    """A fault reported outside the executor (no ``$BOOK_FAULTS``)."""


def report(what: str, *, file: str | os.PathLike | None = None, action: str) -> None:
    """Record that ``what`` went wrong with ``file`` (if any) and what was done about it (``action``), e.g.
    ``report("cached model cannot be read (truncated)", file=path, action="moved aside to …; recomputed")``."""
    record = {"what": what, "file": None if file is None else str(file), "action": action, "pid": os.getpid()}
    target = settings.faults_file()
    if target is None:
        warnings.warn(sentence(record), FaultWarning, stacklevel=2)
        return
    data = (json.dumps(record) + "\n").encode()
    fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)  # one write per line: lines do not mix
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def recorded(path: str | os.PathLike) -> list[dict]:
    """The faults recorded in ``path`` (none if it does not exist); a line that is not a record is kept as text."""
    path = Path(path)
    if not path.is_file():
        return []
    faults = []
    for text in path.read_text(errors="replace").splitlines():
        if not text.strip():
            continue
        try:
            record = json.loads(text)
        except ValueError:
            record = None
        faults.append(record if isinstance(record, dict) else {"what": text, "file": None, "action": "?"})
    return faults


def sentence(record: dict) -> str:
    """One fault as a sentence: ``what (file): action``."""
    where = f" ({record['file']})" if record.get("file") else ""
    return f"{record.get('what', '?')}{where}: {record.get('action', '?')}"
