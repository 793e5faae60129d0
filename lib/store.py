"""Atomic checkpoint files: write to a temporary file then rename; load with ``weights_only=True``."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import torch


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
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
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
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
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
        raise CorruptCheckpointError(
            f"checkpoint {path} cannot be read ({type(exc).__name__}: {exc}); delete it to recompute"
        ) from exc
    if not isinstance(payload, dict):
        raise CorruptCheckpointError(f"checkpoint {path} holds a {type(payload).__name__}, expected a dict")
    missing = [k for k in required if k not in payload]
    if missing:
        raise CorruptCheckpointError(f"checkpoint {path} lacks the entries {missing}; delete it to recompute")
    return payload
