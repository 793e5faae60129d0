"""The questions several chapters answer, each with one criterion and one ledger entry.

Paper A asks whether a coupling can be removed, and several chapters answer it: the copy-task chapter by replay
accuracy, the task chapters and *Task dependence* by ΔFVU, *What paper A left open* and *Two lenses* by ΔFVU with a
mass floor or on one solution. Paper B's orthogonality of c* and b* is tested on two networks. A reader must get one
answer to each question, so each has here:

- one criterion, written once, whose thresholds are lines of :mod:`lib.core.lines` (named once with their source);
- one ledger chapter per subject, whose answer is the book's (:data:`QUESTIONS`);
- a record per chapter and subject (:func:`answer`), glued as ``question_<id>`` by every chapter that answers: the
  thresholds it used, k of n, and the verdict by the scorecard's rule for statements about solutions (the Wilson
  bound of k/n against the line "a majority").

A chapter may deliberately use another criterion (a stricter measure, another set of solutions); its record then
says so (``own_criterion``: the criterion in words) and carries the ledger's answer, which the chapter shows beside
its own. :func:`reconcile` lists every disagreement: a threshold that differs from the ledger's without saying so, an
own criterion without the ledger's answer beside it, and two answers on one subject under the ledger's criterion
with different verdicts. The results tests run it on the build; the findings page shows the ledger.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lib.core.lines import LINES, line
from lib.core.tables import Table
from lib.core.verdicts import decide_share

#: The glue name of a chapter's answers (a JSON list of :func:`answer` records).
GLUE = "question_answers"


@dataclass(frozen=True)
class Question:
    """A question several chapters answer: in words, its criterion in words, the lines it uses, and the chapter
    whose answer is the ledger's (``ledger``, formatted with the words of the subject: ``"task_{0}"`` makes the
    flip-flop chapter the ledger on ``"flipflop T_RR"``)."""

    asks: str
    criterion: str
    lines: tuple[str, ...]
    ledger: str
    section: str

    def ledger_chapter(self, subject: str) -> str:
        """The chapter whose answer on ``subject`` is the ledger's."""
        return self.ledger.format(*subject.split())

    def thresholds(self) -> dict[str, float]:
        """The values of the question's lines."""
        return {name: line(name) for name in self.lines}


#: Every question more than one chapter answers. Chapters take their thresholds from the lines named here.
QUESTIONS: dict[str, Question] = {
    "copy_CC_safe": Question(
        "Can T_CC be removed on the copy task?",
        "zeroing T_CC moves the replay accuracy by at most the replay tolerance while removing at least the "
        "negligible Schur mass, in a majority of the dense orthogonal solutions (paper A §2.6 and §3 judge the copy "
        "task by its replay)",
        ("replay_tolerance", "negligible_mass", "majority"),
        "copy_task",
        "§2.6, §3",
    ),
    "block_safe": Question(
        "Which coupling can be removed on each task of §4?",
        "zeroing the block raises the held-out FVU by at most the safe ΔFVU, in a majority of the solutions where "
        "the block is not empty",
        ("safe_dfvu", "majority"),
        "task_{0}",
        "§4",
    ),
    "cb_orthogonal": Question(
        "Are the moves that c* and b* realise orthogonal in function space?",
        "|cos(J c*, J b*)| at most what the lifts leave out allows, (r_c r_b + t_c t_b)/(n_c n_b) with r a lift's "
        "relative residual, t its tail and n = √(1 − r² + t²): the targets taken as orthogonal, as eq. 22 says",
        (),
        "{0}",
        "contribution 3, eq. 22",
    ),
}

#: The verdicts of an answer, in words.
VERDICTS = {True: "holds", False: "fails", None: "undecided"}


def _question(question: str) -> Question:
    if question not in QUESTIONS:
        raise KeyError(f"question={question!r} is not one of QUESTIONS: {sorted(QUESTIONS)}")
    return QUESTIONS[question]


