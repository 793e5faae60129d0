"""Running one chapter: its kernel's environment, the papermill child in its own process group, and what a success
(the notebook, its execution record, its numbers) or a failure (kept beside the last good run) leaves."""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from lib.core.paths import REPO_ROOT, atomic_write_bytes, atomic_write_json, display_path

from . import faults, fingerprints, timings
from .child import _ANSI
from .processes import (
    MARKER_VAR,
    cache_dir,
    kernel_env,
    kernel_startup,
    kill_group,
    kill_marked,
    make_run_tmp,
    replace_folder,
)  # fmt: skip
from .results import glued_values, write_results


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT), SIGTERM or SIGHUP reached the executor."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def set_title(nb, title: str | None) -> None:
    """Replace the first level-1 heading of the notebook by ``title`` (for chapters executed from one template)."""
    if not title:
        return
    for cell in nb.cells:
        if cell.cell_type == "markdown" and re.search(r"^# ", cell.source, flags=re.M):
            cell.source = re.sub(r"^# .*$", f"# {title}", cell.source, count=1, flags=re.M)
            return


def progress_path(log: Path) -> Path:
    """Where a chapter's kernel writes its progress bars (``$BOOK_PROGRESS``): beside its log."""
    return log.with_suffix(".progress")


@dataclass
class Job:
    """One chapter to execute: where its log, notebook and results go (book tree or a scratch run folder)."""

    stem: str
    entry: dict
    workers: int
    log: Path
    notebook: Path  # the notebook a success replaces
    failed: Path  # where a failed run's notebook (book) or folder (scratch) goes
    run_dir: Path | None = None  # scratch: the run's folder; None for the book
    staging: Path | None = None  # scratch: the folder being written (renamed to run_dir on success)
    overrides: dict = field(default_factory=dict)
    faults: list = field(default_factory=list)  # what the run recovered from (bookrun.faults)
    n_cells: int = 0
    started: float = 0.0


class ChapterFailed(RuntimeError):
    def __init__(self, job: Job, seconds: float, error: list[str], where: str):
        super().__init__(f"chapter {job.stem!r} failed after {seconds:.0f} s")
        self.job, self.seconds, self.error, self.where = job, seconds, error, where


def error_lines(error_file: Path, log: Path) -> list[str]:
    """The failure in a few lines: ``Type: message`` and where it was raised, else the log's last lines."""
    if error_file.is_file():
        try:
            err = json.loads(error_file.read_text())
            text = _ANSI.sub("", f"{err['ename']}: {err['evalue']}").strip().splitlines()
            where = f" (in cell [{err['cell']}])" if err.get("cell") else ""
            lines = text[:3] + (["…"] if len(text) > 3 else [])
            lines[0] += where
            return lines + ([f"raised at {err['at']}"] if err.get("at") else [])
        except (ValueError, KeyError, OSError):
            pass
    try:
        tail = [ln for ln in _ANSI.sub("", log.read_text(errors="replace")).splitlines() if ln.strip()]
    except OSError:
        tail = []
    return tail[-3:] or ["(no error message; the log is empty)"]


