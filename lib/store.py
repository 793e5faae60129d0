"""Atomic checkpoint files: write to a temporary file then rename; load with ``weights_only=True``.

A temporary file is named ``.<name>.<pid>.<random>.tmp`` after the process writing it, so one left behind by a killed
process is recognised (:func:`lib.paths.remove_stale_temporaries`) without touching a save in progress elsewhere.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile  # noqa: F401 - tests patch store.tempfile
from pathlib import Path
from typing import Any

import torch

from lib.paths import _temporary, ensure_writable, remove_stale_temporaries  # noqa: F401 - part of this API


class CorruptCheckpointError(RuntimeError):
    """A checkpoint exists but cannot be read back (truncated, not a torch file, wrong content)."""


def config_hash(config: Any) -> str:
    """Stable 16-hex-digit hash of a JSON-serialisable configuration (keys sorted)."""
    text = json.dumps(config, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and an atomic rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _temporary(path)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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


def _reason(exc: Exception) -> str:
    """The informative part of torch's load error, without its advice on ``weights_only`` (never right here)."""
    text = str(exc)
    if "WeightsUnpickler error:" in text:
        text = text.split("WeightsUnpickler error:", 1)[1]
    line = next((ln.strip() for ln in text.splitlines() if ln.strip() and "weights_only" not in ln), "")
    line = line.split(". ")[0].rstrip(".")  # the first sentence: what failed, not what torch suggests
    return (line[:160] + "…") if len(line) > 160 else (line or "unreadable")
