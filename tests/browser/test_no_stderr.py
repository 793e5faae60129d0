"""No page carries a chapter's stderr: a warning, a fault recovered from or a traceback is told on the terminal
that ran the book (``bookrun.faults``), never printed into the page a reader opens (issue 35)."""

from __future__ import annotations

import json
import re

import pytest

from lib.core.paths import build_dir

pytestmark = pytest.mark.browser

#: How myst-nb renders a cell's stderr stream or an error: a ``div`` of class ``output stderr`` / ``output traceback``.
STDERR_HTML = re.compile(r'class="[^"]*\boutput (?:stderr|traceback)\b')


def test_no_built_page_shows_stderr_or_a_traceback(html_dir):
    pages = sorted(html_dir.rglob("*.html"))
    shown = [str(p.relative_to(html_dir)) for p in pages if STDERR_HTML.search(p.read_text())]
    assert not shown, f"pages that show a chapter's stderr or a traceback: {shown}"


def test_no_executed_notebook_holds_stderr():
    found = []
    for path in sorted((build_dir() / "executed" / "book").glob("*.ipynb")):
        for i, cell in enumerate(json.loads(path.read_text())["cells"]):
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error" or output.get("name") == "stderr":
                    found.append(f"{path.name} cell {i}: {''.join(output.get('text', output.get('evalue', '')))[:120]}")
    assert not found, found
