"""Claims of the two papers: what a paper states, what the book computes, and the inputs of the verdict.

A :class:`Claim` records what a paper states (``statement``, ``paper_value``, its section), what the book computes
(``ours``, the per-solution values or judgements) and the inputs of the decision: never the verdict, which
``lib.core.verdicts`` computes from those inputs alone (its docstring states the protocol; the scorecard page states
it too). The thresholds are the lines of ``lib.core.lines``.

A chapter publishes its claims with :func:`publish` (per claim the glue ``claim_<id>_verdict``, ``claim_<id>_robust``
and ``claim_<id>``, the whole record as JSON); the scorecard reads them back (``bookrun.claim_records``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any

from lib.core.lines import LINES, line
from lib.core.verdict_text import evidence_text, short_verdict, verdict_text
from lib.core.verdicts import STATISTICS, VERDICTS, Decision, decide

#: The scorecard's three groups of claims: the papers' findings, deterministic re-runs of the authors' own
#: configuration (the same data, seed and settings give the same digits), identities of the book's own code.
GROUPS = {
    "finding": "the papers' findings",
    "rerun": "deterministic re-runs of the authors' configuration",
    "identity": "identities of the book's own code",
}
#: The first seed of every second set of solutions: a chapter that computes its claims again on a disjoint set of
#: solutions (to show whether a verdict holds on other draws) trains them from this seed on.
SECOND_SET_START = 10
#: The glue name under which such a chapter publishes them: {claim id: record} in JSON.
SECOND_SET_GLUE = "second_set_claims"
_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


def _plain(value: Any) -> Any:
    """A JSON-friendly plain value (tuples → lists, numpy scalars → Python, NaN → None)."""
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, bool | str) or value is None:
        return value
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return value


@dataclass(frozen=True)
class Claim:
    """One claim of a paper and the inputs of its verdict (see the module docstring for the protocol).

    ``per_solution`` with ``line`` (a name of :data:`LINES`): a per-solution statement. ``statistic`` with
    ``ours_values`` (``ours`` for "model"), ``paper_number``, ``tolerance`` and optionally ``kind_band``: a value
    decided by its interval. ``matches`` / ``holds``: the booleans of one deterministic computation. ``learned``
    marks the solutions of ``ours_values`` that learned their task (:data:`LINES` ``learned_fvu``). ``group``: one of
    :data:`GROUPS`. ``support``: the values the quantity can take ((0, None): not negative; (0, 1): a share), to
    which its interval is cut.
    """

    id: str
    paper: str
    section: str
    statement: str
    paper_value: Any
    ours: Any
    criterion: str
    matches: bool | None = None
    holds: bool | None = None
    ours_sem: float | None = None
    per_solution: tuple[bool, ...] | None = None
    ours_values: tuple[float, ...] | None = None
    link: str = ""
    line: str | None = None
    statistic: str | None = None
    paper_number: float | None = None
    tolerance: float | None = None
    kind_band: tuple[float, float] | None = None
    learned: tuple[bool, ...] | None = None
    group: str = "finding"
    support: tuple[float | None, float | None] | None = None
    unit: str = "solutions"

    def __post_init__(self):
        if not _ID.match(self.id):
            raise ValueError(f"claim id={self.id!r} must be letters, digits and underscores, starting with a letter")
        if self.paper not in ("A", "B"):
            raise ValueError(f"claim {self.id}: paper={self.paper!r} must be 'A' or 'B'")
        if self.group not in GROUPS:
            raise ValueError(f"claim {self.id}: group={self.group!r} must be one of {sorted(GROUPS)}")
        for name in ("matches", "holds"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, bool):
                raise TypeError(f"claim {self.id}: {name}={value!r} must be True, False or None")
        if self.per_solution is not None:
            object.__setattr__(self, "per_solution", tuple(bool(x) for x in self.per_solution))
            if self.line is None or self.holds is not None:
                raise ValueError(f"claim {self.id}: per_solution needs line= (one of {sorted(LINES)}) and no holds=")
            line(self.line)
        if self.statistic is not None:
            if self.statistic not in STATISTICS or self.matches is not None:
                raise ValueError(f"claim {self.id}: statistic={self.statistic!r} must be one of {STATISTICS}, "
                                 "without matches= (the interval decides)")  # fmt: skip
            if self.paper_number is None or self.tolerance is None or not self.tolerance >= 0:
                raise ValueError(f"claim {self.id}: statistic needs paper_number= and tolerance= ≥ 0")
            if self.statistic != "model" and not self.ours_values:
                raise ValueError(f"claim {self.id}: statistic={self.statistic!r} needs ours_values=")
        if self.support is not None:
            lo, hi = self.support
            if self.statistic is None or (lo is not None and hi is not None and not lo < hi):
                raise ValueError(f"claim {self.id}: support={self.support!r} needs statistic= and low < high")
        if self.kind_band is not None and self.statistic is None:
            raise ValueError(f"claim {self.id}: kind_band needs statistic=")
        if self.learned is not None and (self.ours_values is None or len(self.learned) != len(self.ours_values)):
            raise ValueError(f"claim {self.id}: learned= must mark each of ours_values")

    @property
    def decision(self) -> Decision:
        """The protocol's decision (:func:`decide`)."""
        return decide(self.record(computed=False))

    @property
    def kind(self) -> str:
        """The verdict category, one of VERDICTS."""
        return self.decision.kind

    @property
    def verdict(self) -> str:
        """The verdict as the prose states it, e.g. "undecided at n = 10: the statement is undecided (6 of 10: …)"."""
        return verdict_text(self.decision)

    @property
    def verdict_short(self) -> str:
        """The verdict in a few words, e.g. "undecided at n = 10 (its value)" (:func:`short_verdict`)."""
        return short_verdict(self.decision)

    @property
    def robustness(self) -> str:
        """ "k of n (95% CI lo–hi)" for per-solution statements, our interval for values, else "—"."""
        return evidence_text(self.decision)

    def record(self, computed: bool = True) -> dict[str, Any]:
        """Every field as plain JSON-ready values, and (``computed``) the verdict, its kind and its evidence."""
        rec = {k: _plain(v) for k, v in asdict(self).items()}
        rec["line_value"] = LINES[self.line].value if self.line else None
        rec["line"] = rec["line_value"]
        rec["line_name"] = self.line
        return decided(rec) if computed else rec


