"""The book's release (issue 37): one version (``pyproject.toml``), the commit a build comes from, both in every
page's footer and in ``provenance.json`` (``bookrun.release``); ``CHANGELOG.md`` in agreement with the logs of the
published reference (``bookrun.changelog``), and ``make publish`` logging each change under a version not yet
released (``bookrun.publish``)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bookrun import changelog, fingerprints, publish, release
from bookrun.manifest import load_manifest
from lib.core import reference

ROOT = Path(__file__).resolve().parent.parent
HAS_GIT = shutil.which("git") is not None


def _project(tmp_path: Path, version: str = "2.3.4", deps: str = '["numpy"]') -> Path:
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "x"\nversion = "{version}"\ndependencies = {deps}\n')
    return tmp_path


def test_the_version_is_read_from_pyproject(tmp_path):
    assert release.version(_project(tmp_path)) == "2.3.4"
    assert re.fullmatch(r"\d+\.\d+\.\d+", release.version())
    assert release.key("1.10.0") > release.key("1.9.3")
    with pytest.raises(ValueError, match="'1.0-beta'"):
        release.key("1.0-beta")


def test_outside_git_the_commit_is_unknown(tmp_path):
    rec = release.record(_project(tmp_path))
    assert rec == {"version": "2.3.4", "commit": "unknown", "uncommitted_changes": None}
    assert release.describe(rec) == "Version 2.3.4 · built from an unknown commit"


@pytest.mark.skipif(not HAS_GIT, reason="no git on this machine")
def test_the_commit_and_uncommitted_changes_are_read_from_git(tmp_path):
    root = _project(tmp_path)
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    rec = release.record(root)
    assert rec == {"version": "2.3.4", "commit": head, "uncommitted_changes": False}
    assert release.describe(rec) == f"Version 2.3.4 · built from commit {head[:7]}"
    (root / "new.txt").write_text("not committed")
    rec = release.record(root)
    assert rec["uncommitted_changes"] is True
    assert release.describe(rec) == f"Version 2.3.4 · built from commit {head[:7]} with uncommitted changes"


def test_every_page_gets_the_release_and_the_licences_in_its_footer():
    """The Sphinx hook sets the theme's ``extra_footer`` option (every page shows it; a change rewrites every page)."""
    import importlib.util
    from types import SimpleNamespace

    spec = importlib.util.spec_from_file_location("book_html", ROOT / "scripts" / "book_html.py")
    book_html = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(book_html)
    config = SimpleNamespace(html_theme_options={"extra_footer": "", "home_page_in_toc": True})
    book_html.release_footer(None, config)
    assert config.html_theme_options["home_page_in_toc"] is True
    footer = re.sub(r"<[^>]+>", "", config.html_theme_options["extra_footer"])
    assert f"Version {release.version()} · built from " in footer
    assert "Text and figures CC BY 4.0, code MIT" in footer
    rec = {"version": "1.0.0", "commit": "0123456789abcdef", "uncommitted_changes": False}
    assert '<code title="0123456789abcdef">0123456</code>' in release.footer_html(rec)


def test_the_provenance_record_names_the_version_and_commit(tmp_path, monkeypatch):
    from bookrun.run import record_arithmetic

    monkeypatch.setenv("BOOK_BUILD_DIR", str(tmp_path))
    (tmp_path / "claims.json").write_text("{}")
    record_arithmetic(tmp_path, {})
    prov = json.loads((tmp_path / "provenance.json").read_text())
    assert prov["version"] == release.version()
    assert prov["commit"] == release.commit()["commit"] and "signature" in prov
    from bookrun import provenance as page

    assert f"| the book | {release.describe(prov)} |" in page.section(tmp_path)


def test_a_new_version_executes_no_chapter_again_but_a_new_dependency_does(tmp_path):
    before = fingerprints.requirements_digest(_project(tmp_path))
    assert fingerprints.requirements_digest(_project(tmp_path, version="9.9.9")) == before
    assert fingerprints.requirements_digest(_project(tmp_path, deps='["numpy", "scipy"]')) != before


# ------------------------------------------------------------------------------------------------------ CHANGELOG


def _logs() -> tuple[list, list]:
    return json.loads(changelog.PUBLISHES.read_text()), json.loads(changelog.CHANGES.read_text())


def test_the_changelog_is_written_from_the_logs():
    text = changelog.CHANGELOG.read_text()
    assert changelog.render(text, *_logs()) == text, "CHANGELOG.md is out of date: run python -m bookrun.changelog"


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


# ------------------------------------------------------------------------------------------------------ publish


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
