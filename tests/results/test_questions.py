"""One answer per question across the executed chapters (``lib.core.questions``): the chapters that use a question's
one criterion agree, use its thresholds, and a chapter with its own criterion shows the ledger's answer beside."""

from __future__ import annotations

import copy
import json

import pytest

from lib.core import questions
from lib.core.paths import build_dir

pytestmark = pytest.mark.results


@pytest.fixture(scope="module")
def answers() -> list[dict]:
    path = build_dir() / "results.json"
    if not path.is_file():
        pytest.fail(f"{path} missing: execute the book first (`make execute`)")
    results = json.loads(path.read_text())
    found = []
    for key, value in results.items():
        if key.split("::", 1)[1] == questions.GLUE:
            found += json.loads(value)
    return found


def test_the_chapters_give_one_answer_per_question(answers):
    assert questions.reconcile(answers) == []


def test_every_question_has_its_ledger_answer_and_is_answered_by_more_than_one_chapter(answers):
    for question in questions.QUESTIONS:
        subjects = {a["subject"] for a in answers if a["question"] == question}
        assert subjects, f"no chapter answers {question}"
        for subject in subjects:
            assert questions.find(answers, question, subject) is not None, (question, subject)
        chapters = {a["chapter"] for a in answers if a["question"] == question}
        assert len(chapters) >= 2, f"{question} is answered only by {chapters}"


def test_the_copy_question_is_answered_by_every_chapter_that_judges_it(answers):
    chapters = {a["chapter"] for a in answers if a["question"] == "copy_CC_safe"}
    assert chapters == {"copy_task", "task_dependence", "paper_a_open", "two_lenses"}


def test_a_chapter_that_changes_its_tolerance_breaks_the_reconciliation(answers):
    """The build's own answers, with one chapter's threshold for "safe" moved: the reconciliation names it."""
    changed = copy.deepcopy(answers)
    (target,) = [a for a in changed if a["chapter"] == "task_dependence" and a["subject"] == "flipflop T_RR"]
    target["used"]["safe_dfvu"] = 0.02
    problems = questions.reconcile(changed)
    assert any("task_dependence: block_safe on flipflop T_RR uses" in p for p in problems), problems
