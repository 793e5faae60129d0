"""The executed book against its published reference (``published/``, ``lib.core.reference``).

On a build whose arithmetic is pinned (``lib.core.arithmetic``) with the reference's libraries, every glued value but
the timings and every claim record must equal the reference bit for bit: a difference fails and lists the first keys,
both values and their relative difference. Elsewhere (another vendor's CPU, no AVX2, ``BOOK_ARITHMETIC=native``) the
executor has written what moved to ``_build/reference_diff.json`` and the appendix shows it; the test checks that
record against a fresh comparison and skips the bit-for-bit requirement, saying why.
"""

from __future__ import annotations

import json

import pytest

from lib.core import reference
from lib.core.paths import build_dir

pytestmark = pytest.mark.results


@pytest.fixture(scope="module")
def build() -> dict:
    folder = build_dir()
    missing = [n for n in ("results.json", "claims.json", "provenance.json") if not (folder / n).is_file()]
    if missing:
        pytest.fail(f"{missing} missing in {folder}: execute the book first (`make execute`)")
    return {n: json.loads((folder / f"{n}.json").read_text()) for n in ("results", "claims", "provenance")}


@pytest.fixture(scope="module")
def published() -> dict:
    return reference.load()


def test_a_pinned_build_equals_the_published_reference_bit_for_bit(build, published):
    bitwise, why = reference.comparable(build["provenance"], published["provenance"])
    diff = reference.compare(build["results"], build["claims"], published)
    if not bitwise:
        pytest.skip(f"not required here ({why}); {reference.summary(diff, first=0)}")
    assert reference.agrees(diff), "the build differs from published/ (timings aside):\n" + reference.summary(diff)


def test_the_reference_diff_record_is_the_comparison_of_this_build(build, published):
    path = build_dir() / "reference_diff.json"
    assert path.is_file(), f"{path} missing: the executor writes it after executing the book"
    record = json.loads(path.read_text())
    fresh = reference.compare(build["results"], build["claims"], published)
    assert {k: record[k] for k in fresh} == json.loads(json.dumps(fresh))
    assert record["bitwise_required"] == reference.comparable(build["provenance"], published["provenance"])[0]


def test_the_reference_was_published_from_a_complete_pinned_build(published):
    assert published["provenance"]["pinned"], published["provenance"]["departures"]
    chapters = {k.split("::", 1)[0] for k in published["results"]}
    claim_chapters = {c["chapter"] for c in published["claims"].values()}
    assert claim_chapters <= chapters, f"claims of chapters without values: {claim_chapters - chapters}"
    assert not [k for k in published["results"] if reference.exempt(k)], "a timing was published"
    assert not set(published["pending"]) & chapters, f"published chapters listed as pending: {published['pending']}"
