"""A decision (``lib.core.verdicts.Decision``) in words: the verdict, and the evidence that decided it.

An undecided verdict says which part is undecided, the statement (k of n solutions straddle its line) or the value
(our interval crosses an edge of the paper's tolerance), whether the paper's value lies inside our interval
("consistent with the paper"), and what would decide it (how many solutions at the observed rate or spread).
A value's evidence always gives the n it is over.
"""

from __future__ import annotations

import math

from lib.core.verdicts import VERDICTS, Decision, wilson


def _g(x: float) -> str:
    return f"{x:.3g}"


def consistent(d: Decision) -> bool:
    """Whether the paper's value lies inside our interval (False where there is no interval)."""
    if d.interval is None or d.paper_number is None or not math.isfinite(d.interval[0]):
        return False
    return d.interval[0] <= d.paper_number <= d.interval[1]


def statement_words(d: Decision) -> str:
    """The per-solution statement's part: "holds in k of n", or undecided with what would decide it."""
    if d.n is None and d.kind_band is not None:  # the statement is "of the paper's kind": our interval in a band
        (lo, hi), (a, b) = d.interval, d.kind_band
        where = f"our interval {_g(lo)} to {_g(hi)} against the band {_g(a)} to {_g(b)}"
        if d.statement is None:
            return f"whether it is of the paper's kind is undecided ({where} crosses an edge of it)"
        return f"{'it is' if d.statement is True else 'it is not'} of the paper's kind ({where})"
    if d.n is None:
        return "the statement holds" if d.statement is True else ""
    if d.statement is None:
        reach = f"{d.needed} {d.unit} would decide it at this rate" if d.needed else f"no number of {d.unit} decides it"
        return f"the statement is undecided ({d.k} of {d.n}: the interval crosses its line; {reach})"
    return f"the statement {'holds' if d.statement is True else 'fails'} ({d.k} of {d.n})"


def value_words(d: Decision) -> str:
    """The value's part when undecided: how our interval sits against the paper's tolerance, whether it is
    consistent with the paper's value, and how many solutions would decide it."""
    (lo, hi), (a, b) = d.interval, d.band
    how = "is wider than" if hi - lo > b - a else "crosses an edge of"
    text = (
        f"the value is undecided: our 95 % interval over n = {d.value_n} ({_g(lo)} to {_g(hi)}) {how} the paper's "
        f"tolerance ({_g(a)} to {_g(b)})"
    )
    if consistent(d):
        text += ", consistent with the paper (its value inside our interval)"
    if d.value_needed:
        return text + f"; {d.value_needed} solutions would decide it at this spread"
    return text + "; no number of solutions decides it at this spread"


def verdict_text(d: Decision) -> str:
    """The verdict in words: the kind; when undecided, "at n = …", the undecided part and what would decide it."""
    if d.kind != VERDICTS[2]:
        return d.kind
    n = d.n if d.n is not None else d.value_n
    parts = [statement_words(d)]
    if d.value is None:
        parts.append(value_words(d))
    elif d.value is False:
        parts.append("the value differs from the paper's (our interval wholly outside its tolerance)" if d.value_n
                     else "the value has no finite estimate")  # fmt: skip
    return f"undecided at n = {n}: " + "; ".join(p for p in parts if p)


def short_verdict(d: Decision) -> str:
    """The verdict in a few words, for a summary line or a table beside the evidence: the kind, and for an
    undecided one its n and its undecided part (the statement, the value, or whether it is of the paper's kind);
    :func:`verdict_text` gives it in full."""
    if d.kind != VERDICTS[2]:
        return d.kind
    n = d.n if d.n is not None else d.value_n
    parts = ["its statement" if d.n is not None else "whether it is of the paper's kind"] if d.statement is None else []
    parts += ["its value"] if d.value is None else []
    return f"undecided at n = {n} ({' and '.join(parts)})"


def evidence_text(d: Decision) -> str:
    """k of n with its Wilson interval (per-solution statements), else our interval and its n (values), else "—"."""
    if d.n:
        lo, hi = wilson(d.k, d.n)
        return f"{d.k} of {d.n} (95% CI {lo:.2f}–{hi:.2f})"
    if d.interval is not None and math.isfinite(d.interval[0]) and d.interval[0] != d.interval[1]:
        return f"95% interval {_g(d.interval[0])} to {_g(d.interval[1])} over n = {d.value_n}"
    return "—"
