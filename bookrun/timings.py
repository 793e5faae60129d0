"""What each chapter costs: its last cold run (nothing of its own cached) and its last warm run (everything cached).

``timings.json`` holds the last run's seconds per chapter, warm or cold, whichever it was. This module keeps, in
``<build>/runtimes.json`` (:data:`RECORD`, updated and never cleared, so it survives warm rebuilds), each chapter's
last run of each kind, told apart by what the chapter's kernels did with the model cache:

- the executor gives each kernel an IPython startup file (:data:`STARTUP`) whose audit hook logs every cache entry
  the kernel reads (``R``: a model loaded) or puts in place (``W``: a model saved, a part of a results table written,
  both by an atomic rename), to ``<run tmp>/cache-events/<pid>.txt``; a kernel the chapter starts itself (a scratch
  run nested in it) logs there too. Dask workers are not kernels: a model they load is not seen, but the kernel saves
  every model and row they compute (``lib.paper_a.train``, ``lib.core.results_table``), and reads each model it sends
  them to profile;
- the record names the chapter that computed each entry (``owners``);
- a run that computed nothing is **warm** (everything it needed was cached); a run whose every reused entry was
  computed by another chapter of this build folder (the models of the chapters it runs ``after``) is **cold** (its
  own artefacts all computed). A chapter with no artefacts of its own is both. A run that reused some of its own
  artefacts, or any entry of unknown origin (a cache filled before this record, or by another build folder), while
  computing others is *partial* and recorded as the last run only: the table then says "no cold run on record"
  rather than guess.

What the kernels cannot show: rows of a results table are read by pyarrow, not Python, so a sweep that resumes an
interrupted table looks cold.

:func:`section` renders the record as the MyST table of the appendix (*What it costs*), with the total, and the cold
times of ``benchmarks/bench_book.py`` beside them when that benchmark has run in this build folder.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from .processes import kernel_startup, write_json_atomic

RECORD = "runtimes.json"
#: The runtime table, written beside the executed book's pages and included by the appendix.
PAGE = "_runtimes.md"
EVENTS_VAR = "BOOK_CACHE_EVENTS"  # the folder where the kernels log their cache events
ROOT_VAR = "BOOK_CACHE_EVENTS_ROOT"  # the model cache (resolved) whose entries they log
#: The benchmark of ten chapters executed cold into a fresh cache (``benchmarks/bench_book.py``), when it has run.
BENCHMARK = Path("benchmarks") / "book.json"

STARTUP = '''"""bookrun: log the model-cache entries this process reads and writes (see bookrun.timings)."""


def _bookrun_cache_events():
    import os
    import sys

    folders = [d for d in os.environ.get("BOOK_CACHE_EVENTS", "").split(os.pathsep) if d]
    root = os.environ.get("BOOK_CACHE_EVENTS_ROOT", "")
    if not folders or not root:
        return
    prefix, logs, seen = root.rstrip(os.sep) + os.sep, [os.path.join(d, f"{os.getpid()}.txt") for d in folders], set()

    def hook(event, args):
        if event != "open" and event != "os.rename":
            return
        try:
            if event == "open":
                path, mode, flags = args
                reading = ("r" in mode and "+" not in mode) if isinstance(mode, str) else (
                    isinstance(flags, int) and flags & 3 == os.O_RDONLY)
                kind = "R" if reading else None
            else:
                path, kind = args[1], "W"
            if kind is None or isinstance(path, int):
                return
            path = os.path.abspath(os.fsdecode(path))
            name = os.path.basename(path)
            if not path.startswith(prefix) or name.startswith(".") or ".corrupt-" in name:  # temporaries, set aside
                return
            line = f"{kind} {path[len(prefix):]}\\n"
            if line not in seen:
                seen.add(line)
                for log in logs:
                    with open(log, "a") as fh:
                        fh.write(line)
        except Exception:  # never break the operation audited
            pass

    sys.addaudithook(hook)


_bookrun_cache_events()
del _bookrun_cache_events
'''


def recording_env(tmp: Path, cache: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    """Environment entries that make the kernels of a run (IPython profile ``tmp/ipython``, as
    ``bookrun.fingerprints.recording_env`` sets it) log their cache events into ``tmp/cache-events``, and into the
    folders of an enclosing run (``env``'s), when this run is nested in a chapter (``new_task`` runs a scratch run)."""
    kernel_startup(tmp, "01-bookrun-cache.py", STARTUP)  # IPYTHONDIR: set by bookrun.fingerprints.recording_env
    (tmp / "cache-events").mkdir(exist_ok=True)
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
        write_json_atomic(Path(path), record)
    return run


def _seconds(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x:.0f} s" if x < 600 else f"{x / 60:.1f} min"


def _total(values: list[float | None]) -> str:
    """The sum of a column: bold when every chapter is on record, else a lower bound saying over how many."""
    known = [v for v in values if v is not None]
    if len(known) == len(values):
        return f"**{_seconds(sum(known))}**"
    return f"at least {_seconds(sum(known))} ({len(known)} of {len(values)} chapters)"


def rows(record: Mapping, chapters: Mapping[str, str], benchmark: Mapping[str, float] | None = None) -> list[dict]:
    """One row per chapter of ``chapters`` (stem → title, in the book's order): its cold and warm seconds (None
    where no such run is on record), what the cold run computed, and the benchmark's cold seconds."""
    out = []
    for stem, title in chapters.items():
        entry = record.get("chapters", {}).get(stem, {})
        cold, warm = entry.get("cold"), entry.get("warm")
        out.append({"stem": stem, "title": title, "cold": cold and cold["seconds"], "warm": warm and warm["seconds"],
                    "computed": cold and cold["computed"], "models": cold and cold.get("models"),
                    "workers": cold and cold["workers"],
                    "benchmark": (benchmark or {}).get(stem)})  # fmt: skip
    return out


def table_text(table: list[dict], with_benchmark: bool = False) -> str:
    """The rows of :func:`rows` as a MyST table, with a total line (a sum over the chapters on record)."""
    head = ["chapter", "cold: models trained", "warm: models cached", "the cold run computed"]
    head += ["cold, in the benchmark"] * with_benchmark
    align = ["---", "---:", "---:", "---"] + ["---:"] * with_benchmark  # times right-aligned
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    for r in table:
        if r["cold"] is None:
            what = "no cold run on record"
        elif r["computed"]:
            models, other = (r["models"], r["computed"] - r["models"]) if r["models"] is not None else (0, 0)
            parts = [f"{models} model{'s' * (models != 1)}"] * bool(models)
            parts += [f"{other} results-table part{'s' * (other != 1)}"] * bool(other)
            parts = parts or [f"{r['computed']} cache entries"]  # a record written before models were counted
            what = f"{', '.join(parts)} ({r['workers']} worker{'s' * (r['workers'] != 1)})"
        else:
            what = "nothing of its own to cache"
        cells = [r["title"], _seconds(r["cold"]), _seconds(r["warm"]), what]
        cells += [_seconds(r["benchmark"])] * with_benchmark
        lines.append("| " + " | ".join(cells) + " |")
    total = ["**total**", _total([r["cold"] for r in table]), _total([r["warm"] for r in table]), ""]
    total += [_total([r["benchmark"] for r in table if r["benchmark"] is not None])] * with_benchmark
    lines.append("| " + " | ".join(total) + " |")
    return "\n".join(lines) + "\n"


def chapter_titles(manifest: Mapping[str, dict], order: Iterable[str]) -> dict[str, str]:
    """Stem → the chapter's title (its manifest ``title``, else its source's first heading), in ``order``."""
    titles = {}
    for stem in order:
        entry = manifest.get(stem)
        if entry is None:
            continue
        title = entry.get("title")
        if not title:
            source = Path(entry["source"])
            heads = [ln[2:].strip() for ln in source.read_text().splitlines() if ln.startswith("# ")]
            title = heads[0] if heads else stem
        titles[stem] = title
    return titles


def benchmark_seconds(build: Path) -> tuple[dict[str, float], dict]:
    """The per-chapter cold seconds of ``benchmarks/bench_book.py`` in ``build`` and its report ({} when absent)."""
    try:
        report = json.loads((Path(build) / BENCHMARK).read_text())
        chapters = report["stages"]["execute"]["chapter_seconds"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}, {}
    return {str(k): float(v) for k, v in chapters.items()}, report


def section(build: Path, chapters: Mapping[str, str]) -> str:
    """The appendix's runtime table (MyST) for ``chapters`` (stem → title), from ``build``'s record."""
    record = read_record(Path(build) / RECORD)
    bench, report = benchmark_seconds(build)
    table = rows(record, chapters, bench)
    lines = [table_text(table, with_benchmark=bool(bench))]
    absent = [r["title"] for r in table if r["cold"] is None]
    if absent:
        lines.append(f"No cold run of {len(absent)} chapter(s) is on record in this build folder: their cold cost is "
                     "not shown rather than guessed (a build into an empty cache records it).\n")  # fmt: skip
    if bench:
        stage = report["stages"]["execute"]
        lines.append(f"The last column: `benchmarks/bench_book.py` executing its chapters cold into an empty cache "
                     f"on {report.get('machine', 'this machine')}, two at a time, {_seconds(stage['wall_seconds'])} "
                     "wall.\n")  # fmt: skip
    return "\n".join(lines)
