"""What each chapter costs: its last cold run (nothing of its own cached) and its last warm run (everything cached).

``timings.json`` holds the last run's seconds per chapter, warm or cold, whichever it was. This module keeps, in
``<build>/runtimes.json`` (:data:`RECORD`, updated and never cleared, so it survives warm rebuilds), each chapter's
last run of each kind, told apart by what the chapter's kernels did with the model cache:

- the executor gives each kernel an IPython startup file (``bookrun/startup/01-bookrun-cache.py``) whose audit hook
  logs every cache entry the kernel reads (``R``: a model loaded) or puts in place (``W``: a model saved, a part of a
  results table written, both by an atomic rename), to ``<run tmp>/cache-events/<pid>.txt``; a kernel the chapter
  starts itself (a scratch run nested in it) logs there too. Dask workers are not kernels: a model they load is not
  seen, but the kernel saves every model and row they compute (``lib.paper_a.train``, ``lib.core.results_table``), and
  reads each model it sends them to profile;
- the record names the chapter that computed each entry (``owners``);
- a run that computed nothing is **warm** (everything it needed was cached); a run whose every reused entry was
  computed by another chapter of this build folder (the models of the chapters it runs ``after``) is **cold** (its
  own artefacts all computed). A chapter with no artefacts of its own is both. A run that reused some of its own
  artefacts, or any entry of unknown origin (a cache filled before this record, or by another build folder), while
  computing others is *partial* and recorded as the last run only: the table then says "no cold run on record"
  rather than guess.

What the kernels cannot show: rows of a results table are read by pyarrow, not Python, so a sweep that resumes an
interrupted table looks cold.

The appendix's table (*What it costs*) is rendered from this record by :mod:`bookrelease.costs`.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from lib.core.paths import atomic_write_json

RECORD = "runtimes.json"
EVENTS_VAR = "BOOK_CACHE_EVENTS"  # the folder where the kernels log their cache events
ROOT_VAR = "BOOK_CACHE_EVENTS_ROOT"  # the model cache (resolved) whose entries they log


def read_timings(path: Path) -> dict[str, float]:
    """A record of seconds per chapter (``timings.json``, ``nbval_timings.json``); ``{}`` when it is missing or
    unreadable (it only guides an order or a report, so a corrupt one is passed over and rewritten)."""
    try:
        record = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(record, dict):
        return {}
    return {str(k): float(v) for k, v in record.items() if isinstance(v, int | float) and not isinstance(v, bool)}


def update_timings(path: Path, seconds: dict[str, float]) -> None:
    """Record ``seconds`` per chapter in ``path`` (rounded to 0.1 s), keeping the other chapters' entries; atomic."""
    atomic_write_json(Path(path), {**read_timings(path), **{s: round(t, 1) for s, t in seconds.items()}})


def recording_env(tmp: Path, cache: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    """Environment entries that make the kernels of a run (their start-up file, ``bookrun.processes.kernel_startup``)
    log their cache events into ``tmp/cache-events``, and into the folders of an enclosing run (``env``'s), when this
    run is nested in a chapter (``new_task`` runs a scratch run)."""
    (tmp / "cache-events").mkdir(parents=True, exist_ok=True)
    outer = [d for d in (env or {}).get(EVENTS_VAR, "").split(os.pathsep) if d]
    return {EVENTS_VAR: os.pathsep.join([*outer, str(tmp / "cache-events")]), ROOT_VAR: str(Path(cache).resolve())}


def cache_events(tmp: Path) -> tuple[set[str], set[str]]:
    """``(computed, reused)``: the cache entries (paths relative to the cache) a run's kernels wrote, and those they
    read without writing them."""
    written, read = set(), set()
    for log in (tmp / "cache-events").glob("*.txt"):
        for line in log.read_text().splitlines():
            kind, _, rel = line.partition(" ")
            (written if kind == "W" else read).add(rel)
    return written, read - written


def classify(stem: str, computed: Iterable[str], reused: Iterable[str], owners: Mapping[str, str]) -> dict:
    """What a run of ``stem`` was: ``cold``, ``warm`` (both for a chapter with nothing of its own to cache) or neither,
    with the counts it was decided from (``owners``: entry → the chapter that computed it)."""
    computed, reused = set(computed), set(reused)
    own = sum(owners.get(e) == stem for e in reused)
    unknown = sum(e not in owners for e in reused)
    return {"cold": own == 0 and unknown == 0, "warm": not computed, "computed": len(computed), "reused": len(reused),
            "reused_own": own, "reused_unknown": unknown}  # fmt: skip


def read_record(path: Path) -> dict:
    """The record (``{"chapters": {...}, "owners": {...}}``); empty when missing or unreadable."""
    try:
        record = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        record = {}
    if not isinstance(record, dict):
        record = {}
    return {"chapters": dict(record.get("chapters") or {}), "owners": dict(record.get("owners") or {})}


_lock = threading.Lock()


def record_run(path: Path, stem: str, seconds: float, computed: Iterable[str], reused: Iterable[str], *,
               cache: Path, workers: int = 1, now: float | None = None) -> dict:  # fmt: skip
    """Add a successful run of ``stem`` (``seconds`` of wall time, the cache entries it ``computed`` and ``reused``,
    relative to ``cache``) to the record at ``path``; return the run as recorded."""
    computed, reused = set(computed), set(reused)
    cache = str(Path(cache).resolve())
    with _lock:
        record = read_record(path)
        owners = {k[len(cache) + 1 :]: v for k, v in record["owners"].items() if k.startswith(cache + os.sep)}
        run = classify(stem, computed, reused, owners)
        kind = "cold and warm" if run["cold"] and run["warm"] else "cold" if run["cold"] else (
            "warm" if run["warm"] else "partial")  # fmt: skip
        run = {"seconds": round(float(seconds), 1), "kind": kind, "workers": int(workers),
               "models": sum(e.endswith(".pt") for e in computed),
               "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
               **{k: v for k, v in run.items() if k not in ("cold", "warm")}}  # fmt: skip
        entry = dict(record["chapters"].get(stem) or {})
        entry["last"] = run
        for which in ("cold", "warm"):
            if which in kind:
                entry[which] = run
        record["chapters"][stem] = entry
        record["owners"].update({os.path.join(cache, e): stem for e in computed})
        record["owners"] = dict(sorted(record["owners"].items()))
        atomic_write_json(Path(path), record)
    return run
