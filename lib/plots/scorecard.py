"""Figures of the scorecard: forest plots of every value claim (ours against the paper's, with our interval and the
paper's tolerance) and of every per-solution claim (k of n with its Wilson interval against its line).

Every function returns a matplotlib ``Figure`` (never shows it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from lib.core.scorecard import BADGES
from lib.core.verdicts import VERDICTS, decide, wilson


def _number(text: Any) -> tuple[float, float] | None:
    """(value, half a unit of the last printed digit) of a paper's printed number, or None if it is not one."""
    if isinstance(text, bool) or text is None:
        return None
    try:
        d = Decimal(str(text).replace("−", "-"))
    except InvalidOperation:
        return None
    if not d.is_finite():
        return None
    return float(d), 0.5 * 10.0 ** d.as_tuple().exponent


def value_rows(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per compared number: label, verdict kind, and (relative to the paper's value) our point, our
    interval, the tolerance band and the in-kind band. Claims with an interval (``statistic``) give one row; a
    deterministic claim gives a row per printed number beside a number of ours. A paper value of zero has no ratio
    and is left out."""
    rows = []
    for r in sorted(records, key=lambda r: r["id"]):
        if r.get("statistic"):
            p = r["paper_number"]
            if not p:
                continue
            lo, hi = decide(r).interval
            kb = r.get("kind_band")
            rows.append({
                "label": r["id"], "kind": r["kind"], "point": (lo + hi) / 2 / p, "lo": lo / p, "hi": hi / p,
                "tol": ((p - r["tolerance"]) / p, (p + r["tolerance"]) / p),
                "kind_band": (kb[0] / p, kb[1] / p) if kb else None,
            })  # fmt: skip
            continue
        papers = r["paper_value"] if isinstance(r["paper_value"], list) else [r["paper_value"]]
        ours = r["ours"] if isinstance(r["ours"], list) else [r["ours"]]
        if len(papers) != len(ours):
            continue
        for j, (pt, o) in enumerate(zip(papers, ours, strict=True)):
            parsed = _number(pt)
            if parsed is None or not parsed[0] or not isinstance(o, int | float) or isinstance(o, bool):
                continue
            p, half = parsed
            label = r["id"] if len(papers) == 1 else f"{r['id']} [{j + 1}]"
            rows.append({
                "label": label, "kind": r["kind"], "point": o / p, "lo": o / p, "hi": o / p,
                "tol": ((p - half) / p, (p + half) / p) if p > 0 else ((p + half) / p, (p - half) / p),
                "kind_band": None,
            })  # fmt: skip
    return rows


def _legend(ax, kinds: Sequence[str]) -> None:
    """The verdicts' colours, above the axes."""
    handles = [plt.Line2D([], [], marker="o", ls="", color=BADGES[k], label=k) for k in VERDICTS if k in kinds]
    ax.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, fontsize=8, frameon=False)


def value_forest(records: Sequence[Mapping[str, Any]]):
    """Ours over the paper's value (log scale), one row per compared number: our 95 % interval (bar) about its centre
    (dot), the paper's tolerance (dark band) and, where the claim has one, the in-kind band (light band, cut at the
    axes); colour: the verdict."""
    rows = value_rows(records)
    ends = [v for r in rows for v in (r["lo"], r["hi"], *r["tol"]) if math.isfinite(v) and v > 0]
    left, right = (min(ends) / 2, max(ends) * 2) if ends else (0.1, 10.0)
    fig, ax = plt.subplots(figsize=(7.6, 1.0 + 0.2 * max(len(rows), 1)))
    for i, row in enumerate(rows):
        y = len(rows) - 1 - i
        for band, shade in ((row["kind_band"], "#dddddd"), (row["tol"], "#999999")):
            if band:
                ax.fill_betweenx([y - 0.4, y + 0.4], max(band[0], left), min(band[1], right), color=shade, lw=0)
        colour = BADGES[row["kind"]]
        lo, hi, pt = (
            min(max(v, left), right) if math.isfinite(v) else np.nan for v in (row["lo"], row["hi"], row["point"])
        )
        ax.plot([lo, hi], [y, y], color=colour, lw=2)
        ax.plot([pt], [y], "o", color=colour, ms=4)
    ax.axvline(1.0, color="black", lw=0.6)
    ax.set_xscale("log")
    ax.set_xlim(left, right)
    ax.set_yticks(range(len(rows)), [r["label"] for r in reversed(rows)], fontsize=7)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_xlabel("ours ÷ the paper's value (log scale)")
    ax.grid(axis="x", lw=0.3, alpha=0.5)
    _legend(ax, {r["kind"] for r in rows})
    fig.tight_layout()
    return fig


#: The colour of a per-solution statement's decision (the verdicts' green, red and amber).
STATEMENT = {True: ("holds", BADGES[VERDICTS[0]]), False: ("fails", BADGES[VERDICTS[3]]),
             None: ("undecided", BADGES[VERDICTS[2]])}  # fmt: skip


def share_forest(records: Sequence[Mapping[str, Any]], second: Mapping[str, Mapping[str, Any]] | None = None):
    """Every per-solution claim: the fraction of solutions where its statement holds (dot) with its 95 % Wilson
    interval (bar) against its line (tick), coloured by the statement's decision (holds, fails, undecided); the
    second set of solutions, where it was run, as an open dot and a dotted bar below."""
    second = second or {}
    rows = sorted((r for r in records if r.get("per_solution") is not None and r.get("n")), key=lambda r: r["id"])
    fig, ax = plt.subplots(figsize=(7.6, 1.0 + 0.32 * max(len(rows), 1)))
    for i, r in enumerate(rows):
        y = len(rows) - 1 - i
        colour = STATEMENT[decide(r).statement][1]
        lo, hi = wilson(r["k"], r["n"])
        ax.plot([lo, hi], [y, y], color=colour, lw=2)
        ax.plot([r["k"] / r["n"]], [y], "o", color=colour, ms=5)
        ax.plot([r["line"]] * 2, [y - 0.35, y + 0.35], color="black", lw=1.2)
        ax.text(1.02, y, f"{r['k']} of {r['n']}", va="center", fontsize=7, transform=ax.get_yaxis_transform())
        s = second.get(r["id"])
        if s and s.get("n"):
            c2 = STATEMENT[decide(s).statement][1]
            lo2, hi2 = wilson(s["k"], s["n"])
            ax.plot([lo2, hi2], [y - 0.25, y - 0.25], color=c2, lw=1, ls=":")
            ax.plot([s["k"] / s["n"]], [y - 0.25], "o", mfc="white", color=c2, ms=4)
    ax.set_xlim(0, 1)
    ax.set_yticks(range(len(rows)), [r["id"] for r in reversed(rows)], fontsize=7)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_xlabel("fraction of solutions where the statement holds (95 % Wilson interval; tick: the line)")
    ax.grid(axis="x", lw=0.3, alpha=0.5)
    handles = [plt.Line2D([], [], marker="o", ls="", color=c, label=w) for w, c in STATEMENT.values()]
    ax.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, fontsize=8, frameon=False)
    fig.tight_layout()
    return fig
