"""Where generated files live: the build folder, the cache of trained models, scratch output; temporary files.

Kept free of heavy imports (no torch): the executor uses it before any chapter starts.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from pathlib import Path

from lib.core import settings

REPO_ROOT = Path(__file__).resolve().parents[2]


def build_dir() -> Path:
    """The build folder (``$BOOK_BUILD_DIR`` or ``<repo>/_build``)."""
    return settings.path(settings.BUILD_DIR, REPO_ROOT / "_build")


def cache_dir() -> Path:
    """Cache of expensive artefacts keyed by configuration hash (``$BOOK_CACHE_DIR`` or ``_build/cache``)."""
    path = settings.path(settings.CACHE_DIR, build_dir() / "cache")
    path.mkdir(parents=True, exist_ok=True)
    return path


#: A temporary file of this module: ``.<name>.<pid of the writer>.<random>.tmp``.
_TEMPORARY = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[A-Za-z0-9_]+\.tmp$")
#: A temporary file in the older format (no pid) is stale once it is this old (seconds).
STALE_AGE = 3600.0


def _temporary(path: Path) -> tuple[int, str]:
    """An open temporary file beside ``path`` named after this process: (fd, name)."""
    return tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp")


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


def atomic_write_json(path: Path, payload) -> None:
    """``payload`` as indented JSON (keys sorted), written as :func:`atomic_write_bytes` writes."""
    atomic_write_bytes(path, (json.dumps(payload, indent=1, sort_keys=True) + "\n").encode())


def display_path(path: Path) -> str:
    """``path`` relative to the working directory when it lies below it (shorter in a message), else as given."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def remove_stale_temporaries(folder: Path) -> list[Path]:
    """Remove the temporary files in ``folder`` whose writer is gone (killed mid-save); return them.

    A file of the current format names its writer's pid and is stale once that process has ended; an older
    ``.<name>.<random>.tmp`` is stale after :data:`STALE_AGE` seconds. Saves in progress are left alone.
    """
    folder = Path(folder)
    removed: list[Path] = []
    if not folder.is_dir():
        return removed
    now = time.time()
    for path in folder.glob(".*.tmp"):
        match = _TEMPORARY.match(path.name)
        try:
            stale = not _alive(int(match["pid"])) if match else now - path.stat().st_mtime > STALE_AGE
            if stale:
                path.unlink()
                removed.append(path)
        except OSError:  # gone meanwhile, or not ours to remove
            continue
    return removed


def ensure_writable(folder: Path, what: str = "folder") -> Path:
    """Create ``folder`` if needed and check that a file can be written there; ``PermissionError`` saying what to do.

    Called before expensive work whose result goes to ``folder``, so a read-only cache fails at once, not after
    training.
    """
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = _temporary(folder / "write-check")
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        raise PermissionError(
            f"the {what} {folder} is not writable ({type(exc).__name__}: {exc.strerror or exc}); make it writable, "
            "or point BOOK_CACHE_DIR (the model cache) or BOOK_BUILD_DIR (everything generated) at a writable folder"
        ) from None
    return folder
