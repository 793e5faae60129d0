"""What decides that a model is trained again, or a chapter executed again (issue #34).

The model cache's key covers the code that trains a model by its syntax (``lib.core.cache.fingerprint``): a comment, a
docstring or a reformatting of ``rnn.py`` reuses every cached model; a changed constant trains again. A chapter's
execution record holds the code it started with (``bookrun.fingerprints.repository_digests``).
"""

import ast
import shutil

import numpy as np
import torch

from bookrun import fingerprints
from lib.core import cache
from lib.core.paths import REPO_ROOT
from lib.paper_a import rnn

RNN = REPO_ROOT / "lib" / "paper_a" / "rnn.py"


def _copy(tmp_path, name="rnn.py"):
    path = tmp_path / name
    shutil.copy(RNN, path)
    return path


def _change_a_constant(path):
    """Change the first integer constant of the code in ``path`` (by one), leaving everything else as it was."""
    node = next(
        n for n in ast.walk(ast.parse(path.read_text()))
        if isinstance(n, ast.Constant) and type(n.value) is int and n.lineno == n.end_lineno
    )  # fmt: skip
    lines = path.read_text().splitlines(keepends=True)
    line = lines[node.lineno - 1]
    lines[node.lineno - 1] = line[: node.col_offset] + str(node.value + 1) + line[node.end_col_offset :]
    path.write_text("".join(lines))


def _edit(path, old, new):
    text = path.read_text()
    assert old in text, f"{old!r} is not in {path.name}: the test needs another anchor"
    path.write_text(text.replace(old, new, 1))


def test_comments_docstrings_and_formatting_leave_the_fingerprint_unchanged(tmp_path):
    path = _copy(tmp_path)
    before = cache.fingerprint([path])
    _edit(path, "from __future__ import annotations\n", "from __future__ import annotations  # a new comment\n\n\n")
    _edit(
        path,
        '"""',
        '"""A rewritten first line of the docstring.\n\n',
    )
    path.write_text(path.read_text().replace("\n\n\n", "\n\n\n\n"))  # formatting only
    assert cache.fingerprint([path]) == before


def test_a_changed_constant_or_statement_changes_the_fingerprint(tmp_path):
    path = _copy(tmp_path)
    before = cache.fingerprint([path])
    _change_a_constant(path)
    assert cache.fingerprint([path]) != before


def test_a_comment_reuses_the_cached_model_and_a_changed_constant_trains_again(tmp_path, monkeypatch):
    """The whole path of a model: cache.fetch keyed by the fingerprint of (a copy of) the model's code."""
    monkeypatch.setenv("BOOK_CACHE_DIR", str(tmp_path / "cache"))
    path, trained = _copy(tmp_path), []

    def fetch():
        compute = lambda: trained.append(1) or {"weights": torch.zeros(2)}  # noqa: E731
        return cache.fetch("fingerprint_test", {"n": 1}, compute, code=cache.fingerprint([path]), required=("weights",))

    fetch()
    _edit(path, "from __future__ import annotations\n", "from __future__ import annotations  # why: a note\n")
    _, _, from_cache = fetch()
    assert from_cache and len(trained) == 1, "a comment retrained the model"
    _change_a_constant(path)
    _, _, from_cache = fetch()
    assert not from_cache and len(trained) == 2, "a changed constant reused the old model"


def test_the_fingerprint_names_the_library_versions(tmp_path, monkeypatch):
    path = _copy(tmp_path)
    before = cache.fingerprint([path])
    monkeypatch.setattr(np, "__version__", "0.0.0")
    assert cache.fingerprint([path]) != before


def test_the_fingerprint_of_the_real_module_is_its_file(tmp_path):
    assert cache.fingerprint([rnn]) == cache.fingerprint([_copy(tmp_path)])


def test_a_chapter_records_the_code_it_started_with():
    """A file edited while a chapter runs is recorded with its digest at the start: the next run executes again."""
    start = fingerprints.repository_digests()
    rel = "lib/paper_a/rnn.py"
    assert start[rel] == fingerprints.file_digest(REPO_ROOT / rel)
    edited = {**start, rel: "digest-at-start"}
    record = fingerprints.make_record(REPO_ROOT / "book" / "intro.md", {}, [rel], {}, edited)
    assert record["imports"][rel] == "digest-at-start"
    assert fingerprints.why_stale(record, REPO_ROOT / "book" / "intro.md", {}) == f"{rel} changed"
