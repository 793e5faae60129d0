"""Which release of the book a build is: its version and the commit it was built from.

The version is written in one place, ``[project] version`` of ``pyproject.toml``; ``CITATION.cff`` and ``CHANGELOG.md``
must agree with it (``tests/bookrelease/test_release.py``). The commit is read from git when the build runs, marked when
the working tree differs from it, and ``unknown`` outside a git checkout. The executor writes both into
``_build/provenance.json`` (``bookrun.run``), and every page of the HTML book shows them in its footer
(``scripts/book_html.py``)."""

from __future__ import annotations

import html
import subprocess
import tomllib
from pathlib import Path

from lib.core.paths import REPO_ROOT

UNKNOWN = "unknown"
SHORT = 7  # characters of a commit hash shown in a footer


def project(root: Path = REPO_ROOT) -> tuple[str, str]:
    """``[project]`` name and version of ``root/pyproject.toml``: the one place both are stated."""
    meta = tomllib.loads((Path(root) / "pyproject.toml").read_text())["project"]
    return meta["name"], meta["version"]


def version(root: Path = REPO_ROOT) -> str:
    """The book's version, ``[project] version`` of ``pyproject.toml`` (e.g. ``"1.0.0"``)."""
    return project(root)[1]


def key(text: str) -> tuple[int, ...]:
    """A version as a sortable tuple: ``"1.10.0"`` → ``(1, 10, 0)``; ValueError naming the text if it is not one."""
    try:
        return tuple(int(part) for part in text.split("."))
    except ValueError:
        raise ValueError(f"version {text!r} is not of the form MAJOR.MINOR.PATCH (digits and dots)") from None


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def commit(root: Path = REPO_ROOT) -> dict[str, str | bool | None]:
    """``{"commit": full hash or "unknown", "uncommitted_changes": bool, None when unknown}`` of the tree at ``root``.

    Uncommitted changes are anything ``git status --porcelain`` lists (edits and files git does not ignore)."""
    head = _git(root, "rev-parse", "--verify", "HEAD")
    if head is None:
        return {"commit": UNKNOWN, "uncommitted_changes": None}
    status = _git(root, "status", "--porcelain")
    return {"commit": head.strip(), "uncommitted_changes": None if status is None else bool(status.strip())}


def record(root: Path = REPO_ROOT) -> dict[str, str | bool | None]:
    """What ``provenance.json`` says of the release: ``{"version", "commit", "uncommitted_changes"}``."""
    return {"version": version(root), **commit(root)}


def describe(rec: dict) -> str:
    """One line for a footer or a terminal: ``Version 1.0.0 · built from commit abc1234`` (plus "with uncommitted
    changes" when there were some; "from an unknown commit" outside git)."""
    if rec.get("commit", UNKNOWN) == UNKNOWN:
        return f"Version {rec['version']} · built from an unknown commit"
    dirty = " with uncommitted changes" if rec.get("uncommitted_changes") else ""
    return f"Version {rec['version']} · built from commit {rec['commit'][:SHORT]}{dirty}"


#: The licence line of every page's footer (LICENSE, LICENSE-BOOK).
LICENCES = "Text and figures CC BY 4.0, code MIT"
CC_BY = "https://creativecommons.org/licenses/by/4.0/"


def footer_html(rec: dict) -> str:
    """The HTML of every page's extra footer: the release line, then the licences."""
    line = html.escape(describe(rec))
    if rec.get("commit", UNKNOWN) != UNKNOWN:
        line = line.replace(rec["commit"][:SHORT], f'<code title="{rec["commit"]}">{rec["commit"][:SHORT]}</code>', 1)
    licences = html.escape(LICENCES).replace("CC BY 4.0", f'<a href="{CC_BY}">CC BY 4.0</a>', 1)
    return f'<p class="book-release">{line}</p>\n<p class="book-licences">{licences}</p>'
