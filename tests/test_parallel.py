"""lib.core.parallel: results in job order, errors raised in the parent, the worker count and its validation."""

from __future__ import annotations

import operator
import os

import pytest

from lib.core import parallel


def test_results_follow_job_order_in_processes_and_here():
    jobs = [(2, k) for k in range(7)]
    expected = [2**k for k in range(7)]
    assert parallel.map_in_processes(operator.pow, jobs, workers=2, progress=False) == expected
    assert parallel.map_in_processes(operator.pow, jobs, workers=1, progress=False) == expected
    assert parallel.map_in_processes(operator.pow, [], workers=2) == []


def _pid_after(seconds: float) -> int:
    import time

    time.sleep(seconds)
    return os.getpid()


def test_this_process_takes_jobs_next_to_the_workers():
    pids = parallel.map_in_processes(_pid_after, [(0.2,)] * 4, workers=2, progress=False)
    assert pids[0] != os.getpid()  # the first job goes to the worker before this process takes any
    assert pids[1] == os.getpid()  # and this process works on the next while the worker starts


def test_a_failing_job_raises_in_the_parent():
    with pytest.raises(ZeroDivisionError):  # the worker takes (1, 1), this process fails on (1, 0)
        parallel.map_in_processes(operator.truediv, [(1, 1), (1, 0), (2, 1)], workers=2, progress=False)
    with pytest.raises(ZeroDivisionError):  # a worker fails on (1, 0)
        parallel.map_in_processes(operator.truediv, [(1, 0)] + [(1, 1)] * 4, workers=3, progress=False)


def test_worker_count_and_its_validation(monkeypatch):
    monkeypatch.setenv("BOOK_WORKERS", "3")
    assert parallel.default_workers() == 3
    for bad in ("0", "two", "-1", ""):
        monkeypatch.setenv("BOOK_WORKERS", bad)
        with pytest.raises(ValueError, match="BOOK_WORKERS"):
            parallel.default_workers()
    monkeypatch.delenv("BOOK_WORKERS")
    assert parallel.default_workers() >= 1
    with pytest.raises(ValueError, match="workers=0"):
        parallel.map_in_processes(operator.pow, [(1, 1)], workers=0)
