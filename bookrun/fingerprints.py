"""When a chapter must execute again: its execution record, and the imports a kernel records while it runs.

An executed notebook carries, in its metadata under :data:`RECORD_KEY`, what its execution depended on: the source
(path and hash), the parameters, the requirements, the arithmetic its kernels were given (``lib.core.arithmetic``),
every repository file its kernels imported (``lib`` modules, a reader's task module, this package) with its hash, and
the records of the chapters it runs after. The chapter is up to date while all of them are unchanged: an edit to
``lib/paper_b/euler_flows.py`` re-executes only the chapters whose kernels imported it.

The imports are recorded by the kernel itself: the executor gives each chapter an IPython profile whose startup file
(``bookrun/startup/00-bookrun-imports.py``) appends, after every cell, the repository files newly found in
``sys.modules`` to a log. Every process inheriting the chapter's environment logs there too: a kernel the chapter
starts itself (``new_task`` runs the task template) and the executor that starts it. Dask workers
(``lib.core.engine``) are not kernels and are not logged; they run jobs whose functions the kernel imported to submit
them (and with one worker the kernel runs the jobs itself), so a module that a job imports only inside a function, on
a worker, is not recorded: import it at a module's top.
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from pathlib import Path
from typing import Any

from lib.core import arithmetic, mkl_vendor
from lib.core.paths import REPO_ROOT, display_path

from .manifest import ManifestError

RECORD_KEY = "book_execution"
LOGS_VAR = "BOOK_IMPORT_LOGS"  # folders (os.pathsep-separated) where kernels log the repository files they imported
ROOT_VAR = "BOOK_REPO_ROOT"
#: What of ``pyproject.toml`` decides the environment the chapters compute in: its build system and dependencies.
#: Its metadata (the version a release raises, the licence, the description) re-executes no chapter.
INSTALLED = (("build-system",), ("project", "requires-python"), ("project", "dependencies"),
             ("project", "optional-dependencies"))  # fmt: skip


def recording_env(tmp: Path, env: dict[str, str]) -> dict[str, str]:
    """Environment entries that make the kernels of a run log their imports into ``tmp/imports`` (and into the logs
    of an enclosing run, when this run is nested in a chapter). ``imported_files(tmp)`` reads them back."""
    (tmp / "imports").mkdir(parents=True, exist_ok=True)
    logs = [d for d in env.get(LOGS_VAR, "").split(os.pathsep) if d] + [str(tmp / "imports")]
    return {LOGS_VAR: os.pathsep.join(logs), ROOT_VAR: str(REPO_ROOT.resolve())}


def imported_files(tmp: Path) -> list[str]:
    """The repository files (relative paths) the kernels of a run logged in ``tmp/imports``."""
    found = set()
    for log in (tmp / "imports").glob("*.txt"):
        found.update(line.strip() for line in log.read_text().splitlines() if line.strip())
    return sorted(found)


def file_digest(path: Path) -> str | None:
    """sha256 of a file's bytes (None if it does not exist)."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def _relative(path: Path) -> str:
    path = Path(path).resolve()
    try:
        return str(path.relative_to(REPO_ROOT.resolve()))
    except ValueError:
        return str(path)


def installed_part(path: Path) -> str | None:
    """The :data:`INSTALLED` tables of a ``pyproject.toml`` as canonical JSON (None if the file does not exist)."""
    try:
        project = tomllib.loads(Path(path).read_text())
    except FileNotFoundError:
        return None
    picked = {}
    for keys in INSTALLED:
        value = project
        for k in keys:
            value = value.get(k) if isinstance(value, dict) else None
        picked[".".join(keys)] = value
    return json.dumps(picked, sort_keys=True)


def requirements_digest(root: Path = REPO_ROOT) -> str:
    """sha256 over ``requirements.txt`` and what ``pyproject.toml`` installs (:data:`INSTALLED`)."""
    h = hashlib.sha256()
    h.update((file_digest(Path(root) / "requirements.txt") or "").encode())
    h.update((installed_part(Path(root) / "pyproject.toml") or "").encode())
    return h.hexdigest()


def arithmetic_record() -> dict[str, str | None]:
    """The arithmetic this executor gives its kernels (``lib.core.arithmetic``): the mode and each pin's value in
    their environment. A chapter executed under another arithmetic (``BOOK_ARITHMETIC=native``, a pin set by hand)
    executes again, so that one build never mixes two arithmetics."""
    env = arithmetic.pinned_environment(dict(os.environ))
    record = {"mode": arithmetic.mode(env), **{k: env.get(k) for k in arithmetic.PINS}}
    if mkl_vendor.vendor_answer_needed(environ=env):  # a chapter executed before the answer was built runs again
        library = mkl_vendor.vendor_library()
        record["vendor_answer"] = str(library) if library.is_file() else None
    return record


