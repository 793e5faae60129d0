"""Training at the CPU's limit (issue 19): GEMM GFLOP/s of a training step against the in-process SGEMM peak.

For each task model of paper A §4 (flip-flop, sine, context; N_h = 64, batch 64) and the copy controller
(N_h = 72), a full training step (task batch, loss, gradients, Adam) is timed two ways, single-threaded:

- **reference**: :func:`lib.paper_a.train.train`, one model at a time (the readable loop);
- **book**: :func:`lib.paper_a.batched_training.train_seeds`, ``--seeds`` solutions in one batched recurrence.

Each step's GEMM work is 2·B·T·N_h·(3N_h + 2N_x + 3N_y) floating-point operations (forward recurrence, input drive and
readout; their gradients). The peak is ``torch.mm`` at the recurrence's own shape, (B, N_h)·(N_h, N_h), measured in
the same process right before and after each timing (the best of several repeats), so the ratio step/peak does not
depend on how fast or busy the machine is. The whole-book projection multiplies the seconds per model by the models
the chapters train (``bench_tasks.book_model_counts`` and the copy chapter's). Target: ratio ≥ 0.5 for the task
models. Writes ``_build/benchmarks/training.json``; ``--check`` exits 1 if a task model's ratio is below ``--target``.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_training.py [--steps 200] [--seeds 5] [--check]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_tasks import book_model_counts  # noqa: E402

from lib.core.cache import atomic_write_bytes  # noqa: E402
from lib.core.paths import build_dir  # noqa: E402
from lib.paper_a import batched_training, train  # noqa: E402
from lib.paper_a import task_analysis as ta  # noqa: E402
from lib.paper_a.tasks import get_task  # noqa: E402

COPY_MODELS = 10  # the copy chapter: 3 seeds × 2 constructions, 2 other constructions, 2 other widths


def configs(model: str, seeds: int, steps: int) -> list[train.TrainConfig]:
    if model == "copy":
        return [train.copy_config(seed=s, steps=steps, stop_accuracy=None) for s in range(seeds)]
    return [ta.train_config(model, s, steps=steps) for s in range(seeds)]


def gemm_flops_per_step(config: train.TrainConfig) -> int:
    probe = get_task(config.task).generate(1, seed=0, **config.task_params)
    _, length, n_x = probe.inputs_btx.shape
    n_y, n, batch = probe.targets_bty.shape[-1], config.n_hidden, config.batch_size
    return 2 * batch * length * n * (3 * n + 2 * n_x + 3 * n_y)


def sgemm_peak(batch: int, n: int, repeats: int = 5, calls: int = 400) -> float:
    """Best GFLOP/s of ``torch.mm`` (batch, n)·(n, n) over ``repeats`` runs of ``calls`` products."""
    a, b = torch.randn(batch, n), torch.randn(n, n) / n**0.5
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            torch.mm(a, b)
        best = min(best, (time.perf_counter() - start) / calls)
    return 2 * batch * n * n / best / 1e9


def seconds_per_step(model: str, way: str, seeds: int, steps: int) -> float:
    """Wall seconds per model-step of ``steps`` training steps (``way``: "reference" or "book")."""
    cs = configs(model, seeds if way == "book" else 1, steps)
    start = time.perf_counter()
    if way == "book":
        batched_training.train_seeds(cs, progress=False)
    else:
        train.train(cs[0], progress=False)
    return (time.perf_counter() - start) / steps / len(cs)


def measure(model: str, seeds: int, steps: int) -> dict:
    config = configs(model, 1, steps)[0]
    flops = gemm_flops_per_step(config)
    row = {"gemm_flops_per_step": flops}
    for way in ("reference", "book"):
        peak_before = sgemm_peak(config.batch_size, config.n_hidden)
        seconds = seconds_per_step(model, way, seeds, steps)
        peak = max(peak_before, sgemm_peak(config.batch_size, config.n_hidden))
        gflops = flops / seconds / 1e9
        row[way] = {"ms_per_step": seconds * 1e3, "gflops": gflops, "peak_gflops": peak, "ratio": gflops / peak}
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200, help="training steps timed per way")
    parser.add_argument("--seeds", type=int, default=5, help="solutions trained together in the book's way")
    parser.add_argument("--models", nargs="+", default=["flipflop", "sine", "context", "copy"])
    parser.add_argument("--target", type=float, default=0.5, help="least ratio step/peak for the task models")
    parser.add_argument("--check", action="store_true", help="exit 1 if a task model is below --target")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    rows = {}
    for model in args.models:
        rows[model] = row = measure(model, args.seeds, args.steps)
        ref, book = row["reference"], row["book"]
        print(
            f"{model:9s} reference {ref['ms_per_step']:5.2f} ms/step {ref['gflops']:5.1f} GFLOP/s "
            f"= {ref['ratio']:.2f} of peak | book ({args.seeds} seeds) {book['ms_per_step']:5.2f} ms/step "
            f"{book['gflops']:5.1f} GFLOP/s = {book['ratio']:.2f} of peak {book['peak_gflops']:.0f}"
        )
    counts = {**book_model_counts(), "copy": COPY_MODELS}
    projection = {}
    for way in ("reference", "book"):
        seconds = 0.0
        for model, count in counts.items():
            if model in rows:
                steps = 3840 if model != "copy" else 2000  # the copy controllers stop at about half their budget
                seconds += count * rows[model][way]["ms_per_step"] / 1e3 * steps
        projection[way] = seconds
        print(f"projected training of the book's models ({way}, one core): {seconds:.0f} s")
    tasks = [m for m in rows if m != "copy"]
    passed = all(rows[m]["book"]["ratio"] >= args.target for m in tasks)
    report = {
        "machine": cpu_name(),
        "torch": torch.__version__,
        "steps_timed": args.steps,
        "seeds_together": args.seeds,
        "models": rows,
        "model_counts": counts,
        "projected_training_seconds": projection,
        "target_ratio": args.target,
        "passed": passed,
    }
    out = build_dir() / "benchmarks" / "training.json"
    atomic_write_bytes(out, json.dumps(report, indent=2).encode())
    print(f"task models ≥ {args.target:.0%} of peak: {passed}  ({out})")
    return 1 if args.check and not passed else 0


def cpu_name() -> str:
    """The processor's model name (Linux: /proc/cpuinfo), else what ``platform`` knows: ratios compare within a
    machine, so a report says which one."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


if __name__ == "__main__":
    sys.exit(main())
