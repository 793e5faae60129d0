"""The book's one cache of computed artefacts (trained models): keyed, atomic, and safe against corrupt entries.

Every trained model of the book goes through :func:`fetch`: its file is ``cache_dir()/<kind>-<key>.pt`` with ``key``
a hash of the configuration, a fingerprint of the code that decides what the configuration computes
(:func:`fingerprint`: its syntax, not its comments), the versions of torch and numpy and the arithmetic in force
(:mod:`lib.core.arithmetic`). One corruption policy for all: an entry that cannot be read back is reported (a
fault naming the file and why, :func:`lib.core.faults.report`: the terminal that ran the book shows it), moved aside to
``<name>.corrupt-<time>`` for inspection, and recomputed; it is never deleted silently and never used. Nothing
poisoned is written: an entry whose named parts (``finite=``: weights, losses) hold nan or inf is refused
(:class:`PoisonedEntryError`, naming the configuration). Writes go to a temporary file and an atomic rename; loads use
``torch.load(..., weights_only=True)``.

A temporary file is named ``.<name>.<pid>.<random>.tmp`` after the process writing it, so one left behind by a killed
process is recognised (:func:`lib.core.paths.remove_stale_temporaries`) without touching a save in progress elsewhere.
"""

from __future__ import annotations

import ast
import hashlib
import json
import math
import os
import tempfile  # noqa: F401 - tests patch cache.tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import torch

from lib.core import arithmetic, faults, settings
from lib.core.paths import (  # noqa: F401 - part of this API
    _temporary,
    atomic_write_bytes,
    cache_dir,
    ensure_writable,
    remove_stale_temporaries,
)


class CorruptCheckpointError(RuntimeError):
    """A checkpoint exists but cannot be read back (truncated, not a torch file, wrong content)."""


class CheckedOnly(Exception):
    """Raised where a model would be computed in the executor's up-front check of a chapter's values
    (:func:`lib.core.settings.checking`): the values passed, and the check stops before any work (the chapter's
    validation cell is meant to validate only; one that goes on to train is stopped here, not run twice)."""


class PoisonedEntryError(ValueError):
    """A computed entry holds nan or inf where it must be finite (a diverged training): it is never cached."""


def config_hash(config: Any) -> str:
    """Stable 16-hex-digit hash of a JSON-serialisable configuration (keys sorted)."""
    text = json.dumps(config, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def save_checkpoint(path: Path, payload: dict[str, Any]) -> None:
    """Save a dict of tensors and plain Python values atomically (``torch.save`` to a temp file, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _temporary(path)
    os.close(fd)
    try:
        torch.save(payload, tmp)
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; a cache is meant to be shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_checkpoint(path: Path, required: tuple[str, ...] = ()) -> dict[str, Any]:
    """Load a checkpoint with ``weights_only=True``; raise ``CorruptCheckpointError`` naming the file if unreadable."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint {path} does not exist")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises several types for truncated / foreign files
        error = CorruptCheckpointError(
            f"checkpoint {path} cannot be read ({type(exc).__name__}: {_reason(exc)}): it is truncated or was not "
            f"written by this book; delete it (rm '{path}') and run again to recompute it"
        )
        error.original = exc  # torch's own message (its advice to load untrusted files unsafely is not repeated)
        raise error from None
    if not isinstance(payload, dict):
        raise CorruptCheckpointError(f"checkpoint {path} holds a {type(payload).__name__}, expected a dict")
    missing = [k for k in required if k not in payload]
    if missing:
        raise CorruptCheckpointError(f"checkpoint {path} lacks the entries {missing}; delete it to recompute")
    return payload


def checkpoint_arrays(path: Path) -> dict[str, tuple[tuple[int, ...], int]]:
    """``{name: (shape, bytes)}`` of the tensors a checkpoint's top-level dict holds, from its headers: the file is
    mapped (``mmap=True``, ``weights_only=True``), no tensor is read. Raises what ``torch.load`` raises for a file
    it cannot map (a legacy or foreign file)."""
    mapped = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    if not isinstance(mapped, dict):
        return {}
    return {
        str(k): (tuple(v.shape), v.numel() * v.element_size()) for k, v in mapped.items() if isinstance(v, torch.Tensor)
    }


def _reason(exc: Exception) -> str:
    """The informative part of torch's load error, without its advice on ``weights_only`` (never right here)."""
    text = str(exc)
    if "WeightsUnpickler error:" in text:
        text = text.split("WeightsUnpickler error:", 1)[1]
    line = next((ln.strip() for ln in text.splitlines() if ln.strip() and "weights_only" not in ln), "")
    line = line.split(". ")[0].rstrip(".")  # the first sentence: what failed, not what torch suggests
    return (line[:160] + "…") if len(line) > 160 else (line or "unreadable")


