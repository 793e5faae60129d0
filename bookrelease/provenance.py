"""The appendix's record of a build, as MyST: the arithmetic its kernels computed with (``_build/provenance.json``)
and what moved against the published reference (``_build/reference_diff.json``). ``scripts/book_html.py`` puts it
in place of :data:`MARKER` on the *Reproducibility* page when the HTML is built, so the page always describes the
build it belongs to."""

from __future__ import annotations

import json
from pathlib import Path

from lib.core import arithmetic, reference
from lib.core.tables import names_as_code, paths_as_code

from . import release

MARKER = "<!-- build-record -->"


def _read(path: Path) -> dict | None:
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def _number(x) -> str:
    return f"{x:.3g}" if isinstance(x, float) else str(x)


def _vendor_answer(answer: dict | None, cpu: dict) -> str:
    """One cell: whether the kernels answered oneMKL's vendor check (``lib/core/mkl_vendor.c``) and why."""
    if answer is None:
        return "not recorded (a build before the vendor answer)"
    if answer.get("loaded"):
        return f"answered by the book (`lib/core/mkl_vendor.c`, loaded before torch) on this {cpu['vendor']} CPU"
    if not answer.get("needed"):
        return "not answered, not needed (an Intel CPU, or the pins are not in force)"
    return f"not answered: {paths_as_code(answer.get('why', ''))}"


#: Where the findings page says how this build stands against the published reference (``scripts/book_html.py``).
STANDING_MARKER = "<!-- build-standing -->"


def standing_of(diff: dict) -> str:
    """The build's standing (``lib.core.reference.standing_text``) from its ``reference_diff.json`` record."""
    try:
        version = reference.load()["provenance"].get("version", "unknown")
    except FileNotFoundError:
        version = "unknown"
    return reference.standing_text(diff, version)


def standing(build: Path) -> str:
    """The findings page's paragraph: the same words as the appendix's, from ``reference_diff.json``."""
    diff = _read(Path(build) / "reference_diff.json")
    if diff is None:
        return ("*No comparison with the published reference is recorded: the published reference (`published/`) "
                "is missing or the book was not executed since.*")  # fmt: skip
    return standing_of(diff)


def section(build: Path) -> str:
    """The MyST text that replaces :data:`MARKER`: this build's arithmetic, then its comparison with the reference."""
    prov = _read(Path(build) / "provenance.json")
    if prov is None:
        return "*No record of the build's arithmetic: execute the book (`make book`) to write it.*\n"
    cpu, force = prov["cpu"], prov["in_force"]
    lines = ["### This build's arithmetic", ""]
    if prov["pinned"]:
        lines.append(f"The chapters were computed with the book's pinned arithmetic (pin set `{prov['pin_version']}`): "
                     "the libraries ran the kernels the pins select (whether its numbers equal the published "
                     "reference bit for bit is below).")  # fmt: skip
    else:
        lines.append("The chapters were **not** computed with the book's pinned arithmetic, so their last bits (and "
                     "through training, some solutions) are this machine's:")  # fmt: skip
        lines += [""] + [f"- {names_as_code(paths_as_code(d))}" for d in prov["departures"]]
    openblas = [p for p in force["blas"] if p.get("internal_api") == "openblas"]
    blas = "; ".join(
        f"OpenBLAS {p['version']} ({p['architecture']} kernels, {p['num_threads']} thread)" for p in openblas
    )
    dispatch_off = ", ".join(f"`{group}`" for group in force["numpy_dispatch_off"])
    lines += [
        "",
        "| what | in this build |",
        "|---|---|",
        *([f"| the book | {release.describe(prov)} |"] if "version" in prov else []),
        f"| CPU | {cpu['model']} ({cpu['vendor']}, `{cpu['machine']}`; {', '.join(f'`{f}`' for f in cpu['flags'])}) |",
        f"| libraries | torch {prov['versions']['torch']}, numpy {prov['versions']['numpy']}, scipy "
        f"{prov['versions']['scipy']}, Python {prov['python']} |",
        f"| torch's BLAS and LAPACK | {prov['torch_blas']}; branch in force {force['mkl_branch']} |",
        f"| MKL's vendor check | {_vendor_answer(force.get('vendor_answer'), cpu)} |",
        f"| torch's own kernels | `{force['aten_capability']}`, {force['torch_threads']} thread |",
        f"| numpy's and scipy's BLAS | {blas} |",
        f"| numpy's SIMD loops | dispatch groups off: {dispatch_off or 'none'} |",
        "",
        "The pins (`lib/core/arithmetic.py`), each with the measurement that showed it moves the book's bits:",
        "",
        "| variable | pinned value | in this build | why |",
        "|---|---|---|---|",
    ]
    for key, value in prov["pins"].items():
        here = force["environment"].get(key)
        lines.append(f"| `{key}` | `{value}` | {'as pinned' if here == value else f'`{here}`'} | "
                     f"{names_as_code(paths_as_code(arithmetic.WHY.get(key, '')))} |")  # fmt: skip
    diff = _read(Path(build) / "reference_diff.json")
    lines += ["", "### Against the published reference", ""]
    if diff is None:
        lines.append("*No comparison recorded: the published reference (`published/`) is missing or the book was not "
                     "executed since.*")  # fmt: skip
        return "\n".join(lines) + "\n"
    moved, verdicts = diff["moved"], diff["verdicts_moved"]
    if diff["bitwise_required"]:
        rule = "must equal it bit for bit"
    elif not prov["pinned"]:
        rule = "is compared with it, not required to equal it (its arithmetic is not the book's: above)"
    else:
        rule = f"is compared with it, not required to equal it ({diff['why']})"
    lines.append(f"{standing_of(diff)} This build {rule}; the {diff['exempt']} timings are not compared.")
    if moved:
        lines += ["", ":::{dropdown} The chapters whose values moved (table)", "",
                  "| chapter | values compared | moved |", "|---|---|---|"]  # fmt: skip
        lines += [f"| `{stem}` | {row['compared']} | {row['moved']} |" for stem, row in diff["by_chapter"].items()
                  if row["moved"]]  # fmt: skip
        lines += ["", ":::"]
    if verdicts:
        lines += ["", "| claim | chapter | published verdict | this build |", "|---|---|---|---|"]
        lines += [f"| `{v['claim']}` | `{v['chapter']}` | {v['published']} | {v['built']} |" for v in verdicts]
    return "\n".join(lines) + "\n"
