"""What the pinned arithmetic costs: the book's hot paths under each arithmetic, as ratios against the native one.

The pins (``lib.core.arithmetic``) are read when the libraries load, so each arithmetic runs in a fresh child process
started by this one with its environment: ``native`` (no pins, ``BOOK_ARITHMETIC=native`` with one thread),
``pinned`` (the book's) and ``compatible`` (the pins with MKL's COMPATIBLE branch, the one branch oneMKL gives the
same bits on Intel and AMD). The children run in turn, ``--rounds`` times over (native, pinned, compatible, native,
...), so a machine that speeds up or slows down affects each alike; each path's time is the median over rounds, and
the ratio is against native from the same rounds. The hot paths, one thread each:

- ``training``: 100 steps of the seed-batched training of three flip-flop RNNs (N_h = 64, batch 64; paper A §4);
- ``schur``: the ordered real Schur form with its R/C split of twenty 72 × 72 matrices (paper A §2);
- ``lift``: one gauged truncated lift (c*, τ = 1e-3, the Gram route) of a 4,000 × 1,200 Jacobian (paper B eq. 20).

Each child also hashes its results: ``pinned`` must give the same bits in every round. Writes
``_build/benchmarks/arithmetic.json``.

    .venv/bin/python benchmarks/bench_arithmetic.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lib.core import arithmetic  # noqa: E402

THREADS = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
MODES = {
    "native": {**THREADS, "BOOK_ARITHMETIC": "native"},
    "pinned": dict(arithmetic.PINS),
    "compatible": {**arithmetic.PINS, "MKL_CBWR": "COMPATIBLE"},
}


def child() -> dict:
    """Time and hash the hot paths in this process (its arithmetic is its environment's)."""
    import numpy as np
    import torch

    from lib.paper_a import batched_training
    from lib.paper_a import task_analysis as ta
    from lib.paper_a.schur import partitioned_schur
    from lib.paper_b import lifting

    torch.set_num_threads(1)
    out = {}

    def timed(name, fn, digest):
        start = time.perf_counter()
        result = fn()
        out[name] = {"seconds": time.perf_counter() - start, "bits": hashlib.sha1(digest(result)).hexdigest()[:12]}

    configs = [ta.train_config("flipflop", seed, steps=100) for seed in range(3)]
    timed("training", lambda: batched_training.train_seeds(configs, progress=False),
          lambda r: b"".join(np.asarray(x["loss_history"]).tobytes() for x in r))  # fmt: skip
    rng = np.random.default_rng(0)
    matrices = [rng.standard_normal((72, 72)) / 8 for _ in range(20)]
    timed("schur", lambda: [partitioned_schur(W) for W in matrices], lambda r: b"".join(f.T.tobytes() for f in r))
    g = torch.Generator().manual_seed(0)
    J = torch.randn(4000, 40, generator=g, dtype=torch.float64) @ torch.randn(
        40, 1200, generator=g, dtype=torch.float64
    )
    J += 1e-3 * torch.randn(4000, 1200, generator=g, dtype=torch.float64)
    target = torch.randn(4000, generator=g, dtype=torch.float64)
    timed("lift", lambda: lifting.lift(J, target, tau=1e-3, method="gram"), lambda r: r.coef.numpy().tobytes())
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="times each arithmetic is run, in turn")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child()))
        return 0
    if args.rounds < 1:
        parser.error(f"--rounds {args.rounds}: must be at least 1")
    base = {k: v for k, v in os.environ.items() if k not in arithmetic.PINS and k != arithmetic.MODE_ENV}
    runs: dict[str, list[dict]] = {m: [] for m in MODES}
    for r in range(args.rounds):
        for mode, env in MODES.items():
            done = subprocess.run([sys.executable, __file__, "--child"], env={**base, **env, "PYTHONPATH": str(ROOT)},
                                  capture_output=True, text=True, check=True)  # fmt: skip
            runs[mode].append(json.loads(done.stdout.strip().splitlines()[-1]))
            times = ", ".join(f"{k} {v['seconds']:.2f} s" for k, v in runs[mode][-1].items())
            print(f"round {r + 1}/{args.rounds} {mode:10s} {times}", file=sys.stderr, flush=True)
    paths = list(runs["native"][0])
    median = {m: {p: statistics.median(run[p]["seconds"] for run in runs[m]) for p in paths} for m in MODES}
    result = {
        "cpu": arithmetic.cpu(),
        "rounds": args.rounds,
        "median_seconds": median,
        "ratio_to_native": {m: {p: median[m][p] / median["native"][p] for p in paths} for m in MODES},
        "pinned_bits_stable": all(len({run[p]["bits"] for run in runs["pinned"]}) == 1 for p in paths),
        "bits_equal_to_pinned": {
            m: {p: runs[m][0][p]["bits"] == runs["pinned"][0][p]["bits"] for p in paths} for m in MODES
        },  # fmt: skip
    }
    out = ROOT / "_build" / "benchmarks" / "arithmetic.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(result, indent=1) + "\n")
    os.replace(tmp, out)
    print(f"{result['cpu']['model']}: time against native (median of {args.rounds} rounds)")
    for m in MODES:
        print(f"  {m:10s} " + "  ".join(f"{p} {result['ratio_to_native'][m][p]:.2f}×" for p in paths))
    print(f"pinned bits the same in every round: {result['pinned_bits_stable']}; written to {out.relative_to(ROOT)}")
    return 0 if result["pinned_bits_stable"] else 1


if __name__ == "__main__":
    sys.exit(main())
