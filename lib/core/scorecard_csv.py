"""The scorecard as CSV, for use outside the book: one row per claim, its verdict, our value beside the paper's, and
the evidence, values at full precision (the page shows three digits). The executor writes it after every execution
to ``_build/scorecard.csv`` and beside the executed book for the pages' download (``bookrelease.downloads``); ``make
dist`` puts it into the archive."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping
from typing import Any

from lib.core.scorecard import evidence_cell

#: The columns, each a field of the claim record (``lib.core.claims.Claim.record``) but three: ``evidence``, the
#: scorecard's evidence in words (:func:`lib.core.scorecard.evidence_cell`), and ``interval_low``/``interval_high``,
#: the ends of our 95 % interval (empty for a statement about solutions or a deterministic computation).
CSV_COLUMNS = (
    "id", "paper", "group", "section", "statement", "verdict", "kind", "ours", "paper_value", "paper_number",
    "tolerance", "interval_low", "interval_high", "k", "n", "line_name", "line", "evidence", "robustness",
    "criterion", "chapter", "link",
)  # fmt: skip


def _cell(value: Any) -> str:
    """A cell: text as it is, None empty, numbers at full precision, booleans and lists as JSON (``[0.74, 0.75]``)."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def csv_text(records: Iterable[Mapping[str, Any]]) -> str:
    """The scorecard as CSV text (``\\n`` line ends; write it as UTF-8): a header of :data:`CSV_COLUMNS`, then one
    row per claim in the scorecard's order (paper, section, id)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in sorted(records, key=lambda r: (r["paper"], r["section"], r["id"])):
        low, high = r.get("interval") or (None, None)
        row = {**r, "evidence": evidence_cell(r), "interval_low": low, "interval_high": high}
        writer.writerow(_cell(row.get(column)) for column in CSV_COLUMNS)
    return out.getvalue()
