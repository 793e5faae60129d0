"""The appendix's table *What it costs*: each chapter's last cold and warm run, from the executor's record.

The executor keeps, in ``<build>/runtimes.json`` (``bookrun.timings``), each chapter's last cold run (nothing of its
own cached) and last warm run (everything cached). :func:`section` renders it as the MyST table the appendix
includes (:data:`PAGE`, written beside the executed book's pages by :mod:`bookrelease.records`), with the total,
and the cold times of ``benchmarks/bench_book.py`` beside them when that benchmark has run in this build folder.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from bookrun.timings import RECORD, read_record

#: The runtime table, written beside the executed book's pages and included by the appendix.
PAGE = "_runtimes.md"
#: The benchmark of ten chapters executed cold into a fresh cache (``benchmarks/bench_book.py``), when it has run.
BENCHMARK = Path("benchmarks") / "book.json"


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


def section(build: Path, chapters: Mapping[str, str], record: Mapping | None = None) -> str:
    """The appendix's runtime table (MyST) for ``chapters`` (stem → title), from ``build``'s record (``record``, or
    read here)."""
    record = read_record(Path(build) / RECORD) if record is None else record
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
