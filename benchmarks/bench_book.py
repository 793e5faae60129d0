"""The book's wall-time targets (issue 19): the ten paper chapters executed cold, and ``make test`` after ``make book``.

Stages (``--stages``, both by default), each timed on this process's wall clock while it waits:

- **execute**: the ten chapters of :data:`TEN` (copy, the three tasks, task dependence, the new task, Schur
  coordinates, the lifting criterion, the annulus, the Mexican hat) executed cold, two at a time as ``make book`` does:
  ``python -m bookrun --jobs 2 --only …`` into a fresh temporary build folder with an empty cache (nothing is taken
  from ``_build``). Per-chapter seconds come from that folder's ``timings.json``. Target ≤ 600 s.
- **test**: ``make test`` in the repository. Run it after ``make book``: it then measures what a contributor waits
  for once the book is built (ruff, pytest, nbval re-executing every chapter). Target ≤ 300 s.

Machines differ and drift, so a fixed reference workload (single-thread float32 ``torch.mm`` at the recurrences'
(64, 64)·(64, 64) shape, float64 at the Mexican hat's (20,160, 2,273)·(2,273, 96), and a memory-bound sum) is timed
in this process before and after; the report gives each stage's wall time also in units of the reference's seconds,
the ratio that compares runs on other or busier machines. It is a rough one: on this book's 2-core machine the same
code has taken 594 s and 714 s for the ten chapters an hour apart while the compute-bound parts of the reference
moved by 6 % (the memory-bound part is there to show whether bandwidth is what varies). Measure with nothing else
running. Writes ``_build/benchmarks/book.json``; ``--check`` exits 1 if a stage misses its target.

    .venv/bin/python benchmarks/bench_book.py [--stages execute test] [--check]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_training import cpu_name  # noqa: E402

from bookrun.manifest import load_manifest  # noqa: E402
from lib.core.cache import atomic_write_bytes  # noqa: E402
from lib.core.paths import REPO_ROOT, build_dir  # noqa: E402

#: The chapters of issue 19's first target (executed in book/chapters.yml's order, as make book starts them).
TEN = frozenset({
    "copy_task", "task_flipflop", "task_sine", "task_context", "task_dependence", "new_task", "schur_coordinates",
    "lifting_criterion", "annulus", "mexican_hat",
})  # fmt: skip
TARGETS = {"execute": 600.0, "test": 300.0}
ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}


def reference_seconds(repeats: int = 3) -> dict[str, float]:
    """Best of ``repeats`` timings of each part of the fixed reference workload, and their ``total`` (about 2 s on
    one core of this book's CPUs): ``small_sgemm`` (the recurrences' float32 shape), ``tall_dgemm`` (the Mexican hat's
    float64 products) and ``stream`` (sums over a 366 MB array, bound by memory bandwidth, which a busy host shares)."""
    g = torch.Generator().manual_seed(0)
    a32, b32 = torch.randn(64, 64, generator=g), torch.randn(64, 64, generator=g) / 8
    a64 = torch.randn(20160, 2273, generator=g, dtype=torch.float64)
    b64 = torch.randn(2273, 96, generator=g, dtype=torch.float64)
    parts = {
        "small_sgemm": lambda: [torch.mm(a32, b32) for _ in range(20000)],
        "tall_dgemm": lambda: [torch.mm(a64, b64) for _ in range(4)],
        "stream": lambda: [a64.sum() for _ in range(10)],
    }
    best = {name: float("inf") for name in parts}
    for _ in range(repeats):
        for name, work in parts.items():
            start = time.perf_counter()
            work()
            best[name] = min(best[name], time.perf_counter() - start)
    return {**best, "total": sum(best.values())}


def run(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int]:
    """Run ``cmd`` with its output on this terminal; (wall seconds, exit status)."""
    print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
    start = time.perf_counter()
    rc = subprocess.call(cmd, env=env, cwd=cwd)
    return time.perf_counter() - start, rc


def execute_stage() -> dict:
    """The ten chapters cold into a temporary build folder."""
    with tempfile.TemporaryDirectory(prefix="bench_book.") as tmp:
        env = {**os.environ, **ENV, "BOOK_BUILD_DIR": tmp, "BOOK_CACHE_DIR": str(Path(tmp) / "cache")}
        order = [stem for stem in load_manifest(REPO_ROOT / "book") if stem in TEN]  # --only runs in its own order
        wall, rc = run([sys.executable, "-m", "bookrun", "--jobs", "2", "--only", *order], env, REPO_ROOT)
        timings_path = Path(tmp) / "timings.json"
        chapters = json.loads(timings_path.read_text()) if timings_path.is_file() else {}
    return {"wall_seconds": wall, "rc": rc, "order": order, "chapter_seconds": chapters,
            "chapter_sum": sum(chapters.values())}  # fmt: skip


def test_stage() -> dict:
    """``make test`` in the repository (after ``make book``)."""
    wall, rc = run(["make", "test"], {**os.environ, **ENV}, REPO_ROOT)
    return {"wall_seconds": wall, "rc": rc}


STAGES = {"execute": execute_stage, "test": test_stage}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stages", nargs="+", choices=list(STAGES), default=list(STAGES))
    parser.add_argument("--check", action="store_true", help="exit 1 if a stage misses its target")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    ref_before = reference_seconds()
    results = {name: STAGES[name]() for name in args.stages}
    ref_after = reference_seconds()
    ref = min(ref_before["total"], ref_after["total"])
    failed = []
    for name, r in results.items():
        r["target_seconds"] = TARGETS[name]
        r["in_reference_units"] = r["wall_seconds"] / ref
        r["met"] = r["rc"] == 0 and r["wall_seconds"] <= TARGETS[name]
        extra = f", chapters summing to {r['chapter_sum']:.0f} s" if "chapter_sum" in r else ""
        print(f"{name:8s} {r['wall_seconds']:6.0f} s wall{extra} (exit {r['rc']}); target ≤ {TARGETS[name]:.0f} s: "
              f"{'met' if r['met'] else 'missed'}; {r['in_reference_units']:.0f} × the reference")  # fmt: skip
        if not r["met"]:
            failed.append(name)
    shown = ", ".join(f"{k} {ref_before[k]:.2f}/{ref_after[k]:.2f}" for k in ref_before)
    print(f"reference workload (s, before/after): {shown}")
    report = {
        "stages": results, "reference_seconds": ref, "reference_before": ref_before, "reference_after": ref_after,
        "machine": cpu_name(), "load_average_after": os.getloadavg(), "cpu_count": os.cpu_count(),
        "torch": torch.__version__,
    }  # fmt: skip
    out = build_dir() / "benchmarks" / "book.json"
    atomic_write_bytes(out, json.dumps(report, indent=2).encode())
    print(f"wrote {out}")
    return 1 if args.check and failed else 0


if __name__ == "__main__":
    sys.exit(main())
