"""Every claim's computed verdict is the one the book expects (``lib/papers``, ``EXPECTED``, with its reason).

A verdict that changes (a claim that starts or stops reproducing) fails here, naming the claim: look at it, then
either fix the code or record the new verdict with its reason. Every expected claim must also be in the build.
"""

from __future__ import annotations

import json

import pytest

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


@pytest.mark.parametrize("claim_id", sorted(EXPECTED))
def test_verdict_is_the_expected_one(built_claims, claim_id):
    assert claim_id in built_claims, f"claim {claim_id} is expected (lib/papers) but no chapter published it"
    got, (want, reason) = built_claims[claim_id], EXPECTED[claim_id]
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