def publish(claims: Iterable[Claim], glue: Callable[..., Any]) -> list[Claim]:
    """Glue ``claim_<id>_verdict``, ``claim_<id>_robust`` and ``claim_<id>`` (the JSON record) for each claim."""
    claims = list(claims)
    ids = [c.id for c in claims]
    if len(set(ids)) != len(ids):
        raise ValueError(f"claim ids must be unique; repeated: {sorted({i for i in ids if ids.count(i) > 1})}")
    for c in claims:
        rec = c.record()
        glue(f"claim_{c.id}_verdict", rec["verdict"], display=False)
        glue(f"claim_{c.id}_robust", rec["robustness"], display=False)
        glue(f"claim_{c.id}", json.dumps(rec, ensure_ascii=False, sort_keys=True), display=False)
    return claims


def records_from_values(values: dict[str, Any], chapter: str = "") -> list[dict[str, Any]]:
    """The claim records among glued ``values`` ({name: value}): every ``claim_<id>`` holding a JSON record."""
    found = []
    for name, value in values.items():
        if not (name.startswith("claim_") and isinstance(value, str) and value.startswith("{")):
            continue
        rec = json.loads(value)
        if name == f"claim_{rec.get('id')}":
            found.append({**rec, "chapter": chapter})
    return found


def counts(records: Iterable[dict[str, Any]]) -> dict[str, int]:
    """Number of claims per verdict category (every category of VERDICTS, zeros included)."""
    out = dict.fromkeys(VERDICTS, 0)
    for rec in records:
        out[rec["kind"]] += 1
    return out


def section_anchor(title: str) -> str:
    """The HTML id Sphinx gives a section titled ``title`` (docutils' make_id)."""
    from docutils.nodes import make_id

    return make_id(title)


def pool(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """One claim's records on two disjoint sets of solutions (:data:`SECOND_SET_START`) as one record over both:
    the per-solution judgements, values and learned marks joined, then decided again (verdict, kind, evidence).
    A field in one set only is refused (ValueError): its evidence would pass for both sets'."""
    if first["id"] != second["id"]:
        raise ValueError(f"pool: records of two claims ({first['id']!r}, {second['id']!r})")
    out = dict(first)
    for name in ("per_solution", "ours_values", "learned"):
        a, b = first.get(name), second.get(name)
        if (a is None) != (b is None):
            raise ValueError(f"pool: {first['id']}'s {name} is in one set only: nothing to pool it with")
        if a is not None:
            out[name] = list(a) + list(b)
    if first.get("statistic") == "model":
        out["ours_values"] = first.get("ours_values")
    return decided(out)


def decided(rec: dict[str, Any]) -> dict[str, Any]:
    """``rec`` (a claim's record, its inputs) with the protocol's decision added: the verdict in words, its kind, its
    evidence, our interval, k, n, the solutions that would decide it and the statement's and value's decisions."""
    d = decide(rec)
    rec.update(verdict=verdict_text(d), kind=d.kind, robustness=evidence_text(d), interval=_plain(d.interval),
               k=d.k, n=d.n, needed=d.needed, statement_decision=_plain(d.statement),
               value_decision=_plain(d.value))  # fmt: skip
    return rec
