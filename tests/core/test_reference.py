"""The book's published reference (``lib.core.reference``): only timings are exempt, what moved against it by chapter
and verdict, chapters awaiting publication, when a build must match it bit for bit, and the appendix's record of a
build (``bookrelease.provenance``)."""

from __future__ import annotations

import json
import math

import pytest

from lib.core import arithmetic, reference
from tests.core.test_arithmetic import INTEL, _pinned_state


@pytest.mark.parametrize(
    ("key", "is_timing"),
    [("annulus::flow_seconds", True), ("mexican_hat::gram_seconds", True), ("copy_task::train_time", True),
     ("mexican_hat::drift_b", False), ("annulus::n_steps", False), ("task_sine::fvu_full_mean", False)],
)  # fmt: skip
def test_only_timings_are_exempt(key, is_timing):
    assert reference.exempt(key) is is_timing


def test_relative_difference_and_bitwise_sameness():
    assert reference.relative_difference(1.0, 1.0) == 0.0
    assert reference.relative_difference(2.0, 1.0) == 0.5
    assert reference.relative_difference(float("nan"), 1.0) == math.inf
    assert reference.relative_difference("a", "b") is None
    assert not reference.same(1, 1.0) and reference.same(float("nan"), float("nan"))
    assert not reference.same(0.1 + 0.2, 0.3)


def test_the_comparison_lists_what_moved_by_chapter_and_the_verdicts():
    published = {
        "results": {"a::x": 1.0, "a::y": 2.0, "b::z": "10 of 10", "b::gone": 3},
        "claims": {"C1": {"kind": "reproduced", "verdict": "reproduced", "chapter": "b"}},
    }
    results = {"a::x": 1.0, "a::y": 2.0000000000000004, "b::z": "9 of 10", "b::new": 1, "a::flow_seconds": 9.0}
    claims = {"C1": {"kind": "fragile", "verdict": "fragile (holds in 9 of 10)", "chapter": "b"}}
    diff = reference.compare(results, claims, published)
    assert [m["key"] for m in diff["moved"]] == ["a::y", "b::z"]
    assert diff["moved"][0]["relative"] == pytest.approx(2.2e-16, rel=0.01) and diff["moved"][1]["relative"] is None
    assert diff["missing"] == ["b::gone"] and diff["new"] == ["b::new"] and diff["exempt"] == 1
    assert diff["by_chapter"] == {"a": {"compared": 2, "moved": 1}, "b": {"compared": 1, "moved": 1}}
    assert diff["verdicts_moved"] == [{"claim": "C1", "chapter": "b", "published": "reproduced",
                                       "built": "fragile (holds in 9 of 10)"}]  # fmt: skip
    assert not reference.agrees(diff)
    text = reference.summary(diff)
    assert "a::y: published 2.0, built 2.0000000000000004 (relative 2.22e-16)" in text and "verdict of C1" in text
    same = reference.compare({"a::x": 1.0}, {}, {"results": {"a::x": 1.0}, "claims": {}})
    assert reference.agrees(same)


def test_a_chapter_awaiting_publication_is_pending_and_every_published_value_still_required():
    published = {"results": {"a::x": 1.0}, "claims": {}, "pending": {"c": "added on an AMD CPU"}}
    diff = reference.compare({"a::x": 1.0, "c::new": 2.0, "d::new": 3.0}, {}, published)
    assert diff["pending"] == ["c::new"] and diff["new"] == ["d::new"] and not reference.agrees(diff)
    assert "1 of chapters awaiting publication" in reference.summary(diff)
    assert reference.agrees(reference.compare({"a::x": 1.0, "c::new": 2.0}, {}, published))
    assert not reference.agrees(reference.compare({"a::x": 1.5, "c::new": 2.0}, {}, published))


def test_only_a_pinned_build_with_the_reference_libraries_must_match_bit_for_bit():
    ref = {"pinned": True, "signature": "pinned-avx2-1", "versions": {"torch": "2.13.0+cpu"}}
    assert reference.comparable(dict(ref), ref)[0]
    assert not reference.comparable({**ref, "pinned": False, "departures": ["x"]}, ref)[0]
    assert not reference.comparable({**ref, "versions": {"torch": "2.14.0+cpu"}}, ref)[0]
    intel = {**ref, "cpu": {"vendor": "GenuineIntel"}}
    assert reference.comparable(dict(intel), intel)[0]
    same, why = reference.comparable({**intel, "cpu": {"vendor": "AuthenticAMD"}}, intel)
    assert not same and "published on an Intel CPU and this build ran on an AMD one" in why


def test_the_appendix_record_says_whether_the_build_is_pinned_and_what_moved(tmp_path):
    from bookrelease import provenance as page

    assert "execute the book" in page.section(tmp_path)
    record = {
        "cpu": {**INTEL, "vendor": "AuthenticAMD"}, "python": "3.11.7", "pin_version": "avx2-1",
        "versions": {"torch": "2.13.0+cpu", "numpy": "2.4.6", "scipy": "1.17.1"}, "torch_blas": "oneMKL 2024.2",
        "pins": dict(arithmetic.PINS), "pinned": False, "departures": ["oneMKL honours its AVX2 branch on Intel only"],
        "in_force": {**_pinned_state(), "mkl_branch": "AUTO", "environment": dict(arithmetic.PINS),
                     "blas": [{**_pinned_state()["blas"][0], "version": "0.3.31"}]},
    }  # fmt: skip
    (tmp_path / "provenance.json").write_text(json.dumps(record))
    diff = reference.compare({"a::x": 1.5, "a::y": 2.0}, {}, {"results": {"a::x": 1.0, "a::y": 2.0}, "claims": {}})
    (tmp_path / "reference_diff.json").write_text(json.dumps({"bitwise_required": False, "why": "not pinned", **diff}))
    text = page.section(tmp_path)
    assert "**not** computed with the book's pinned arithmetic" in text and "- oneMKL honours" in text
    assert "branch in force AUTO" in text and "0.3.31 (Haswell kernels, 1 thread)" in text
    assert "of the 2 values the chapters computed, 1 differ from it (by chapter: a 1)" in text
    assert "the largest difference is 0.33 relative (a::x)" in text
    assert ":::{dropdown} The chapters whose values moved" in text and "| `a` | 2 | 1 |" in text  # folded
    assert text.split(":::{dropdown}")[1].count("| `") == 1  # only the chapters whose values moved
    assert page.standing(tmp_path) in text  # the findings page's words are the appendix's
    record.update(pinned=True, departures=[])
    (tmp_path / "provenance.json").write_text(json.dumps(record))
    assert "the libraries ran the kernels the pins select" in page.section(tmp_path)
