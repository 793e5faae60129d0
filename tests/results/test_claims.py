"""Every verdict of the build follows the protocol, agrees with the published reference where both are decided, and
is not contradicted by the second set of solutions.

1. *The protocol, re-implemented here* from the scorecard's wording (``book/scorecard.md``), independently of
   ``lib.core.claims``: each claim of ``_build/claims.json`` is decided again from its inputs alone (its per-solution
   judgements and line, or its per-solution values, statistic, the paper's number, tolerance and in-kind band, or its
   booleans) and must get the verdict the chapter published.
2. *The published reference* (``published/claims.json``, the issue "One book on every machine"): no decided verdict
   of the build may differ from a decided published one, on any machine. A claim that is undecided on one side is not
   a contradiction: how many solutions decide it is part of its evidence. A verdict changes only with a new published
   reference whose commit says why (``make publish WHY=...``, logged in ``published/changes.json``).
3. *The second set* (seeds from 10, chapters ``copy_task`` and ``many_solutions``): a decided verdict that the second
   set decides otherwise is a failure of the rule.
"""

from __future__ import annotations

import json
import math
from statistics import NormalDist

import pytest
from scipy import stats

from lib.core import reference
from lib.core.paths import build_dir

pytestmark = pytest.mark.results
OPEN = ("undecided", "not testable here")  # verdicts that decide nothing


@pytest.fixture(scope="module")
def built_claims() -> dict:
    path = build_dir() / "claims.json"
    if not path.is_file():
        pytest.fail(f"{path} is missing: execute the book first (`make execute`)")
    return json.loads(path.read_text())


@pytest.fixture(scope="module")
def published() -> dict:
    return reference.load()


@pytest.fixture(scope="module")
def second(results) -> dict:
    """Claim id → its record on the second set of solutions (seeds from 10)."""
    out = {}
    for chapter in ("copy_task", "many_solutions"):
        out |= json.loads(results[f"{chapter}::second_set_claims"])
    return out


# --------------------------------------------------------------------------------------- the protocol, again
def score_interval(k: float, n: int) -> tuple[float, float]:
    """The 95 % Wilson score interval, from its textbook form (the roots of |p̂ − p| = z·sqrt(p(1 − p)/n))."""
    z = NormalDist().inv_cdf(0.975)
    a = 1 + z * z / n
    b = -(2 * k / n + z * z / n)
    c = (k / n) ** 2
    disc = math.sqrt(max(b * b - 4 * a * c, 0.0))
    return (-b - disc) / (2 * a), (-b + disc) / (2 * a)


def our_interval(values: list, statistic: str, support: list | None = None) -> tuple[float, float]:
    v = [x for x in values if x is not None and math.isfinite(x)]
    if not v:
        return math.nan, math.nan
    if len(v) == 1:
        return v[0], v[0]
    n, mean, sd = len(v), sum(v) / len(v), stats.tstd(v)
    scale = 1 / math.sqrt(n) if statistic == "mean" else math.sqrt(1 + 1 / n)
    half = stats.t.ppf(0.975, n - 1) * sd * scale
    lo, hi = mean - half, mean + half
    if support:  # what the quantity cannot take is no part of its interval
        lo = lo if support[0] is None else max(lo, support[0])
        hi = hi if support[1] is None else min(hi, support[1])
    return lo, hi


