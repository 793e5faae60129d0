"""``make publish`` (``bookrelease.publish``, issue 37): a released version keeps its reference, each change is
logged under a version not yet released with its reason, and a chapter awaiting publication is published and no longer
pending."""

from __future__ import annotations

import json

import pytest

from bookrelease import changelog, publish, release
from bookrun.manifest import load_manifest
from lib.core import reference
from tests.bookrelease.test_release import ROOT


@pytest.fixture
def publishing(tmp_path, monkeypatch):
    """A build and a published reference in ``tmp_path``, with a changelog whose top section is :func:`version`."""
    stems = list(load_manifest(ROOT / "book"))
    results = {f"{s}::x": 1.0 for s in stems}
    claims = {"C1": {"kind": "reproduced", "verdict": "reproduced"}}
    build, published = tmp_path / "build", tmp_path / "published"
    for folder in (build, published):
        folder.mkdir()
        for name, payload in (("results", results), ("claims", claims), ("provenance", {"pinned": True})):
            (folder / f"{name}.json").write_text(json.dumps(payload))
    monkeypatch.setenv("BOOK_BUILD_DIR", str(build))
    monkeypatch.setattr(reference, "PUBLISHED", published)
    monkeypatch.setattr(reference, "load", lambda folder=published, load=reference.load: load(folder))
    monkeypatch.setattr(publish, "CHANGES", published / "changes.json")
    monkeypatch.setattr(publish, "PUBLISHES", published / "publishes.json")
    monkeypatch.setattr(changelog, "CHANGELOG", tmp_path / "CHANGELOG.md")
    moved = {**results, f"{stems[0]}::x": 2.0}
    (build / "results.json").write_text(json.dumps(moved))
    (build / "claims.json").write_text(json.dumps({"C1": {"kind": "undecided", "verdict": "undecided"}}))
    return tmp_path


def test_a_released_version_keeps_its_reference(publishing, capsys):
    (publishing / "CHANGELOG.md").write_text(f"## {release.version()} — 2026-12-03\n")
    assert publish.main(["--why", "a new seed"]) == 2
    assert "is released" in capsys.readouterr().err
    assert not (publishing / "published" / "publishes.json").exists()


def test_a_publish_is_logged_under_its_version_and_needs_a_reason(publishing, capsys):
    (publishing / "CHANGELOG.md").write_text(f"## {release.version()} — unreleased\n")
    assert publish.main([]) == 2 and "say why" in capsys.readouterr().err
    assert publish.main(["--why", "a new seed"]) == 0
    (record,) = json.loads((publishing / "published" / "publishes.json").read_text())
    assert record["version"] == release.version() and record["why"] == "a new seed"
    assert record["values"]["moved"] == 1 and record["claims"]["verdicts_changed"] == 1
    (change,) = json.loads((publishing / "published" / "changes.json").read_text())
    assert (change["claim"], change["from"], change["to"], change["version"]) == (
        "C1", "reproduced", "undecided", release.version())  # fmt: skip
    assert publish.main([]) == 0, "publishing the same reference again needs no reason and logs nothing"
    assert len(json.loads((publishing / "published" / "publishes.json").read_text())) == 1
    assert reference.checksum_problems(publishing / "published") == [], "every publish writes the checksum manifest"


def test_a_pending_chapter_is_published_logged_and_no_longer_pending(publishing):
    (publishing / "CHANGELOG.md").write_text(f"## {release.version()} — unreleased\n")
    stems = list(load_manifest(ROOT / "book"))
    published = publishing / "published"
    results = json.loads((published / "results.json").read_text())
    (published / "results.json").write_text(json.dumps({k: v for k, v in results.items() if k != f"{stems[-1]}::x"}))
    (published / "pending.json").write_text(json.dumps({stems[-1]: "added on an AMD CPU"}))
    (publishing / "build" / "results.json").write_text(json.dumps(results))  # nothing moved: only the pending values
    (publishing / "build" / "claims.json").write_text((published / "claims.json").read_text())
    assert publish.main([]) == 2, "the pending chapter's first values are a change: they need a reason"
    assert publish.main(["--why", "the new chapter, from a pinned build"]) == 0
    assert not (published / "pending.json").exists()
    (record,) = json.loads((published / "publishes.json").read_text())
    assert record["why"] == "the new chapter, from a pinned build" and record["values"]["new"] == 1
