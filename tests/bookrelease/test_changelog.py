"""``CHANGELOG.md`` (``bookrelease.changelog``, issue 37): written from the logs of the published reference, starting at
this version, every logged change under its version, and a change it does not list found."""

from __future__ import annotations

import json
import re

import pytest

from bookrelease import changelog, release


def _logs() -> tuple[list, list]:
    return json.loads(changelog.PUBLISHES.read_text()), json.loads(changelog.CHANGES.read_text())


def test_the_changelog_is_written_from_the_logs():
    text = changelog.CHANGELOG.read_text()
    assert changelog.render(text, *_logs()) == text, "CHANGELOG.md is out of date: run python -m bookrelease.changelog"


def test_the_changelog_starts_at_this_version():
    assert next(iter(changelog.sections(changelog.CHANGELOG.read_text()))) == release.version()


def test_every_logged_change_is_in_the_changelog_under_its_version():
    text = changelog.CHANGELOG.read_text()
    publishes, changes = _logs()
    versions = list(changelog.sections(text))
    parts = re.split(r"^## ", text, flags=re.M)
    for c in changes:
        section = next(p for p in parts if p.startswith(changelog.version_of(c, versions) + " "))
        assert f"| {c['claim']} | {c['from']} | {c['to']} | {c['date']} |" in section, c
    for r in publishes:
        section = next(p for p in parts if p.startswith(changelog.version_of(r, versions) + " "))
        assert f"Why: {r['why']}" in section, r


def test_the_changelog_check_finds_a_change_it_does_not_list():
    text = changelog.CHANGELOG.read_text()
    publishes, changes = _logs()
    planted = [*changes, {"claim": "X1_planted", "from": "reproduced", "to": "undecided", "date": "2026-12-04",
                          "why": "a planted change", "version": release.version()}]  # fmt: skip
    assert changelog.render(text, publishes, planted) != text
    with pytest.raises(ValueError, match="no section"):
        changelog.render(text, publishes, [{**planted[-1], "version": "99.0.0"}])
    with pytest.raises(ValueError, match="newest first"):
        changelog.sections("## 1.0.0 — 2026-12-03\n\n## 1.1.0 — unreleased\n")
