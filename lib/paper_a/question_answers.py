"""Paper A's chapters' answers to the questions several of them answer (``lib.core.questions``).

Each function returns ``{questions.GLUE: text}`` for a chapter to glue: the copy chapter answers whether T_CC can be
removed on the copy task by the ledger's criterion (replay accuracy); the task chapters and *Task dependence* answer
which block can be removed on each §4 task, from the same solutions by the same criterion (so they must agree);
*Task dependence*, *What paper A left open* and *Two lenses* also judge T_CC on the copy task, each by its own
criterion (the replay's ΔFVU, with a mass floor, or one solution), and carry the ledger's answer beside theirs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lib.core import questions
from lib.core.lines import line
from lib.paper_a import schur

#: The §4 tasks whose blocks the ledger judges, and the blocks.
TASKS = ("flipflop", "sine", "context")
BLOCKS = ("RR", "CR", "CC")


def block_subject(task: str, block: str) -> str:
    """The subject of a ``block_safe`` answer: ``"flipflop T_RR"``."""
    return f"{task} {schur.BLOCK_NAMES[block]}"


def copy_answers(claims: Sequence, study) -> dict[str, str]:
    """The copy chapter's answer on T_CC: the per-solution statement of its ε-stabilizer claim (accuracy within
    ``study.preserve_tol`` and removed mass at least ``study.negligible_mass``, ``A26_eps_stabilizer``)."""
    (claim,) = [c for c in claims if c.id == "A26_eps_stabilizer"]
    used = {"replay_tolerance": study.preserve_tol, "negligible_mass": study.negligible_mass}
    used["majority"] = line("majority")
    a = questions.answer("copy_CC_safe", "copy", "copy_task", claim.per_solution, used=used)
    return {questions.GLUE: questions.glue_value([a])}


def _block_answers(task: str, analysis, tolerance: float, chapter: str) -> list[dict[str, Any]]:
    used = {"safe_dfvu": tolerance, "majority": line("majority")}
    out = []
    for b in BLOCKS:
        per_solution = [None if b in p.empty else bool(p.dfvu[b] <= tolerance) for p in analysis.profiles]
        out.append(questions.answer("block_safe", block_subject(task, b), chapter, per_solution, used=used))
    return out


def task_answers(task: str, analysis, tolerance: float) -> dict[str, str]:
    """A task chapter's answers: for each single block, whether it can be removed on its task (``task_<task>``)."""
    return {questions.GLUE: questions.glue_value(_block_answers(task, analysis, tolerance, f"task_{task}"))}


def _copy_own(chapter: str, per_solution, used: Mapping[str, float], criterion: str, ledger) -> dict[str, Any]:
    return questions.answer(
        "copy_CC_safe", "copy", chapter, per_solution, used=used, own_criterion=criterion, ledger_answer=ledger
    )


def dependence_answers(analyses: Mapping[str, Any], tolerance: float, ledger_copy) -> dict[str, str]:
    """*Task dependence*'s answers: every §4 task's blocks (the ledger's criterion, the task chapters' solutions) and
    T_CC on the copy task by the replay's ΔFVU (its own criterion), with ``ledger_copy`` (the copy chapter's answer,
    :func:`lib.core.questions.find`) beside."""
    out = [a for t in TASKS if t in analyses for a in _block_answers(t, analyses[t], tolerance, "task_dependence")]
    if "copy" in analyses:
        per = [None if "CC" in p.empty else bool(p.dfvu["CC"] <= tolerance) for p in analyses["copy"].profiles]
        criterion = f"ΔFVU of the replay ≤ {tolerance:g} (every output error counts, not only a wrong bit)"
        out.append(_copy_own("task_dependence", per, {"safe_dfvu": tolerance}, criterion, ledger_copy))
    return {questions.GLUE: questions.glue_value(out)}


def open_answers(records: Mapping[str, Sequence], tolerance: float, mass_threshold: float, ledger_copy) -> dict:
    """*What paper A left open*'s answer on T_CC of the copy task: a candidate invariance (ΔFVU ≤ ``tolerance`` and
    removed mass ≥ ``mass_threshold``), its own criterion, with ``ledger_copy`` beside."""
    recs = [r for r in records.get("copy", ()) if r.ablation == "CC"]
    per = [None if r.mass == 0 else bool(r.dfvu <= tolerance and r.mass >= mass_threshold) for r in recs]
    criterion = f"ΔFVU of the replay ≤ {tolerance:g} and removed mass ≥ {mass_threshold:g} (a candidate invariance)"
    a = _copy_own("paper_a_open", per, {"safe_dfvu": tolerance}, criterion, ledger_copy)
    return {questions.GLUE: questions.glue_value([a])}


def lens_answers(lenses: Mapping[str, Sequence], tolerance: float, ledger_copy) -> dict[str, str]:
    """*Two lenses*' answer on T_CC of the copy task: ΔFVU ≤ ``tolerance`` on the one copy solution it studies, its
    own criterion, with ``ledger_copy`` beside."""
    per = [None if "CC" in lens.empty else bool(lens.dfvu["CC"] <= tolerance) for lens in lenses.get("copy", ())[:1]]
    criterion = f"ΔFVU of the replay ≤ {tolerance:g} on the first copy solution (the one whose flow it follows)"
    a = _copy_own("two_lenses", per, {"safe_dfvu": tolerance}, criterion, ledger_copy)
    return {questions.GLUE: questions.glue_value([a])}


def shown(answers_glue: Mapping[str, str]) -> dict[str, str]:
    """Glue values for the prose of a chapter that answers the copy question by its own criterion: its answer and the
    ledger's, in words (``copy_CC_ours_text``, ``copy_CC_ledger_text``)."""
    (a,) = [x for x in questions.from_glue(answers_glue) if x["question"] == "copy_CC_safe"]
    return {"copy_CC_ours_text": questions.phrase(a), "copy_CC_ledger_text": questions.phrase(a["ledger_answer"])}
