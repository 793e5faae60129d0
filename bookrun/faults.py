"""What a run recovered from, told on the terminal at its end (never in the pages).

Every chapter's kernel, and the worker processes it starts, append the faults they recover from to a file private
to that chapter's run (``$BOOK_FAULTS``, :mod:`lib.core.faults`): a corrupt cache entry moved aside and recomputed,
a reader's task module that warns. A warning raised in a chapter's kernel goes there too (an IPython start-up file
of the run routes :func:`warnings.showwarning` to it), so no page carries stderr. The executor reads each file when
its chapter ends and prints them all, with the chapter and the file involved, when the run ends; a scratch run also
keeps them in its ``parameters.json``. What cannot be recovered from fails the chapter instead (``bookrun.chapter``).
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from lib.core import faults, settings
from lib.core.paths import display_path

FILE = "faults.jsonl"


def recording_env(tmp: Path) -> dict[str, str]:
    """The variable that sends a chapter's faults to ``tmp/faults.jsonl``, ``$BOOK_FAULTS``; the kernel's warnings
    go there too, through its start-up file ``bookrun/startup/00-book-faults.py``."""
    return {settings.FAULTS: str(tmp / FILE)}


class Ledger:
    """The faults of one run, by chapter (``"executor"`` for those the executor met itself), in the order met."""

    def __init__(self):
        self.lock = threading.Lock()
        self.entries: list[tuple[str, dict]] = []

    def add(self, where: str, records: list[dict]) -> None:
        with self.lock:
            self.entries.extend((where, record) for record in records)

    def read(self, where: str, tmp: Path) -> list[dict]:
        """Add the faults a chapter's run wrote to ``tmp``; return them."""
        records = faults.recorded(tmp / FILE)
        self.add(where, records)
        return records

    def lines(self) -> list[str]:
        """The summary printed at the end of the run (nothing when there was no fault)."""
        if not self.entries:
            return []
        unique = list(dict.fromkeys((where, faults.sentence(record)) for where, record in self.entries))
        head = f"recovered from {len(unique)} fault(s); the pages carry none of them:"
        return [head, *(f"  {where}: {text}" for where, text in unique)]


def set_aside_unreadable(book_tree: Path, stems: list[str], logs: Path) -> list[dict]:
    """Move every executed notebook of ``stems`` in ``book_tree`` that cannot be read (not JSON, no cells) to
    ``logs/<stem>.unreadable-<time>.ipynb``, so that the run treats its chapter as never executed instead of
    failing on it; the faults, one per notebook."""
    found = []
    for stem in stems:
        path = book_tree / f"{stem}.ipynb"
        if not path.is_file() or _readable(path):
            continue
        logs.mkdir(parents=True, exist_ok=True)
        target = logs / f"{stem}.unreadable-{time.strftime('%Y%m%d-%H%M%S')}.ipynb"
        os.replace(path, target)
        found.append({
            "what": f"the executed notebook of chapter {stem!r} cannot be read",
            "file": display_path(path),
            "action": f"moved to {display_path(target)}; the chapter counts as not executed (make book, or "
            f"python -m bookrun --only {stem}, executes it again)",
        })  # fmt: skip
    return found


def _readable(path: Path) -> bool:
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(nb, dict) and isinstance(nb.get("cells"), list) and isinstance(nb.get("metadata"), dict)
