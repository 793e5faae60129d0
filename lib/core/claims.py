"""Claims of the two papers, each with the paper's value, ours, a criterion and a computed verdict.

A :class:`Claim` records what a paper states (``statement``, ``paper_value``, its section), what the book computes
(``ours`` with ``ours_sem`` and the per-solution values), and two judgements made by the chapter that computes it:

* ``matches``: our value agrees with the paper's within the stated tolerance (None: there is no value to compare);
* ``holds``: the qualitative statement holds for us (None: the book cannot test it);
* ``per_solution``: for claims about trained solutions, whether the statement holds for each one (None otherwise).

**The verdict rule** (one rule for every claim, :attr:`Claim.verdict`):

1. ``holds`` and ``matches`` both None → *not testable here*;
2. with per-solution results, k of n holding: k = 0 → *not reproduced*; k/n < ``ROBUST`` (0.8) → *fragile (holds in
   k of n)*;
3. ``matches`` true (and ``holds`` not false) → *reproduced*; ``holds`` true with nothing to compare → *reproduced*;
4. ``holds`` true, ``matches`` false → *reproduced in kind, values differ*;
5. otherwise → *not reproduced*.

The robustness of a claim with per-solution results is k/n with its 95% Wilson interval (:func:`wilson`).

**Tolerances** come from the paper's printed precision and our spread over solutions, never from our own result:

* a value printed with its last digit in place 10^e matches ours when |ours − paper| ≤ 10^e / 2 + 2·spread
  (:func:`matches_printed`; ``spread`` is our SD over solutions when the paper's value is one solution, our SEM when
  it is a mean, 0 for a single model);
* a paper mean ± SEM matches ours when |Δ| ≤ 2·sqrt(SEM_paper² + SEM_ours²) (:func:`matches_mean_sem`).

A chapter publishes its claims with :func:`publish` (per claim the glue ``claim_<id>_verdict``, ``claim_<id>_robust``
and ``claim_<id>``, the whole record as JSON); the scorecard reads them back with :func:`collect`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from lib.core.tables import Link, Table

#: The verdict categories, in the scorecard's order.
VERDICTS = (
    "reproduced",
    "reproduced in kind, values differ",
    "fragile",
    "not reproduced",
    "not testable here",
)
#: A claim about solutions that holds for a smaller fraction than this is fragile.
ROBUST = 0.8
_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """95% Wilson score interval of a proportion k/n (``n`` ≥ 1)."""
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"k={k}, n={n}: need n ≥ 1 and 0 ≤ k ≤ n")
    p = k / n
    denom = 1 + z**2 / n
    centre = (p + z**2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / denom
    # exact ends where the algebra gives them (at k = 0 and k = n the rounding of centre ± half can miss 0 or 1)
    return 0.0 if k == 0 else max(0.0, centre - half), 1.0 if k == n else min(1.0, centre + half)


def matches_printed(ours: float, paper: float, half_unit: float, spread: float = 0.0) -> bool:
    """|ours − paper| ≤ half a unit of the paper's last printed digit + 2·spread (our spread over solutions)."""
    if half_unit < 0 or spread < 0 or not math.isfinite(spread):
        raise ValueError(f"half_unit={half_unit}, spread={spread}: both must be finite and ≥ 0")
    return bool(math.isfinite(ours) and abs(ours - paper) <= half_unit + 2 * spread)


