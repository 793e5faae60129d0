"""Where generated files live: the build folder, the cache of trained models, scratch output."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def build_dir() -> Path:
    """The build folder (``$BOOK_BUILD_DIR`` or ``<repo>/_build``)."""
    return Path(os.environ.get("BOOK_BUILD_DIR", REPO_ROOT / "_build")).resolve()


def cache_dir() -> Path:
    """Cache of expensive artefacts keyed by configuration hash (``$BOOK_CACHE_DIR`` or ``_build/cache``)."""
    path = Path(os.environ.get("BOOK_CACHE_DIR", build_dir() / "cache")).resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path