def inside(lo: float, hi: float, a: float, b: float) -> bool | None:
    """True inside [a, b], False wholly outside (or undefined), None across an edge."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return False
    if lo >= a and hi <= b:
        return True
    if hi < a or lo > b:
        return False
    return None


def expected_kind(rec: dict) -> str:
    value = kind = "absent"
    if rec.get("statistic"):
        sample = [rec["ours"]] if rec["statistic"] == "model" else rec["ours_values"]
        lo, hi = our_interval(sample, rec["statistic"], rec.get("support"))
        p, tol = rec["paper_number"], rec["tolerance"]
        value = inside(lo, hi, p - tol, p + tol)
        if rec.get("kind_band"):
            kind = inside(lo, hi, *rec["kind_band"])
    elif rec.get("matches") is not None:
        value = rec["matches"]
    if rec.get("per_solution") is not None:
        k, n = sum(rec["per_solution"]), len(rec["per_solution"])
        lo, hi = score_interval(k, n) if n else (0.0, 1.0)
        statement = True if lo > rec["line"] else False if hi < rec["line"] else None
    elif rec.get("holds") is not None:
        statement = rec["holds"]
    else:
        statement = kind
    if statement == "absent" and value == "absent":
        return "not testable here"
    if statement is False:
        return "not reproduced"
    if statement is None or value is None:
        return "undecided"
    if value == "absent" or value is True:
        return "reproduced"
    return "reproduced in kind, values differ" if statement is True else "not reproduced"


def test_the_reimplementation_decides_textbook_cases():
    assert score_interval(3, 10) == pytest.approx((0.1078, 0.6032), abs=1e-4)
    base = {"statement": "s", "matches": None, "holds": None, "statistic": None, "per_solution": None}
    assert expected_kind({**base, "per_solution": [True] * 9 + [False], "line": 0.5}) == "reproduced"
    assert expected_kind({**base, "per_solution": [True] * 6 + [False] * 4, "line": 0.5}) == "undecided"
    rec = {**base, "statistic": "mean", "ours_values": [3.0, 3.1, 2.9], "paper_number": 2.08, "tolerance": 0.465}
    assert expected_kind({**rec, "kind_band": [2.08 / 3, 6.24]}) == "reproduced in kind, values differ"


@pytest.mark.parametrize("claim_id", sorted(json.loads((reference.PUBLISHED / "claims.json").read_text())))
def test_verdict_follows_the_protocol(built_claims, claim_id):
    assert claim_id in built_claims, f"{claim_id} is in published/claims.json but no chapter of this build published it"
    rec = built_claims[claim_id]
    want = expected_kind(rec)
    assert rec["kind"] == want, (
        f"{claim_id} ({rec['chapter']}): the chapter published {rec['verdict']!r}, the protocol gives {want!r}; "
        f"evidence {rec['robustness']}; criterion: {rec['criterion']}"
    )


def test_every_built_claim_is_published(built_claims, published):
    new = sorted(set(built_claims) - set(published["claims"]))
    assert not new, f"claims without a published verdict: {new}; publish them (make publish WHY=...)"


def test_no_decided_verdict_differs_from_the_published_one(built_claims, published):
    moved = {
        cid: (published["claims"][cid]["verdict"], rec["verdict"])
        for cid, rec in built_claims.items()
        if cid in published["claims"]
        and rec["kind"] not in OPEN
        and published["claims"][cid]["kind"] not in OPEN
        and rec["kind"] != published["claims"][cid]["kind"]
    }
    assert not moved, f"decided verdicts that differ from the published reference (published → here): {moved}"


def test_the_second_set_contradicts_no_decided_verdict(built_claims, second):
    assert second, "many_solutions published no claims of the second set"
    contradicted = {
        cid: (built_claims[cid]["verdict"], rec["verdict"])
        for cid, rec in second.items()
        if built_claims[cid]["kind"] not in OPEN
        and rec["kind"] not in OPEN
        and rec["kind"] != built_claims[cid]["kind"]
    }
    assert not contradicted, f"decided verdicts the second set of solutions decides otherwise: {contradicted}"


def test_the_changes_log_ends_at_the_published_verdicts(published):
    path = reference.PUBLISHED / "changes.json"
    log = json.loads(path.read_text()) if path.is_file() else []
    last = {}
    for change in log:
        assert change["why"].strip(), f"a change of {change['claim']} without a reason: {change}"
        last[change["claim"]] = change["to"]
    wrong = {c: (to, published["claims"].get(c, {}).get("kind", "(removed)")) for c, to in last.items()
             if to != published["claims"].get(c, {}).get("kind", "(removed)")}  # fmt: skip
    assert not wrong, f"claims whose last logged change is not their published verdict (logged, published): {wrong}"


def test_the_scorecard_counts_every_claim(results, built_claims):
    kinds = [c["kind"] for c in built_claims.values()]
    assert results["scorecard::n_claims"] == len(built_claims)
    named = {"n_reproduced": "reproduced", "n_undecided": "undecided", "n_not_reproduced": "not reproduced",
             "n_in_kind": "reproduced in kind, values differ"}  # fmt: skip
    for key, kind in named.items():
        assert results[f"scorecard::{key}"] == kinds.count(kind), key
    groups = [c["group"] for c in built_claims.values()]
    for group in ("finding", "rerun", "identity"):
        assert results[f"scorecard::n_claims_{group}"] == groups.count(group), group
