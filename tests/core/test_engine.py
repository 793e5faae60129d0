"""lib.core.engine: results in job order on every engine, bit-identical numbers whatever the workers, a job's error
raised here, and bad input (workers, BOOK_WORKERS, an unreachable or malformed scheduler) refused before any work."""

from __future__ import annotations

import logging
import os
import time
import warnings

import pytest

from lib.core import engine


def power(base: int, exp: int) -> int:
    return base**exp


def ratio(a: float, b: float) -> float:
    return a / b


def seeded_numbers(seed: int) -> dict:
    """A small torch computation whose float sums depend on the order of operations, and the thread count used."""
    import torch

    g = torch.Generator().manual_seed(seed)
    a = torch.randn(96, 96, generator=g, dtype=torch.float64)
    b = torch.linalg.solve(a @ a.T + torch.eye(96, dtype=torch.float64), a).tanh().sum(dim=0)
    return {"bytes": b.numpy().tobytes(), "threads": torch.get_num_threads(), "pid": os.getpid()}


def pid_after(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


@pytest.fixture(scope="module")
def scheduler():
    """The address of a LocalCluster of two one-thread worker processes, shared by this module's tests."""
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=logging.ERROR
    ) as cluster:
        yield cluster.scheduler_address


def test_results_follow_job_order_on_every_engine(scheduler):
    jobs = [{"base": 2, "exp": k} for k in range(7)]
    expected = [2**k for k in range(7)]
    assert engine.run_jobs(power, jobs, workers=1, progress=False) == expected
    on_cluster = engine.run_jobs(power, jobs, scheduler=scheduler, progress=False)
    assert on_cluster == expected and on_cluster.workers == 2
    assert engine.run_jobs(power, [], workers=2) == []


def test_jobs_run_on_the_workers_and_results_arrive_here(scheduler):
    seen = []
    pids = engine.run_jobs(
        pid_after, [{"seconds": 0.2}] * 4, scheduler=scheduler, progress=False,
        on_result=lambda i, job, result: seen.append((i, os.getpid())),
    )  # fmt: skip
    assert os.getpid() not in pids and len(set(pids)) == 2  # both workers took jobs, this process none
    assert sorted(i for i, _ in seen) == [0, 1, 2, 3] and {pid for _, pid in seen} == {os.getpid()}


def size_of(data: bytes) -> int:
    return len(data)


def test_jobs_carry_their_data_without_a_warning_in_the_page(scheduler):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning would land in the executed notebook
        sizes = engine.run_jobs(size_of, [{"data": bytes(11 * 2**20)}] * 2, scheduler=scheduler, progress=False)
    assert sizes == [11 * 2**20] * 2


def test_numbers_are_bit_identical_here_and_in_a_local_cluster():
    import torch

    torch.set_num_threads(2)  # the serial path still computes each job on one thread
    try:
        jobs = [{"seed": s} for s in range(4)]
        here = engine.run_jobs(seeded_numbers, jobs, workers=1, progress=False)
        assert torch.get_num_threads() == 2  # and gives this process its threads back
    finally:
        torch.set_num_threads(1)
    cluster = engine.run_jobs(seeded_numbers, jobs, workers=2, progress=False)  # a LocalCluster of its own
    assert [r["bytes"] for r in here] == [r["bytes"] for r in cluster]
    assert {r["threads"] for r in here + cluster} == {1}
    assert {r["pid"] for r in here} == {os.getpid()} and os.getpid() not in {r["pid"] for r in cluster}
    assert len({r["bytes"] for r in here}) == 4  # the seeds matter: the comparison could fail


def test_a_failing_job_raises_here(scheduler):
    jobs = [{"a": 1, "b": 1}, {"a": 1, "b": 0}, {"a": 2, "b": 1}]
    with pytest.raises(ZeroDivisionError):
        engine.run_jobs(ratio, jobs, workers=1, progress=False)
    with pytest.raises(ZeroDivisionError):
        engine.run_jobs(ratio, jobs, scheduler=scheduler, progress=False)


def test_worker_count_and_its_validation(monkeypatch):
    monkeypatch.delenv(engine.SCHEDULER_ENV, raising=False)
    monkeypatch.setenv("BOOK_WORKERS", "3")
    assert engine.default_workers() == 3 and engine.choose() == engine.Engine(None, 3)
    for bad in ("0", "two", "-1", ""):
        monkeypatch.setenv("BOOK_WORKERS", bad)
        with pytest.raises(ValueError, match="BOOK_WORKERS"):
            engine.run_jobs(pytest.fail, [{"reason": "ran"}], progress=False)
    monkeypatch.delenv("BOOK_WORKERS")
    assert engine.default_workers() >= 1
    assert engine.choose(workers=1).serial and not engine.choose(workers=2).serial
    with pytest.raises(ValueError, match="workers=0"):
        engine.run_jobs(pytest.fail, [{"reason": "ran"}], workers=0)
    with pytest.raises(TypeError, match=r"jobs\[1\]=\(2, 3\) must be a dict"):
        engine.run_jobs(power, [{"base": 1, "exp": 1}, (2, 3)], workers=1)
    with pytest.raises(TypeError, match="jobs must be a list of dicts"):
        engine.run_jobs(power, {"base": 1, "exp": 1}, workers=1)


def test_a_bad_scheduler_is_refused_quickly_and_before_any_work(monkeypatch):
    monkeypatch.setattr(engine, "CONNECT_TIMEOUT", 1.0)
    start = time.perf_counter()
    with pytest.raises(ConnectionError, match=r"scheduler='tcp://127\.0\.0\.1:1' cannot be reached within 1 s"):
        engine.run_jobs(pytest.fail, [{"reason": "ran"}], scheduler="tcp://127.0.0.1:1", progress=False)
    assert time.perf_counter() - start < 4
    monkeypatch.setenv(engine.SCHEDULER_ENV, "tcp://127.0.0.1:1")
    assert engine.choose(workers=1) == engine.Engine("tcp://127.0.0.1:1", 1)  # the environment names it too
    with pytest.raises(ConnectionError, match="cannot be reached"):
        engine.run_jobs(pytest.fail, [{"reason": "ran"}], workers=1, progress=False)
    monkeypatch.setenv(engine.SCHEDULER_ENV, "tcp://host :1")
    with pytest.raises(ValueError, match=r"\$BOOK_SCHEDULER='tcp://host :1' is not allowed"):
        engine.choose()
    with pytest.raises(ValueError, match="scheduler=8786 is not allowed"):
        engine.choose(8786)


def test_a_started_cluster_announces_its_address_and_a_live_dashboard(capfd):
    """Where the progress bars go (stderr here), never into the page: the cluster's address and its dashboard's link,
    which answers (bokeh is a requirement)."""
    import re
    import urllib.request

    client = engine.connect(workers=1)
    try:
        err = capfd.readouterr().err
        found = re.search(r"Dask LocalCluster of 1 workers at tcp://\S+; dashboard: (http://\S+/status)", err)
        assert found, err
        with urllib.request.urlopen(found[1], timeout=20) as page:
            assert page.status == 200 and b"Dask" in page.read()
    finally:
        client.close()
        client.cluster.close()
