"""Cost of one pooled re-solve of the Mexican-hat lift (Jacobian + lift over 20,160 rows), ours vs the trial's way.

Ours: the explicit force Jacobian (``lib.paper_b.mexican_hat.force_jacobian``) and the sketched truncated SVD handed to
``lifting.lift``. Baseline (the trial's): ``vmap(jacrev)`` over ``torch.func.grad`` of V for the Jacobian
and the Gram eigendecomposition (``lift(method="gram")``). Both run in one process on the same seeded parameters,
alternately, ``repeats`` times; medians, their ratio and the agreement of the two lifts are written to
``_build/benchmarks/hamiltonian.json``. With ``--check`` exits 1 if ours exceeds ``--max-seconds`` (issue 6: 2.5 s).
The process's CPU seconds are recorded too: on a loaded machine they are a better proxy for an idle core.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_hamiltonian.py [--check] [--repeats 3] [--model PATH]
        [--train-steps 3000]
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
from torch.func import grad, jacrev, vmap

from lib.core.cache import atomic_write_bytes
from lib.core.paths import build_dir
from lib.paper_b import mexican_hat as H
from lib.paper_b.lifting import lift


def baseline_jacobian(theta: torch.Tensor, probes: H.Probes) -> torch.Tensor:
    """The trial's Jacobian: vmap over probes of jacrev (parameters) of −grad_q V (torch.func), (2N, p)."""

    def force_one(th, q, a):
        ps = H.v_params_of(th)
        return -grad(lambda qq: H.mlp_value(ps, torch.cat([qq, a.reshape(1)])[None])[0])(q)

    return vmap(jacrev(force_one), in_dims=(None, 0, 0))(theta, probes.q, probes.alpha).reshape(-1, theta.numel())


_PROBLEMS: dict = {}


def ours(theta, probes, sketch_rank):
    """One re-solve as the walks do it: J in the problem's scratch buffer, the sketched SVD, the min-norm lift."""
    key = (id(probes), sketch_rank)
    if key not in _PROBLEMS:
        _PROBLEMS[key] = H.MexicanHatProblem(probes, sketch_rank=sketch_rank)
    return _PROBLEMS[key].lift(theta, "c")


def baseline(theta, probes):
    J = baseline_jacobian(theta, probes)
    return lift(J, H.generator_field(theta, probes).reshape(-1), gauge="minnorm", method="gram")


CPU_SECONDS: dict[str, list[float]] = {"ours": [], "baseline": []}


def timed(fn, label=None):
    """Wall seconds of fn() (and, under ``label``, this process's CPU seconds: a proxy for an idle core)."""
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    if label:
        CPU_SECONDS[label].append(time.process_time() - c0)
    return time.perf_counter() - t0, out


def run(theta: torch.Tensor, repeats: int, sketch_rank: int) -> dict:
    probes = H.pooled_probes()
    t_ours, t_base = [], []
    for _ in range(repeats):  # alternate so that load on the machine hits both alike
        dt, res_o = timed(lambda: ours(theta, probes, sketch_rank), "ours")
        t_ours.append(dt)
        dt, res_b = timed(lambda: baseline(theta, probes), "baseline")
        t_base.append(dt)
    t_j, J = timed(lambda: H.force_jacobian(theta, probes))
    t_jb, Jb = timed(lambda: baseline_jacobian(theta, probes))
    return {
        "benchmark": "pooled Mexican-hat re-solve: explicit Jacobian + sketched SVD vs vmap(jacrev) + Gram eigh",
        "rows": probes.rows,
        "params": int(theta.numel()),
        "ours_seconds": statistics.median(t_ours),
        "baseline_seconds": statistics.median(t_base),
        "ratio": statistics.median(t_ours) / statistics.median(t_base),
        "ours_cpu_seconds": statistics.median(CPU_SECONDS["ours"]),
        "baseline_cpu_seconds": statistics.median(CPU_SECONDS["baseline"]),
        "ours_all": t_ours,
        "baseline_all": t_base,
        "jacobian_ours_seconds": t_j,
        "jacobian_baseline_seconds": t_jb,
        "jacobian_max_abs_diff": float((J - Jb).abs().max()),
        "rank_ours": res_o.rank,
        "rank_baseline": res_b.rank,
        "coef_rel_diff": float((res_o.coef - res_b.coef).norm() / res_b.coef.norm()),
        "repeats": repeats,
        "sketch_rank": sketch_rank,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sketch-rank", type=int, default=96)
    ap.add_argument("--model", default=None, help="an asrnn-<hash>.pt checkpoint (default: a seeded initialisation)")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--max-seconds", type=float, default=2.5)
    ap.add_argument(
        "--train-steps", type=int, default=0,
        help="also time the chapter's training (its configuration, this many steps; the chapter: 3000), uncached",
    )  # fmt: skip
    ap.add_argument("--train-batch", type=int, default=850, help="windows per minibatch (the chapter: 850)")
    args = ap.parse_args(argv)
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    if args.model:
        from lib.core.cache import load_checkpoint

        theta = H.v_vector(H.ASRNN.from_state_dict(load_checkpoint(args.model, required=("model",))["model"]))
        source = args.model
    else:
        gen = torch.Generator().manual_seed(0)
        theta = H.v_vector(H.ASRNN.init(seed=0))
        theta = theta + 0.1 * torch.randn(theta.shape, generator=gen, dtype=torch.float64)
        source = "seeded initialisation + 0.1·N(0, 1)"
    report = run(theta, args.repeats, args.sketch_rank)
    report.update(
        model=source,
        threads=torch.get_num_threads(),
        python=platform.python_version(),
        torch=torch.__version__,
        machine=platform.machine(),
        load_average=os.getloadavg(),
    )
    if args.train_steps > 0:
        cfg = H.ASRNNConfig(steps=args.train_steps, batch=args.train_batch, eval_every=250)  # the chapter's settings
        trained = H.train_asrnn(cfg, progress=False)
        report.update(train_steps=args.train_steps, train_seconds=trained.seconds, train_val_mse=trained.final_val_mse)
        print(f"training {args.train_steps} steps: {trained.seconds:.0f} s, validation MSE {trained.final_val_mse:.2e}")
    out = build_dir() / "benchmarks" / "hamiltonian.json"
    atomic_write_bytes(out, json.dumps(report, indent=2).encode())
    print(
        f"pooled re-solve ({report['rows']} × {report['params']}): ours {report['ours_seconds']:.2f} s, "
        f"vmap(jacrev) + Gram {report['baseline_seconds']:.2f} s, ratio {report['ratio']:.3f} "
        f"(CPU s: {report['ours_cpu_seconds']:.2f} vs {report['baseline_cpu_seconds']:.2f}); "
        f"ranks {report['rank_ours']}/{report['rank_baseline']}, ‖Δc‖/‖c‖ {report['coef_rel_diff']:.1e}; "
        f"load {report['load_average'][0]:.1f} -> {out}"
    )
    if args.check and report["ours_seconds"] > args.max_seconds:
        print(f"FAIL: {report['ours_seconds']:.2f} s > {args.max_seconds} s", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
