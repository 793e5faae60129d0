"""Checks before anything runs: the environment (``BOOK_WORKERS``, ``BOOK_SCHEDULER``, a writable model cache) and
the values a reader gives a chapter (each chapter's own validation cells, executed in a plain IPython process)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from lib.core.paths import REPO_ROOT, build_dir
from lib.core.settings import CHECKING

from .manifest import ManifestError
from .processes import kill_group, make_run_tmp

#: Seconds the parameter check of one chapter may take, counted from when the checker starts that chapter (the whole
#: book's takes about 5 s): a check that takes longer hangs (a task module that sleeps or waits on import, a value
#: whose check does not end) and is refused. The checker's own start (IPython, numpy, torch) is not counted against
#: it, so a loaded machine's slow start refuses nothing; it has :data:`STARTUP_TIMEOUT`.
CHECK_TIMEOUT = 60.0
#: Seconds the checker may take to start (its imports) before its first chapter: a hang there refuses the run too.
STARTUP_TIMEOUT = 600.0
#: How often the parent looks at the checker's progress.
POLL = 0.05
#: Bytes the check may allocate beyond numpy and torch: the values' checks draw one trial, read a file's headers; a
#: value whose check alone needs more (a trial of a billion steps) is refused by the MemoryError it raises.
CHECK_MEMORY = 4 * 2**30
#: What a validation cell raises for a value it refuses (``lib.core.params``: ValueError, TypeError; a task or file
#: that is not there: LookupError, OSError). Any other exception (a MemoryError, a task module's ImportError or
#: SyntaxError) refuses the run as well, with its type named: the check is a gate, never skipped.
REFUSALS = (ValueError, TypeError, LookupError, OSError)


def injected_code(parameters: dict) -> str:
    """The cell papermill injects for ``parameters`` (empty when there are none: papermill injects nothing then)."""
    if not parameters:
        return ""
    from papermill.translators import translate_parameters

    return translate_parameters("python3", "python", parameters, "Parameters")


def validation_cells(source: Path, parameters: dict) -> list[str]:
    """The code that decides whether the parameters are valid: the ``parameters`` cell, papermill's injected cell
    and the chapter's next code cell (CONTRIBUTING.md: it validates every parameter with ``lib.core.params``)."""
    import jupytext

    code = [c.source for c in jupytext.read(source).cells if c.cell_type == "code"]
    return [*code[:1], injected_code(parameters), *code[1:2]]


