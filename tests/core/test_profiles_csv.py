"""The per-solution profiles as CSV (``lib.core.profiles_csv``): its columns, one row per solution and ablated block,
and values equal to the profiles they came from (rows stored in and read back from a real results table)."""

from __future__ import annotations

import csv
import io
import json
import math

from lib.core.profiles_csv import PROFILE_COLUMNS, profiles_text
from lib.core.results_table import ResultsTable
from lib.paper_a.task_analysis import sweeps


def _row(task: str, seed: int, n_hidden: int, empty: str = "") -> dict:
    """A row as ``sweeps.profile_row`` writes it (made-up values), with its configuration as the table keeps it."""
    base = seed + n_hidden / 1000
    row = {"task": task, "seed": seed, "n_hidden": n_hidden, "n_R": seed + 2, "fvu_full": 0.01 * base,
           "min_gap": 0.003, "coupling_mass": 0.27, "empty": empty}  # fmt: skip
    for i, b in enumerate(sweeps.SINGLE_BLOCKS):
        nan = b in empty.split("+")
        row |= {f"fvu_{b}": math.nan if nan else 0.1 * base + i / 3, f"dfvu_{b}": math.nan if nan else 0.09 * base + i,
                f"sens_{b}": math.nan if nan else 4.0 + i / 7, f"mass_{b}": 0.0 if nan else 0.18 + i / 11}  # fmt: skip
    row |= {"gaps": [0.1, -0.2], "moduli_over_rho": [1.0, 0.7]}
    config = {"alpha": 0.9, "model": {"construction": "dense_orthogonal", "task": task, "seed": seed}}
    return {"key": f"k{task}{seed}{n_hidden}", "code": "c0", "config": json.dumps(config), **row}


def test_one_row_per_solution_and_block_equal_to_the_profiles(tmp_path):
    table = ResultsTable(tmp_path / "solution_profiles")
    table.append([_row("sine", 1, 64), _row("context", 0, 64, empty="RR"), _row("sine", 0, 32)])
    rows = table.read()
    records = list(csv.DictReader(io.StringIO(profiles_text(rows))))

    assert tuple(records[0]) == PROFILE_COLUMNS
    blocks = list(sweeps.SINGLE_BLOCKS)
    assert len(records) == len(rows) * len(blocks)
    solutions = [(r["task"], r["n_hidden"], r["seed"]) for r in records[:: len(blocks)]]
    assert solutions == [("context", "64", "0"), ("sine", "32", "0"), ("sine", "64", "1")]  # task, width, seed
    for row in rows:
        profile = sweeps.profile_from_row(row, alpha=0.9)  # the SolutionProfile the chapters compute from this row
        mine = [r for r in records if (r["task"], int(r["n_hidden"]), int(r["seed"])) == (row["task"],
                row["n_hidden"], row["seed"])]  # fmt: skip
        assert [r["ablation"] for r in mine] == blocks
        for r in mine:
            b = r["ablation"]
            assert int(r["seed"]) == profile.seed and int(r["n_R"]) == profile.n_R
            assert float(r["alpha"]) == profile.alpha and r["construction"] == "dense_orthogonal"
            assert float(r["fvu_full"]) == profile.fvu_full and float(r["min_gap"]) == profile.min_gap
            assert float(r["removed_mass"]) == profile.mass[b]
            if b in profile.empty:  # removes nothing: no FVU, ΔFVU or S_ΔT
                assert r["empty"] == "true" and r["fvu"] == r["delta_fvu"] == r["s_delta_t"] == ""
            else:  # full precision: the same floats, bit for bit
                assert r["empty"] == "false"
                assert float(r["fvu"]) == profile.fvu[b] and float(r["delta_fvu"]) == profile.dfvu[b]
                assert float(r["s_delta_t"]) == profile.sens[b]


def test_no_rows_is_a_header():
    assert profiles_text([]) == ",".join(PROFILE_COLUMNS) + "\n"
