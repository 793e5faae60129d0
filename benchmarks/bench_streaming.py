"""Paper B's lift without the dense J, its time and memory: dense J, column blocks, per-layer factors, P = 10³-10⁶.

The model is the annulus classifier's shape, 2 → W → W → 1 with GELU (P = W² + 4W + 1), on 256 probes (M = 256); the
lift is ``lift_symmetry`` of the input rotation: c* and b* in the sensitivity gauge, on the Gram route every way (τ =
1e-3): J dense, J streamed in column blocks of at most 1.5 GiB (``lib.paper_b.streaming``, any module) and J as
per-layer factors (``lib.paper_b.linear_factors``, a network of linear layers). Each (P, route) runs in a fresh process,
so that its peak resident memory (``ru_maxrss``) is its own, and the resident memory the lift itself adds is sampled
while it runs. In that process it first times the floor: one pass of ``vmap(jacrev)`` over all probes, forming J's rows
(as many probes at a time as the streamed route takes) and keeping none of them, since the lift cannot cost less than
reading J once; the lift's time is given as a ratio to it. The dense route runs only where 3 × 8·M·P bytes fit half the
available memory; ``--large`` adds P ≈ 10⁷ (as factors only: the column blocks would take about ten minutes).

    .venv/bin/python -m bookrun.arithmetic .venv/bin/python benchmarks/bench_streaming.py [--large]

Goals (issue 49): peak memory within 2× of the model and its M × M Grams; time within 5× of the floor at P = 10⁶.
Writes ``_build/benchmarks/streaming.json`` atomically.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import sys
import time

WIDTHS = {1_000: 30, 10_000: 98, 100_000: 314, 1_000_000: 1000}
LARGE = {10_000_000: 3160}
PROBES = (8, 32)  # rings × angles: M = 256
BLOCK_BYTES = 1.5 * 2**30


class PeakRSS:
    """The largest resident memory above where it started (MiB), sampled every 2 ms on a thread until ``stop``."""

    def __init__(self):
        import threading

        self.base, self.peak, self.done = self.now(), 0, threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    @staticmethod
    def now() -> int:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * resource.getpagesize()

    def run(self) -> None:
        while not self.done.wait(0.002):
            self.peak = max(self.peak, self.now())

    def stop(self) -> float:
        self.done.set()
        self.thread.join()
        return (max(self.peak, self.now()) - self.base) / 2**20


def measure(width: int, route: str) -> dict:
    """One (P, route) in this process: the floor, then the lift; seconds, peak RSS, passes, ratio."""
    import torch
    from torch.func import functional_call, jacrev, vmap

    from lib.paper_b import any_module, streaming
    from lib.paper_b import symmetry as sym
    from lib.paper_b.annulus.model import SimpleMLP
    from lib.paper_b.sensitivity import module_params

    torch.manual_seed(0)
    model = SimpleMLP(width, depth=3)
    x = sym.polar_grid(*PROBES, extent=3.0)
    module = model.double()
    theta = module_params(module)
    rows = vmap(jacrev(lambda p, y: functional_call(module, p, (y[None],))[0]), in_dims=(None, 0))
    step = max(1, int(streaming.CHUNK_BYTES // (8 * sum(t.numel() for t in theta.values()))))
    rows(theta, x[:1])  # the first call of a vmap(jacrev) pays its set-up: not part of any pass
    any_module.lift_symmetry(model, x[:1], sym.OMEGA, route="dense", method="gram")  # nor of the lift's
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.perf_counter()
    for i in range(0, x.shape[0], step):
        rows(theta, x[i : i + step])  # J's rows of these probes, not kept (as many as the streamed route takes)
    floor = time.perf_counter() - start
    sampler = PeakRSS()
    start = time.perf_counter()
    res = any_module.lift_symmetry(model, x, sym.OMEGA, route=route, method="gram", block_bytes=BLOCK_BYTES)
    seconds = time.perf_counter() - start
    lift_mib = sampler.stop()
    p, m = res.sensitivity.numel(), res.f.numel()
    return {"P": p, "M": m, "route": route, "seconds": seconds, "floor_seconds": floor, "ratio": seconds / floor,
            "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "passes": res.passes,
            "start_mib": baseline, "lift_mib": lift_mib,
            "model_and_grams_mib": (8 * p + 3 * 8 * m * m) / 2**20, "rank": res.rank}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--large", action="store_true", help="add P ≈ 10⁷ (as factors only)")
    ap.add_argument("--one", nargs=2, metavar=("WIDTH", "ROUTE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(measure(int(args.one[0]), args.one[1])))
        return
    from lib.core.paths import atomic_write_bytes, build_dir
    from lib.paper_b import streaming

    rows = []
    for p, width in {**WIDTHS, **(LARGE if args.large else {})}.items():
        for route in ("dense", "streaming", "factors") if p in WIDTHS else ("factors",):
            need = streaming.DENSE_COPIES * 8 * PROBES[0] * PROBES[1] * p
            if route == "dense" and need > streaming.BUDGET_FRACTION * streaming.available_memory():
                continue
            done = subprocess.run([sys.executable, __file__, "--one", str(width), route], capture_output=True,
                                  text=True, check=True)  # fmt: skip
            row = json.loads(done.stdout.strip().splitlines()[-1])
            rows.append(row)
            print(f"P={row['P']:>10,} {route:>9}: {row['seconds']:7.1f} s, peak {row['peak_mib']:8.0f} MiB, "
                  f"{row['lift_mib']:8.0f} MiB during the lift "
                  f"(model + Grams {row['model_and_grams_mib']:.0f} MiB), {row['passes']} passes, "
                  f"{row['ratio']:.2f}× the floor ({row['floor_seconds']:.1f} s)", flush=True)  # fmt: skip
    out = {"machine": platform.processor() or platform.machine(), "python": platform.python_version(), "rows": rows}
    path = build_dir() / "benchmarks" / "streaming.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, json.dumps(out, indent=1).encode())
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
