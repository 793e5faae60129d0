"""Each misreading a careful reader found on the findings page (issue 47), planted, so that the rule that prevents it
fails here if it comes back: a decided statement called undecided, an interval below what a quantity can take, a
second set never pooled with the first, a "not tested" beside a variant a chapter ran, a "trained as configured"
beside a parameter that departs, a negative R² that "partly explains", ablations counted as solutions."""

from __future__ import annotations

import pytest

from lib.core import claims, discrepancies, findings, reference, scorecard
from lib.core.claims import Claim
from lib.core.verdicts import decide


def _copy_like(values, **kw):
    """A copy-task claim: the statement per solution (5 of 5 hold) and an accuracy against the paper's 1.00."""
    return Claim("A3_fig1_full", "A", "§3", "replays", "1.00", sum(values) / len(values), "c",
                 per_solution=(True,) * len(values), line="majority", ours_values=tuple(values), statistic="one",
                 paper_number=1.0, tolerance=0.005, **kw)  # fmt: skip


def test_a_statement_that_holds_is_never_called_undecided_only_its_value():
    c = _copy_like([0.995, 0.996, 0.994, 0.997, 0.993])
    rec = c.record()
    assert rec["kind"] == "undecided" and rec["statement_decision"] is True
    assert "the statement holds (5 of 5)" in rec["verdict"] and "the value is undecided" in rec["verdict"]
    assert "no number of solutions decides it (" not in rec["verdict"]
    (row,) = scorecard.undecided_table([{**rec, "chapter": "copy_task"}]).rows
    assert "statement" not in row[1] and "the value is undecided" in row[1]  # the statement is decided: not named


def test_a_value_claim_gives_its_n_and_says_when_it_is_consistent_with_the_paper():
    rec = Claim("A4_sine_sens_CC", "A", "§4", "S", "12.3 ± 1.5", 14.9, "c", ours_values=(10.0, 12.0, 13.0, 20.0),
                statistic="mean", paper_number=12.3, tolerance=3.05).record()  # fmt: skip
    assert rec["kind"] == "undecided" and rec["verdict"].startswith("undecided at n = 4: the value is undecided")
    assert "consistent with the paper (its value inside our interval)" in rec["verdict"]
    assert rec["robustness"].endswith("over n = 4")
    far = Claim("X", "A", "§4", "S", "1", 5.0, "c", ours_values=(4.0, 5.0, 6.0, 9.0), statistic="mean",
                paper_number=2.0, tolerance=0.5).record()  # fmt: skip
    assert "consistent" not in far["verdict"]


def test_the_solutions_that_would_decide_a_value_are_counted_at_its_spread():
    d = decide(Claim("X", "A", "§4", "S", "1", 1.0, "c", ours_values=(0.8, 1.2, 0.9, 1.1), statistic="mean",
                     paper_number=1.0, tolerance=0.2).record(computed=False))  # fmt: skip
    assert d.value is None and d.value_needed is not None and d.value_needed > 4
    one = decide(_copy_like([0.96, 1.0, 0.97, 0.99, 0.98]).record(computed=False))
    assert one.value is None and one.value_needed is None  # one solution: it never narrows


def test_an_interval_never_goes_below_what_the_quantity_can_take():
    small = (0.001, 0.02, 0.0005, 0.03, 0.002)
    free = Claim("X", "A", "§4", "FVU", "0.0036", 0.01, "c", ours_values=small, statistic="mean",
                 paper_number=0.0036, tolerance=5e-5).record()  # fmt: skip
    assert free["interval"][0] < 0  # unbounded, the t interval of these values goes below zero ...
    bounded = Claim("X", "A", "§4", "FVU", "0.0036", 0.01, "c", ours_values=small, statistic="mean",
                    paper_number=0.0036, tolerance=5e-5, support=(0.0, None)).record()  # fmt: skip
    assert bounded["interval"][0] == 0.0 and bounded["interval"][1] == free["interval"][1]  # ... an FVU cannot
    share = _copy_like([0.99, 1.0, 1.0, 1.0, 0.995], support=(0.0, 1.0)).record()
    assert share["interval"][1] == 1.0  # an accuracy cannot exceed 1


def test_the_task_chapters_cut_fvu_and_accuracy_intervals_to_their_support():
    from lib.paper_a.task_analysis import paper_claims

    assert paper_claims.NONNEGATIVE == (0.0, None) and paper_claims.SHARE == (0.0, 1.0)
    with pytest.raises(ValueError, match="support"):
        Claim("X", "A", "§4", "S", "1", 1.0, "c", holds=True, support=(0.0, None))  # a support needs a value