def matches_mean_sem(ours: float, ours_sem: float, paper: float, paper_sem: float) -> bool:
    """A paper mean ± SEM agrees with ours when |Δ| ≤ 2·sqrt(SEM_paper² + SEM_ours²)."""
    sem = ours_sem if math.isfinite(ours_sem) else 0.0
    return bool(math.isfinite(ours) and abs(ours - paper) <= 2 * math.hypot(paper_sem, sem))


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
    """One claim of a paper and its computed verdict (see the module docstring for the rule)."""

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

    def __post_init__(self):
        if not _ID.match(self.id):
            raise ValueError(f"claim id={self.id!r} must be letters, digits and underscores, starting with a letter")
        if self.paper not in ("A", "B"):
            raise ValueError(f"claim {self.id}: paper={self.paper!r} must be 'A' or 'B'")
        for name in ("matches", "holds"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, bool):
                raise TypeError(f"claim {self.id}: {name}={value!r} must be True, False or None")
        if self.per_solution is not None:
            object.__setattr__(self, "per_solution", tuple(bool(x) for x in self.per_solution))

    @property
    def k_n(self) -> tuple[int, int] | None:
        """(solutions where it holds, solutions judged), or None without per-solution results."""
        if not self.per_solution:
            return None
        return sum(self.per_solution), len(self.per_solution)

    @property
    def kind(self) -> str:
        """The verdict category, one of VERDICTS."""
        if self.holds is None and self.matches is None and self.per_solution is None:
            return "not testable here"
        if self.k_n is not None:
            k, n = self.k_n
            if k == 0:
                return "not reproduced"
            if k / n < ROBUST:
                return "fragile"
        if self.matches and self.holds is not False:
            return "reproduced"
        if self.holds and self.matches is None:
            return "reproduced"
        if self.holds:
            return "reproduced in kind, values differ"
        return "not reproduced"

    @property
    def verdict(self) -> str:
        """The verdict as the prose states it, e.g. "fragile (holds in 3 of 10)"."""
        if self.kind == "fragile":
            k, n = self.k_n
            return f"fragile (holds in {k} of {n})"
        return self.kind

    @property
    def robustness(self) -> str:
        """ "k of n (95% CI lo–hi)" for claims with per-solution results, else "—"."""
        if self.k_n is None:
            return "—"
        k, n = self.k_n
        lo, hi = wilson(k, n)
        return f"{k} of {n} (95% CI {lo:.2f}–{hi:.2f})"

    def record(self) -> dict[str, Any]:
        """Every field, the verdict and the robustness, as plain JSON-ready values."""
        rec = {k: _plain(v) for k, v in asdict(self).items()}
        rec.update(verdict=self.verdict, kind=self.kind, robustness=self.robustness)
        return rec


def publish(claims: Iterable[Claim], glue: Callable[..., Any]) -> list[Claim]:
    """Glue ``claim_<id>_verdict``, ``claim_<id>_robust`` and ``claim_<id>`` (the JSON record) for each claim."""
    claims = list(claims)
    ids = [c.id for c in claims]
    if len(set(ids)) != len(ids):
        raise ValueError(f"claim ids must be unique; repeated: {sorted({i for i in ids if ids.count(i) > 1})}")
    for c in claims:
        glue(f"claim_{c.id}_verdict", c.verdict, display=False)
        glue(f"claim_{c.id}_robust", c.robustness, display=False)
        glue(f"claim_{c.id}", json.dumps(c.record(), ensure_ascii=False, sort_keys=True), display=False)
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


SUMMARY_KEYS = ("n_reproduced", "n_in_kind", "n_fragile", "n_not_reproduced", "n_not_testable")


def summary_values(records: Sequence[dict[str, Any]], expected: Iterable[str]) -> dict[str, int]:
    """The scorecard's counts: claims per verdict, overall (``n_reproduced``…) and per paper (``n_reproduced_A``…),
    ``n_claims``/``n_claims_A``/``n_claims_B``, ``n_expected`` (ids the book expects) and ``n_missing`` (expected,
    not published)."""
    expected = set(expected)
    values = {"n_claims": len(records), "n_expected": len(expected)}
    values["n_missing"] = len(expected - {r["id"] for r in records})
    for key, kind in zip(SUMMARY_KEYS, VERDICTS, strict=True):
        values[key] = counts(records)[kind]
        for paper in ("A", "B"):
            values[f"{key}_{paper}"] = sum(r["kind"] == kind for r in records if r["paper"] == paper)
    for paper in ("A", "B"):
        values[f"n_claims_{paper}"] = sum(r["paper"] == paper for r in records)
    return values


def _shown(value: Any) -> Any:
    """A scorecard cell: numbers with four significant digits, lists joined, None as a dash."""
    if isinstance(value, list):
        return " / ".join(str(_shown(v)) for v in value)
    if isinstance(value, float):
        return f"{value:.4g}"
    return value


def scorecard(records: Iterable[dict[str, Any]], paper: str) -> Table:
    """Paper ``paper``'s claims by section: the statement, the paper's value and ours, verdict, robustness, chapter."""
    rows = sorted((r for r in records if r["paper"] == paper), key=lambda r: (r["section"], r["id"]))
    return Table(
        ("§", "claim", "paper", "ours", "verdict", "robustness", "computed in"),
        tuple(
            (
                r["section"],
                r["statement"],
                _shown(r["paper_value"]),
                _shown(r["ours"]),
                r["verdict"],
                r["robustness"],
                Link(r["chapter"], r["link"] or f"{r['chapter']}.html"),
            )
            for r in rows
        ),
        caption=f"Paper {paper}: every claim, ours beside the paper's, and the computed verdict",
    )
