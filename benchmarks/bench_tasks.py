"""Cost of training the task models of paper A §4 (issue 4), against a plain ``nn.RNN`` loop in the same process.

For each task one model is trained the book's way (``lib.paper_a.batched_training.train_seeds``: the seed-batched
recurrence, the task generator, Adam) and one with the trial's baseline (``torch.nn.RNN(bias=False)`` +
``nn.Linear``, same data, steps and batch), alternately, single-threaded, without the cache. Reported: seconds per
model and the ratio book / baseline per task, and the projected time to train every model the book trains for issue
4 (the main solutions, the robustness variants and the new-task demonstration) one after another. Then the book's
way: ``--pool-models`` of the main solutions (seeds 0, 1, … of flip-flop, sine and context in turn; 30 by default)
trained by ``lib.paper_a.train.load_or_train_many`` in ``--workers`` processes (default: one per CPU) into a
temporary cache, timed on the wall clock, against the target of 5 minutes. ``--steps`` shortens every run; times are
scaled to the paper's 3,840 steps (this over-estimates the pool, whose process start-up does not shrink with the
steps). The chapters' own execution times are read from ``_build/timings.json`` when present. Writes
``_build/benchmarks/tasks.json``; with ``--check`` exits 1 if the pool's time exceeds ``--max-seconds``.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_tasks.py [--steps 3840] [--pool-models 30] [--check]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time

import numpy as np
import torch

from lib.core.cache import atomic_write_bytes
from lib.core.engine import default_workers
from lib.core.paths import REPO_ROOT, build_dir
from lib.paper_a import batched_training
from lib.paper_a import task_analysis as ta
from lib.paper_a.tasks import get_task, load_task_modules
from lib.paper_a.train import TRAIN_STREAM, load_or_train_many

load_task_modules(REPO_ROOT / "book" / "tasks")  # the integrator of the new task lives outside lib
TASK_CHAPTERS = ("task_flipflop", "task_sine", "task_context", "task_dependence", "new_task")


def book_model_counts(main_seeds: int = 10, variant_seeds: int = 3, new_task_seeds: int = 3) -> dict[str, int]:
    """How many models of each task the book trains for issue 4 (main + variants; the integrator of the new task)."""
    counts = {t: main_seeds + variant_seeds * len(ta.TASK_VARIANTS.get(t, {})) for t in ("flipflop", "sine", "context")}
    counts["integrator"] = new_task_seeds
    return counts


def baseline_seconds(task: str, steps: int, seed: int = 0) -> float:
    """The trial's loop: nn.RNN (bias-free tanh, orthogonal W_hh) + nn.Linear readout, Adam 1e-3, batch 64, MSE."""
    spec = get_task(task)
    torch.manual_seed(seed)
    net = torch.nn.RNN(spec.n_inputs, 64, bias=False, batch_first=True)
    torch.nn.init.orthogonal_(net.weight_hh_l0)
    readout = torch.nn.Linear(64, spec.n_outputs, bias=False)
    opt = torch.optim.Adam([*net.parameters(), *readout.parameters()], lr=1e-3)
    rng = np.random.default_rng([seed, TRAIN_STREAM])
    start = time.perf_counter()
    for _ in range(steps):
        batch = spec.generate(64, seed=rng)
        out, _ = net(batch.inputs_btx)
        loss = torch.mean((readout(out) - batch.targets_bty) ** 2)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return time.perf_counter() - start


def book_seconds(task: str, steps: int, seed: int = 0) -> float:
    """The book's training of one model (``batched_training.train_seeds``) on the paper's §4 configuration."""
    config = ta.train_config(task, seed, steps=steps)
    start = time.perf_counter()
    batched_training.train_seeds([config], progress=False)
    return time.perf_counter() - start


def pool_seconds(n_models: int, steps: int, workers: int, tasks=("flipflop", "sine", "context")) -> float:
    """Wall time of ``load_or_train_many`` on the first ``n_models`` main solutions, in a throw-away cache."""
    configs = [ta.train_config(tasks[i % len(tasks)], i // len(tasks), steps=steps) for i in range(n_models)]
    previous = os.environ.get("BOOK_CACHE_DIR")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["BOOK_CACHE_DIR"] = tmp  # the workers inherit it; the book's cache is left alone
        try:
            start = time.perf_counter()
            load_or_train_many(configs, workers=workers, progress=True)
            return time.perf_counter() - start
        finally:
            if previous is None:
                os.environ.pop("BOOK_CACHE_DIR", None)
            else:
                os.environ["BOOK_CACHE_DIR"] = previous


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3840, help="Adam steps per timed model (paper: 3840)")
    parser.add_argument("--tasks", nargs="+", default=["flipflop", "sine", "context", "integrator"])
    parser.add_argument("--pool-models", type=int, default=30, help="main solutions trained in the pool (0: skip)")
    parser.add_argument("--workers", type=int, default=default_workers(), help="pool processes (default: CPUs)")
    parser.add_argument("--check", action="store_true", help="exit 1 if the pool's time exceeds --max-seconds")
    parser.add_argument("--max-seconds", type=float, default=300.0, help="target for all task models (issue 4: 300)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)

    per_task = {}
    for task in args.tasks:
        base = baseline_seconds(task, args.steps)
        book = book_seconds(task, args.steps)
        scale = 3840 / args.steps
        per_task[task] = {
            "book_s_per_model": book * scale,
            "baseline_s_per_model": base * scale,
            "ratio_book_over_baseline": book / base,
        }
        line = f"book {book * scale:6.1f} s/model  nn.RNN {base * scale:6.1f} s/model  ratio {book / base:.2f}"
        print(f"{task:10s} {line}")

    counts = book_model_counts()
    projected = sum(counts[t] * per_task[t]["book_s_per_model"] for t in counts if t in per_task)
    n_models = sum(counts[t] for t in counts if t in per_task)
    print(f"one after another: {n_models} models in {projected:.0f} s (projected)")
    pool = None
    if args.pool_models > 0:
        pool = pool_seconds(args.pool_models, args.steps, args.workers) * 3840 / args.steps
        target = f"target ≤ {args.max_seconds:.0f} s"
        print(f"pool: {args.pool_models} models in {pool:.0f} s on {args.workers} processes ({target})")
    timings_path = build_dir() / "timings.json"
    chapters = {}
    if timings_path.is_file():
        timings = json.loads(timings_path.read_text())
        chapters = {s: timings[s] for s in TASK_CHAPTERS if s in timings}
        for stem, seconds in chapters.items():
            print(f"chapter {stem:16s} {seconds:6.0f} s")
    report = {
        "steps_timed": args.steps,
        "per_task": per_task,
        "model_counts": counts,
        "projected_seconds": projected,
        "n_models": n_models,
        "pool_models": args.pool_models,
        "pool_workers": args.workers,
        "pool_seconds": pool,
        "target_seconds": args.max_seconds,
        "chapter_seconds": chapters,
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "torch": torch.__version__,
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "load_average": os.getloadavg(),
    }
    out = build_dir() / "benchmarks" / "tasks.json"
    atomic_write_bytes(out, json.dumps(report, indent=2).encode())
    print(f"wrote {out}")
    if args.check and (pool is None or pool > args.max_seconds):
        print(f"FAIL: pool {pool} s, target {args.max_seconds:.0f} s", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
