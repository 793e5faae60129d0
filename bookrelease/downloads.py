"""The files the book's pages offer for download, written beside the executed book after every execution.

``<build>/executed/downloads/`` (:data:`FOLDER`, beside ``executed/book/``) holds:

- ``claims.json``: the build's ``claims.json``, every claim's record (``bookrun.results``);
- ``scorecard.csv``: the scorecard as CSV (``lib.core.scorecard_csv``; also written to ``<build>/scorecard.csv``);
- ``solution_profiles.csv``: the single-block ablation profile of every solution the chapter *Many solutions*
  profiles (its ``SolutionSweep`` as the book runs it), read from the results table it keeps
  (``lib.paper_a.task_analysis.sweeps``) and written by ``lib.core.profiles_csv``. The rows are found by their keys,
  which carry the arithmetic, so they are looked up in a process started as the kernels are
  (``python -m bookrelease.downloads OUT``), and only when that chapter executed or the file is older than its notebook.

The pages link them with MyST's ``{download}`` role (``</downloads/<file>>``, from the executed tree's root), which
copies them into the HTML (``_build/html/_downloads/``), so they open offline and travel with ``make dist``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from lib.core.paths import REPO_ROOT, atomic_write_bytes

FOLDER = "downloads"
CLAIMS, SCORECARD, PROFILES = "claims.json", "scorecard.csv", "solution_profiles.csv"
#: The chapter whose results table holds the profiles.
PROFILES_CHAPTER = "many_solutions"


def book_profile_rows() -> list[dict]:
    """The results-table rows of every solution *Many solutions* profiles as the book runs it (its defaults), in
    its order, each once; a solution without a row (the chapter not executed) is left out."""
    from lib.core.results_table import ResultsTable
    from lib.paper_a.chapters.many_solutions import SolutionSweep
    from lib.paper_a.task_analysis import sweeps

    sweep = SolutionSweep()
    keys = [ResultsTable.key(sweeps.row_config(c, sweep.alpha), sweeps.ROW_CODE) for c in sweep.configs()]
    found = {row["key"]: row for row in ResultsTable(sweeps.table_path()).read()}
    return [found[k] for k in dict.fromkeys(keys) if k in found]


def write_profiles(out: Path) -> int:
    """Write the book's profiles CSV to ``out``; the number of solutions in it."""
    from lib.core.profiles_csv import profiles_text

    rows = book_profile_rows()
    atomic_write_bytes(Path(out), profiles_text(rows).encode())
    return len(rows)


def write(build: Path, tree: Path, executed: list[str], env: dict[str, str], with_profiles: bool = True) -> list[str]:
    """Write the downloads into ``tree/downloads`` (``tree``: the executed book's root, ``<build>/executed``) from
    ``build``; ``executed``: the chapters this run executed; ``env``: the kernels' environment; ``with_profiles``:
    whether the book has the chapter of the profiles (else the profiles file is a header). Lines to print."""
    from lib.core.profiles_csv import profiles_text
    from lib.core.scorecard_csv import csv_text

    folder = Path(tree) / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    claims_path = Path(build) / "claims.json"
    claims = claims_path.read_bytes() if claims_path.is_file() else b"{}\n"
    atomic_write_bytes(folder / CLAIMS, claims)
    scorecard = csv_text(json.loads(claims).values()).encode()
    atomic_write_bytes(folder / SCORECARD, scorecard)
    atomic_write_bytes(Path(build) / SCORECARD, scorecard)
    lines = []
    profiles, notebook = folder / PROFILES, Path(tree) / "book" / f"{PROFILES_CHAPTER}.ipynb"
    if not with_profiles:
        atomic_write_bytes(profiles, profiles_text([]).encode())
        return lines
    stale = (not profiles.is_file() or PROFILES_CHAPTER in executed
             or (notebook.is_file() and notebook.stat().st_mtime > profiles.stat().st_mtime))  # fmt: skip
    if stale:
        done = subprocess.run([sys.executable, "-m", "bookrelease.downloads", str(profiles)], env=env, cwd=REPO_ROOT,
                              capture_output=True, text=True)  # fmt: skip
        if done.returncode != 0 or not profiles.is_file():
            atomic_write_bytes(profiles, profiles_text([]).encode())
            lines.append(f"downloads: the solution profiles could not be read ({done.stderr.strip()[-300:]}); "
                         f"{profiles.name} holds no solution")  # fmt: skip
        else:
            lines.append(f"downloads: {done.stdout.strip()}")
    return lines


def main(argv: list[str]) -> int:
    """``python -m bookrelease.downloads OUT``: the book's profiles CSV to ``OUT`` (in the kernels' environment)."""
    if len(argv) != 1:
        print("usage: python -m bookrelease.downloads OUT.csv", file=sys.stderr)
        return 2
    n = write_profiles(Path(argv[0]))
    print(f"{n} solutions' profiles in {argv[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
