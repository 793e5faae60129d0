"""The page *Changes to the verdicts*: every change of a published verdict (``published/changes.json``, written by
``bookrun.publish``) as a MyST table, put in place of :data:`MARKER` in ``book/changes.md`` when the book is rendered
(``scripts/book_html.py``)."""

from __future__ import annotations

import json
from pathlib import Path

from lib.core import reference

MARKER = "<!-- verdict-changes -->"


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def section(path: Path | None = None) -> str:
    """The changes as a MyST table, newest first (a sentence when there are none)."""
    path = Path(path) if path is not None else reference.PUBLISHED / "changes.json"
    log = json.loads(path.read_text()) if path.is_file() else []
    if not log:
        return "No published verdict has changed yet."
    lines = [
        f"{len(log)} changes of a published verdict so far.",
        "",
        "| date | claim | from | to | why |",
        "|---|---|---|---|---|",
    ]
    lines += [f"| {' | '.join(_cell(c[k]) for k in ('date', 'claim', 'from', 'to', 'why'))} |" for c in reversed(log)]
    return "\n".join(lines)
