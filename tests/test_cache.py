"""lib.core.cache: one key, one corruption policy (reported, moved aside, recomputed; never silently deleted)."""

import pytest
import torch

from lib.core import cache


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
