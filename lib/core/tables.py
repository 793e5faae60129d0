"""The book's one table renderer: a small table that shows itself as an HTML table in the book and as text elsewhere.

A chapter displays a ``Table`` as the last expression of a cell; myst-nb renders its ``text/html`` as a real table
(with a caption where the text refers to it), and a terminal or a plain ``print`` shows aligned text. Numbers are
right-aligned and formatted per column, with the precision the prose uses.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any


#: Cell text that reads as a number (also "0.12 ± 0.03", "1.2e-3 → 4.5", "12 [paper 13]", "—"): right-aligned.
@dataclass(frozen=True)
class Link:
    """A table cell that links to ``href`` (a relative URL, e.g. "copy_task.html#functional-classes") in the book."""

    text: str
    href: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Badge:
    """A table cell shown as a badge: ``text`` in white on ``colour`` (a CSS colour dark enough for white text)."""

    text: str
    colour: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Details:
    """A table cell that shows ``text`` and, on demand (a click), ``detail`` below it, with a link to ``href``
    (written ``link``) after it when given."""

    text: str
    detail: str
    href: str = ""
    link: str = ""
    code: str = ""  # an identifier a reader may want (a claim id), shown as inline code before ``detail``

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Code:
    """A table cell shown as inline code: a name a reader types or looks up (a line's name, a parameter)."""

    text: str

    def __str__(self) -> str:
        return self.text


#: Plain-text maths with one subscript (``T_CC``, ``T_C→R``, ``n_R``, ``S_ΔT``, ``W_hh``, ``Acc_rc``): one letter
#: (or a capitalised abbreviation of three), an underscore, a short subscript, as a whole word. The HTML table writes
#: it with a subscript (T<sub>CC</sub>).
_SUBSCRIPT = re.compile(
    r"(?<![\w.])([^\W\d_]|[A-Z][a-z]{2})_((?:(?![²³])[^\W_]){1,5}(?:→[^\W_]{1,3})?)(?=[²³]|[^\w→]|$)"
)


_BACKTICKED = re.compile(r"(`[^`]*`)")


def _outside_code(text: str, change) -> list[tuple[str, bool]]:
    """``text`` cut at its `backticked` spans: (span without backticks, True) for each, (``change(rest)``, False)
    between them."""
    return [
        (part[1:-1], True) if _BACKTICKED.fullmatch(part) else (change(part), False) for part in _BACKTICKED.split(text)
    ]


def subscripted(text: str) -> str:
    """``text`` escaped for HTML, with plain-text maths written with subscripts ("−T_C→R" → "−T<sub>C→R</sub>") and
    each `backticked` name as inline code."""
    maths = lambda part: _SUBSCRIPT.sub(r"\1<sub>\2</sub>", html.escape(part))  # noqa: E731
    return "".join(f"<code>{html.escape(p)}</code>" if code else p for p, code in _outside_code(text, maths))


_TEX = {"→": r"\to ", "Δ": r"\Delta "}


def as_myst(text: str) -> str:
    """``text`` as MyST Markdown for prose (``{glue:md}``): plain-text maths as maths ("S_ΔT(−T_C→R)" →
    "$S_{\\Delta T}$(−$T_{C\\to R}$)"), identifiers as inline code, Markdown's emphasis marks escaped."""
    text = names_as_code(text.replace("*", "\\*"))

    def tex(m: re.Match) -> str:
        sub = "".join(_TEX.get(ch, ch) for ch in m.group(2)).strip()
        return f"${m.group(1)}_{{{sub}}}$"

    return "".join(f"`{p}`" if code else p for p, code in _outside_code(text, lambda part: _SUBSCRIPT.sub(tex, part)))


_NAME = re.compile(r"(?<![\w.`])[^\W_]+(?:_[^\W_]+)+(?![\w`])")


def names_as_code(text: str) -> str:
    """``text`` with each identifier (a word with an underscore that is not one-subscript maths such as ``T_CC``)
    in backticks, so that :func:`subscripted` shows it as inline code."""
    code = lambda m: m.group(0) if _SUBSCRIPT.fullmatch(m.group(0).rstrip("²³")) else f"`{m.group(0)}`"  # noqa: E731
    return "".join(f"`{p}`" if is_code else p for p, is_code in _outside_code(text, lambda part: _NAME.sub(code, part)))


_PATH = re.compile(r"(?<![\w`])((?:[\w.\-]{2,}/)+[\w.\-]*\w)")


def paths_as_code(text: str) -> str:
    """``text`` with each file path or repository (``owner/repo``, ``tasks/three_bit_memory.py``) and then each
    identifier in backticks (inline code for :func:`subscripted`)."""
    return names_as_code(_PATH.sub(r"`\1`", text))


_NUMERIC = re.compile(r"^[\s+\-−–—]*[\d.]")
_DASH = "—"


@dataclass(frozen=True)
class Table:
    """Rows under headers. ``floatfmt`` formats float cells: one format for all columns, or one per column.

    ``caption`` is shown above the table in the book. Cells may be numbers (formatted), ``None`` or NaN (shown as
    "—"), or text (shown as given). Numeric-looking columns are right-aligned.
    """

    headers: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    floatfmt: str | tuple[str, ...] = ".3f"
    caption: str | None = None

    def __post_init__(self):
        width = len(self.headers)
        for i, row in enumerate(self.rows):
            if len(row) != width:
                raise ValueError(f"Table row {i} has {len(row)} cells; the headers {self.headers} need {width}")
        if not isinstance(self.floatfmt, str) and len(self.floatfmt) != width:
            raise ValueError(f"floatfmt={self.floatfmt!r} must be one format or one per column ({width})")

    def _format(self, value: Any, column: int) -> str:
        fmt = self.floatfmt if isinstance(self.floatfmt, str) else self.floatfmt[column]
        if getattr(value, "ndim", None) == 0:  # a numpy scalar: its Python value
            value = value.item()
        if value is None:
            return _DASH
        if isinstance(value, Link | Badge | Details | Code):
            return value.text
        if isinstance(value, list | tuple) or getattr(value, "ndim", 0) == 1:  # several values: each formatted
            return ", ".join(self._format(v, column) for v in value)
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, Integral):
            return f"{int(value):,}" if abs(int(value)) >= 10_000 else str(int(value))
        if isinstance(value, Real):
            return _DASH if not math.isfinite(float(value)) else format(float(value), fmt)
        return str(value)

    def cells(self) -> list[list[str]]:
        """Every body cell as the text the table shows."""
        return [[self._format(v, j) for j, v in enumerate(row)] for row in self.rows]

    def numeric_columns(self) -> list[bool]:
        """Columns whose every non-empty cell reads as a number (these are right-aligned)."""
        cells = self.cells()
        flags = []
        for j in range(len(self.headers)):
            column = [r[j] for r in cells if r[j] not in ("", _DASH)]
            flags.append(bool(column) and all(_NUMERIC.match(c) for c in column))
        return flags

    def __repr__(self) -> str:
        cells = [list(self.headers), *self.cells()]
        right = self.numeric_columns()
        widths = [max(len(r[i]) for r in cells) for i in range(len(self.headers))]
        just = lambda c, w, r: c.rjust(w) if r else c.ljust(w)  # noqa: E731
        lines = ["  ".join(just(c, w, r) for c, w, r in zip(row, widths, right, strict=True)).rstrip() for row in cells]
        lines.insert(1, "  ".join("-" * w for w in widths))
        if self.caption:
            lines.insert(0, self.caption)
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        right = self.numeric_columns()

        def cell(tag: str, text: str, j: int, value: Any = None) -> str:
            style = ' style="text-align: right; font-variant-numeric: tabular-nums"' if right[j] else ""
            inner = subscripted(text)
            if isinstance(value, Code):
                inner = f"<code>{html.escape(text)}</code>"
            elif isinstance(value, Link):
                inner = f'<a href="{html.escape(value.href, quote=True)}">{inner}</a>'
            elif isinstance(value, Badge):
                look = (f"background: {value.colour}; color: #fff; border-radius: 0.3em; padding: 0.05em 0.4em; "
                        "white-space: nowrap")  # fmt: skip
                inner = f'<span class="book-badge" style="{html.escape(look, quote=True)}">{inner}</span>'
            elif isinstance(value, Details):
                more = subscripted(value.detail)
                if value.code:
                    more = f"<code>{html.escape(value.code)}</code> {more}"
                if value.href:
                    more += (
                        f' <a href="{html.escape(value.href, quote=True)}">{html.escape(value.link or value.href)}</a>'
                    )
                inner = f"<details><summary>{inner}</summary>{more}</details>"
            return f"<{tag}{style}>{inner}</{tag}>"

        caption = f"<caption>{subscripted(self.caption)}</caption>" if self.caption else ""
        head = "".join(cell("th", h, j) for j, h in enumerate(self.headers))
        body = "".join(
            "<tr>" + "".join(cell("td", c, j, v) for j, (c, v) in enumerate(zip(r, row, strict=True))) + "</tr>"
            for r, row in zip(self.cells(), self.rows, strict=True)
        )
        return f'<table class="table book-table">{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'

    def transposed(self, corner: str = "") -> Table:
        """The same table with rows and columns swapped (a wide table of few rows reads better tall): the first
        column's cells become the headers, under ``corner``; one float format only."""
        if not isinstance(self.floatfmt, str):
            raise ValueError("transposed() needs one float format for every column")
        heads = (corner, *(str(r[0]) for r in self.rows))
        rows = tuple((h, *(r[j] for r in self.rows)) for j, h in enumerate(self.headers) if j > 0)
        return Table(heads, rows, self.floatfmt, self.caption)

    def records(self) -> list[dict[str, Any]]:
        """Rows as dicts keyed by header."""
        return [dict(zip(self.headers, r, strict=True)) for r in self.rows]


def mean_sem_text(mean: float, sem: float, n: int, digits: int = 3) -> str:
    """ "m ± s" with ``digits`` significant digits for the mean (one fewer for the SEM); "—" when nothing is defined."""
    if n == 0 or not math.isfinite(mean):
        return _DASH
    return f"{mean:.{digits}g} ± {sem:.{max(1, digits - 1)}g}" if n > 1 and math.isfinite(sem) else f"{mean:.{digits}g}"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], floatfmt=".3f", caption: str | None = None) -> Table:
    """Build a ``Table`` from any sequences (lists are turned into the tuples the frozen table holds)."""
    fmt = floatfmt if isinstance(floatfmt, str) else tuple(floatfmt)
    return Table(tuple(headers), tuple(tuple(r) for r in rows), fmt, caption)
