"""Cost of one training step of the Mexican-hat ASRNN (batch 850, a 19-step leapfrog), ours vs the readable reference.

Ours: the hand-written loss and gradient of the whole rollout (``lib.kernels.leapfrog_mlp``, no autograd graph) and
Adam on one flat parameter vector (``lib.kernels.adam``); reference: autograd through ``trajectory_loss`` and
``torch.optim.Adam`` over the separate tensors (``train_asrnn(reference=True)``'s step). Both steppers start from the
same seeded initialisation and take the same seeded minibatches, alternately, ``--repeats`` rounds of ``--steps``
steps each; the medians of the per-step seconds, their ratio and the two models' largest weight difference after all
rounds are written to ``_build/benchmarks/asrnn.json``. The step's floating-point work (its matrix products, counted
from the shapes) over its seconds gives an effective GFLOP/s, set beside the same process's SGEMM at the step's most
common shape (850 × 32 by 32 × 32). The process's CPU seconds are recorded too: on a loaded machine they are a better
proxy for an idle core. ``--profile`` also prints torch.profiler's table of a few steps of each.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_asrnn.py [--repeats 7] [--steps 5] [--batch 850] [--profile]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

import torch

from lib.core.cache import atomic_write_bytes
from lib.core.paths import build_dir
from lib.paper_b.mexican_hat import training
from lib.paper_b.mexican_hat.data import make_windows
from lib.paper_b.mexican_hat.model import ASRNN


def step_flops(model: ASRNN, batch: int, steps: int) -> float:
    """Floating-point operations of the matrix products of one step: per MLP evaluation four products with each
    hidden weight (z, the input-gradient sweep, and two in its VJP) and two more for the weight gradient."""
    total = 0.0
    for params, evals in ((model.k_params, steps), (model.v_params, steps + 1)):
        for w in params[0:-2:2]:
            total += 2.0 * batch * w.numel() * 6 * evals
    return total


def sgemm_gflops(batch: int, width: int = 32, repeats: int = 2000) -> float:
    a, w = torch.randn(batch, width), torch.randn(width, width)
    for _ in range(50):
        a @ w
    t0 = time.perf_counter()
    for _ in range(repeats):
        a @ w
    return 2.0 * batch * width * width * repeats / (time.perf_counter() - t0) / 1e9


def run(repeats: int, steps: int, batch: int, profile: bool) -> dict:
    cfg = training.ASRNNConfig(batch=batch)
    train_w, _ = make_windows(cfg.data)
    train_w = train_w.to(torch.float32)
    gen = torch.Generator().manual_seed(0)
    batches = [train_w.subset(torch.randperm(len(train_w), generator=gen)[:batch]) for _ in range(steps)]
    steppers = {
        "ours": training._fast_step(ASRNN.init(seed=cfg.seed), cfg),
        "reference": training._reference_step(ASRNN.init(seed=cfg.seed), cfg),
    }
    times: dict[str, list[float]] = {k: [] for k in steppers}
    cpu: dict[str, list[float]] = {k: [] for k in steppers}
    for _ in range(repeats):  # alternate so that load on the machine hits both alike
        for name, (_, step) in steppers.items():
            c0, t0 = time.process_time(), time.perf_counter()
            for w in batches:
                step(w, cfg.lr)
            times[name].append((time.perf_counter() - t0) / steps)
            cpu[name].append((time.process_time() - c0) / steps)
    if profile:
        from torch.profiler import ProfilerActivity
        from torch.profiler import profile as torch_profile

        for name, (_, step) in steppers.items():
            with torch_profile(activities=[ProfilerActivity.CPU]) as prof:
                for w in batches:
                    step(w, cfg.lr)
            print(f"--- {name}: {steps} steps")
            print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15))
    models = {k: torch.cat([t.detach().reshape(-1) for t in m.parameters()]) for k, (m, _) in steppers.items()}
    ours, ref = statistics.median(times["ours"]), statistics.median(times["reference"])
    flops = step_flops(steppers["ours"][0], batch, int(train_w.idx.max()))
    return {
        "benchmark": "ASRNN training step: hand-written rollout gradient + flat Adam vs autograd + torch.optim.Adam",
        "batch": batch,
        "ours_step_seconds": ours,
        "reference_step_seconds": ref,
        "ratio": ours / ref,
        "ours_cpu_step_seconds": statistics.median(cpu["ours"]),
        "reference_cpu_step_seconds": statistics.median(cpu["reference"]),
        "cpu_ratio": statistics.median(cpu["ours"]) / statistics.median(cpu["reference"]),
        "ours_all": times["ours"],
        "reference_all": times["reference"],
        "weights_max_abs_diff": float((models["ours"] - models["reference"]).abs().max()),
        "steps_trained_each": repeats * steps + (steps if profile else 0),
        "step_gflop": flops / 1e9,
        "ours_gflops": flops / ours / 1e9,
        "reference_gflops": flops / ref / 1e9,
        "sgemm_gflops": sgemm_gflops(batch),
        "repeats": repeats,
        "steps_per_repeat": steps,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--steps", type=int, default=5, help="steps timed together in each round")
    ap.add_argument("--batch", type=int, default=850, help="windows per minibatch (the chapter: 850)")
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args(argv)
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    report = run(args.repeats, args.steps, args.batch, args.profile)
    report.update(
        threads=torch.get_num_threads(),
        python=platform.python_version(),
        torch=torch.__version__,
        machine=platform.machine(),
        load_average=os.getloadavg(),
    )
    out = build_dir() / "benchmarks" / "asrnn.json"
    atomic_write_bytes(out, json.dumps(report, indent=2).encode())
    print(
        f"ASRNN step (batch {report['batch']}): ours {1e3 * report['ours_step_seconds']:.1f} ms, reference "
        f"{1e3 * report['reference_step_seconds']:.1f} ms, ratio {report['ratio']:.3f} (CPU s: "
        f"{report['cpu_ratio']:.3f}); "
        f"{report['step_gflop']:.2f} GFLOP/step: ours {report['ours_gflops']:.1f}, reference "
        f"{report['reference_gflops']:.1f}, SGEMM {report['sgemm_gflops']:.1f} GFLOP/s; "
        f"weights differ by {report['weights_max_abs_diff']:.1e}; load {report['load_average'][0]:.1f} -> {out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
