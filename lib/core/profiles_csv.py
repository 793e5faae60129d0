"""The per-solution ablation profiles as CSV, for use outside the book: one row per solution and ablated block.

A row of the results table of profiled solutions (``lib.paper_a.task_analysis.sweeps``: one per trained solution,
its configuration as JSON under ``config``, and per block ``b`` the columns ``fvu_b``, ``dfvu_b``, ``sens_b`` and
``mass_b``) becomes one CSV row per block it ablates, values at full precision. ``python -m bookrun`` writes the
book's solutions to ``_build/executed/downloads/solution_profiles.csv`` (``bookrelease.downloads``), which the
book's pages offer for download.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

#: The columns: the solution (task, width N_h, seed, construction), the split's α and n_R, the ablated block
#: (``RR``: T_RR, ``CR``: T_C→R, ``CC``: T_CC), the Schur mass it removes (‖ΔT‖_F/‖T‖_F), the held-out FVU after the
#: ablation, ΔFVU, S_ΔT, the full model's FVU, the split's smallest gap, the coupling mass, and whether the block is
#: empty (it removes nothing: FVU, ΔFVU and S_ΔT are then empty cells).
PROFILE_COLUMNS = (
    "task", "n_hidden", "seed", "construction", "alpha", "n_R", "ablation", "removed_mass", "fvu", "delta_fvu",
    "s_delta_t", "fvu_full", "min_gap", "coupling_mass", "empty",
)  # fmt: skip
#: CSV column → the table's column prefix of a per-block value.
PER_BLOCK = {"removed_mass": "mass_", "fvu": "fvu_", "delta_fvu": "dfvu_", "s_delta_t": "sens_"}


def ablated_blocks(row: Mapping[str, Any]) -> list[str]:
    """The blocks a table row ablates (its ``dfvu_<block>`` columns), in the row's order."""
    return [k.removeprefix("dfvu_") for k in row if k.startswith("dfvu_")]


def _cell(value: Any) -> str:
    """A cell: None and NaN empty, text as it is, numbers at full precision, booleans as ``true``/``false``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def profile_records(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One record per solution and ablated block (keys :data:`PROFILE_COLUMNS`), ordered by task, width, seed."""
    out = []
    for row in sorted(rows, key=lambda r: (r["task"], r["n_hidden"], r["seed"])):
        config = json.loads(row.get("config") or "{}")
        empty = set(filter(None, str(row.get("empty") or "").split("+")))
        solution = {
            "task": row["task"], "n_hidden": row["n_hidden"], "seed": row["seed"],
            "construction": config.get("model", {}).get("construction"), "alpha": config.get("alpha"),
            "n_R": row["n_R"], "fvu_full": row["fvu_full"], "min_gap": row["min_gap"],
            "coupling_mass": row["coupling_mass"],
        }  # fmt: skip
        for block in ablated_blocks(row):
            values = {column: row[f"{prefix}{block}"] for column, prefix in PER_BLOCK.items()}
            out.append({**solution, "ablation": block, **values, "empty": block in empty})
    return out


def profiles_text(rows: Iterable[Mapping[str, Any]]) -> str:
    """The profiles of the table ``rows`` as CSV text (``\\n`` line ends; write it as UTF-8): a header of
    :data:`PROFILE_COLUMNS`, then :func:`profile_records`."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(PROFILE_COLUMNS)
    for record in profile_records(rows):
        writer.writerow(_cell(record[column]) for column in PROFILE_COLUMNS)
    return out.getvalue()