def test_a_second_set_is_pooled_with_the_first_and_shown_beside_each_alone():
    first = Claim("A4_sine_CC_gt_CR", "A", "§4", "CC > CR", "x", 0.6, "c", per_solution=(True,) * 6 + (False,) * 4,
                  line="majority").record()  # fmt: skip
    second = Claim("A4_sine_CC_gt_CR", "A", "§4", "CC > CR", "x", 0.9, "c", per_solution=(True,) * 9 + (False,),
                   line="majority").record()  # fmt: skip
    both = claims.pool(first, second)
    assert (first["kind"], second["kind"], both["kind"]) == ("undecided", "reproduced", "reproduced")
    assert (both["k"], both["n"]) == (15, 20)
    table = scorecard.pooled_table([{**first, "chapter": "task_sine"}], {first["id"]: second})
    (row,) = table.rows
    assert [row[i].text for i in (1, 2, 3)] == ["undecided", "reproduced", "reproduced"]
    assert "pooled: 15 of 20" in row[4]
    with pytest.raises(ValueError, match="two claims"):
        claims.pool(first, {**second, "id": "other"})
    with pytest.raises(ValueError, match="in one set only"):  # its evidence would pass for both sets'
        claims.pool(first, {**second, "per_solution": None})


def _variant_values(cr_values=(0.32, 0.752)) -> dict:
    v = {"task_flipflop::dfvu_CR_first3": 0.426, "task_flipflop::train_steps": 3840,
         "task_dependence::variant_seeds": 3, "task_dependence::variant_base_dfvu_flipflop_CR": 0.426}  # fmt: skip
    for i, (label, x) in enumerate(zip(("pulse rate 0.5 (Golub)", "input noise σ = 0.1"), cr_values, strict=True)):
        v[f"task_dependence::variant_label_flipflop_{i}"] = label
        v[f"task_dependence::variant_dfvu_flipflop_{i}_CR"] = x
    return v


def test_a_cause_a_chapter_tested_is_cited_with_its_numbers_never_called_not_tested():
    rec = {"id": "A4_flipflop_dfvu_CR", "statement": "flipflop: ΔFVU(−T_C→R)", "link": "x", "kind": "not reproduced",
           "group": "finding", "ours": 0.409, "paper_value": "9.45e-2", "paper_number": 0.0945, "tolerance": 0.0188,
           "value_decision": False, "interval": [0.3, 0.5]}  # fmt: skip
    values = _variant_values()
    (gap,) = discrepancies.discrepancies([rec], values)
    for i in range(2):
        assert values[f"task_dependence::variant_label_flipflop_{i}"] in gap.test  # every variant glued is cited
    assert "pulse rate 0.5 (Golub) gives 0.32" in gap.test and "none within the paper's tolerance" in gap.test
    assert "pulse statistics" not in gap.test and "noise" not in gap.test.split("not tested")[-1]
    assert gap.status == "unexplained"
    (gap,) = discrepancies.discrepancies([rec], _variant_values((0.1, 0.752)))
    assert gap.status == "explained" and "1 of 2 within the paper's tolerance" in gap.test


def _mh(**kw) -> dict:
    base = {"train_steps": 3000, "authors_steps_lo": 20000, "authors_steps_hi": 100000, "batch_size": 850,
            "n_train_windows": 6000, "l1_trained": 0.0, "authors_l1": 1e-5, "l1run_rank": 40, "ours_rank": 42,
            "l1run_val_mse": 1e-4, "ours_val_mse": 5e-5, "authors_full_batch_work": 47.0}  # fmt: skip
    return base | kw


def test_trained_as_the_authors_configured_only_when_no_parameter_departs():
    assert discrepancies.training_departures(_mh(train_steps=20000, batch_size=6000, l1_trained=1e-5)) == []
    assert "as the authors configured it" in discrepancies._training(_mh(train_steps=20000, batch_size=6000,
                                                                         l1_trained=1e-5))  # fmt: skip
    assert "their schedule is not run" in discrepancies._training(_mh())
    ran = discrepancies._training(_mh(authors_rank=30, authors_val_mse=4e-5))
    assert "with their schedule and L1 weight the rank is 30" in ran and "not run" not in ran
    for departing in ({"l1_trained": 0.0}, {"train_steps": 3000}, {"batch_size": 850}):
        mh = _mh(**{"train_steps": 20000, "batch_size": 6000, "l1_trained": 1e-5, **departing})
        assert len(discrepancies.training_departures(mh)) == 1
        assert "as the authors configured it" not in discrepancies._training(mh)


def test_the_papers_text_against_its_own_table_is_said_not_failed():
    rec = {"id": "B88_resolved_c_2pct", "statement": "2 %", "link": "x", "kind": "not reproduced", "group": "finding",
           "ours": 0.0297, "paper_value": "0.02", "paper_number": None}  # fmt: skip
    (gap,) = discrepancies.discrepancies([rec], {})
    assert gap.status == "explained" and "the paper's text and its table disagree" in gap.test
    (gap,) = discrepancies.discrepancies([{**rec, "ours": 0.05}], {})
    assert gap.status == "unexplained"


