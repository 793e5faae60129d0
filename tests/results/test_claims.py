"""Every claim's computed verdict is the published one (``published/claims.json``), and the book's record of
expected verdicts with their reasons (``lib/papers``, ``EXPECTED``) is the published reference's.

On a build whose arithmetic is the reference's (pinned, ``lib.core.reference.comparable``), a verdict that changes (a
claim that starts or stops reproducing) fails here, naming the claim: look at it, then either fix the code or publish
a new reference (``make publish``) in a commit that says why, with the reason in ``EXPECTED``. Elsewhere a verdict may
move with the CPU's rounding; the test then reports which moved (the appendix shows them too) instead of failing.
Every expected claim must be in the build.
"""

from __future__ import annotations

import json

import pytest

from lib.core import reference
from lib.core.paths import build_dir
from lib.papers import schur_ablation, symmetry_lifting

pytestmark = pytest.mark.results
EXPECTED = {**schur_ablation.EXPECTED, **symmetry_lifting.EXPECTED}


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
def bitwise(published) -> tuple[bool, str]:
    path = build_dir() / "provenance.json"
    if not path.is_file():
        pytest.fail(f"{path} is missing: execute the book first (`make execute`)")
    return reference.comparable(json.loads(path.read_text()), published["provenance"])


@pytest.mark.parametrize("claim_id", sorted(EXPECTED))
def test_expected_verdict_is_the_published_one(published, claim_id):
    assert claim_id in published["claims"], f"{claim_id} is expected (lib/papers) but not in published/claims.json"
    want, reason = EXPECTED[claim_id]
    assert published["claims"][claim_id]["kind"] == want, (
        f"{claim_id}: lib/papers expects {want!r} ({reason}), published/claims.json has "
        f"{published['claims'][claim_id]['verdict']!r}: publish and record the verdict together, saying why"
    )


@pytest.mark.parametrize("claim_id", sorted(EXPECTED))
def test_verdict_is_the_published_one(built_claims, published, bitwise, claim_id):
    assert claim_id in built_claims, f"claim {claim_id} is expected (lib/papers) but no chapter published it"
    got, (want, reason) = built_claims[claim_id], EXPECTED[claim_id]
    if not bitwise[0] and got["kind"] != published["claims"][claim_id]["kind"]:
        pytest.skip(f"{claim_id}: verdict {got['verdict']!r} here, {want!r} published; not required ({bitwise[1]})")
    assert got["kind"] == want, (
        f"{claim_id} ({got['chapter']}): verdict {got['verdict']!r}, expected {want!r}"
        + (f" ({reason})" if reason else "")
        + f"; paper {got['paper_value']!r}, ours {got['ours']!r}, criterion: {got['criterion']}"
    )


def test_every_published_claim_has_an_expected_verdict(built_claims):
    unexpected = sorted(set(built_claims) - set(EXPECTED))
    assert not unexpected, f"claims without an expected verdict in lib/papers: {unexpected}"


def test_the_scorecard_counts_every_claim(results, built_claims):
    assert results["scorecard::n_claims"] == len(built_claims)
    assert results["scorecard::n_missing"] == 0
    kinds = [c["kind"] for c in built_claims.values()]
    assert results["scorecard::n_fragile"] == kinds.count("fragile")
    assert results["scorecard::n_reproduced"] == kinds.count("reproduced")
