"""The page *Changes to the verdicts*: every change of a published verdict (``published/changes.json``, written
by ``bookrelease.publish``) as a MyST table, put in place of :data:`MARKER` in ``book/changes.md`` when the book is
rendered (``scripts/book_html.py``). A claim is named by its statement, with its id as inline code."""

from __future__ import annotations

import json
from pathlib import Path

from lib.core import reference
from lib.core.tables import as_myst

MARKER = "<!-- verdict-changes -->"


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _claim(claim_id: str, statements: dict[str, str]) -> str:
    """A claim in words (its statement in the published reference, its notation as maths) with its id as inline
    code; the id alone for a claim the reference no longer holds."""
    statement = statements.get(claim_id)
    return f"{as_myst(statement)} (`{claim_id}`)" if statement else f"`{claim_id}` (no longer a claim)"


def section(path: Path | None = None) -> str:
    """The changes as a MyST table, newest first (a sentence when there are none)."""
    path = Path(path) if path is not None else reference.PUBLISHED / "changes.json"
    log = json.loads(path.read_text()) if path.is_file() else []
    if not log:
        return "No published verdict has changed yet."
    claims = path.parent / "claims.json"
    statements = (
        {k: c.get("statement", "") for k, c in json.loads(claims.read_text()).items()} if claims.is_file() else {}
    )
    lines = [
        f"{len(log)} changes of a published verdict so far.",
        "",
        "| date | claim | from | to | why |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {_cell(c['date'])} | {_cell(_claim(c['claim'], statements))} | {_cell(c['from'])} | {_cell(c['to'])} "
        f"| {_cell(as_myst(c['why']))} |"
        for c in reversed(log)
    ]
    return "\n".join(lines)
