"""Evidence the results tests check a chapter against, from another route than the chapter's own.

* the per-solution numbers the book keeps: the values a claim records (``ours_values``, ``per_solution``) and the
  rows of the Many-solutions results table (one row per profiled solution, ``_build/cache/tables``);
* the cached models (``_build/cache``), read, never trained: a missing model fails the test with what to run;
* recomputations by other means than the chapter's: eigenvalue counts by ``numpy.linalg.eigvals`` (the chapters
  split an ordered real Schur form), Wilson intervals by ``scipy.stats.binomtest``, the Reynolds average as a plain
  sum over the 64 rotations and the rotation generator by central differences in the angle (the chapters use forward
  mode and orbit bookkeeping).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import numpy as np
import pytest

#: A solution is "safe" to ablate when its ΔFVU is at most this (task dependence, two lenses, paper A left open).
SAFE_TOLERANCE = 0.01


def claim(results, stem: str, claim_id: str) -> dict[str, Any]:
    """The record of claim ``claim_id`` glued by chapter ``stem``."""
    return json.loads(results[f"{stem}::claim_{claim_id}"])


# ----------------------------------------------------------------------------------- per-solution numbers (paper A §4)


@cache
def _profile_rows() -> tuple[dict[str, Any], ...]:
    from lib.core.results_table import ResultsTable
    from lib.paper_a.task_analysis import sweeps

    return tuple(ResultsTable(sweeps.table_path()).read())


def profile_rows(task: str, seeds: int, alpha: float = 0.9) -> list[dict[str, Any]]:
    """The Many-solutions table's rows of the task chapter's solutions (seeds 0..seeds−1 at the paper's §4 settings),
    in seed order: single-block ΔFVU, S_ΔT and removed mass per solution, NaN where the block is empty."""
    from lib.core.results_table import ResultsTable
    from lib.paper_a.task_analysis import sweeps, train_config

    rows = _profile_rows()
    by_key = {r["key"]: r for r in rows}
    out = []
    for seed in range(seeds):
        config = sweeps.row_config(train_config(task, seed), alpha)
        row = by_key.get(ResultsTable.key(config, sweeps.ROW_CODE))
        if row is None:  # profiled by other code than today's: the one row of this configuration, if it is one
            same = [r for r in rows if _same_solution(json.loads(r["config"]), config)]
            if len(same) != 1:
                pytest.fail(f"{len(same)} rows of {task} seed {seed} in {sweeps.table_path()}: execute the book")
            row = same[0]
        out.append(row)
    return out


def _same_solution(a: dict[str, Any], b: dict[str, Any]) -> bool:
    drop = lambda c: {k: v for k, v in c.items() if k != "model_code"}  # noqa: E731
    return drop(a) == drop(b)


def per_seed(results, task: str, kind: str, block: str) -> list[float]:
    """``kind`` ("dfvu" or "sens") of the single-block ablation ``block`` for each of the task chapter's solutions, in
    seed order, NaN where the block is empty: the values its claim records, else the Many-solutions table's."""
    n = results[f"task_{task}::n_seeds"]
    table = [float(r[f"{kind}_{block}"]) for r in profile_rows(task, n)]
    key = f"task_{task}::claim_A4_{task}_{kind}_{block}"
    if key not in results:
        return table
    values = [math.nan if v is None else float(v) for v in json.loads(results[key])["ours_values"]]
    assert len(values) == n, f"{key}: {len(values)} values for {n} solutions"
    return values


def orderings() -> dict[str, tuple[tuple[str, str, str], ...]]:
    """The §4 orderings as ``lib.paper_a.task_analysis`` defines them: comparisons (kind, a, b), value(a) > value(b)."""
    from lib.paper_a.task_analysis import ORDERINGS

    return dict(ORDERINGS)


def judge(comparisons: Sequence[tuple[str, str, str]], value: Callable[[str, str], float]) -> bool | None:
    """One solution's reading of an ordering (the rule of ``lib.paper_a.task_analysis``'s docstring): a comparison
    with an empty (NaN) right side is dropped; an empty left side, or nothing left, leaves it undefined (None)."""
    kept = []
    for kind, a, b in comparisons:
        va, vb = value(kind, a), value(kind, b)
        if math.isnan(va):
            return None
        if not math.isnan(vb):
            kept.append(va > vb)
    return all(kept) if kept else None


def judgements(results, task: str, name: str, source: str = "chapter") -> list[bool]:
    """Ordering ``name`` judged in each of the task chapter's solutions where it is defined, from the per-seed values
    (``source`` "chapter": :func:`per_seed`; "table": the Many-solutions table alone)."""
    n = results[f"task_{task}::n_seeds"]
    if source == "table":
        rows = profile_rows(task, n)
        seeds = [{(k, b): float(r[f"{k}_{b}"]) for k in ("dfvu", "sens") for b in ("RR", "CR", "CC")} for r in rows]
    else:
        cols = {(k, b): per_seed(results, task, k, b) for k in ("dfvu", "sens") for b in ("RR", "CR", "CC")}
        seeds = [{key: col[i] for key, col in cols.items()} for i in range(n)]
    judged = [judge(orderings()[name], lambda k, b, s=s: s[(k, b)]) for s in seeds]
    return [j for j in judged if j is not None]


# ----------------------------------------------------------------------------------------------- cached models


def cached_task_weights(task: str, seeds: int) -> list[dict[str, np.ndarray]]:
    """The task chapter's trained solutions (seeds 0..seeds−1, paper A §4 settings) from the model cache, float64."""
    from lib.paper_a import train
    from lib.paper_a.task_analysis import train_config

    return [_cached(train, train_config(task, seed)) for seed in range(seeds)]


def cached_copy_weights(construction: str, n_hidden: int, seed: int, results) -> dict[str, np.ndarray]:
    """The copy chapter's solution (its training settings as glued) from the model cache, float64."""
    from lib.paper_a import train

    c = "copy_task::"  # the overrides of lib.paper_a.chapters.copy_task.CopyStudy, at the values it glued
    settings = dict(
        lr=results[c + "lr"], batch_size=results[c + "batch_size"], steps=results[c + "max_steps"],
        stop_accuracy=results[c + "stop_accuracy"], stop_every=results[c + "stop_every"],
        task_params={"replay_steps": results[c + "replay_steps"]},
    )  # fmt: skip
    return _cached(train, train.copy_config(construction, n_hidden, seed, **settings))


def _cached(train, config) -> dict[str, np.ndarray]:
    from lib.core import cache

    path = train.cache_path(config)
    payload = cache.read(path, ("config", "weights"))
    if payload is None:
        pytest.fail(f"{config.task} seed {config.seed}: no cached model at {path} (execute the book first)")
    return {k: v.detach().double().numpy() for k, v in payload["weights"].items()}


@cache
def task_profiles(task: str, seeds: int, n_trials: int | None = None, alpha: float = 0.9) -> tuple:
    """Every subset of {T_RR, T_C→R, T_CC} ablated in each cached solution of the task chapter and scored on its
    held-out trials (the first ``n_trials`` of them), by ``lib.paper_a.task_analysis.profile_solution``: the task
    chapters' route, not the lenses' nor the confound study's. About 4 s a task on the full held-out set (slow)."""
    import torch

    from lib.paper_a import task_analysis as ta

    batch = tuple(None if b is None else b[:n_trials] for b in ta.heldout_batch(task))
    return tuple(
        ta.profile_solution({k: torch.from_numpy(v) for k, v in w.items()}, batch, alpha=alpha, seed=seed)
        for seed, w in enumerate(cached_task_weights(task, seeds))
    )


def n_R_by_eigenvalues(W: np.ndarray, alpha: float) -> int:
    """Dimension of the leading sector: eigenvalues (with multiplicity) with |λ| ≥ α·ρ(W), by ``numpy.linalg.eigvals``
    (the chapters split an ordered real Schur form instead)."""
    moduli = np.abs(np.linalg.eigvals(W))
    return int(np.sum(moduli >= alpha * moduli.max() * (1 - 1e-12)))


# ------------------------------------------------------------------------------------------------ Wilson intervals


def wilson_scipy(k: int, n: int) -> tuple[float, float]:
    """95 % Wilson score interval of k successes in n by ``scipy.stats.binomtest`` (not the book's implementation)."""
    from scipy.stats import binomtest

    ci = binomtest(int(k), int(n)).proportion_ci(confidence_level=0.95, method="wilson")
    return float(ci.low), float(ci.high)


def wilson_closed(k: float, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval in closed form, for a fractional k too (Wilson 1927; E. B. Wilson, JASA 22, 209)."""
    p = k / n
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


def solutions_to_decide(rate: float, level: float, limit: int = 10_000) -> int | None:
    """The fewest m whose Wilson interval at the observed ``rate`` (k = rate·m) lies wholly on one side of ``level``."""
    for m in range(1, limit + 1):
        lo, hi = wilson_closed(rate * m, m)
        lo, hi = (0.0 if rate == 0 else lo), (1.0 if rate == 1 else hi)  # the exact ends at k = 0 and k = m
        if lo > level or hi < level:
            return m
    return None


# ------------------------------------------------------------------------------------------ rotations (paper B)


def orbit_cosine(f: Callable, x, *, vector: bool, m: int = 64, h: float = 1e-5) -> float:
    """cos(δ, X f) over the points ``x`` (N, 2) for a scalar field (``vector=False``, f: (N, 2) → (N,)) or a vector
    field (f: (N, 2) → (N, 2), acted on by rotation), with δ = f − Π f.

    Π f is the plain m-point sum (1/m) Σ_k R_k⁻¹ f(R_k x); X f = d/dt R_t⁻¹ f(R_t x) at t = 0 by central differences
    with step ``h`` (error O(h²)): neither the forward mode nor the orbit bookkeeping of ``lib.paper_b``.
    """
    import torch

    x = torch.as_tensor(x, dtype=torch.float64)

    def R(t: float):
        c, s = math.cos(t), math.sin(t)
        return torch.tensor([[c, -s], [s, c]], dtype=torch.float64)

    def pulled_back(t: float):  # R_t⁻¹ f(R_t x)
        with torch.no_grad():
            y = f(x @ R(t).T)
        return y @ R(t) if vector else y  # row vectors: y R = (R⁻¹ yᵀ)ᵀ for orthogonal R

    average = sum(pulled_back(2 * math.pi * k / m) for k in range(m)) / m
    with torch.no_grad():
        delta = f(x) - average
    generator = (pulled_back(h) - pulled_back(-h)) / (2 * h)
    a, b = delta.reshape(-1), generator.reshape(-1)
    return float(a @ b / (a.norm() * b.norm()))


def mexican_hat_model():
    """The Mexican-hat chapter's trained ASRNN (its parameters as the book runs it) from the model cache, float64."""
    from dataclasses import asdict

    import bookrun
    from lib.core import cache
    from lib.paper_b import mexican_hat as H

    st = bookrun.chapter_settings("mexican_hat")
    knobs = ("batch", "lr", "lr_final", "l1", "seed")
    cfg = H.ASRNNConfig(steps=st["train_steps"], eval_every=250, **{k: st[k] for k in knobs})  # as the chapter
    path = cache.entry_path("asrnn", asdict(cfg), code=H.training_code())
    payload = cache.read(path, ("model",))
    if payload is None:
        pytest.fail(f"no cached Mexican-hat model at {path} (execute the book first)")
    return H.ASRNN.from_state_dict(payload["model"]).to(__import__("torch").float64), st
