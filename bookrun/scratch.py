"""A chapter run from Python as a scratch run, exactly as ``python -m bookrun --only <stem> -p ...`` runs it (what a
chapter that runs another does: ``new_task`` runs the task template for its task)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lib.core import progress
from lib.core.paths import REPO_ROOT

from .manifest import ManifestError, check_parameters, load_manifest


@dataclass(frozen=True)
class ScratchRun:
    """A finished scratch run: its chapter, its folder and what it glued (``{name: value}``)."""

    stem: str
    folder: Path
    values: dict[str, Any]

    @property
    def results(self) -> dict[str, Any]:
        """The values keyed ``<stem>::<name>``, as in the run's ``results.json`` and the book's."""
        return {f"{self.stem}::{k}": v for k, v in self.values.items()}


def _argument(value) -> str:
    """A parameter value as ``-p`` reads it back (``bookrun.manifest.coerce``)."""
    if isinstance(value, dict | list):
        return json.dumps(value)
    return value if isinstance(value, str) else repr(value)


def run_chapter(stem: str, *, book_dir: Path = REPO_ROOT / "book", force: bool = True, **parameters) -> ScratchRun:
    """Execute chapter ``stem`` (of the manifest or of a pattern, e.g. ``task_integrator``) with ``parameters`` into
    ``_build/scratch/<stem>[-<parameters>]/``; its output goes where progress bars go (``lib.core.progress``).

    Unknown chapters and parameter names, and values the chapter's validation cell refuses, raise ``ValueError``
    naming what is allowed before anything runs; a failure of the chapter raises ``RuntimeError`` with its error.
    ``force=False`` keeps an up-to-date run instead of executing it again.
    """
    manifest = load_manifest(book_dir)
    entry = manifest.entry(stem)
    if entry is None:
        raise ValueError(f"chapter {stem!r} is not in {manifest.path} (chapters: {list(manifest)})")
    try:
        check_parameters(stem, entry["source"], {**entry["parameters"], **parameters})
    except ManifestError as exc:
        raise ValueError(str(exc)) from None
    cmd = [sys.executable, "-m", "bookrun", "--book-dir", str(book_dir), "--only", stem, "--jobs", "1"]
    for name, value in parameters.items():
        cmd += ["-p", name, _argument(value)]
    if force:
        cmd.append("--force")
    if not parameters:
        cmd += ["--name", stem]  # a scratch run even for a chapter of the book
    tail: deque[str] = deque(maxlen=12)
    with subprocess.Popen(cmd, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
        for line in proc.stdout:
            tail.append(line.rstrip())
            progress.note(line.rstrip())
    if proc.returncode == 2:
        message = [ln.removeprefix("error: ") for ln in tail if ln and ln != "nothing was executed"]
        raise ValueError("\n".join(message[-3:]))
    if proc.returncode != 0:
        raise RuntimeError(f"chapter {stem!r} failed:\n" + "\n".join(tail))
    folder = next((Path(ln.split("run folder: ", 1)[1].split(" (", 1)[0]) for ln in tail if "run folder: " in ln), None)
    if folder is None:  # up to date: nothing executed, the run is where it was
        folder = next(Path(ln.split("up to date ", 1)[1].split(" (", 1)[0]) for ln in tail if "up to date " in ln)
    folder = folder if folder.is_absolute() else REPO_ROOT / folder
    results = json.loads((folder / "results.json").read_text())
    return ScratchRun(stem, folder, {k.split("::", 1)[1]: v for k, v in results.items()})
