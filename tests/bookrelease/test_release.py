"""The book's release (issue 37): one version (``pyproject.toml``), the commit a build comes from, both in every
page's footer and in ``provenance.json`` (``bookrelease.release``). ``CHANGELOG.md`` is tested in
``tests/bookrelease/test_changelog.py``, ``make publish`` in ``tests/bookrelease/test_publish.py``."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bookrelease import release
from bookrun import fingerprints

ROOT = Path(__file__).resolve().parents[2]
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
    from bookrelease import records

    monkeypatch.setenv("BOOK_BUILD_DIR", str(tmp_path))
    (tmp_path / "claims.json").write_text("{}")
    from bookrun.processes import kernel_env

    records.provenance(tmp_path, {}, kernel_env())
    prov = json.loads((tmp_path / "provenance.json").read_text())
    assert prov["version"] == release.version()
    assert prov["commit"] == release.commit()["commit"] and "signature" in prov
    from bookrelease import provenance as page

    assert f"| the book | {release.describe(prov)} |" in page.section(tmp_path)


def test_a_new_version_executes_no_chapter_again_but_a_new_dependency_does(tmp_path):
    before = fingerprints.requirements_digest(_project(tmp_path))
    assert fingerprints.requirements_digest(_project(tmp_path, version="9.9.9")) == before
    assert fingerprints.requirements_digest(_project(tmp_path, deps='["numpy", "scipy"]')) != before