def answer(
    question: str,
    subject: str,
    chapter: str,
    per_solution: Sequence[bool | None] | None = None,
    *,
    used: Mapping[str, float] | None = None,
    holds: bool | None = None,
    own_criterion: str | None = None,
    ledger_answer: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One chapter's answer to ``question`` on ``subject`` (a task and block, a network).

    ``per_solution``: for each solution whether the criterion holds (``None`` where it does not apply: an empty
    block); the verdict is the Wilson decision of k of n against the line "a majority". A question about one
    deterministic computation passes ``holds`` instead. ``used``: the thresholds the chapter used, by line name
    (default: the question's own). ``own_criterion``: the chapter's criterion in words where it deliberately differs
    from the ledger's, with ``ledger_answer`` (the ledger's record, from :func:`find`) shown beside."""
    q = _question(question)
    if per_solution is not None and holds is not None:
        raise ValueError(f"{question} on {subject}: pass per_solution (a statement about solutions) or holds (one "
                         "computation), not both")  # fmt: skip
    used = dict(q.thresholds() if used is None else used)
    unknown = sorted(set(used) - set(LINES))
    if unknown:
        raise KeyError(f"used={unknown} are not lines of lib.core.lines: {sorted(LINES)}")
    if per_solution is not None:
        applies = [bool(v) for v in per_solution if v is not None]
        k, n = sum(applies), len(applies)
        decision = decide_share(k, n, line("majority")) if n else None
    else:
        k = n = None
        decision = holds
    return {
        "question": question,
        "subject": subject,
        "chapter": chapter,
        "k": k,
        "n": n,
        "verdict": VERDICTS[decision],
        "used": {name: float(value) for name, value in used.items()},
        "own_criterion": own_criterion,
        "ledger_answer": dict(ledger_answer) if ledger_answer is not None else None,
    }


def glue_value(answers: Iterable[Mapping[str, Any]]) -> str:
    """The JSON text a chapter glues as :data:`GLUE`."""
    return json.dumps(list(answers), sort_keys=True)


def from_glue(values: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The answers among a chapter's glued values (none when it glued no :data:`GLUE`)."""
    text = values.get(GLUE)
    return json.loads(text) if text else []


def find(answers: Iterable[Mapping[str, Any]], question: str, subject: str) -> dict[str, Any] | None:
    """The ledger's answer to ``question`` on ``subject`` among ``answers``: the ledger chapter's, under the ledger's
    criterion; ``None`` when it is not there."""
    chapter = _question(question).ledger_chapter(subject)
    for a in answers:
        if (a["question"], a["subject"], a["chapter"], a["own_criterion"]) == (question, subject, chapter, None):
            return dict(a)
    return None


def phrase(a: Mapping[str, Any] | None) -> str:
    """An answer in words: "holds (5 of 5 solutions)", "fails (0 of 5 solutions)", "holds"; or why there is none."""
    if a is None:
        return "not on record (execute the ledger's chapter first)"
    if a["n"] is None:
        return a["verdict"]
    return f"{a['verdict']} ({a['k']} of {a['n']} solutions)"


def reconcile(answers: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every disagreement among the chapters' answers, one sentence each (empty when they agree):

    - an answer under the ledger's criterion whose thresholds differ from the question's lines;
    - an answer under its own criterion that does not carry the ledger's answer, or carries one that is not the
      ledger's;
    - two answers on one subject under the ledger's criterion that differ (verdict, or k of n: they count the same
      solutions), or one chapter that answers twice.

    The orthogonality of c* and b* has one chapter per network; its one criterion is one function
    (``lib.paper_b.relations.realised_cosine_bound``), which both networks' claims call."""
    answers = [dict(a) for a in answers]
    problems = []
    verdicts: dict[tuple[str, str], dict[str, str]] = {}
    seen = set()
    for a in answers:
        q = _question(a["question"])
        where = f"{a['chapter']}: {a['question']} on {a['subject']!s}"
        key = (a["chapter"], a["question"], a["subject"], a["own_criterion"])
        if key in seen:
            problems.append(f"{where} is answered twice")
        seen.add(key)
        if a["own_criterion"] is None:
            expected = q.thresholds()
            if a["used"] != expected:
                problems.append(f"{where} uses {a['used']} where the ledger's criterion is {expected}")
            verdicts.setdefault((a["question"], a["subject"]), {})[a["chapter"]] = phrase(a)
        else:
            ledger = find(answers, a["question"], a["subject"])
            shown = a["ledger_answer"]
            if shown is None:
                problems.append(f"{where} uses its own criterion and does not show the ledger's answer beside")
            elif ledger is not None and [shown[k] for k in ("verdict", "k", "n")] != [
                ledger[k] for k in ("verdict", "k", "n")
            ]:
                problems.append(f"{where} shows the ledger's answer as {phrase(shown)}; it is {phrase(ledger)}")
    for (question, subject), by_chapter in verdicts.items():
        if len(set(by_chapter.values())) > 1:
            said = ", ".join(f"{c} says {v}" for c, v in sorted(by_chapter.items()))
            problems.append(f"{question} on {subject}: the chapters disagree ({said})")
    return problems


#: Subjects of the questions in words, where their names are not (:func:`answer`'s ``subject``).
SUBJECTS = {"copy": "the copy task", "annulus": "the annulus", "mexican_hat": "the Mexican hat"}


def ledger_table(answers: Sequence[Mapping[str, Any]], titles: Mapping[str, str] | None = None) -> Table:
    """One row per question: the book's answer on each subject (its ledger chapter's), the chapters that give the
    same answers by the same criterion, and every other chapter's answer by its own criterion, side by side.
    ``titles``: chapter stem → title (the stems themselves otherwise)."""
    titles = titles or {}
    title = lambda stem: titles.get(stem, stem)  # noqa: E731
    rows = []
    for question in dict.fromkeys(a["question"] for a in answers):
        mine = [a for a in answers if a["question"] == question]
        subjects = list(dict.fromkeys(a["subject"] for a in mine))
        book = {s: find(mine, question, s) for s in subjects}
        said = "; ".join(f"{SUBJECTS.get(s, s)}: {phrase(book[s])}" for s in subjects)
        ledgers = {b["chapter"] for b in book.values() if b is not None}
        alike = [a for a in mine if a["own_criterion"] is None and a["chapter"] not in ledgers]
        agree = [phrase(a) == phrase(book[a["subject"]]) for a in alike]
        same = sorted({title(a["chapter"]) for a, ok in zip(alike, agree, strict=True) if ok})
        others = [f"the same answers in {', '.join(same)}"] if same else []
        others += [f"{title(a['chapter'])} on {a['subject']}: {phrase(a)}"
                   for a, ok in zip(alike, agree, strict=True) if not ok]  # fmt: skip
        others += [
            f"{title(a['chapter'])}, by {a['own_criterion']}: {phrase(a)}"
            for a in mine
            if a["own_criterion"] is not None
        ]
        rows.append((QUESTIONS[question].asks, said, "; ".join(others) or "—"))
    return Table(("question", "the book's answer", "other chapters"), tuple(rows))


def problems_table(problems: Sequence[str]) -> Table | None:
    """Where the chapters disagree on a question (``lib.core.reconcile``); ``None`` (nothing shown) when
    they agree."""
    return Table(("where the chapters disagree",), tuple((p,) for p in problems)) if problems else None


def criteria_table() -> Table:
    """Each question's one criterion, with the lines it uses and their values."""
    rows = []
    for q in QUESTIONS.values():
        used = ", ".join(f"{n.replace('_', ' ')} = {line(n):g}" for n in q.lines) or "—"
        rows.append((q.asks, q.criterion, used))
    return Table(("question", "the one criterion", "its lines"), tuple(rows))
