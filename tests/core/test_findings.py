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
                                                         (1.75, 22.0, "depends on the gauge"),
                                                         (2.0, 1.75, "does not depend on the gauge")])  # fmt: skip
def test_the_gauge_finding_follows_its_rule_in_its_title_and_text(paper, minnorm, words):
    (found,) = findings.beyond(_gauge_values(paper, minnorm))
    assert words in found.text and words in found.title and f"{paper:.1f}×" in found.text


def test_the_screen_finding_says_which_way_the_near_null_criterion_points():
    (wrong,) = findings.beyond({"two_lenses::auc_null": 0.196, "two_lenses::auc_gn": 1.0})
    assert "ranks them the wrong way" in wrong.text and "separates them perfectly" in wrong.text
    assert wrong.title == "The near-null fraction ranks the wrong way; the Gauss–Newton screen separates perfectly"
    (right,) = findings.beyond({"two_lenses::auc_null": 0.8, "two_lenses::auc_gn": 0.4})
    assert "fraction ranks them the right way" in right.text and "screen ranks the wrong way" in right.title


def test_the_sector_order_finding_says_what_moved_against_round_off():
    base = {"schur_coordinates::partition_diff_CR": 1e-15}
    (moved,) = findings.beyond(base | {"schur_coordinates::partition_diff_RR": 0.06,
                                       "schur_coordinates::partition_diff_CC": 0.25})  # fmt: skip
    assert moved.title.startswith("T_RR and T_CC ablations depend") and "the same T_C→R" in moved.text
    (still,) = findings.beyond(base | {"schur_coordinates::partition_diff_RR": 1e-16,
                                       "schur_coordinates::partition_diff_CC": 1e-16})  # fmt: skip
    assert still.title == "The order inside each sector does not matter"


def test_a_finding_whose_chapter_did_not_run_is_left_out():
    assert findings.beyond({}) == []


def test_a_sampling_test_explains_a_gap_only_when_three_seeds_reach_the_paper():
    values = {"task_flipflop::dfvu_CR_first3": 0.426, "task_flipflop::train_steps": 3840}
    (gap,) = discrepancies.discrepancies([_rec()], values)
    assert gap.status == "unexplained" and "does not explain" in gap.test and "3840 Adam steps" in gap.test
    values["task_flipflop::dfvu_CR_first3"] = 0.1
    (gap,) = discrepancies.discrepancies([_rec()], values)
    assert gap.status == "explained"


def test_a_discrepancy_whose_chapter_did_not_run_is_unexplained_and_says_why():
    (gap,) = discrepancies.discrepancies([_rec()], {})
    assert gap.status == "unexplained" and "was not computed" in gap.test


def test_a_value_missing_from_an_executed_chapter_is_an_error_not_a_silent_unexplained():
    with pytest.raises(KeyError, match="train_steps"):
        discrepancies.discrepancies([_rec()], {"task_flipflop::dfvu_CR_first3": 0.426})


def test_claims_that_match_or_check_code_are_not_discrepancies():
    matched = _rec(verdict="reproduced", kind="reproduced", value_decision=True, ours=0.095, interval=[0.09, 0.1])
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


def _rank_values(**ranks) -> dict:
    from lib.paper_b.mexican_hat import rank_conventions as conv

    found = {k: ranks.get(k, 42) for k in conv.CONVENTIONS}
    return {**{f"mexican_hat::rank_conv_{k}": r for k, r in found.items()},
            "mexican_hat::rank_conv_finding": conv.finding(found, 22),
            "mexican_hat::rank_conv_match": ", ".join(conv.matching(found, 22)) or "none",
            "mexican_hat::train_steps": 3000, "mexican_hat::l1_trained": 0.0, "mexican_hat::authors_steps_lo": 20000,
            "mexican_hat::authors_steps_hi": 50000, "mexican_hat::authors_l1": 1e-5, "mexican_hat::batch_size": 850,
            "mexican_hat::n_train_windows": 6000, "mexican_hat::l1run_rank": 40, "mexican_hat::ours_rank": 42,
            "mexican_hat::l1run_val_mse": 1e-4, "mexican_hat::ours_val_mse": 5e-5, "mexican_hat::paper_rank": "22",
            "mexican_hat::authors_full_batch_work": 47.0}  # fmt: skip


def test_the_mexican_hat_rank_is_explained_only_by_a_convention_that_gives_the_papers_rank():
    rec = _rec("B96_rank", paper_number=22, ours=42, chapter="mexican_hat")
    (gap,) = discrepancies.discrepancies([rec], _rank_values())
    assert gap.status == "unexplained" and "no convention gives the paper's 22" in gap.test
    assert "3,000 steps where they give 20,000–50,000" in gap.test and "L1 weight 0 where they give 1e-05" in gap.test
    assert "minibatches of 850 windows where they take all 6000" in gap.test
    assert "With their L1 weight on our schedule the rank is 40 (without: 42)" in gap.test
    assert "as the authors configured it" not in gap.test  # the chapter departs from it: it must never say so
    (gap,) = discrepancies.discrepancies([rec], _rank_values(J_gram=22))
    assert gap.status == "explained" and "σₖ(J)² ≥ τ·σ₁(J)² gives the paper's 22" in gap.test
