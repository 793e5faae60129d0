"""What executed chapters glued: the values of one notebook, ``results.json`` of a tree, the claim records."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lib.core.claims import SECOND_SET_GLUE, records_from_values
from lib.core.paths import atomic_write_json

_NUMPY_SCALAR = re.compile(r"^np\.(?:float|int|uint|bool_?)\w*\((.*)\)$")


def parse_glued(text: str):
    """The Python value of a glued ``text/plain`` repr (numbers, bools, strings; numpy scalar reprs unwrapped)."""
    text = text.strip()
    match = _NUMPY_SCALAR.match(text)
    if match:
        text = match.group(1)
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None


def glued_values(path: Path) -> dict[str, Any]:
    """``{name: value}`` for every glued scalar of an executed notebook (figures and other objects are skipped)."""
    import nbformat

    nb = nbformat.read(Path(path), as_version=4)
    values = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            data = output.get("data", {})
            if not name or any(k.startswith("application/papermill.record/image") for k in data):
                continue
            text = data.get("application/papermill.record/text/plain")
            if text is None:
                continue
            value = parse_glued(text)
            if isinstance(value, bool | int | float | str):
                values[name] = value
    return values


def collect_results(out_dir: Path, stems: Sequence[str]) -> dict[str, Any]:
    """``{"<stem>::<name>": value}`` of the executed notebooks ``out_dir/<stem>.ipynb`` that exist."""
    results = {}
    for stem in stems:
        path = Path(out_dir) / f"{stem}.ipynb"
        if path.is_file():
            for name, value in glued_values(path).items():
                results[f"{stem}::{name}"] = value
    return results


def claims_of(results: dict[str, Any]) -> dict[str, dict]:
    """``{id: record}`` of every claim record (``lib.core.claims``) among ``{"<stem>::<name>": value}``."""
    by_stem: dict[str, dict[str, Any]] = {}
    for key, value in results.items():
        stem, name = key.split("::", 1)
        by_stem.setdefault(stem, {})[name] = value
    return {rec["id"]: rec for stem, values in by_stem.items() for rec in records_from_values(values, stem)}


def write_results(results_path: Path, out_dir: Path, stems: Sequence[str]) -> dict[str, Any]:
    """Write ``results.json`` (every glued value of the executed tree) and, beside it, ``claims.json``: every claim
    record a chapter glued as ``claim_<id>`` (``lib.core.claims``), with the chapter that computed it."""
    results = collect_results(out_dir, stems)
    atomic_write_json(results_path, results)
    atomic_write_json(results_path.with_name("claims.json"), claims_of(results))
    return results


def claim_records(executed_dir: Path, stems: Sequence[str]) -> list[dict[str, Any]]:
    """Every claim record published by the executed notebooks ``executed_dir/<stem>.ipynb``, in ``stems`` order.

    A missing notebook raises ``FileNotFoundError`` naming it (the scorecard runs after every chapter).
    """
    records = []
    for stem in stems:
        path = Path(executed_dir) / f"{stem}.ipynb"
        if not path.is_file():
            raise FileNotFoundError(f"{path} is missing: execute chapter {stem!r} before the scorecard")
        records.extend(records_from_values(glued_values(path), stem))
    return records


def second_set_records(executed_dir: Path, stems: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Claim id → its record on the second set of solutions, from every executed chapter of ``stems`` that glues
    :data:`lib.core.claims.SECOND_SET_GLUE` (a chapter not executed, or without a second set, adds nothing)."""
    found = {}
    for stem in stems:
        path = Path(executed_dir) / f"{stem}.ipynb"
        if path.is_file():
            found |= json.loads(glued_values(path).get(SECOND_SET_GLUE, "{}"))
    return found


def chapter_answers(stem: str, tree: str = "executed") -> list[dict[str, Any]]:
    """The answers chapter ``stem`` of the executed ``tree`` glued to the questions several chapters answer
    (``lib.core.questions``); none when it has not been executed (a chapter that shows the ledger's answer beside
    its own then says that it is not on record)."""
    from lib.core import questions
    from lib.core.paths import build_dir

    path = build_dir() / tree / "book" / f"{stem}.ipynb"
    return questions.from_glue(glued_values(path)) if path.is_file() else []
