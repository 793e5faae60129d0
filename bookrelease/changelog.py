"""``CHANGELOG.md``: per version of the book, the published reference values and verdicts that changed, and why.

Each version has a section, ``## 1.0.0 — 2026-12-03`` (or ``— unreleased`` while it is prepared), with its notes in
words and a block between ``<!-- published 1.0.0 -->`` and ``<!-- end published 1.0.0 -->`` that this module writes
from the two logs of the published reference: ``published/publishes.json`` (one record per ``make publish`` that
changed the reference: how many values moved, appeared or went, per chapter, and why) and ``published/changes.json``
(every verdict that changed, and why). A record carries the version it was published under; records logged before
the book had versions carry none and belong to the first version. ``python -m bookrelease.changelog`` rewrites the
blocks; ``--check`` exits 1 when they differ from the logs (``tests/bookrelease/test_changelog.py`` fails then too).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from lib.core import reference
from lib.core.paths import REPO_ROOT, atomic_write_bytes

from .release import key

CHANGELOG = REPO_ROOT / "CHANGELOG.md"
PUBLISHES = reference.PUBLISHED / "publishes.json"
CHANGES = reference.PUBLISHED / "changes.json"
UNRELEASED = "unreleased"
HEADING = re.compile(r"^## (?P<version>\d+(?:\.\d+)+) — (?P<date>\d{4}-\d{2}-\d{2}|unreleased)\s*$", re.M)
BLOCK = re.compile(
    r"(?P<open><!-- published (?P<version>[\d.]+) -->\n).*?(?P<close><!-- end published (?P=version) -->)", re.S
)


def _log(path: Path) -> list[dict]:
    return json.loads(Path(path).read_text()) if Path(path).is_file() else []


def sections(text: str) -> dict[str, str]:
    """``{version: date or "unreleased"}`` of the changelog's sections, in their order (newest first)."""
    found = {m["version"]: m["date"] for m in HEADING.finditer(text)}
    order = [key(v) for v in found]
    if order != sorted(order, reverse=True) or len(set(order)) != len(order):
        raise ValueError(f"CHANGELOG.md: the versions {list(found)} must each appear once, newest first")
    return found


def released(version: str, path: Path | None = None) -> bool:
    """Whether ``version`` has a dated section in the changelog (its published reference may no longer change)."""
    path = Path(path or CHANGELOG)
    text = path.read_text() if path.is_file() else ""
    return sections(text).get(version, UNRELEASED) != UNRELEASED


def version_of(entry: dict, versions: list[str]) -> str:
    """The section a log entry belongs to: its version, or the first one for entries older than versions."""
    v = entry.get("version") or min(versions, key=key)
    if v not in versions:
        raise ValueError(f"published under version {v}, which has no section in CHANGELOG.md ({', '.join(versions)})")
    return v


def publish_record(previous: dict | None, results: dict, claims: dict, verdicts: int, why: str, **stamp) -> dict:
    """The ``publishes.json`` record of a publish: ``results`` (timings aside) and ``claims`` against ``previous``
    (:func:`lib.core.reference.load`, None for the first reference), the number of verdicts that changed, ``why``, and
    ``stamp`` (``date``, ``version``)."""
    record = {**stamp, "why": why, "values": {"published": len(results)}, "claims": {"published": len(claims)}}
    if previous is None:
        return {**record, "first": True}
    diff = reference.compare(results, claims, previous)
    by_chapter = {c: row["moved"] for c, row in diff["by_chapter"].items() if row["moved"]}
    added = len(diff["new"]) + len(diff.get("pending", []))  # a pending chapter's values are new when published
    record["values"].update(moved=len(diff["moved"]), new=added, removed=len(diff["missing"]),
                            max_relative=diff["max_relative"], moved_by_chapter=by_chapter)  # fmt: skip
    record["claims"].update(changed=len(diff["claims_changed"]), verdicts_changed=verdicts)
    return record


def _publish_line(r: dict) -> str:
    if r.get("first"):
        what = f"the first published reference: {r['values']['published']} values, {r['claims']['published']} claims"
    else:
        v, c = r["values"], r["claims"]
        what = (f"{v['moved']} values moved (largest relative difference {v['max_relative']:.3g}), {v['new']} new, "
                f"{v['removed']} removed, {v['published']} published; {c['changed']} claim records changed and "
                f"{c['verdicts_changed']} verdict changes logged (new and removed claims included)")  # fmt: skip
    line = f"- {r['date']}: {what}. Why: {r['why']}"
    moved = r["values"].get("moved_by_chapter")
    if moved:
        line += "\n  Values moved per chapter: " + ", ".join(f"{c} {n}" for c, n in moved.items()) + "."
    return line


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def block(version: str, versions: list[str], publishes: list[dict], changes: list[dict]) -> str:
    """The generated part of ``version``'s section."""
    mine = [r for r in publishes if version_of(r, versions) == version]
    verdicts = [c for c in changes if version_of(c, versions) == version]
    if not mine and not verdicts:
        return "The published reference did not change.\n"
    lines = ["Published reference (`published/publishes.json`):", ""] + [_publish_line(r) for r in mine]
    reasons = list(dict.fromkeys(c["why"] for c in verdicts))
    for why in reasons:
        lines += ["", f"Verdicts changed (`published/changes.json`). Why: {why}", "",
                  "| claim | from | to | date |", "|---|---|---|---|"]  # fmt: skip
        lines += [f"| {_cell(c['claim'])} | {_cell(c['from'])} | {_cell(c['to'])} | {c['date']} |"
                  for c in verdicts if c["why"] == why]  # fmt: skip
    return "\n".join(lines) + "\n"


def render(text: str, publishes: list[dict], changes: list[dict]) -> str:
    """``text`` (the changelog) with every generated block rewritten from the logs; ValueError when a version has no
    block or a block no section."""
    versions = list(sections(text))
    blocks = [m["version"] for m in BLOCK.finditer(text)]
    if sorted(blocks, key=key) != sorted(versions, key=key):
        raise ValueError(f"CHANGELOG.md: sections {versions} but generated blocks {blocks}: one block per section")
    return BLOCK.sub(lambda m: f"{m['open']}\n{block(m['version'], versions, publishes, changes)}\n{m['close']}", text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bookrelease.changelog", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if CHANGELOG.md differs from the logs")
    args = parser.parse_args(argv)
    text = CHANGELOG.read_text()
    new = render(text, _log(PUBLISHES), _log(CHANGES))
    if args.check:
        if new != text:
            print("CHANGELOG.md is out of date: run python -m bookrelease.changelog", file=sys.stderr)
            return 1
        return 0
    if new != text:
        atomic_write_bytes(CHANGELOG, new.encode())
    print(f"CHANGELOG.md {'rewritten' if new != text else 'up to date'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
