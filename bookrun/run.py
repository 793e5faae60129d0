"""One execution of selected chapters: the scheduler that runs them side by side in ``after`` order, the results
written, a signal handled."""

from __future__ import annotations

import shutil
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from lib.core.paths import display_path

from .chapter import Executor, Interrupted, Job
from .faults import Ledger
from .processes import build_tag
from .results import write_results
from .schedule import Console, Relay, schedule
from .timings import RECORD, read_record, update_timings

STOP_GRACE = 20.0  # seconds a stopped chapter gets to shut its kernel down before it is killed


@dataclass
class Run:
    """What ``python -m bookrun`` decided to do: the chapters to execute (``jobs_for``) and why (``reasons``)."""

    manifest: dict
    selected: list[str]
    jobs_for: dict[str, Job]
    reasons: dict[str, str]
    scratch: bool
    build: Path
    out_root: Path
    out_dir: Path
    book_tree: Path
    jobs: int
    env: dict[str, str]  # the kernels' environment (bookrun.processes.kernel_env)
    faults: list[dict] = field(default_factory=list)  # what the executor recovered from before the chapters ran
    pages: list[tuple[Path, str]] = field(default_factory=list)  # what travels with the notebooks: (source, place)
    toc: list[str] = field(default_factory=list)  # the table of contents' entries, in the book's order


def execute(run: Run) -> int:
    """Execute ``run``'s jobs; the exit status (0, 1 if a chapter failed, 128 + signal if interrupted)."""
    from lib.core.engine import available_cpus

    todo, tag = list(run.jobs_for), build_tag(run.build)
    run.out_dir.mkdir(parents=True, exist_ok=True)
    for source, place in run.pages:  # the plain pages, the bibliography, a reader's modules (manifest.toc_pages)
        (run.out_dir / place).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, run.out_dir / place)
    where = display_path(run.out_dir)
    print(f"executing {len(todo)} of {len(run.selected)} chapter(s) into {where} ({run.jobs} at a time)")
    for stem in run.selected:
        if stem in todo:
            print(f"  to run   {stem}: {run.reasons.get(stem, 'no successful run')}", flush=True)
        elif not run.scratch:
            print(f"  up to date {stem}", flush=True)

    # the CPUs are shared out: chapters running side by side each get one worker process, a chapter alone gets all
    workers = max(1, available_cpus() // max(1, min(run.jobs, len(todo))))
    results_path = None if run.scratch else run.build / "results.json"
    for job in run.jobs_for.values():
        job.workers = workers
    ledger = Ledger()
    ledger.add("executor", run.faults)
    executor = Executor(run.build, run.book_tree, results_path, list(run.manifest), tag=tag,
                        ledger=ledger)  # fmt: skip
    console = Console()
    relay = Relay(console, alone=len(todo) == 1)

    start = time.perf_counter()
    interrupted = None
    seconds, failures = {}, []
    try:
        seconds, failures = schedule(run.jobs_for, executor.run, run.jobs, console, relay)
    except Interrupted as exc:
        interrupted = exc
        _stop(executor, console, exc)
    total = time.perf_counter() - start

    if results_path is not None:
        results = write_results(results_path, run.out_dir, list(run.manifest))
        if seconds:
            update_timings(run.build / "timings.json", seconds)
        print(f"executed {len(seconds)} chapter(s) in {total:.0f} s wall; {len(results)} glued values collected")
        if interrupted is None:  # the build's records for the pages and the release (bookrelease.records)
            from bookrelease import records

            order = [Path(rel).name for rel in run.toc]
            for line in records.write(run.build, results, manifest=run.manifest, out_dir=run.out_dir,
                                      out_root=run.out_root, executed=list(seconds), env=run.env, order=order,
                                      costs=read_record(run.build / RECORD)):  # fmt: skip
                print(line, flush=True)
    else:
        print(f"executed {len(seconds)} chapter(s) in {total:.0f} s wall")
        for stem in seconds:
            job = run.jobs_for[stem]
            print(f"  run folder: {display_path(job.run_dir)} (notebook.ipynb, run.log, parameters.json, results.json)")
    for line in executor.faults.lines():
        print(line, file=sys.stderr, flush=True)
    if interrupted is not None:
        kept = "earlier runs are unchanged" if run.scratch else "the previous notebooks and results.json are unchanged"
        print(f"INTERRUPTED ({interrupted}): stopped before finishing; {kept}", file=sys.stderr)
        return 128 + interrupted.signum
    if failures:
        print(f"FAILED: {failures}", file=sys.stderr)
        return 1
    return 0


def _stop(executor: Executor, console: Console, exc: Interrupted) -> None:
    """After a signal: stop every chapter (SIGTERM to its papermill, which shuts the kernel down), wait for them to
    clean up, kill what is left after ``STOP_GRACE`` seconds (or at a second signal)."""
    hurry = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: hurry.set())
    console.line(f"{exc}: stopping the running chapters (the previous results stay)", err=True)
    executor.terminate(signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE
    while executor.active and time.monotonic() < deadline and not hurry.is_set():
        time.sleep(0.1)
    if executor.active:
        executor.terminate(signal.SIGKILL)
    deadline = time.monotonic() + 10
    while executor.active and time.monotonic() < deadline:  # the job threads remove their temporary folders
        time.sleep(0.1)
