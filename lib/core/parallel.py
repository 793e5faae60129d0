"""Independent jobs (models to train, flows to integrate) spread over a few processes, with one progress bar.

The calling process takes jobs itself, next to ``workers − 1`` processes started with ``spawn``: a worker imports
``lib`` afresh and inherits none of the parent's thread pools (forking a process whose OpenMP/MKL threads already ran
is not safe), so each job computes exactly as it would in the parent with the same number of threads. Jobs must be
top-level functions of an importable module and their arguments and results picklable; seeds travel inside the
arguments, so results do not depend on which process ran a job.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

from lib.core import params
from lib.core.progress import bar as progress_bar


def available_cpus() -> int:
    """The CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def default_workers() -> int:
    """Processes used when none are given: ``$BOOK_WORKERS`` if set, else :func:`available_cpus`."""
    value = os.environ.get("BOOK_WORKERS")
    if value is not None:
        if not value.isdigit() or int(value) < 1:
            raise ValueError(f"BOOK_WORKERS={value!r} must be a positive integer (processes for independent jobs)")
        return int(value)
    return available_cpus()


def map_in_processes(
    fn: Callable[..., Any],
    jobs: Sequence[tuple],
    *,
    workers: int | None = None,
    desc: str = "jobs",
    progress: bool = True,
    label: Callable[[tuple, Any], str] | None = None,
) -> list[Any]:
    """``[fn(*args) for args in jobs]``, computed ``workers`` at a time; results in job order.

    ``workers`` defaults to :func:`default_workers`; with one worker (or one job) the jobs run here, one after the
    other. Otherwise this process is one of the workers and ``workers − 1`` spawned processes are the others: each
    takes the next job in order when it is free, so this process works while the others start (importing torch
    costs a spawned process about 3 s). The bar (stderr) counts finished jobs; ``label(args, result)`` names the
    last one. A job's exception is raised here once the jobs already running have finished; jobs not yet started are
    dropped.
    """
    jobs = list(jobs)
    workers = default_workers() if workers is None else params.integer("workers", workers, min=1)
    n_proc = min(workers, len(jobs))
    if n_proc <= 1:
        return [fn(*args) for args in jobs]
    results: list[Any] = [None] * len(jobs)
    errors: list[BaseException] = []
    order = iter(range(len(jobs)))
    lock = threading.Condition()
    running = 0  # jobs submitted to the pool and not finished
    bar = progress_bar(total=len(jobs), desc=f"{desc} in {n_proc} processes", disable=not progress)

    def take() -> int | None:
        with lock:
            return None if errors else next(order, None)

    def finished(i: int, result: Any = None, error: BaseException | None = None) -> None:
        with lock:
            if error is not None:
                errors.append(error)
            else:
                results[i] = result
                if label is not None:
                    bar.set_postfix_str(label(jobs[i], result), refresh=False)
                bar.update(1)

    def submit_next(pool: cf.Executor) -> None:
        nonlocal running
        i = take()
        if i is None:
            return
        with lock:
            running += 1
        try:
            future = pool.submit(fn, *jobs[i])
        except BaseException:  # a broken or closing pool: the job is not running
            with lock:
                running -= 1
                lock.notify_all()
            raise

        def done(f: cf.Future, i: int = i) -> None:  # runs in the pool's thread: record, then feed the worker
            nonlocal running
            error = f.exception() if not f.cancelled() else cf.CancelledError()
            finished(i, None if error else f.result(), error)
            try:
                submit_next(pool)
            except RuntimeError:  # the pool is shutting down after an error here
                pass
            with lock:
                running -= 1
                lock.notify_all()

        future.add_done_callback(done)

    context = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(max_workers=n_proc - 1, mp_context=context) as pool:
        try:
            for _ in range(n_proc - 1):
                submit_next(pool)
            while (i := take()) is not None:
                try:
                    result = fn(*jobs[i])
                except BaseException as error:
                    finished(i, error=error)
                    break
                finished(i, result)
            with lock:
                lock.wait_for(lambda: running == 0)
        finally:
            bar.close()
    if errors:
        raise errors[0]
    return results
