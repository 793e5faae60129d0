"""Cost of ``lib.paper_a.schur.ordered_real_schur`` against scipy's unordered ``schur`` (72×72), one process.

For each seeded matrix both are timed alternately (``repeats`` rounds of ``number`` calls each) and the median per-call
time is kept; the reported ratio is the geometric mean over matrices of median(ordered) / median(scipy). Writes
``_build/benchmarks/schur.json``; with ``--check`` exits 1 if the ratio exceeds ``--max-ratio`` (default 3, issue 2).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_schur.py [--check] [--repeats 15] [--number 10]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np
import scipy
import scipy.linalg as sl

from lib.core.cache import atomic_write_bytes
from lib.core.paths import build_dir
from lib.paper_a.schur import ordered_real_schur


def matrices(n: int = 72, seeds: tuple[int, ...] = (0, 1, 2)) -> dict[str, np.ndarray]:
    """Seeded test matrices: random nonnormal (the nn.RNN default init) and orthogonal-like (moduli near 1)."""
    out = {}
    for seed in seeds:
        rng = np.random.default_rng(seed)
        m = n**-0.5
        out[f"uniform_nonnormal_s{seed}"] = rng.uniform(-m, m, (n, n))
        q, r = np.linalg.qr(rng.standard_normal((n, n)))
        q = q * np.sign(np.diag(r))
        out[f"near_orthogonal_s{seed}"] = q @ np.diag(1 + 1e-3 * rng.standard_normal(n)) + 1e-3 * rng.standard_normal(
            (n, n)
        )
    return out


def time_per_call(fn, number: int) -> float:
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def run(repeats: int, number: int) -> dict:
    rows = []
    for name, W in matrices().items():
        ordered = lambda W=W: ordered_real_schur(W)  # noqa: E731
        unordered = lambda W=W: sl.schur(W, output="real")  # noqa: E731
        ordered()
        unordered()  # warm-up
        t_o, t_s = [], []
        for _ in range(repeats):  # alternate so that load on the machine hits both alike
            t_s.append(time_per_call(unordered, number))
            t_o.append(time_per_call(ordered, number))
        form = ordered()
        rows.append(
            {
                "matrix": name,
                "n": W.shape[0],
                "blocks": len(form.blocks),
                "scipy_schur_ms": 1e3 * statistics.median(t_s),
                "ordered_ms": 1e3 * statistics.median(t_o),
            }
        )
        rows[-1]["ratio"] = rows[-1]["ordered_ms"] / rows[-1]["scipy_schur_ms"]
    ratio = float(np.exp(np.mean(np.log([r["ratio"] for r in rows]))))
    return {
        "benchmark": "ordered_real_schur vs scipy.linalg.schur(output='real')",
        "ratio": ratio,
        "worst_ratio": max(r["ratio"] for r in rows),
        "rows": rows,
        "repeats": repeats,
        "number": number,
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "machine": platform.machine(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15, help="rounds per matrix (median taken)")
    parser.add_argument("--number", type=int, default=10, help="calls per round")
    parser.add_argument("--check", action="store_true", help="exit 1 if the ratio exceeds --max-ratio")
    parser.add_argument("--max-ratio", type=float, default=3.0)
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.number < 1:
        parser.error(f"--repeats={args.repeats} and --number={args.number} must be >= 1")

    result = run(args.repeats, args.number)
    print(f"{'matrix':<24}{'blocks':>7}{'scipy ms':>10}{'ordered ms':>12}{'ratio':>8}")
    for r in result["rows"]:
        print(
            f"{r['matrix']:<24}{r['blocks']:>7}{r['scipy_schur_ms']:>10.3f}{r['ordered_ms']:>12.3f}{r['ratio']:>8.2f}"
        )
    print(
        f"geometric-mean ratio ordered / scipy: {result['ratio']:.2f} (worst matrix {result['worst_ratio']:.2f}; "
        f"limit {args.max_ratio:g})"
    )
    path = build_dir() / "benchmarks" / "schur.json"
    atomic_write_bytes(path, (json.dumps(result, indent=2) + "\n").encode())
    print(f"wrote {path}")
    if args.check and result["ratio"] > args.max_ratio:
        print(f"FAIL: ratio {result['ratio']:.2f} > {args.max_ratio:g}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