#: The repository's folders of Python code a chapter's kernel may import (the rest it imports is logged as well).
CODE_FOLDERS = ("lib", "bookrun", "bookrelease", "book")


def repository_digests() -> dict[str, str]:
    """sha256 of every Python file under :data:`CODE_FOLDERS` (relative path → digest), taken as a chapter starts.

    A chapter's record holds the code it ran with, not the code found when it ends: a file edited while the chapter
    runs is recorded with the digest it had at the start, so the next run sees the edit and executes the chapter again.
    """
    root = REPO_ROOT.resolve()
    return {
        str(path.relative_to(root)): file_digest(path)
        for folder in CODE_FOLDERS
        for path in sorted((root / folder).rglob("*.py"))
        if "__pycache__" not in path.parts
    }


def make_record(
    source: Path, parameters: dict, imports: list[str], after: dict[str, str], digests: dict[str, str] | None = None
) -> dict[str, Any]:
    """The execution record of a chapter that just succeeded (``after``: its dependencies' record digests;
    ``digests``: :func:`repository_digests` from when it started, used for every imported file they hold)."""
    digests = digests or {}
    return {
        "source": _relative(source),
        "source_sha256": file_digest(source),
        "parameters": parameters,
        "requirements_sha256": requirements_digest(),
        "arithmetic": arithmetic_record(),
        "imports": {rel: digests.get(rel) or file_digest(REPO_ROOT / rel) for rel in imports},
        "after": dict(after),
    }


def record_digest(record: dict | None) -> str:
    """A short hash of a record (what a dependent chapter remembers of it); "" for no record."""
    if not record:
        return ""
    return hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()[:16]


def stored_record(notebook: Path) -> dict | None:
    """The execution record of an executed notebook (None if missing, unreadable or from an older executor)."""
    if not Path(notebook).is_file():
        return None
    try:
        with open(notebook, encoding="utf-8") as fh:
            record = json.load(fh).get("metadata", {}).get(RECORD_KEY)
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and "imports" in record else None


def why_stale(record: dict | None, source: Path, parameters: dict) -> str | None:
    """Why a chapter executed as ``record`` says must execute again with ``source`` and ``parameters`` (None: it is
    up to date, dependencies aside)."""
    if record is None:
        return "no execution record"
    if record.get("source") != _relative(source) or record.get("source_sha256") != file_digest(source):
        return "its source changed"
    if json.dumps(record.get("parameters"), sort_keys=True) != json.dumps(parameters, sort_keys=True):
        return "its parameters changed"
    if record.get("requirements_sha256") != requirements_digest():
        return "the requirements changed"
    if record.get("arithmetic") != arithmetic_record():
        return "the arithmetic changed (lib/core/arithmetic.py, BOOK_ARITHMETIC or a pin in the environment)"
    changed = [rel for rel, sha in sorted(record["imports"].items()) if file_digest(REPO_ROOT / rel) != sha]
    if changed:
        return f"{', '.join(changed[:3])}{' and others' if len(changed) > 3 else ''} changed"
    return None


def stale_chapters(manifest: dict, stems: list[str], notebook_of, force: bool = False) -> dict[str, str]:
    """``{stem: reason}`` for the chapters among ``stems`` that must execute: their own record is stale, or one they
    run after is stale or was executed again since (``notebook_of(stem)``: where its executed notebook is)."""
    reasons: dict[str, str | None] = {}

    def reason(stem: str) -> str | None:
        if stem in reasons:
            return reasons[stem]
        reasons[stem] = None  # a cycle is reported by the scheduler
        entry = manifest[stem]
        record = stored_record(notebook_of(stem))
        why = "--force" if force else why_stale(record, entry["source"], entry["parameters"])
        for dep in entry["after"] if why is None else ():
            if dep in stems and reason(dep) is not None:
                why = f"it runs after {dep}, which executes again"
            elif (record.get("after") or {}).get(dep) != record_digest(stored_record(notebook_of(dep))):
                why = f"{dep} was executed again since"
            if why:
                break
        reasons[stem] = why
        return why

    return {stem: why for stem in stems if (why := reason(stem)) is not None}


def scratch_stale(notebook: Path, run_dir: Path, reason: str | None) -> bool:
    """True if a scratch run must execute: it has no successful run (``notebook``), or ``--force`` (``reason``) asks
    for it; ManifestError if its folder holds a run of another execution and ``--force`` is not given."""
    if not notebook.is_file():
        return True
    if reason is None:
        print(f"  up to date {display_path(run_dir)} (--force runs it again)", flush=True)
        return False
    if reason == "--force":
        return True
    raise ManifestError(
        f"scratch run {display_path(run_dir)} already exists (executed with other parameters or code: {reason}); "
        "pass --force to replace it, or --name to run beside it"
    )
