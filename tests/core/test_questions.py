"""The ledger of questions several chapters answer (``lib.core.questions``): one criterion each, and the
reconciliation that fails when two chapters disagree or one changes a threshold without saying so."""

from __future__ import annotations

import json

import pytest

from lib.core import questions
from lib.core.lines import line


def _copy(chapter="copy_task", per=(True, True, True, True, True), **kw):
    return questions.answer("copy_CC_safe", "copy", chapter, per, **kw)


def _block(chapter, per, tol=None):
    used = None if tol is None else {"safe_dfvu": tol, "majority": line("majority")}
    return questions.answer("block_safe", "flipflop T_RR", chapter, per, used=used)


def test_an_answer_counts_the_solutions_where_the_criterion_applies_and_decides_by_the_majority_line():
    a = questions.answer("block_safe", "sine T_RR", "task_sine", [True, None, True, True, None, True, True])
    assert (a["k"], a["n"], a["verdict"]) == (5, 5, "holds")
    b = questions.answer("block_safe", "sine T_RR", "task_sine", [False] * 5)
    assert (b["k"], b["n"], b["verdict"]) == (0, 5, "fails")
    c = questions.answer("block_safe", "sine T_RR", "task_sine", [True, False, True, False])
    assert c["verdict"] == "undecided"
    assert questions.phrase(a) == "holds (5 of 5 solutions)"


def test_a_deterministic_answer_takes_its_verdict_from_holds():
    a = questions.answer("cb_orthogonal", "annulus", "annulus", holds=False)
    assert (a["k"], a["n"], a["verdict"]) == (None, None, "fails")
    assert questions.find([a], "cb_orthogonal", "annulus") == a


def test_the_ledger_chapter_follows_the_subject():
    assert questions.QUESTIONS["block_safe"].ledger_chapter("flipflop T_RR") == "task_flipflop"
    assert questions.QUESTIONS["copy_CC_safe"].ledger_chapter("copy") == "copy_task"
    assert questions.QUESTIONS["cb_orthogonal"].ledger_chapter("mexican_hat") == "mexican_hat"


def test_agreeing_chapters_reconcile():
    book = _copy()
    own = _copy("task_dependence", (True, True, False), used={"safe_dfvu": 0.01}, own_criterion="ΔFVU ≤ 0.01",
                ledger_answer=book)  # fmt: skip
    same = [_block("task_flipflop", [True] * 9 + [None]), _block("task_dependence", [True] * 9 + [None])]
    assert questions.reconcile([book, own, *same]) == []


def test_a_chapter_that_changes_its_tolerance_fails_the_reconciliation():
    answers = [_block("task_flipflop", [True] * 9), _block("task_dependence", [True] * 9, tol=0.02)]
    (problem,) = questions.reconcile(answers)
    assert "task_dependence" in problem and "0.02" in problem


def test_two_chapters_with_different_verdicts_on_one_subject_fail_the_reconciliation():
    answers = [_block("task_flipflop", [True] * 9), _block("task_dependence", [False] * 9)]
    (problem,) = questions.reconcile(answers)
    assert "disagree" in problem and "task_flipflop says holds" in problem


def test_an_own_criterion_must_show_the_ledger_answer_and_show_it_right():
    book = _copy()
    missing = _copy("two_lenses", (False,), used={"safe_dfvu": 0.01}, own_criterion="one solution")
    assert "does not show the ledger's answer" in questions.reconcile([book, missing])[0]
    wrong = _copy("two_lenses", (False,), used={"safe_dfvu": 0.01}, own_criterion="one solution",
                  ledger_answer=_copy(per=(False,) * 5))  # fmt: skip
    assert "it is holds (5 of 5 solutions)" in questions.reconcile([book, wrong])[0]


def test_answers_round_trip_through_their_glue_text():
    answers = [_copy(), _block("task_flipflop", [True, None])]
    text = questions.glue_value(answers)
    assert questions.from_glue({questions.GLUE: text}) == json.loads(text) == answers
    assert questions.from_glue({}) == []


def test_bad_questions_and_thresholds_are_refused_by_name():
    with pytest.raises(KeyError, match="question='copy_safe' is not one of QUESTIONS"):
        questions.answer("copy_safe", "copy", "copy_task", [True])
    with pytest.raises(KeyError, match=r"used=\['tolerance'\] are not lines"):
        questions.answer("copy_CC_safe", "copy", "copy_task", [True], used={"tolerance": 0.01})


def test_every_question_names_existing_lines():
    for q in questions.QUESTIONS.values():
        assert q.thresholds() == {name: line(name) for name in q.lines}


def test_answers_on_the_same_solutions_must_count_the_same():
    answers = [_block("task_flipflop", [True] * 9), _block("task_dependence", [True] * 7)]
    (problem,) = questions.reconcile(answers)
    assert "holds (9 of 9 solutions)" in problem and "holds (7 of 7 solutions)" in problem


def test_a_chapter_that_answers_twice_is_named():
    answers = [_block("task_flipflop", [True] * 9), _block("task_flipflop", [True] * 9)]
    assert any("answered twice" in p for p in questions.reconcile(answers))


def test_an_answer_is_about_solutions_or_one_computation_not_both():
    with pytest.raises(ValueError, match="not both"):
        questions.answer("cb_orthogonal", "annulus", "annulus", [True], holds=True)


#: Each chapter parameter that sets a threshold of a question, and the line it must start at.
THRESHOLD_PARAMETERS = [
    ("copy_task.md", "preserve_tol", "replay_tolerance"),
    ("copy_task.md", "negligible_mass", "negligible_mass"),
    ("neuro_task.md", "safe_tolerance", "safe_dfvu"),
    ("task_dependence.md", "safe_tolerance", "safe_dfvu"),
    ("two_lenses.md", "safe_tolerance", "safe_dfvu"),
]


@pytest.mark.parametrize(("chapter", "name", "line_name"), THRESHOLD_PARAMETERS)
def test_a_chapter_parameter_that_sets_a_threshold_starts_at_its_line(chapter, name, line_name):
    """Each starts at the line the ledger uses, written as that line (``line("safe_dfvu")``, never a copy of its
    value), and --list and the results tests read it as the line's value."""
    from bookrun.manifest import _python, notebook_parameters
    from lib.core.paths import REPO_ROOT

    declared = notebook_parameters(REPO_ROOT / "book" / chapter)
    written = declared[name]["default"].replace("'", '"')
    assert written == f'line("{line_name}")', f"{chapter}: {name} = {written}, not the line {line_name}"
    assert float(_python(written)) == line(line_name)
