"""What the same bits cost (issue 58): each change that made a number independent of the CPU's vendor or of the seeds
trained beside it, timed against the route it replaced, in the same process.

- **The gauge's small solve** (``lib.paper_b.lifting._min_norm_solution``): the r × r Gram by MKL's general product
  and its eigendecomposition by numpy (``cpu_linalg.gram``, ``gram_solve``) against numpy's rank-k update and MKL's
  ``eigvalsh``, ``cholesky`` and ``cholesky_solve`` (the route before 1.9.0), at the annulus's size (Aᵀ of
  19,009 × 66) and at the probe's (697 × 39).
- **A seed trained alone** (``lib.kernels.seed_batch._bmm``): one training step of a one-output task model in a batch
  of one, the one-row products run as a batch of two, against ``torch.bmm`` as it is; at the integrator's size
  (N_h = 64, 25 steps) and the sine's (N_h = 64, the book's trial length).

Each line is a ratio (new / old, medians of ``--repeats``), the times beside it. Measured on the AMD EPYC (Zen 3),
2 cores, nothing else running, 2026-12-07 (``benchmarks/same_bits.json``): the gauge solve 1.25× at the annulus's
size (8.6 ms against 6.9 ms a re-solve) and 1.30× at the probe's; a lone seed's training step 1.24× (integrator) and
1.21× (sine); a seed in a batch of two or more pays nothing. Run it while nothing else runs:

    .venv/bin/python -m bookrun.arithmetic .venv/bin/python benchmarks/bench_same_bits.py [--repeats 30]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lib.core.paths import build_dir  # noqa: E402
from lib.kernels import cpu_linalg, seed_batch  # noqa: E402
from lib.paper_a import batched_training  # noqa: E402
from lib.paper_a.tasks import load_task_modules  # noqa: E402
from lib.paper_a.training_config import TrainConfig  # noqa: E402


def _median_seconds(fn, repeats: int) -> float:
    fn()  # warm
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _old_solve(At, alpha):
    gram = cpu_linalg.tn_gram(At)
    torch.linalg.eigvalsh(gram)
    return (At @ torch.cholesky_solve(alpha[:, None], torch.linalg.cholesky(gram)))[:, 0]


def _new_solve(At, alpha):
    y, _ = cpu_linalg.gram_solve(cpu_linalg.gram(At), alpha)
    return At @ y


def gauge_solve(repeats: int) -> dict:
    out = {}
    g = torch.Generator().manual_seed(0)
    for p, r in ((19009, 66), (697, 39)):
        At = torch.randn(p, r, generator=g, dtype=torch.float64)
        alpha = torch.randn(r, generator=g, dtype=torch.float64)
        old = _median_seconds(lambda a=At, b=alpha: _old_solve(a, b), repeats)
        new = _median_seconds(lambda a=At, b=alpha: _new_solve(a, b), repeats)
        out[f"gauge solve {p} x {r}"] = {"old_ms": old * 1e3, "new_ms": new * 1e3, "ratio": new / old}
    return out


def lone_seed_step(repeats: int) -> dict:
    load_task_modules(ROOT / "book" / "tasks")
    out = {}
    for task in ("integrator", "sine"):
        config = TrainConfig(task=task, n_hidden=64, steps=20, seed=0)
        times = {}
        for name, bmm in (("old", torch.bmm), ("new", seed_batch._bmm)):
            saved = seed_batch._bmm
            seed_batch._bmm = bmm
            try:
                times[name] = _median_seconds(lambda c=config: batched_training.train_seeds([c], progress=False),
                                              max(3, repeats // 10)) / config.steps  # fmt: skip
            finally:
                seed_batch._bmm = saved
        out[f"lone seed step {task} N_h=64"] = {"old_ms": times["old"] * 1e3, "new_ms": times["new"] * 1e3,
                                                "ratio": times["new"] / times["old"]}  # fmt: skip
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--out", default=str(build_dir() / "benchmarks" / "same_bits.json"))
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    found = {**gauge_solve(args.repeats), **lone_seed_step(args.repeats)}
    for name, row in found.items():
        print(f"{name:40s} {row['ratio']:.2f}x  (new {row['new_ms']:.2f} ms, old {row['old_ms']:.2f} ms)")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(found, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
