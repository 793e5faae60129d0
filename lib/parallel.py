"""Independent jobs (models to train, flows to integrate) spread over a few processes, with one progress bar.

Processes are started with ``spawn``: a worker imports ``lib`` afresh and inherits none of the parent's thread pools
(forking a process whose OpenMP/MKL threads already ran is not safe), so each job computes exactly as it would in the
parent with the same number of threads. Jobs must be top-level functions of an importable module and their arguments
and results picklable; seeds travel inside the arguments, so results do not depend on which worker ran a job.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from tqdm import tqdm

from lib import params


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
    """``[fn(*args) for args in jobs]``, computed ``workers`` at a time in spawned processes; results in job order.

    ``workers`` defaults to :func:`default_workers`; with one worker (or one job) the jobs run here, one after the
    other. The bar (stderr) counts finished jobs; ``label(args, result)`` names the last one. A job's exception is
    raised here once the jobs already running have finished; jobs not yet started are dropped.
    """
    jobs = list(jobs)
    workers = default_workers() if workers is None else params.integer("workers", workers, min=1)
    n_proc = min(workers, len(jobs))
    if n_proc <= 1:
        return [fn(*args) for args in jobs]
    results: list[Any] = [None] * len(jobs)
    bar = tqdm(total=len(jobs), desc=f"{desc} in {n_proc} processes", file=sys.stderr, disable=not progress)
    with cf.ProcessPoolExecutor(max_workers=n_proc, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(fn, *args): i for i, args in enumerate(jobs)}
        try:
            for future in cf.as_completed(futures):
                i = futures[future]
                results[i] = future.result()
                if label is not None:
                    bar.set_postfix_str(label(jobs[i], results[i]))
                bar.update(1)
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)  # jobs not yet started are dropped
            raise
        finally:
            bar.close()
    return results
