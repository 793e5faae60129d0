"""The book's pipeline: manifest and table of contents agree, chapters are real MyST notebooks, failures fail."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jupytext
import pytest

from bookrun.manifest import coerce, load_manifest, toc_files
from bookrun.processes import kernel_env
from bookrun.results import parse_glued
from tests.conftest import MYST_FRONT

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = load_manifest(ROOT / "book")
TOC = toc_files(ROOT / "_toc.yml")

HEADER = (
    MYST_FRONT
    + """```{{code-cell}} ipython3
:tags: [parameters]
n: int = 3  # a number
```

```{{code-cell}} ipython3
from myst_nb import glue
{body}
```
"""
)


def test_every_toc_page_is_executed_or_plain():
    for rel in TOC:
        stem = Path(rel).name
        assert stem in MANIFEST or (ROOT / f"{rel}.md").is_file(), f"{rel} is neither a chapter nor a page"


def test_every_chapter_is_in_the_toc():
    stems = {Path(rel).name for rel in TOC}
    assert set(MANIFEST) <= stems, f"chapters missing from _toc.yml: {sorted(set(MANIFEST) - stems)}"


@pytest.mark.parametrize("source", sorted({str(e["source"]) for e in MANIFEST.values()}))
def test_chapter_is_a_myst_notebook_with_parameters(source):
    """Without the jupytext block myst-nb renders code cells as text and never executes them."""
    nb = jupytext.read(source)
    assert nb.metadata.get("jupytext", {}).get("text_representation", {}).get("format_name") == "myst"
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, f"{source} has no code cell"
    assert "parameters" in code[0].metadata.get("tags", []), f"{source}: the first code cell must be `parameters`"


@pytest.mark.parametrize(
    ("text", "value"),
    [("0.5", 0.5), ("np.float64(0.25)", 0.25), ("np.int64(3)", 3), ("True", True), ("'a'", "a"), ("<Fig>", None)],
)
def test_parse_glued(text, value):
    assert parse_glued(text) == value


def test_parameter_values_are_coerced_like_papermill():
    assert [coerce(v) for v in ("3", "0.5", "True", "sine")] == [3, 0.5, True, "sine"]


def _run(book: Path, *args, env=None):
    cmd = [sys.executable, "-m", "bookrun", "--book-dir", str(book), "--toc", "/none"]
    return subprocess.run(cmd + list(args), capture_output=True, text=True, env=env, cwd=ROOT)


@pytest.fixture
def tiny_book(tmp_path):
    book = tmp_path / "book"
    book.mkdir()
    (book / "ok.md").write_text(HEADER.format(body='glue("twice", n * 2, display=False)'))
    # fails while it runs, after its validation cell (one failing there refuses the run up front:
    # tests/bookrun/test_checks_faults.py)
    failing = '\n```{code-cell} ipython3\nraise RuntimeError("boom")\n```\n'
    (book / "bad.md").write_text(HEADER.format(body="n = int(n)") + failing)
    env = dict(os.environ, BOOK_BUILD_DIR=str(tmp_path / "_build"))
    return book, env


@pytest.mark.slow
def test_executes_collects_and_refuses_failures(tiny_book, tmp_path):
    book, env = tiny_book
    (book / "chapters.yml").write_text("ok: {title: Renamed}\nbad: {}\n")
    out = tmp_path / "_build" / "executed"
    proc = _run(book, env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAILED" in proc.stderr and "bad" in proc.stderr
    assert (out / "book" / "ok.ipynb").is_file()
    assert not (out / "book" / "bad.ipynb").exists(), "a failed chapter must leave no executed notebook"
    results = json.loads((tmp_path / "_build" / "results.json").read_text())
    assert results == {"ok::twice": 6}

    # Up to date: not executed again. Other parameters go to the scratch tree.
    proc = _run(book, "--only", "ok", env=env)
    assert proc.returncode == 0 and "up to date ok" in proc.stdout
    proc = _run(book, "--only", "ok", "-p", "n", "5", env=env)
    assert proc.returncode == 0, proc.stderr
    run = tmp_path / "_build" / "scratch" / "ok-n=5"
    assert json.loads((run / "results.json").read_text()) == {"ok::twice": 10}
    assert json.loads((tmp_path / "_build" / "results.json").read_text()) == {"ok::twice": 6}, "the book's own"


def test_unknown_parameter_is_refused_with_the_allowed_ones(tiny_book):
    book, env = tiny_book
    (book / "chapters.yml").write_text("ok: {}\n")
    proc = _run(book, "--only", "ok", "-p", "m", "4", env=env)
    assert proc.returncode == 2
    assert "no parameter(s) ['m']" in proc.stderr and "n: int = 3" in proc.stderr


def test_unknown_chapter_is_refused(tiny_book):
    book, env = tiny_book
    (book / "chapters.yml").write_text("ok: {}\n")
    proc = _run(book, "--only", "nope", env=env)
    assert proc.returncode == 2 and "chapters are: ['ok']" in proc.stderr


def test_kernel_env_gives_workers_unless_the_user_chose(monkeypatch):
    monkeypatch.delenv("BOOK_WORKERS", raising=False)
    env = kernel_env(2)
    assert env["BOOK_WORKERS"] == "2" and env["OMP_NUM_THREADS"] == "1"
    monkeypatch.setenv("BOOK_WORKERS", "1")
    assert kernel_env(2)["BOOK_WORKERS"] == "1"
