"""lib.core.results_table: atomic appends, a sweep that resumes without recomputing finished jobs, corrupt parts moved
aside and recomputed, bad input refused before any job, and a worker killed mid-sweep that changes nothing."""

from __future__ import annotations

import logging
import math
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from lib.core import results_table as rt

CALLS: list[dict] = []  # the jobs the serial path ran in this process


def measure(x: int, scale: float = 1.0) -> dict:
    CALLS.append({"x": x, "scale": scale})
    return {"square": x * x * scale, "root": math.sqrt(x), "name": f"x{x}"}


def interrupted_at_3(x: int, scale: float = 1.0) -> dict:
    if x == 3:
        raise KeyboardInterrupt  # Ctrl-C while the fourth job runs
    return measure(x, scale)


def slow_measure(x: int, scale: float = 1.0) -> dict:
    time.sleep(0.5)
    return {"square": x * x * scale, "root": math.sqrt(x), "name": f"x{x}"}


CONFIGS = [{"x": x, "scale": 0.5} for x in range(6)]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _no_calls():
    CALLS.clear()


def _sorted(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda row: row["key"])


def test_an_interrupted_sweep_resumes_without_recomputing_finished_jobs(tmp_path):
    code = rt.code_of(measure)
    with pytest.raises(KeyboardInterrupt):
        rt.sweep(interrupted_at_3, CONFIGS, tmp_path / "t", code=code, workers=1, progress=False)
    table = rt.ResultsTable(tmp_path / "t")
    assert len(table.read()) == 3 and len(CALLS) == 3  # each finished job's row was written as it finished
    CALLS.clear()
    resumed = rt.sweep(measure, CONFIGS, table, workers=1, progress=False)
    assert [c["x"] for c in CALLS] == [3, 4, 5]  # only the jobs that had not finished
    CALLS.clear()
    fresh = rt.sweep(measure, CONFIGS, tmp_path / "fresh", workers=1, progress=False)
    assert resumed == fresh == [{"square": c["x"] ** 2 * 0.5, "root": math.sqrt(c["x"]), "name": f"x{c['x']}"}
                                for c in CONFIGS]  # fmt: skip
    assert _sorted(table.read()) == _sorted(rt.ResultsTable(tmp_path / "fresh").read())
    CALLS.clear()
    assert rt.sweep(measure, CONFIGS[::-1] + CONFIGS[:1], table, workers=1, progress=False) == fresh[::-1] + fresh[:1]
    assert CALLS == []  # all read back, in the order asked (a configuration listed twice too)
    rt.sweep(measure, CONFIGS[:2], table, code="othercode", workers=1, progress=False)
    assert len(CALLS) == 2  # rows of other code are not reused
    assert len(table.parts()) == 1  # each sweep that computed leaves one compacted part


def test_a_killed_client_leaves_whole_rows_and_the_sweep_resumes(tmp_path):
    folder = tmp_path / "t"
    script = (
        "from lib.core import results_table as rt\n"
        "from tests.core.test_results_table import CONFIGS, slow_measure\n"
        f"rt.sweep(slow_measure, CONFIGS, {str(folder)!r}, workers=1, progress=False)\n"
    )
    client = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    table = rt.ResultsTable(folder)
    deadline = time.monotonic() + 60
    while len(table.parts()) < 2 and client.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    client.kill()  # the client is lost mid-sweep (SIGKILL: no cleanup of any kind)
    client.wait()
    finished = len(table.read())
    assert 2 <= finished < len(CONFIGS)
    code = rt.code_of(slow_measure)  # the same job function, computed here by measure (which counts its calls)
    resumed = rt.sweep(measure, CONFIGS, table, code=code, workers=1, progress=False)
    assert len(CALLS) == len(CONFIGS) - finished
    assert resumed == rt.sweep(measure, CONFIGS, tmp_path / "fresh", code=code, workers=1, progress=False)


