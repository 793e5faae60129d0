"""Single-block ablation profiles of many trained solutions, one row of a results table per solution.

A sweep of solutions goes through :func:`lib.core.results_table.sweep`: each solution's row is keyed by its full
configuration (:func:`row_config`: the :class:`~lib.paper_a.train.TrainConfig`, the fingerprint of the code that
trains it, α and the held-out set) and by :data:`ROW_CODE`, the fingerprint of the code that profiles it. The client
writes each row as its job finishes, so a sweep of hundreds of solutions that is interrupted resumes where it
stopped. :func:`profile_sweep` trains the missing models first (:func:`lib.paper_a.train.load_or_train_many`), then
profiles every solution (:func:`profile_row`, a job that loads its model from the cache) and returns
:class:`~lib.paper_a.task_analysis.profiles.SolutionProfile` objects, the same values the task chapters compute.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lib.core import cache, results_table
from lib.core.paths import cache_dir
from lib.paper_a import ablation, metrics, rnn, schur, train
from lib.paper_a.task_analysis import configuration, profiles
from lib.paper_a.task_analysis.configuration import HELDOUT_SEED, N_HELDOUT, SINGLE_BLOCKS, heldout_batch
from lib.paper_a.task_analysis.profiles import SolutionProfile, profile_solution

#: The subsets each row ablates: the full model (the reference) and each single block.
ROW_SUBSETS = ((), *((b,) for b in SINGLE_BLOCKS))
#: The folder (under the model cache) of the results table of every profiled solution.
TABLE_FOLDER = "tables/solution_profiles"
#: The values a row holds per single block.
KINDS = ("fvu", "dfvu", "sens", "mass")


def _row_code() -> str:
    """Fingerprint of the code that turns a trained model into a row (not the training: that is in the config)."""
    schur_files = sorted(Path(schur.__file__).parent.glob("*.py"))
    return cache.fingerprint([ablation, metrics, rnn, configuration, profiles, __file__, *schur_files])


#: The code fingerprint of every row (a row computed by other code is computed again).
ROW_CODE = _row_code()


def table_path() -> Path:
    """The results table of profiled solutions: ``<cache_dir>/tables/solution_profiles``."""
    return cache_dir() / TABLE_FOLDER


def row_config(config: train.TrainConfig, alpha: float, n_heldout: int = N_HELDOUT) -> dict[str, Any]:
    """The full configuration of one solution's row (plain JSON): what trains it, with which code, how it is scored."""
    return {
        "model": config.to_dict(),
        "model_code": train.code_fingerprint(config.task),
        "alpha": float(alpha),
        "n_heldout": int(n_heldout),
        "heldout_seed": HELDOUT_SEED,
    }


@functools.lru_cache(maxsize=8)
def _batch(task: str, task_params: str, n_heldout: int):
    return heldout_batch(task, json.loads(task_params), n_heldout)


def profile_row(model: dict, model_code: str, alpha: float, n_heldout: int, heldout_seed: int) -> dict[str, Any]:
    """The row of one solution (a job of :func:`profile_sweep`): its model from the cache (trained if missing),
    profiled at ``alpha`` on the task's held-out trials (rolled out on its ``device``); single-block FVU, ΔFVU,
    S_ΔT, removed mass, n_R, the gaps."""
    config = train.TrainConfig(**model)
    if model_code != train.code_fingerprint(config.task) or heldout_seed != HELDOUT_SEED:
        raise ValueError(f"the row of {model} was configured for other training code or other held-out trials")
    weights = train.load_or_train(config, progress=False).weights
    batch = _batch(config.task, json.dumps(config.task_params, sort_keys=True), n_heldout)
    p = profile_solution(weights, batch, alpha=alpha, seed=config.seed, subsets=ROW_SUBSETS, device=config.device)
    row: dict[str, Any] = {"task": config.task, "seed": config.seed, "n_hidden": config.n_hidden, "n_R": p.n_R}
    row |= {"fvu_full": p.fvu_full, "min_gap": p.min_gap, "coupling_mass": p.coupling_mass, "empty": "+".join(p.empty)}
    for b in SINGLE_BLOCKS:
        row |= {f"{kind}_{b}": getattr(p, kind)[b] for kind in KINDS}
    row |= {"gaps": [float(g) for g in p.gaps], "moduli_over_rho": [float(m) for m in p.moduli_over_rho]}
    return row


def profile_from_row(row: dict[str, Any], alpha: float) -> SolutionProfile:
    """The :class:`SolutionProfile` of a row (the full model and the single blocks; NaN where a block is empty)."""
    values = {kind: {b: float(row[f"{kind}_{b}"]) for b in SINGLE_BLOCKS} for kind in KINDS}
    return SolutionProfile(
        seed=int(row["seed"]),
        alpha=float(alpha),
        n_R=int(row["n_R"]),
        fvu_full=float(row["fvu_full"]),
        fvu={"": float(row["fvu_full"]), **values["fvu"]},
        dfvu={"": 0.0, **values["dfvu"]},
        mass={"": 0.0, **values["mass"]},
        sens={"": math.nan, **values["sens"]},
        moduli_over_rho=np.asarray(row["moduli_over_rho"], dtype=np.float64),
        gaps=np.asarray(row["gaps"], dtype=np.float64),
        min_gap=float(row["min_gap"]),
        coupling_mass=float(row["coupling_mass"]),
        empty=tuple(k for k in str(row["empty"]).split("+") if k),
    )


def profile_sweep(
    configs: Sequence[train.TrainConfig],
    alpha: float,
    *,
    n_heldout: int = N_HELDOUT,
    scheduler: str | None = None,
    workers: int | None = None,
    table: results_table.ResultsTable | str | Path | None = None,
    progress: bool = True,
) -> list[SolutionProfile]:
    """The profile of every solution of ``configs`` at ``alpha``, in their order, each row kept in ``table``
    (default :func:`table_path`): missing models train first, rows already in the table are read, not recomputed."""
    configs = list(configs)
    alpha = schur.check_alpha(alpha)
    rows = [row_config(c, alpha, n_heldout) for c in configs]  # every configuration checked before any work
    if not isinstance(table, results_table.ResultsTable):
        table = results_table.ResultsTable(table_path() if table is None else table)
    keys = [results_table.ResultsTable.key(r, ROW_CODE) for r in rows]
    done = table.done(keys)
    todo = [c for c, key in zip(configs, keys, strict=True) if key not in done]  # a row needs no model
    train.load_or_train_many(todo, scheduler=scheduler, workers=workers, progress=progress)
    label = lambda job, row: f"{row['task']} N_h={row['n_hidden']} seed={row['seed']}"  # noqa: E731
    done = results_table.sweep(
        profile_row, rows, table, code=ROW_CODE, scheduler=scheduler,
        workers=workers, desc="profiles", progress=progress, label=label,
    )  # fmt: skip
    return [profile_from_row(row, alpha) for row in done]