class Executor:
    """Runs jobs as papermill children, each in its own process group; stops them all on request.

    ``book_tree``: the executed book's notebooks (what a chapter's ``after`` dependencies are read from).
    """

    def __init__(self, build: Path, book_tree: Path, results_path: Path | None, stems: list[str], *, tag: str,
                 ledger: faults.Ledger):  # fmt: skip
        self.build, self.book_tree, self.results_path, self.stems = build, book_tree, results_path, stems
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.procs: dict[str, subprocess.Popen] = {}
        self.markers: dict[str, str] = {}
        self.active: set[str] = set()  # chapters between the start of run() and the end of their clean-up
        self.results_lock = threading.Lock()
        self.tag = tag  # the build folder's, in every process marker (bookrun.processes.build_tag)
        self.faults = ledger

    def run(self, job: Job) -> float:
        """Execute ``job``, top to bottom: its kernel's environment, its papermill process (:mod:`bookrun.child`),
        then what it leaves: on success its notebook with its execution record, its numbers in ``results.json`` and
        its cost; on failure the notebook beside the last good one. Raises ChapterFailed or Interrupted."""
        import jupytext
        import nbformat

        marker = f"{self.tag}:{os.getpid()}:{job.stem}:{secrets.token_hex(4)}"
        progress = progress_path(job.log)
        with self.lock:
            self.active.add(job.stem)
        tmp = None
        try:
            nb = jupytext.read(job.entry["source"])
            nb.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
            set_title(nb, job.entry.get("title"))
            job.n_cells = len(nb.cells) + bool(job.entry["parameters"])
            if job.staging is not None:  # a scratch run: its folder, marked running
                job.staging.mkdir(parents=True, exist_ok=True)
                self.write_run_parameters(job, "running")
            env, tmp = kernel_env(job.workers), make_run_tmp(self.build, job.stem)
            # the kernel's environment: the start-up files of bookrun/startup/ and the folders they record into
            env.update(kernel_startup(tmp))
            cache = cache_dir(env)
            env.update(fingerprints.recording_env(tmp, env))  # the repository files the kernels import
            digests = fingerprints.repository_digests()  # the code as the chapter starts, not as it ends
            env.update(timings.recording_env(tmp, cache, env))  # the cache entries they read and write
            env.update(faults.recording_env(tmp))  # what they recover from, and their warnings: not on the page
            # TMPDIR: the kernel's connection file and anything else temporary stays in tmp, removed with it; the
            # kernel's progress bars (lib.core.progress) go to a file beside the log, relayed to the terminal
            env.update({MARKER_VAR: marker, "BOOK_EXECUTOR_PID": str(os.getpid()), "TMPDIR": str(tmp),
                        "JUPYTER_RUNTIME_DIR": str(tmp), "BOOK_PROGRESS": str(progress)})  # fmt: skip

            # the notebook, and what the papermill process is to do with it
            src, executed, error = tmp / f"{job.stem}.ipynb", tmp / f"{job.stem}.executed.ipynb", tmp / "error.json"
            nbformat.write(nb, src)
            spec = {"input": str(src), "output": str(executed), "parameters": job.entry["parameters"],
                    "cwd": str(job.entry["source"].parent), "marker": marker, "error": str(error)}  # fmt: skip
            (tmp / "spec.json").write_text(json.dumps(spec))
            job.log.parent.mkdir(parents=True, exist_ok=True)
            progress.write_text("")

            # the papermill process, in its own process group: signals reach it from the executor only
            job.started = time.perf_counter()
            with open(job.log, "w") as fh:
                with self.lock:
                    if self.stop.is_set():
                        raise Interrupted(signal.SIGINT)
                    proc = subprocess.Popen(
                        [sys.executable, "-m", "bookrun.child", str(tmp / "spec.json")],
                        stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, cwd=REPO_ROOT,
                        start_new_session=True,
                    )  # fmt: skip
                    self.procs[job.stem], self.markers[job.stem] = proc, marker
                code = proc.wait()
            elapsed = time.perf_counter() - job.started
            job.faults = self.faults.read(job.stem, tmp)

            if code != 0 or not executed.is_file():
                if self.stop.is_set():  # stopped on request: nothing to keep (a scratch run's staging folder goes too)
                    if job.staging is not None:
                        shutil.rmtree(job.staging, ignore_errors=True)
                    raise Interrupted(signal.SIGINT)
                lines = error_lines(error, job.log)
                raise ChapterFailed(job, elapsed, lines, self._keep_failed(job, executed, "failed", elapsed, lines))

            # success: the notebook with its execution record (what it imported, the chapters it ran after)
            result = nbformat.read(executed, as_version=4)
            imports = fingerprints.imported_files(tmp)
            after = {dep: fingerprints.record_digest(fingerprints.stored_record(self.book_tree / f"{dep}.ipynb"))
                     for dep in job.entry["after"]}  # fmt: skip
            record = fingerprints.make_record(job.entry["source"], job.entry["parameters"], imports, after, digests)
            result.metadata[fingerprints.RECORD_KEY] = record
            result.metadata["book_execution_seconds"] = round(elapsed, 1)
            if job.run_dir is not None:  # a scratch run: its own folder, put in place whole
                self._commit_scratch(job, result, elapsed)
                return elapsed
            # the book: the notebook replaced, then its numbers in results.json, then its cost (cold or warm)
            atomic_write_bytes(job.notebook, (nbformat.writes(result) + "\n").encode())  # as nbformat.write does
            job.failed.unlink(missing_ok=True)
            if self.results_path is not None:
                with self.results_lock:
                    write_results(self.results_path, self.book_tree, self.stems)
            timings.record_run(self.build / timings.RECORD, job.stem, elapsed, *timings.cache_events(tmp),
                               cache=cache, workers=job.workers)  # fmt: skip
            return elapsed
        finally:
            kill_marked(marker)  # anything the chapter's processes left running
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)  # the notebooks in flight, the kernel's files, the import logs
            with self.lock:
                self.procs.pop(job.stem, None)
                self.markers.pop(job.stem, None)
                self.active.discard(job.stem)

    def _commit_scratch(self, job: Job, result, elapsed: float) -> None:
        import nbformat

        nbformat.write(result, job.staging / "notebook.ipynb")
        values = glued_values(job.staging / "notebook.ipynb")
        atomic_write_json(job.staging / "results.json", {f"{job.stem}::{k}": v for k, v in values.items()})
        self.write_run_parameters(job, "succeeded", elapsed)
        replace_folder(job.staging, job.run_dir)
        shutil.rmtree(job.failed, ignore_errors=True)

    def _keep_failed(self, job: Job, executed: Path, status: str, elapsed: float, lines) -> str:
        """Keep what a failed or stopped run produced beside, never over, the last good run; return where."""
        if job.run_dir is None:
            if executed.is_file():
                tmp = job.failed.with_name(f".{job.failed.name}.{os.getpid()}.tmp")
                shutil.copy(executed, tmp)
                os.replace(tmp, job.failed)
                return f"log: {display_path(job.log)}  (failed notebook: {display_path(job.failed)})"
            return f"log: {display_path(job.log)}"
        if executed.is_file():
            shutil.copy(executed, job.staging / "notebook.ipynb")
        self.write_run_parameters(job, status, elapsed, lines)
        replace_folder(job.staging, job.failed)
        return f"log: {display_path(job.failed / 'run.log')}  (run folder: {display_path(job.failed)})"

    def write_run_parameters(self, job: Job, status: str, elapsed: float | None = None, error=None) -> None:
        atomic_write_json(
            job.staging / "parameters.json",
            {
                "chapter": job.stem,
                "source": display_path(job.entry["source"]),
                "overrides": job.overrides,
                "parameters": job.entry["parameters"],
                "status": status,
                "seconds": None if elapsed is None else round(elapsed, 1),
                "error": error,
                "executed_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "command": " ".join(sys.argv),
                "faults": job.faults,
            },
        )

    def terminate(self, sig: int) -> None:
        """Send ``sig`` to every running papermill child's process group; no new chapter starts after this."""
        with self.lock:
            self.stop.set()
            procs = [p for p in self.procs.values() if p.poll() is None]
            markers = list(self.markers.values())
        for proc in procs:
            kill_group(proc, sig)
        if sig == signal.SIGKILL:
            for marker in markers:
                kill_marked(marker, grace=0.5)
