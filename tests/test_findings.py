"""The findings page's statements (``lib.core.findings``): each chosen by a rule on computed numbers."""

from __future__ import annotations

import pytest

from lib.core import discrepancies, findings


def _rec(cid="A4_flipflop_dfvu_CR", **kw):
    rec = {
        "id": cid, "statement": "flipflop: ΔFVU(−T_C→R)", "link": "task_flipflop.html#claims",
        "verdict": "not reproduced", "kind": "not reproduced", "group": "finding", "per_solution": None,
        "k": None, "n": None, "ours": 0.409, "paper_value": "9.45e-2 ± 9.35e-3", "paper_number": 0.0945,
        "value_decision": False, "tolerance": 0.01875, "interval": [0.306, 0.511],
    }  # fmt: skip
    return rec | kw


def test_numbers_are_words_never_reprs():
    assert findings.number(0.7407970428466797) == "0.741"
    assert findings.number([0.7407970428466797] * 3) == "0.741"
    assert findings.number([1.0, 0.875, 0.5]) == "1, 0.875 and 0.5"
    assert findings.number(None) == "—" and findings.number(True) == "yes"


def test_the_reason_gives_the_deciding_number_and_the_ratio_where_the_values_differ():
    assert findings.reason(_rec()) == "ours 0.409 against the paper's 9.45e-2 ± 9.35e-3 (4.3× the paper's)"
    below = findings.reason(_rec(ours=0.0006, paper_value="0.0048", paper_number=0.0048))
    assert below.endswith("(8.0× below the paper's)")
    share = findings.reason(_rec(per_solution=[True] * 4 + [False], k=4, n=5, paper_number=None, ours=0.3))
    assert share == "holds in 4 of 5 solutions"
    matched = findings.reason(_rec(ours=0.095, value_decision=True))
    assert "×" not in matched


def test_central_values_count_and_name_the_claims_that_fail():
    kept = _rec("A3_CC_stabilizer", verdict="reproduced", kind="reproduced", statement="zeroing T_CC keeps replay")
    records = [_rec(), kept]
    v = findings.central_values(records)
    assert (v["central_n_A"], v["central_held_A"], v["central_failed_A"]) == (2, 1, 1)
    assert v["central_failed_text_A"] == "“flipflop: ΔFVU(−T_C→R)”"
    assert v["central_failed_text_B"] == "none"


def _gauge_values(paper, minnorm):
    return {"annulus::growth_c_fixed_full_trained": paper, "annulus::growth_c_fixed_minnorm_full_trained": minnorm}


@pytest.mark.parametrize(("paper", "minnorm", "words"), [(22.0, 1.75, "depends on the gauge"),
                                                         (2.0, 1.75, "does not depend on the gauge")])  # fmt: skip
def test_the_gauge_finding_follows_its_rule(paper, minnorm, words):
    (found,) = findings.beyond(_gauge_values(paper, minnorm))
    assert words in found.text and f"{paper:.1f}×" in found.text


def test_the_screen_finding_says_which_way_the_near_null_criterion_points():
    (wrong,) = findings.beyond({"two_lenses::auc_null": 0.196, "two_lenses::auc_gn": 1.0})
    assert "the wrong way" in wrong.text and "1.000" in wrong.text
    (right,) = findings.beyond({"two_lenses::auc_null": 0.8, "two_lenses::auc_gn": 1.0})
    assert "the right way" in right.text


def test_a_finding_whose_chapter_did_not_run_is_left_out():
    assert findings.beyond({}) == []


def test_a_sampling_test_explains_a_gap_only_when_three_seeds_reach_the_paper():
    values = {"task_flipflop::dfvu_CR_first3": 0.426}
    (gap,) = discrepancies.discrepancies([_rec()], values)
    assert gap.status == "unexplained" and "do not explain" in gap.test
    values = {"task_flipflop::dfvu_CR_first3": 0.1}
    (gap,) = discrepancies.discrepancies([_rec()], values)
    assert gap.status == "explained"


def test_a_discrepancy_without_its_values_is_unexplained_and_says_why():
    (gap,) = discrepancies.discrepancies([_rec()], {})
    assert gap.status == "unexplained" and "was not computed" in gap.test


def test_claims_that_match_or_check_code_are_not_discrepancies():
    matched = _rec(verdict="reproduced", kind="reproduced", value_decision=True)
    identity = _rec(group="identity")
    assert discrepancies.discrepancies([matched, identity], {}) == []


def test_the_annulus_orthogonality_is_explained_only_when_the_moves_inherit_the_targets_cosine():
    conds = ("wedge_init", "full_init", "wedge_trained", "full_trained")
    values = {}
    for c in conds:
        values |= {f"annulus::cos_function_start_{c}": 0.0236, f"annulus::cos_targets_start_{c}": 0.0235,
                   f"annulus::orth_bound_start_{c}": 1e-4}  # fmt: skip
    rec = _rec("B_c3_annulus_orthogonal", paper_number=None, value_decision="absent", ours=[0.0236] * 4)
    (gap,) = discrepancies.discrepancies([rec], values)
    assert gap.status == "explained"
    values["annulus::cos_targets_start_full_init"] = 0.0
    (gap,) = discrepancies.discrepancies([rec], values)
    assert gap.status == "unexplained"
