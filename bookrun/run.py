"""One execution of selected chapters: the jobs side by side, the results written, a signal handled."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from lib.core.paths import REPO_ROOT, atomic_write_bytes

from .chapter import Executor, Interrupted, Job
from .processes import shown, update_timings, write_json_atomic
from .results import write_results
from .terminal import Console, Relay, schedule

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
    faults: list[dict] = field(default_factory=list)  # what the executor recovered from before the chapters ran


def execute(run: Run) -> int:
    """Execute ``run``'s jobs; the exit status (0, 1 if a chapter failed, 128 + signal if interrupted)."""
    from lib.core.engine import available_cpus

    todo = list(run.jobs_for)
    run.out_dir.mkdir(parents=True, exist_ok=True)
    print(f"executing {len(todo)} of {len(run.selected)} chapter(s) into {shown(run.out_dir)} ({run.jobs} at a time)")
    for stem in run.selected:
        if stem in todo:
            print(f"  to run   {stem}: {run.reasons.get(stem, 'no successful run')}", flush=True)
        elif not run.scratch:
            print(f"  up to date {stem}", flush=True)

    # the CPUs are shared out: chapters running side by side each get one worker process, a chapter alone gets all
    workers = max(1, available_cpus() // max(1, min(run.jobs, len(todo))))
    results_path = None if run.scratch else run.build / "results.json"
    executor = Executor(run.build, run.book_tree, results_path, list(run.manifest))
    executor.faults.add("executor", run.faults)
    console = Console()
    relay = Relay(console, alone=len(todo) == 1)
    sub_manifest = {s: {**run.jobs_for[s].entry, "after": [d for d in run.jobs_for[s].entry["after"] if d in todo]}
                    for s in todo}  # fmt: skip

    def one(stem: str) -> float:
        job = run.jobs_for[stem]
        job.workers = workers
        if job.staging is not None:
            job.staging.mkdir(parents=True, exist_ok=True)
            executor.write_run_parameters(job, "running")
        relay.add(job)
        return executor.run(job)

    start = time.perf_counter()
    interrupted = None
    timings, failures = {}, []
    try:
        timings, failures = schedule(sub_manifest, todo, one, run.jobs, console, relay)
    except Interrupted as exc:
        interrupted = exc
        _stop(executor, console, exc)
    total = time.perf_counter() - start

    if results_path is not None:
        results = write_results(results_path, run.out_dir, list(run.manifest))
        if timings:
            update_timings(run.build / "timings.json", timings)
        print(f"executed {len(timings)} chapter(s) in {total:.0f} s wall; {len(results)} glued values collected")
        if interrupted is None:
            print(record_arithmetic(run.build, results), flush=True)
            for line in record_appendix(run, list(timings)):
                print(line, flush=True)
    else:
        print(f"executed {len(timings)} chapter(s) in {total:.0f} s wall")
        for stem in timings:
            job = run.jobs_for[stem]
            print(f"  run folder: {shown(job.run_dir)} (notebook.ipynb, run.log, parameters.json, results.json)")
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


def record_arithmetic(build: Path, results: dict) -> str:
    """Write ``provenance.json`` (the arithmetic the kernels computed with, read in a process started as they are,
    and the book's version and commit, ``bookrun.release``) and ``reference_diff.json`` (this build against
    ``published/``); one line saying how the build compares."""
    from lib.core import reference

    from . import release
    from .chapter import kernel_env

    done = subprocess.run([sys.executable, "-m", "bookrun.arithmetic"], env=kernel_env(), capture_output=True,
                          text=True, cwd=REPO_ROOT)  # fmt: skip
    try:
        provenance = json.loads(done.stdout)
    except ValueError:
        return f"provenance: could not be read ({done.stderr.strip()[-300:]})"
    provenance.update(release.record())
    write_json_atomic(build / "provenance.json", provenance)
    try:
        published = reference.load()
    except FileNotFoundError as exc:
        return f"reference: {exc}"
    claims = json.loads((build / "claims.json").read_text())
    diff = reference.compare(results, claims, published)
    bitwise, why = reference.comparable(provenance, published["provenance"])
    write_json_atomic(build / "reference_diff.json", {"bitwise_required": bitwise, "why": why, **diff})
    head = reference.summary(diff, first=0)
    return f"reference ({'must be equal bit for bit' if bitwise else 'compared, not required: ' + why}): {head}"


def record_appendix(run: Run, executed: list[str]) -> list[str]:
    """What the appendix and the scorecard page read from the executed tree: the runtime table
    (``<book tree>/_runtimes.md``, ``bookrun.timings``) and the downloads (``bookrun.downloads``)."""
    from . import downloads, timings
    from .chapter import kernel_env
    from .manifest import toc_files

    order = [Path(f).name for f in toc_files(REPO_ROOT / "_toc.yml")] if (REPO_ROOT / "_toc.yml").is_file() else []
    titles = timings.chapter_titles(run.manifest, [*order, *(s for s in run.manifest if s not in order)])
    atomic_write_bytes(run.out_dir / timings.PAGE, timings.section(run.build, titles).encode())
    return downloads.write(run.build, run.out_root, executed, kernel_env(), downloads.PROFILES_CHAPTER in run.manifest)


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


def install_signal_handlers() -> None:
    def handler(signum, frame):
        raise Interrupted(signum)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, handler)
