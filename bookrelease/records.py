"""What a book run leaves beside its notebooks for the pages and the release, written once its chapters executed.

- ``provenance.json``: the arithmetic the kernels computed with (read in a process started as they are, ``python -m
  bookrun.arithmetic``) and the book's version and commit (:mod:`bookrelease.release`);
- ``reference_diff.json``: this build against the published reference (``published/``, ``lib.core.reference``);
- ``<book tree>/_runtimes.md``: the appendix's runtime table (:mod:`bookrelease.costs`);
- the downloads the pages offer (:mod:`bookrelease.downloads`).

The executor calls :func:`write` at the end of every run of the book's tree (never of a scratch run).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from lib.core import reference
from lib.core.paths import REPO_ROOT, atomic_write_bytes, atomic_write_json

from . import costs as cost_table
from . import downloads, release


def write(build: Path, results: dict, *, manifest: dict, out_dir: Path, out_root: Path, executed: list[str],
          env: dict[str, str], order: list[str], costs: dict) -> list[str]:  # fmt: skip
    """Write the records of a book run (``executed``: the chapters it executed; ``env``: the kernels' environment;
    ``order``: the pages' names in the book's order; ``costs``: the executor's record of each chapter's cost,
    ``bookrun.timings``); the lines that say how the build compares with the reference and what was written."""
    line = provenance(build, results, env)
    titles = cost_table.chapter_titles(manifest, [*order, *(s for s in manifest if s not in order)])
    atomic_write_bytes(out_dir / cost_table.PAGE, cost_table.section(build, titles, costs).encode())
    return [line, *downloads.write(build, out_root, executed, env, downloads.PROFILES_CHAPTER in manifest)]


def provenance(build: Path, results: dict, env: dict[str, str]) -> str:
    """Write ``provenance.json`` (the arithmetic, read in a process started as the kernels are, with the version and
    commit) and ``reference_diff.json`` (this build against ``published/``); one line saying how the build compares."""
    done = subprocess.run([sys.executable, "-m", "bookrun.arithmetic"], env=env, capture_output=True, text=True,
                          cwd=REPO_ROOT)  # fmt: skip
    try:
        record = {**json.loads(done.stdout), **release.record()}
    except ValueError:
        return f"provenance: could not be read ({done.stderr.strip()[-300:]})"
    atomic_write_json(build / "provenance.json", record)
    try:
        published = reference.load()
    except FileNotFoundError as exc:
        return f"reference: {exc}"
    claims = json.loads((build / "claims.json").read_text())
    diff = reference.compare(results, claims, published)
    bitwise, why = reference.comparable(record, published["provenance"])
    causes = reference.reasons(record, published["provenance"])
    commits = {"build": record.get("commit"), "reference": published["provenance"].get("commit")}
    atomic_write_json(build / "reference_diff.json", {"bitwise_required": bitwise, "why": why, "reasons": causes,
                                                      "commits": commits, **diff})  # fmt: skip
    head = reference.summary(diff, first=0)
    return f"reference ({'must be equal bit for bit' if bitwise else 'compared, not required: ' + why}): {head}"