def check_values(chapters: dict[str, list[str]], env: dict[str, str], cwd: Path) -> dict[str, str]:
    """Run every chapter's validation cells (``{stem: cells}``) in one plain IPython process working in ``cwd``;
    ``{stem: "Type: message"}`` for those that refuse their parameters. It fails closed: a checker that crashes, exits
    without its result or runs past :data:`CHECK_TIMEOUT` refuses the chapter it was checking (named from the
    child's progress file), never lets the run start unchecked."""
    if not chapters:
        return {}
    tmp = make_run_tmp(build_dir(), "check")
    try:
        spec, out = tmp / "check.json", tmp / "result.json"
        spec.write_text(
            json.dumps({"cwd": str(cwd), "chapters": [{"stem": s, "cells": c} for s, c in chapters.items()]})
        )
        cmd = [sys.executable, "-m", "bookrun.checks", str(spec), str(out)]
        with open(tmp / "output.txt", "w+b") as log:
            proc = subprocess.Popen(
                cmd, cwd=REPO_ROOT, env={**env, "MPLBACKEND": "Agg", CHECKING: "1"}, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
            try:
                late = _wait(proc, out)
            except BaseException:  # Ctrl-C: the check is not worth a leftover process
                kill_group(proc, signal.SIGKILL)
                proc.wait()
                raise
            if late is not None:
                kill_group(proc, signal.SIGKILL)
                proc.wait()
                stem, limit = late
                return {
                    (stem or next(iter(chapters))): f"its parameter check did not finish within {limit:.0f} s "
                    "(a task module or value whose check hangs, e.g. on import); refused, not run unchecked"
                }
            log.seek(0)
            output = log.read()
        if proc.returncode != 0 or not out.is_file():
            tail = " / ".join(output.decode(errors="replace").strip().splitlines()[-3:]) or "no output"
            how = f"exit status {proc.returncode}" if proc.returncode else "it exited without a result"
            return {_checking(out, chapters): f"its parameter check crashed ({how}: {tail}); refused, not run "
                                              "unchecked"}  # fmt: skip
        checked = json.loads(out.read_text())
        for stem, size in checked.get("sizes", {}).items():
            if size and stem not in {k for k, v in checked["refused"].items() if v}:
                print(f"  size of {stem}: {size}", flush=True)
        return {k: v for k, v in checked["refused"].items() if v}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _wait(proc: subprocess.Popen, out: Path) -> tuple[str, float] | None:
    """Wait for the checker; ``(chapter, limit)`` for a chapter (``""`` for its start-up) that ran past its limit.
    Each chapter's clock starts when the checker names it in its progress file, so the time it measures is that
    chapter's own, not the machine's load before it."""
    current, stem, since = out.with_suffix(".current"), "", time.monotonic()
    while proc.poll() is None:
        named = current.read_text().strip() if current.is_file() else ""
        if named and named != stem:  # (empty: read while the checker rewrote it)
            stem, since = named, time.monotonic()
        limit = CHECK_TIMEOUT if stem else STARTUP_TIMEOUT
        if time.monotonic() - since > limit:
            return stem, limit
        time.sleep(POLL)
    return None


def _checking(out: Path, chapters: dict) -> str:
    """The chapter the child was checking when it stopped (its progress file), else the first one."""
    current = out.with_suffix(".current")
    stem = current.read_text().strip() if current.is_file() else ""
    return stem if stem in chapters else next(iter(chapters))


def check_values_child(spec_path: str, out_path: str) -> int:
    """Child process of :func:`check_values`: each chapter's cells in a fresh IPython namespace, output discarded,
    under a cap on its memory (:func:`lib.core.budget.cap_memory`, :data:`CHECK_MEMORY`): a value whose check alone
    would allocate more (a trial of a billion steps) raises ``MemoryError`` there, which refuses the chapter."""
    from IPython.core.interactiveshell import InteractiveShell

    from lib.core import budget

    spec = json.loads(Path(spec_path).read_text())
    os.chdir(spec["cwd"])
    shell = InteractiveShell.instance()
    import numpy  # noqa: F401 - imported before the cap, so their libraries' own address space (MKL's, OpenMP's,
    import torch  # noqa: F401 - which differs between CPUs) is not counted against what the checks allocate

    budget.cap_memory(min(CHECK_MEMORY, budget.available_memory()))
    results, sizes = {}, {}
    for item in spec["chapters"]:
        Path(out_path).with_suffix(".current").write_text(item["stem"])
        shell.reset(new_session=False)
        error = None
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            for code in item["cells"]:
                result = shell.run_cell(code, store_history=False, silent=True)
                exc = result.error_before_exec or result.error_in_exec
                if type(exc).__name__ == "CheckedOnly":  # lib.core.cache: the values passed; work would start
                    break
                if exc is not None:  # a refusal (REFUSALS), or any other exception: both refuse the run
                    error = f"{type(exc).__name__}: {exc}" if isinstance(exc, REFUSALS) else (
                        f"{type(exc).__name__} while checking the values: {exc}")  # fmt: skip
                    break
        results[item["stem"]] = error
        work = budget.last(forget=True)
        sizes[item["stem"]] = work.summary() if work is not None else None
    Path(out_path).write_text(json.dumps({"refused": results, "sizes": sizes}))
    return 0


def check_environment(env: dict[str, str], cache: Path) -> None:
    """``BOOK_WORKERS``, ``BOOK_SCHEDULER`` (well formed and answering) and the model cache ``cache`` (the kernels'
    environment ``env``'s, ``bookrun.processes.cache_dir``), checked before any chapter starts (ManifestError naming
    the fix)."""
    from lib.core import engine, paths

    names = ("BOOK_WORKERS", engine.SCHEDULER_ENV)
    saved = {name: os.environ.get(name) for name in names}
    try:
        for name in names:
            if name in env:
                os.environ[name] = env[name]
        where = engine.choose()
        if where.scheduler is not None:  # a Dask handshake, no client: a bad address prints no traceback
            engine.handshake(where.scheduler)
    except ValueError as exc:
        raise ManifestError(f"{exc}; unset it for the default (one process per CPU, on this machine)") from None
    except ConnectionError as exc:
        raise ManifestError(str(exc)) from None
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    try:
        paths.ensure_writable(cache, "model cache")
    except PermissionError as exc:
        raise ManifestError(str(exc)) from None


if __name__ == "__main__":  # the process check_values starts
    sys.exit(check_values_child(sys.argv[1], sys.argv[2]))