def code_text(path: Path) -> bytes:
    """What a Python file computes, as bytes: its syntax tree without comments, docstrings, other bare strings
    (which do nothing when run), line numbers or formatting. A file that is not Python, or does not parse: its bytes."""
    source = Path(path).read_bytes()
    if Path(path).suffix != ".py":
        return source
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            kept = [s for s in body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            node.body = kept or [ast.Pass()]  # a body of only a docstring does what ``pass`` does
    return ast.dump(tree, annotate_fields=False, include_attributes=False).encode()


def fingerprint(sources: Iterable[ModuleType | str | Path]) -> str:
    """16-hex-digit hash of what ``sources`` (modules or files) compute (:func:`code_text`, in sorted path order;
    missing files: empty), and of the versions of torch and numpy they run on.

    A comment, a docstring or a reformatting leaves it unchanged (nothing is retrained for them); any change to the
    code, a constant included, changes it (``tests/core/test_cache.py``).
    """
    paths = sorted({Path(s.__file__) if isinstance(s, ModuleType) else Path(s) for s in sources})
    h = hashlib.sha256(f"torch {torch.__version__.split('+')[0]} numpy {np.__version__}\n".encode())
    for path in paths:
        h.update(code_text(path) if path.is_file() else b"")
    return h.hexdigest()[:16]


def entry_path(kind: str, config: Any, *, code: str) -> Path:
    """The cache file of ``config`` under ``kind``: ``cache_dir()/<kind>-<hash>.pt``, the hash over the kind, the
    configuration, the code, torch's version and the arithmetic (``lib.core.arithmetic.signature``: a model trained
    with another CPU's native rounding is never reused by a pinned build, nor the reverse)."""
    if not kind or not kind.replace("_", "").replace("-", "").isalnum():
        raise ValueError(f"kind={kind!r} must be a non-empty name of letters, digits, '_' or '-'")
    key = config_hash({"kind": kind, "config": config, "code": code, "torch": torch.__version__.split("+")[0],
                       "arithmetic": arithmetic.signature()})  # fmt: skip
    return cache_dir() / f"{kind}-{key}.pt"


def read(path: Path, required: tuple[str, ...] = ()) -> dict[str, Any] | None:
    """The payload at ``path``; None when there is none, or when it is corrupt (then reported and moved aside)."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        return load_checkpoint(path, required)
    except CorruptCheckpointError as exc:
        aside = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
        try:
            os.replace(path, aside)
            where = f"moved aside to {aside.name}"
        except OSError as move_error:  # read-only cache: recompute without replacing it
            where = f"left in place (cannot move it: {move_error.strerror})"
        faults.report(f"cached model cannot be read ({_short(exc)})", file=path, action=f"{where}; recomputed")
        return None


def check_finite(payload: dict[str, Any], entries: Iterable[str], *, what: str) -> None:
    """Refuse ``payload`` (:class:`PoisonedEntryError`) if one of its ``entries`` (tensors, numbers, or dicts and
    lists of them) holds nan or inf; ``what`` names the computation in the message (e.g. the task and seed)."""
    bad = [name for name in entries if not _all_finite(payload.get(name))]
    if bad:
        raise PoisonedEntryError(
            f"{what}: {', '.join(repr(b) for b in bad)} hold(s) non-finite values (nan or inf), so it is not cached; "
            "the training diverged or its data holds nan: check the task's targets and the learning rate"
        )


def _all_finite(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return not value.is_floating_point() or bool(torch.isfinite(value).all())
    if isinstance(value, np.ndarray):
        return value.dtype.kind not in "fc" or bool(np.isfinite(value).all())
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_all_finite(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(_all_finite(v) for v in value)
    return True


def describe(kind: str, config: Any) -> str:
    """The computation of ``config`` in a message: its kind and, where it has them, its task and seed."""
    named = {k: config[k] for k in ("task", "seed") if isinstance(config, dict) and k in config}
    return " ".join([f"{kind} model", *(f"{k}={v!r}" for k, v in named.items())])


def fetch(
    kind: str,
    config: Any,
    compute: Callable[[], dict[str, Any]],
    *,
    code: str,
    required: tuple[str, ...] = (),
    finite: tuple[str, ...] = (),
) -> tuple[dict[str, Any], Path, bool]:
    """``(payload, path, from_cache)``: the cached payload of ``config``, or ``compute()`` saved atomically first.

    ``compute`` runs only when the entry is missing or corrupt; the cache folder is checked writable before it runs
    (not after an hour of training), and its ``finite`` entries are checked (:func:`check_finite`) before it is saved.
    """
    path = entry_path(kind, config, code=code)
    payload = read(path, required)
    if payload is not None:
        return payload, path, True
    if settings.checking():
        raise CheckedOnly(f"{describe(kind, config)} would be computed here")
    ensure_writable(path.parent, "model cache")
    payload = compute()
    check_finite(payload, finite, what=describe(kind, config))
    save_checkpoint(path, payload)
    return payload, path, False


def _short(exc: CorruptCheckpointError) -> str:
    text = str(exc)
    return text[text.find("(") + 1 : text.find(")")] if "(" in text else text