def test_an_append_is_atomic(tmp_path, monkeypatch):
    table = rt.ResultsTable(tmp_path / "t")
    table.append([{"key": "a", "v": 1.0}])

    def crash(fd):
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", crash)  # the write dies after the bytes went to the temporary file
    with pytest.raises(OSError, match="disk full"):
        table.append([{"key": "b", "v": 2.0}])
    monkeypatch.undo()
    assert table.read() == [{"key": "a", "v": 1.0}]
    assert sorted(p.name for p in (tmp_path / "t").iterdir()) == [p.name for p in table.parts()]  # no temporary
    table.append([{"key": "a", "v": 3.0}, {"key": "c", "v": 4.0}])
    assert table.read() == [{"key": "a", "v": 3.0}, {"key": "c", "v": 4.0}] and table.done(["a", "b"]) == {"a"}
    with pytest.raises(ValueError, match="rows must each have a str 'key'"):
        table.append([{"v": 1.0}])
    with pytest.raises(TypeError, match="cannot be stored in Parquet"):
        table.append([{"key": "d", "v": object()}])


def test_a_corrupt_part_is_reported_moved_aside_and_recomputed(tmp_path):
    first = rt.sweep(measure, CONFIGS[:3], tmp_path / "t", workers=1, progress=False)
    (part,) = rt.ResultsTable(tmp_path / "t").parts()
    part.write_bytes(part.read_bytes()[:40])  # truncated
    CALLS.clear()
    with pytest.warns(UserWarning, match=rf"part cannot be read .*{part.name}\): moved aside to {part.name}\.corrupt-"):
        again = rt.sweep(measure, CONFIGS[:3], tmp_path / "t", workers=1, progress=False)
    assert again == first and len(CALLS) == 3
    assert len(list((tmp_path / "t").glob("*.corrupt-*"))) == 1


def test_bad_input_is_refused_before_any_job(tmp_path, monkeypatch):
    for configs, error, match in [
        ([{"x": 1}, {"x": float("nan")}], TypeError, r"configs\[1\]=\{'x': nan\} is not plain JSON"),
        ([{"x": object()}], TypeError, r"configs\[0\]=.* is not plain JSON"),
        ([(1,)], TypeError, r"configs\[0\]=\(1,\) must be a dict"),
        ({"x": 1}, TypeError, "configs must be a list of dicts"),
    ]:
        with pytest.raises(error, match=match):
            rt.sweep(measure, configs, tmp_path / "t", workers=1)
    with pytest.raises(ValueError, match="workers=0"):
        rt.sweep(measure, CONFIGS, tmp_path / "t", workers=0)
    with pytest.raises(ValueError, match="code='a b'"):
        rt.sweep(measure, CONFIGS, tmp_path / "t", code="a b", workers=1)
    monkeypatch.setenv("BOOK_WORKERS", "0")
    with pytest.raises(ValueError, match="BOOK_WORKERS='0'"):
        rt.sweep(measure, CONFIGS, tmp_path / "t")
    assert CALLS == [] and not (tmp_path / "t").exists()
    monkeypatch.delenv("BOOK_WORKERS")
    with pytest.raises(TypeError, match=r"returned 4; a sweep's job must return a dict"):
        rt.sweep(pow, [{"base": 2, "exp": 2}], tmp_path / "t", code="c0de", workers=1, progress=False)
    with pytest.raises(TypeError, match="path=None must be a folder path"):
        rt.ResultsTable(None)


def test_a_worker_killed_mid_sweep_changes_nothing(tmp_path):
    from distributed import Client, LocalCluster

    configs = [{"x": x, "scale": 2.0} for x in range(8)]
    killed = []
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0", silence_logs=logging.CRITICAL) as cl,
        Client(cl, set_as_default=False) as client,
    ):
        pids = client.run(os.getpid)
        table = rt.ResultsTable(tmp_path / "killed")

        def kill_one_worker_after_the_first_row():
            deadline = time.monotonic() + 20
            while not table.parts() and time.monotonic() < deadline:
                time.sleep(0.05)
            killed.append(len(table.read()))
            os.kill(next(iter(pids.values())), signal.SIGKILL)

        killer = threading.Thread(target=kill_one_worker_after_the_first_row)
        killer.start()
        rows = rt.sweep(slow_measure, configs, table, scheduler=cl.scheduler_address, progress=False)
        killer.join()
        assert 1 <= killed[0] < len(configs)  # the worker died while jobs were left
        assert set(client.run(os.getpid).values()) != set(pids.values())  # its nanny started a new one
    code = rt.code_of(slow_measure)
    expected = rt.sweep(measure, configs, tmp_path / "calm", code=code, workers=1, progress=False)
    assert rows == expected
    assert _sorted(table.read()) == _sorted(rt.ResultsTable(tmp_path / "calm").read())