def test_a_large_gap_is_listed_whatever_its_verdict():
    undecided = {"id": "A4_context_dfvu_CR", "statement": "s", "link": "x", "kind": "undecided", "group": "finding",
                 "ours": 1.71, "paper_value": "0.37", "paper_number": 0.37, "value_decision": None,
                 "interval": [0.2, 3.4]}  # fmt: skip
    assert discrepancies.differs(undecided)  # 4.6× the paper's
    close = {**undecided, "ours": 0.4, "interval": [0.3, 0.5]}
    assert not discrepancies.differs(close)
    outside = {**undecided, "ours": 62.0, "paper_number": 68.0, "interval": [60.9, 67.5]}
    assert discrepancies.differs(outside)  # the paper's number outside our interval
    matched = {**undecided, "kind": "reproduced", "ours": 0.096, "paper_number": 0.0945, "interval": [0.0955, 0.097],
               "value_decision": True}  # fmt: skip
    assert not discrepancies.differs(matched)  # inside the paper's tolerance: no gap, though 0.0945 is outside


def test_counts_say_what_they_count():
    rec = {"per_solution": [True] * 3 + [False] * 123, "k": 3, "n": 126, "unit": "ablations", "ours": "3 of 126"}
    assert findings.reason(rec) == "holds in 3 of 126 ablations"


def test_the_page_says_whether_its_numbers_are_the_published_reference():
    """One paragraph for the findings page and the appendix (``reference.standing_text``): one count of values, the
    largest difference over values that are not themselves round-off (those apart), and why the build differs."""
    values = {"task_sine::x": 1.0, "task_sine::y": 2.0, "annulus::gap": 2.2e-15}
    recs = {"A": {"id": "A", "chapter": "task_sine", "kind": "reproduced", "verdict": "reproduced"}}
    ref = {"results": values, "claims": recs, "provenance": {}}
    same = reference.compare(values, recs, ref)
    assert reference.standing_text(same, "9.9.9").startswith(
        "These are the numbers of the published reference (version 9.9.9): all 3 values the chapters computed are "
        "identical to it"
    )
    moved = reference.compare({**values, "task_sine::y": 2.5, "annulus::gap": 3.8e-15}, recs, ref)
    amd, intel = {"vendor": "AuthenticAMD"}, {"vendor": "GenuineIntel"}
    moved["reasons"] = reference.reasons({"pinned": True, "cpu": amd}, {"cpu": intel})
    text = reference.standing_text(moved, "9.9.9")
    assert "of the 3 values the chapters computed, 2 differ from it (by chapter: annulus 1, task_sine 1)" in text
    assert "the largest difference is 0.2 relative (task_sine::y)" in text  # not the round-off gap's 0.42
    assert "1 values that are themselves round-off (below 1e-10 in size) differ by up to 0.42 relative" in text
    assert "another CPU vendor (AMD) than the reference's (Intel)" in text
    assert reference.exempt("findings::build_vs_reference")  # a former standing glue: never a difference itself
    record = reference.compare(values, {"A": {**recs["A"], "criterion": "changed"}}, ref)
    record["commits"] = {"build": "abcdef0123", "reference": "0123456789"}
    text = reference.standing_text(record, "9.9.9")
    assert (
        "1 claim records differ, 0 of them in their verdict" in text
        and "commit abcdef0 against the reference's 0123456" in text
    )


def test_the_reasons_name_each_way_a_build_was_made_otherwise():
    ref = {"pinned": True, "signature": "s", "versions": {"torch": "1"}, "cpu": {"vendor": "Intel"}}
    assert reference.reasons(dict(ref), ref) == []
    assert reference.reasons({**ref, "pinned": False}, ref) == ["native arithmetic (not the book's pins)"]
    assert reference.reasons({**ref, "uncommitted_changes": True}, ref) == ["uncommitted changes to tracked files"]
    assert reference.reasons({**ref, "versions": {"torch": "2"}}, ref) == [
        "other library versions than the reference's"
    ]


@pytest.mark.parametrize("claim_id", sorted(k for k in discrepancies.CAUSES if k.startswith("A4_")))
def test_every_task_cause_cites_each_variant_task_dependence_glues(claim_id):
    """Whatever A4 claim differs, a variant of its quantity that *Task dependence* glued is cited, never skipped."""
    _, task, kind, *rest = claim_id.split("_")
    block = {"fvu": "", "RR": "RR"}.get(kind, rest[0] if rest else "")
    kind = "dfvu" if kind == "RR" else kind
    v = {f"task_{task}::train_steps": 3840, "task_dependence::variant_seeds": 3}
    for i, label in enumerate(("variant one", "variant two")):
        v[f"task_dependence::variant_label_{task}_{i}"] = label
        v[f"task_dependence::variant_{kind}_{task}_{i}" + (f"_{block}" if block else "")] = 7.0 + i
    if block:
        v[f"task_dependence::variant_base_{kind}_{task}_{block}"] = 1.0
    rec = {"id": claim_id, "statement": "s", "link": "x", "kind": "not reproduced", "group": "finding", "ours": 9.0,
           "paper_value": "1", "paper_number": 1.0, "tolerance": 0.1, "value_decision": False}  # fmt: skip
    (gap,) = discrepancies.discrepancies([rec], v)
    assert "variant one gives 7" in gap.test and "variant two gives 8" in gap.test, gap.test
