"""What each chapter costs (``bookrun.timings``): a kernel's cache events, cold and warm runs told apart and recorded,
and the appendix's table built from the record, which says "no cold run on record" rather than guess."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from bookrelease import costs
from bookrelease.downloads import CLAIMS, FOLDER, PROFILES, SCORECARD
from bookrun import processes, timings
from lib.core.paths import REPO_ROOT
from lib.core.profiles_csv import PROFILE_COLUMNS
from tests.conftest import MYST_FRONT

TOY = (
    MYST_FRONT
    + """```{code-cell} ipython3
:tags: [parameters]
n: int = 3  # a number
```

```{code-cell} ipython3
import torch
from lib.core import cache

payload, path, found = cache.fetch("toy", {"n": n}, lambda: {"w": torch.zeros(n)}, code="c0")
```
"""
)


def test_the_startup_logs_what_a_kernel_reads_and_puts_in_the_cache(tmp_path):
    """The audit hook of ``bookrun/startup/01-bookrun-cache.py``, in a fresh process as in a kernel: a model saved and
    loaded through ``lib.core.cache`` is logged once as written and once as read; a temporary file and a file elsewhere
    are not."""
    cache, elsewhere = tmp_path / "cache", tmp_path / "elsewhere"
    startup = processes.kernel_startup(tmp_path / "run")
    env = {**os.environ, **startup, **timings.recording_env(tmp_path / "run", cache), "BOOK_CACHE_DIR": str(cache)}
    code = (
        f"exec(open({str(tmp_path / 'run/ipython/profile_default/startup/01-bookrun-cache.py')!r}).read())\n"
        "import torch\n"
        "from lib.core import cache\n"
        "path = cache.entry_path('toy', {'a': 1}, code='c0')\n"
        "cache.save_checkpoint(path, {'w': torch.zeros(2)})\n"
        "assert cache.read(path) is not None and cache.read(path) is not None\n"
        f"open({str(elsewhere)!r}, 'w').write('x')\n"
        f"open({str(elsewhere)!r}).read()\n"
        "print(path.name)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=REPO_ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    name = done.stdout.strip()
    lines = [ln for log in (tmp_path / "run" / "cache-events").glob("*.txt") for ln in log.read_text().splitlines()]
    assert sorted(lines) == sorted([f"W {name}", f"R {name}"])
    computed, reused = timings.cache_events(tmp_path / "run")
    assert computed == {name} and reused == set()  # read after it was written: not reused
    nested = timings.recording_env(tmp_path / "inner", cache, env)  # a scratch run started inside the chapter
    folders = [str(tmp_path / d / "cache-events") for d in ("run", "inner")]
    assert nested[timings.EVENTS_VAR].split(os.pathsep) == folders


def test_cold_and_warm_runs_are_told_apart():
    owners = {"a.pt": "copy_task", "b.pt": "copy_task", "t.pt": "task_sine"}
    cold = timings.classify("copy_task", computed={"a.pt", "b.pt"}, reused=set(), owners={})
    warm = timings.classify("copy_task", computed=set(), reused={"a.pt", "b.pt"}, owners=owners)
    after = timings.classify("task_dependence", computed={"d.pt"}, reused={"a.pt", "t.pt"}, owners=owners)
    partial = timings.classify("copy_task", computed={"c.pt"}, reused={"a.pt"}, owners=owners)
    unknown = timings.classify("copy_task", computed={"c.pt"}, reused={"old.pt"}, owners=owners)
    nothing = timings.classify("scorecard", computed=set(), reused=set(), owners=owners)
    assert (cold["cold"], cold["warm"]) == (True, False)
    assert (warm["cold"], warm["warm"]) == (False, True)
    assert (after["cold"], after["warm"]) == (True, False)  # the models of the chapters it runs after were there
    assert (partial["cold"], partial["warm"]) == (False, False) and partial["reused_own"] == 1
    assert (unknown["cold"], unknown["warm"]) == (False, False) and unknown["reused_unknown"] == 1
    assert (nothing["cold"], nothing["warm"]) == (True, True)


def test_a_cold_and_a_warm_run_recorded_make_the_table(tmp_path):
    record, cache = tmp_path / timings.RECORD, tmp_path / "cache"
    first = timings.record_run(record, "copy_task", 312.44, {"m1.pt", "m2.pt"}, set(), cache=cache, workers=1, now=0)
    second = timings.record_run(record, "copy_task", 41.0, set(), {"m1.pt", "m2.pt"}, cache=cache, workers=2, now=60)
    third = timings.record_run(record, "copy_task", 90.0, {"m3.pt"}, {"m1.pt"}, cache=cache, now=120)  # partial
    assert (first["kind"], second["kind"], third["kind"]) == ("cold", "warm", "partial")
    saved = json.loads(record.read_text())
    entry = saved["chapters"]["copy_task"]
    assert entry["cold"]["seconds"] == 312.4 and entry["cold"]["computed"] == 2 and entry["cold"]["workers"] == 1
    assert entry["warm"]["seconds"] == 41.0 and entry["last"]["seconds"] == 90.0  # a partial run replaces neither
    assert saved["owners"] == {str(cache.resolve() / f"m{i}.pt"): "copy_task" for i in (1, 2, 3)}

    # a later chapter reusing copy_task's models and computing its own: cold; one computing nothing: cold and warm
    timings.record_run(record, "task_dependence", 50.0, {"tables/t/part-1.parquet"}, {"m1.pt", "m2.pt"}, cache=cache)
    timings.record_run(record, "scorecard", 5.0, set(), set(), cache=cache)
    chapters = {"copy_task": "The copy task", "task_dependence": "Task dependence", "scorecard": "Scorecard"}
    rows = costs.rows(timings.read_record(record), chapters)
    assert [(r["cold"], r["warm"]) for r in rows] == [(312.4, 41.0), (50.0, None), (5.0, 5.0)]
    text = costs.table_text(rows)
    assert "| The copy task | 312 s | 41 s | 2 models (1 worker) |" in text
    assert "| Task dependence | 50 s | — | 1 results-table part (1 worker) |" in text
    assert "| Scorecard | 5 s | 5 s | nothing of its own to cache |" in text
    assert "| **total** | **367 s** | at least 46 s (2 of 3 chapters) |" in text

    # the appendix's section, from the build folder's record
    (tmp_path / "runtimes.json").write_text(record.read_text())
    section = costs.section(tmp_path, {**chapters, "annulus": "The annulus classifier"})
    assert "| The annulus classifier | — | — | no cold run on record |" in section
    assert "No cold run of 1 chapter(s) is on record" in section
    assert "at least 367 s (3 of 4 chapters)" in section


def test_no_record_says_so(tmp_path):
    section = costs.section(tmp_path, {"copy_task": "The copy task"})
    assert "| The copy task | — | — | no cold run on record |" in section
    assert "No cold run of 1 chapter(s) is on record" in section
    (tmp_path / timings.RECORD).write_text("{not json")  # unreadable: passed over, rewritten at the next run
    assert timings.read_record(tmp_path / timings.RECORD) == {"chapters": {}, "owners": {}}


def test_the_benchmark_is_shown_beside_when_it_has_run(tmp_path):
    cache = tmp_path / "cache"
    timings.record_run(tmp_path / timings.RECORD, "annulus", 140.0, {"m.pt"}, set(), cache=cache, workers=2)
    stage = {"wall_seconds": 700.0, "chapter_seconds": {"annulus": 150}}
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / costs.BENCHMARK).write_text(json.dumps({"machine": "a test CPU", "stages": {"execute": stage}}))
    section = costs.section(tmp_path, {"annulus": "The annulus classifier"})
    assert "cold, in the benchmark" in section and "a test CPU" in section
    assert "| The annulus classifier | 140 s | — | 1 model (2 workers) | 150 s |" in section


def test_the_executor_records_a_cold_then_a_warm_run(tmp_path):
    """A chapter that caches one model, executed by ``python -m bookrun`` into an empty cache, then again
    (``--force``): the record holds both runs, the executed tree the appendix's table and the downloads."""
    book = tmp_path / "book"
    book.mkdir()
    (book / "toy.md").write_text(TOY)
    (book / "chapters.yml").write_text("toy: {}\n")
    build = tmp_path / "_build"
    env = dict(os.environ, BOOK_BUILD_DIR=str(build), BOOK_WORKERS="1", PYTHONPATH=str(REPO_ROOT))
    env.pop("BOOK_CACHE_DIR", None)
    cmd = [sys.executable, "-m", "bookrun", "--book-dir", str(book), "--toc", "/none", "--only", "toy"]
    for extra in ([], ["--force"]):
        done = subprocess.run(cmd + extra, capture_output=True, text=True, env=env, cwd=REPO_ROOT)
        assert done.returncode == 0, done.stdout + done.stderr
    entry = json.loads((build / timings.RECORD).read_text())["chapters"]["toy"]
    assert entry["cold"]["kind"] == "cold" and (entry["cold"]["computed"], entry["cold"]["models"]) == (1, 1)
    assert entry["warm"]["kind"] == "warm" and (entry["warm"]["computed"], entry["warm"]["reused"]) == (0, 1)
    assert entry["last"] == entry["warm"]
    page = (build / "executed" / "book" / costs.PAGE).read_text()
    cold, warm = entry["cold"]["seconds"], entry["warm"]["seconds"]
    assert f" | {cold:.0f} s | {warm:.0f} s | 1 model ({entry['cold']['workers']} worker" in page
    downloads = build / "executed" / FOLDER
    assert json.loads((downloads / CLAIMS).read_text()) == {}
    assert (downloads / SCORECARD).read_text().startswith("id,paper,")
    assert (downloads / PROFILES).read_text() == ",".join(PROFILE_COLUMNS) + "\n"  # no chapter of profiles here
