"""What a lift's evidence costs (issue 59): ``lift_symmetry`` with ``held_out`` (the held-out probes, the null of 20
directions, the certification's conjugate gradients and the architecture's own lift) against the same lift with
``held_out=None``, in the same process, and the peak memory of each, each in a fresh process.

Cases: the GELU MLP 2 → 1024 → 1024 → 4 (1,056,772 parameters) on 256 polar probes by the per-layer factors route,
the issue's; and the tanh MLP 2 → 32 → 32 → 1 on 2,000 probes by the dense exact SVD. Each line gives the ratio
(lift with evidence / lift alone, medians of ``--repeats``), both times and the peak resident memory of a process
that runs each once. Run it while nothing else runs:

    .venv/bin/python -m bookrun.arithmetic .venv/bin/python benchmarks/bench_evidence.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
from torch import nn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lib.core.paths import build_dir  # noqa: E402
from lib.paper_b import any_module  # noqa: E402
from lib.paper_b.symmetry import OMEGA, held_out_polar_grid, polar_grid  # noqa: E402

F64 = torch.float64


def case(name: str):
    """(model, probes, held-out probes, lift_symmetry's keywords) of a named case."""
    torch.manual_seed(0)
    if name == "gelu_1m_factors":
        model = nn.Sequential(nn.Linear(2, 1024), nn.GELU(), nn.Linear(1024, 1024), nn.GELU(), nn.Linear(1024, 4))
        return model.double(), polar_grid(8, 32, 3.0), held_out_polar_grid(8, 32, 3.0), {"route": "factors"}
    model = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1)).double()
    x = torch.randn(2000, 2, generator=torch.Generator().manual_seed(2), dtype=F64)
    held = torch.randn(2000, 2, generator=torch.Generator().manual_seed(3), dtype=F64)
    return model, x, held, {"route": "dense", "method": "svd"}


CASES = ("gelu_1m_factors", "tanh_2000_dense")


def run_once(name: str, judged: bool) -> float:
    model, x, held, kw = case(name)
    start = time.perf_counter()
    any_module.lift_symmetry(model, x, OMEGA, held_out=held if judged else None, **kw)
    return time.perf_counter() - start


def peak_mib(name: str, judged: bool) -> float:
    """The peak resident memory (MiB) of a fresh process that runs the case once."""
    code = (f"import sys, resource; sys.path.insert(0, {str(ROOT)!r}); sys.argv = ['x']; "
            f"from benchmarks.bench_evidence import run_once; run_once({name!r}, {judged}); "
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return float(out.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(build_dir() / "benchmarks" / "evidence.json"))
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    found = {}
    for name in CASES:
        lift = statistics.median(run_once(name, False) for _ in range(args.repeats))
        judged = statistics.median(run_once(name, True) for _ in range(args.repeats))
        found[name] = {"lift_s": lift, "with_evidence_s": judged, "ratio": judged / lift,
                       "peak_lift_mib": peak_mib(name, False),
                       "peak_with_evidence_mib": peak_mib(name, True)}  # fmt: skip
        row = found[name]
        print(f"{name:18s} {row['ratio']:.2f}x  (with evidence {judged:.1f} s, lift {lift:.1f} s; peak "
              f"{row['peak_with_evidence_mib']:.0f} MiB against {row['peak_lift_mib']:.0f} MiB)")  # fmt: skip
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(found, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
