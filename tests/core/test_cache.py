"""lib.core.cache: one key, one corruption policy (reported, moved aside, recomputed; never silently deleted), the
configuration hashes and atomic checkpoints, and the fingerprint of the code that trains a model (issue #34): a
comment, a docstring or a reformatting of ``rnn.py`` reuses every cached model; a changed constant trains again."""

import ast
import shutil
from fractions import Fraction

import numpy as np
import pytest
import torch

from lib.core import cache
from lib.core.paths import REPO_ROOT
from lib.paper_a import rnn


@pytest.fixture
def tmp_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BOOK_CACHE_DIR", str(tmp_path))
    return tmp_path


def _compute(calls):
    def compute():
        calls.append(1)
        return {"w": torch.arange(3.0)}

    return compute


def test_fetch_computes_once_then_reads(tmp_cache):
    calls = []
    a, path, hit = cache.fetch("demo", {"seed": 0}, _compute(calls), code="c0", required=("w",))
    b, path2, hit2 = cache.fetch("demo", {"seed": 0}, _compute(calls), code="c0", required=("w",))
    assert (hit, hit2, len(calls), path) == (False, True, 1, path2)
    assert path.parent == tmp_cache and path.name.startswith("demo-")
    assert torch.equal(a["w"], b["w"])


def test_key_follows_config_and_code(tmp_cache):
    p = cache.entry_path("demo", {"seed": 0}, code="c0")
    assert p != cache.entry_path("demo", {"seed": 1}, code="c0")
    assert p != cache.entry_path("demo", {"seed": 0}, code="c1")
    assert p != cache.entry_path("other", {"seed": 0}, code="c0")


