"""The Jacobian of paper A's rollout in Schur coordinates, and screening every single-entry ablation with it.

1. **Routes to J** on one trained flip-flop solution (seed 0, N_h = 64, every coupling entry of T as a column, the
   first held-out trials giving at least ``--probe-rows`` outputs): the adjoint route
   (``lib.lenses.jacobian.coupling_jacobian``) against the plain per-column loop of linearised rollouts
   (``jacobian_by_columns``); the ratio of median wall times and the largest difference of the two J.
2. **Screening** (the chapter ``two_lenses``, item 6): one streamed Jacobian over the whole held-out set predicts the
   Gauss–Newton ΔFVU of zeroing each coupling entry alone (``lib.lenses.screening``); the real thing is one held-out
   rollout per entry (``--entries`` of them, evenly spaced; 0 = all). Reported: the time of each, the speed-up scaled
   to all entries, Spearman's ρ and the top-k overlap of predicted and real ΔFVU.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_lenses.py [--repeats 3] [--entries 0]

Writes ``_build/benchmarks/lenses.json`` atomically.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time

import numpy as np
import torch

from lib.core.cache import atomic_write_bytes
from lib.core.paths import build_dir
from lib.lenses import jacobian as lj
from lib.lenses import screening
from lib.lenses.scores import spearman
from lib.paper_a import rnn, schur
from lib.paper_a import task_analysis as ta


def _time(fn, repeats: int):
    wall, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        wall.append(time.perf_counter() - t0)
    return statistics.median(wall), out


def main(repeats: int = 3, entries: int = 0, probe_rows: int = 4096) -> dict:
    """Run both comparisons; return and write the result dictionary."""
    if repeats < 1 or entries < 0 or probe_rows < 1:
        raise ValueError(f"repeats={repeats} ≥ 1, entries={entries} ≥ 0 and probe_rows={probe_rows} ≥ 1 needed")
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    solution = ta.train_solutions("flipflop", seeds=[0], progress=False)[0]
    batch = ta.heldout_batch("flipflop")
    w = rnn.as_float64(solution.weights)
    coords = lj.coordinates(schur.split(schur.ordered_real_schur(w["W_hh"].numpy())))
    trials = -(-probe_rows // (batch[0].shape[1] * batch[1].shape[2]))
    x = batch[0][:trials]
    t_adj, J = _time(lambda: lj.coupling_jacobian(w, coords, x), repeats)
    t_loop, J_loop = _time(lambda: lj.jacobian_by_columns(w, coords, x), 1)
    result = {
        "problem": f"flip-flop seed 0: J {tuple(J.shape)} (probe trials {trials}, every coupling entry of T)",
        "adjoint_s": t_adj,
        "per_column_loop_s": t_loop,
        "jacobian_ratio": t_loop / t_adj,
        "jacobian_max_abs_difference": float((J - J_loop).abs().max()),
        "jacobian_max_abs": float(J.abs().max()),
    }
    n = coords.size if entries == 0 else min(entries, coords.size)
    picked = np.unique(np.linspace(0, coords.size - 1, n).round().astype(int))
    t_pred, pred = _time(lambda: screening.single_entry_predictions(w, coords, batch), 1)
    t0 = time.perf_counter()
    real = screening.single_entry_real(w, coords, batch, picked)
    t_real = (time.perf_counter() - t0) * coords.size / picked.size
    p = pred[picked]
    result.update(
        {
            "entries_total": coords.size,
            "entries_ablated": int(picked.size),
            "screening_s": t_pred,
            "real_ablations_s_all_entries": t_real,
            "screening_speedup": t_real / t_pred,
            "spearman": spearman(p, real),
            **{f"top{k}_overlap": screening.top_k_overlap(p, real, k) for k in (10, 50) if k <= picked.size},
            "threads": torch.get_num_threads(),
            "torch": torch.__version__,
            "machine": platform.machine(),
            "load_average_1min": os.getloadavg()[0],
        }
    )
    path = build_dir() / "benchmarks" / "lenses.json"
    atomic_write_bytes(path, (json.dumps(result, indent=2) + "\n").encode())
    print(
        f"J {tuple(J.shape)}: adjoint {t_adj:.2f} s, per-column loop {t_loop:.1f} s: {result['jacobian_ratio']:.0f}× "
        f"(max |ΔJ| {result['jacobian_max_abs_difference']:.1e} of {result['jacobian_max_abs']:.1e})\n"
        f"screening {coords.size} single-entry ablations: one Jacobian {t_pred:.1f} s, real rollouts "
        f"{t_real:.0f} s ({picked.size} run, scaled to all): {result['screening_speedup']:.0f}× faster; "
        f"Spearman ρ {result['spearman']:.3f}, top-10 overlap {result.get('top10_overlap', float('nan')):.2f}, "
        f"top-50 {result.get('top50_overlap', float('nan')):.2f}; wrote {path}"
    )
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3, help="timed repeats of the adjoint route")
    parser.add_argument("--entries", type=int, default=0, help="single-entry ablations run for real (0 = all)")
    parser.add_argument("--probe-rows", type=int, default=4096, help="rows of the probe Jacobian")
    args = parser.parse_args()
    main(args.repeats, args.entries, args.probe_rows)
