"""Small utilities: parameter validation, configuration hashes, atomic checkpoints."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
import torch

from lib.core import cache, params


def test_choice_names_parameter_value_and_allowed():
    assert params.choice("task", "copy", ["copy", "sine"]) == "copy"
    with pytest.raises(ValueError, match=r"task='cpy' is not allowed; choose one of \['copy', 'sine'\]"):
        params.choice("task", "cpy", ["copy", "sine"])


@pytest.mark.parametrize("alpha", [0.0, -0.1, 1.0001, math.nan, math.inf])
def test_alpha_outside_half_open_unit_interval(alpha):
    with pytest.raises((ValueError, TypeError), match="alpha"):
        params.real("alpha", alpha, min=0.0, max=1.0, min_open=True)


def test_real_and_integer_accept_valid_values():
    assert params.real("alpha", 1, min=0.0, max=1.0, min_open=True) == 1.0
    assert params.integer("seeds", 3, min=1) == 3
    with pytest.raises(TypeError, match="seeds=2.5 must be an integer"):
        params.integer("seeds", 2.5)
    with pytest.raises(TypeError, match="must be an integer"):
        params.integer("seeds", True)
    with pytest.raises(ValueError, match=r"seeds=0 is out of range; allowed: \[1, inf\)"):
        params.integer("seeds", 0, min=1)


def test_subset_and_boolean():
    assert params.subset("remove", ("RR",), ["RR", "CR", "CC"]) == ["RR"]
    with pytest.raises(ValueError, match=r"remove contains \['XX'\]"):
        params.subset("remove", ["XX"], ["RR", "CR", "CC"])
    with pytest.raises(TypeError, match="single string"):
        params.subset("remove", "RR", ["RR"])
    with pytest.raises(TypeError, match="quick=1 must be True or False"):
        params.boolean("quick", 1)


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


@pytest.mark.parametrize("values", [None, 3, object()])
def test_subset_names_a_value_that_is_not_a_collection(values):
    with pytest.raises(TypeError, match=r"blocks=.* must be a collection \(list, tuple or set\) of elements from"):
        params.subset("blocks", values, ["RR", "CC"])


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