def test_corrupt_entry_is_reported_moved_aside_and_recomputed(tmp_cache):
    calls = []
    path = cache.entry_path("demo", {"seed": 0}, code="c0")
    path.write_bytes(b"not a torch file")
    with pytest.warns(UserWarning, match=r"cached model cannot be read .*demo-.*\.pt\): moved aside to .*\.corrupt-"):
        payload, _, hit = cache.fetch("demo", {"seed": 0}, _compute(calls), code="c0")
    assert not hit and calls == [1] and torch.equal(payload["w"], torch.arange(3.0))
    aside = list(tmp_cache.glob(path.name + ".corrupt-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == b"not a torch file"


def test_entry_missing_a_required_field_is_corrupt(tmp_cache):
    path = cache.entry_path("demo", {"seed": 0}, code="c0")
    cache.save_checkpoint(path, {"other": torch.zeros(1)})
    with pytest.warns(UserWarning, match="lacks the entries"):
        assert cache.read(path, required=("w",)) is None


def test_fingerprint_changes_with_source(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("x = 1\n")
    before = cache.fingerprint([f])
    f.write_text("x = 2\n")
    assert cache.fingerprint([f]) != before


def test_bad_kind_is_refused(tmp_cache):
    with pytest.raises(ValueError, match="kind='a b'"):
        cache.entry_path("a b", {}, code="c")


def test_config_hash_is_stable_and_order_free():
    a = cache.config_hash({"seed": 0, "lr": 1e-3, "widths": [56, 64]})
    b = cache.config_hash({"widths": [56, 64], "lr": 1e-3, "seed": 0})
    assert a == b and len(a) == 16
    assert a != cache.config_hash({"seed": 1, "lr": 1e-3, "widths": [56, 64]})


def test_checkpoint_round_trip_and_atomicity(tmp_path):
    path = tmp_path / "sub" / "ck.pt"
    payload = {"W": torch.arange(6.0).reshape(2, 3), "history": [1.0, 0.5], "name": "x"}
    cache.save_checkpoint(path, payload)
    back = cache.load_checkpoint(path, required=("W", "history"))
    assert torch.equal(back["W"], payload["W"]) and back["history"] == [1.0, 0.5]
    assert [p.name for p in path.parent.iterdir()] == ["ck.pt"], "no temporary file may be left behind"


def test_corrupt_or_incomplete_checkpoint_is_named(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a torch file")
    with pytest.raises(cache.CorruptCheckpointError, match="bad.pt cannot be read"):
        cache.load_checkpoint(bad)
    partial = tmp_path / "partial.pt"
    cache.save_checkpoint(partial, {"W": torch.zeros(1)})
    with pytest.raises(cache.CorruptCheckpointError, match=r"lacks the entries \['history'\]"):
        cache.load_checkpoint(partial, required=("W", "history"))
    with pytest.raises(FileNotFoundError):
        cache.load_checkpoint(tmp_path / "missing.pt")


def test_atomic_write_leaves_old_file_on_failure(tmp_path, monkeypatch):
    path = tmp_path / "r.json"
    cache.atomic_write_bytes(path, b"old")

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(cache.os, "replace", boom)
    with pytest.raises(OSError):
        cache.atomic_write_bytes(path, b"new")
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_weights_only_load_refuses_arbitrary_objects(tmp_path):
    path = tmp_path / "evil.pt"

    torch.save({"obj": Fraction(1, 3)}, path)  # any class outside torch's allow-list
    with pytest.raises(cache.CorruptCheckpointError):
        cache.load_checkpoint(path)


@pytest.mark.parametrize("content", [b"not a torch file", "evil", "truncated"])
def test_corrupt_checkpoint_message_says_what_to_do_without_unsafe_advice(tmp_path, content):
    path = tmp_path / "ck.pt"
    if content == "evil":
        torch.save({"obj": Fraction(1, 3)}, path)
    elif content == "truncated":
        cache.save_checkpoint(path, {"W": torch.zeros(100)})
        path.write_bytes(path.read_bytes()[:200])
    else:
        path.write_bytes(content)
    with pytest.raises(cache.CorruptCheckpointError) as info:
        cache.load_checkpoint(path)
    message = str(info.value)
    assert "weights_only" not in message and "trust" not in message, message
    assert f"rm '{path}'" in message and "run again to recompute" in message
    assert info.value.__cause__ is None and info.value.__suppress_context__  # torch's advice is not chained either


def test_stale_temporaries_are_removed_and_live_saves_kept(tmp_path):
    import os
    import subprocess
    import sys
    import time

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    stale = tmp_path / f".abc.pt.{dead_pid}.k2j3h4g5.tmp"
    live = tmp_path / f".abc.pt.{os.getpid()}.a1b2c3d4.tmp"
    old_format = tmp_path / ".def.pt.x9y8z7w6.tmp"
    young_old_format = tmp_path / ".ghi.pt.q1w2e3r4.tmp"
    keep = tmp_path / "abc.pt"
    for p in (stale, live, old_format, young_old_format, keep):
        p.write_bytes(b"x")
    two_hours_ago = time.time() - 7200
    os.utime(old_format, (two_hours_ago, two_hours_ago))
    removed = cache.remove_stale_temporaries(tmp_path)
    assert sorted(removed) == sorted([stale, old_format])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in (live, young_old_format, keep))


def test_temporary_file_names_its_writer(tmp_path, monkeypatch):
    import os

    seen = []
    real_replace = cache.os.replace
    monkeypatch.setattr(cache.os, "replace", lambda a, b: (seen.append(os.path.basename(a)), real_replace(a, b)))
    cache.save_checkpoint(tmp_path / "ck.pt", {"W": torch.zeros(1)})
    assert seen and seen[0].startswith(f".ck.pt.{os.getpid()}.") and seen[0].endswith(".tmp")


def test_ensure_writable_says_what_to_do(tmp_path, monkeypatch):
    assert cache.ensure_writable(tmp_path / "new") == tmp_path / "new" and list((tmp_path / "new").iterdir()) == []

    def refuse(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(cache.tempfile, "mkstemp", refuse)
    with pytest.raises(PermissionError, match=r"the model cache .* is not writable \(PermissionError: Permission "):
        cache.ensure_writable(tmp_path, "model cache")


# ------------------------------------------------------------------------------------- the fingerprint of the code

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
