"""What the book found, in two minutes: the findings page (``book/findings.md``).

Everything here is built from what the chapters computed: their claim records (``lib.core.claims``), their glued
values (``{"<chapter>::<name>": value}``, as in ``_build/results.json``) and their answers to the questions several
chapters answer (``lib.core.questions``). Nothing is typed in: a sentence that says something holds is chosen by a
rule on the computed numbers, written here before the numbers, and the page shows the number that decides it.

- :func:`central_table`: each paper's central claims, one line each, the verdict and the number that decides it.
- :func:`beyond`: what the book found that the papers did not say, each a computed statement with its link.
- :func:`ledger_table`: one answer per question, and each chapter's own criterion beside it.

Every claim whose value differs from the paper's, with the cause the book tested or "unexplained", is
``lib.core.discrepancies``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from IPython.display import Markdown

from lib.core import questions
from lib.core.lines import line
from lib.core.scorecard import SHORT, badge
from lib.core.tables import Link, Table, as_myst

#: Each paper's central claims, in the order a reader meets them (ids of ``lib.core.claims`` records).
CENTRAL = {
    "A": (
        "A3_CC_stabilizer",
        "A26_eps_stabilizer",
        "A3_fig1_minus_CR",
        "A4_no_uniformly_safe",
        "A4_flipflop_CR_largest",
        "A4_flipflop_dfvu_CR",
        "A4_context_dfvu_CR",
        "A4_context_CC_gt_CR",
        "A4_sine_RR_little",
        "A28_basis",
        "A5_distance_keeps",
    ),
    "B": (
        "B_c1_sensitivity",
        "B_c2_lift_identity",
        "B88_resolved_b_1pct",
        "B88_resolved_c_2pct",
        "B88_fixed_c_growth",
        "B95_fixed_drifts",
        "B96_rank",
        "B_c3_orthogonal_lifts",
        "B_c3_annulus_orthogonal",
    ),
}


def number(value: Any) -> str:
    """A value in words: three significant digits, a list as "a, b and c" (repeats once), never a repr."""
    if isinstance(value, bool) or value is None:
        return {True: "yes", False: "no", None: "—"}[value]
    if isinstance(value, (list, tuple)):
        shown = list(dict.fromkeys(number(v) for v in value))
        return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def _ratio(ours: Any, paper: Any) -> float | None:
    if isinstance(ours, (list, tuple)) or isinstance(ours, bool) or isinstance(paper, bool):
        return None
    if not isinstance(ours, (int, float)) or not isinstance(paper, (int, float)) or paper == 0 or ours == 0:
        return None
    if not (math.isfinite(ours) and math.isfinite(paper)):
        return None
    return ours / paper


def reason(rec: Mapping[str, Any]) -> str:
    """The number that decides a claim's verdict, in one line: how many solutions the statement holds in, and our
    value against the paper's (with the ratio where they differ)."""
    parts = []
    if rec.get("per_solution") is not None and rec.get("n"):
        parts.append(f"holds in {rec['k']} of {rec['n']} solutions")
    paper = rec.get("paper_number")
    ours = rec.get("ours")
    if paper is not None and ours is not None:
        text = f"ours {number(ours)} against the paper's {rec['paper_value']}"
        r = _ratio(ours, paper)
        if r is not None and rec.get("value_decision") is False:
            text += f" ({r:.1f}× the paper's)" if r >= 1 else f" ({1 / r:.1f}× below the paper's)"
        parts.append(text)
    elif ours is not None and not parts:
        paper_text = f" (the paper: {rec['paper_value']})" if rec.get("paper_value") not in (None, "") else ""
        parts.append(f"ours {number(ours)}{paper_text}")
    return "; ".join(parts) or "—"


def central_table(records: Sequence[Mapping[str, Any]], paper: str) -> Table:
    """A paper's central claims: the statement (linked to where it is computed), the verdict and its reason."""
    by_id = {r["id"]: r for r in records}
    rows = []
    for cid in CENTRAL[paper]:
        rec = by_id.get(cid)
        if rec is None:
            continue
        rows.append((Link(rec["statement"], rec["link"]), badge(rec["kind"], SHORT[rec["kind"]]), reason(rec)))
    return Table(("the paper's claim", "verdict", "the number that decides it"), tuple(rows), ".3g")


def findings_values(
    records: Sequence[Mapping[str, Any]],
    found: Sequence[Finding],
    answers: Sequence[Mapping[str, Any]],
    problems: Sequence[str],
) -> dict[str, Any]:
    """The findings page's glued values: :func:`central_values`, how many findings beyond the papers, how many
    questions and subjects the ledger answers, and whether the chapters agree on them."""
    out = central_values(records)
    out["n_findings"] = len(found)
    out["n_questions"] = len({(a["question"], a["subject"]) for a in answers})
    out["reconciled"] = "agree" if not problems else f"disagree in {len(problems)} places (listed below)"
    return out


def central_values(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per paper, how many of its central claims are reproduced (fully or in kind) and which are not, in words."""
    by_id = {r["id"]: r for r in records}
    out: dict[str, Any] = {}
    for paper, ids in CENTRAL.items():
        recs = [by_id[i] for i in ids if i in by_id]
        held = [r for r in recs if SHORT[r["kind"]] in ("reproduced", "in kind")]
        failed = [r for r in recs if SHORT[r["kind"]] == "not reproduced"]
        open_ = [r for r in recs if SHORT[r["kind"]] == "undecided"]
        out[f"central_n_{paper}"] = len(recs)
        out[f"central_held_{paper}"] = len(held)
        out[f"central_failed_{paper}"] = len(failed)
        out[f"central_undecided_{paper}"] = len(open_)
        out[f"central_failed_text_{paper}"] = _listed([r["statement"] for r in failed]) or "none"
        out[f"central_failed_md_{paper}"] = Markdown(as_myst(out[f"central_failed_text_{paper}"]))  # {glue:md}
    return out


def _listed(items: Sequence[str]) -> str:
    items = [f"“{i}”" for i in items]
    return items[0] if len(items) == 1 else (", ".join(items[:-1]) + " and " + items[-1] if items else "")


@dataclass(frozen=True)
class Finding:
    """A statement the book computed that the papers do not make: a title, the sentence, and where it is shown."""

    title: str
    text: str
    href: str


def _split_straddles(v: Mapping[str, Any]) -> Finding:
    frac, cut = v["task_context::frac_gap_below_001"], v["task_context::gap_cut"]
    lo, hi = v["task_context::nR_min"], v["task_context::nR_max"]
    where = "every" if frac == 1 else f"{frac:.0%} of the"
    text = (
        f"In {where} context-integration solution the leading sector's edge lies within {cut:g} of the threshold "
        f"α·ρ(W) (smallest gap {v['task_context::min_threshold_gap']:.1e}), so n_R, the size of R, runs from {lo} "
        f"to {hi} across solutions: which couplings count as T_RR or T_C→R there is decided by eigenvalues that "
        "rounding could move across the line."
    )
    return Finding("The context task's split sits on its threshold", text, "task_context.html")


def _gauge(v: Mapping[str, Any]) -> Finding:
    paper, minnorm = v["annulus::growth_c_fixed_full_trained"], v["annulus::growth_c_fixed_minnorm_full_trained"]
    depends = paper / minnorm > line("kind_factor")
    verb = "depends on the gauge" if depends else "does not depend on the gauge"
    text = (
        f"Paper B's fixed c* walk on the trained annulus grows the defect {paper:.1f}× in the paper's gauge but "
        f"{minnorm:.1f}× in the minimum-norm gauge: the size of the failure it reports {verb} (a factor "
        f"{paper / minnorm:.0f} between them, against the book's half-decade line {line('kind_factor'):g})."
    )
    return Finding("The fixed-direction failure depends on the gauge", text, "annulus.html")


def _screen(v: Mapping[str, Any]) -> Finding:
    null, gn = v["two_lenses::auc_null"], v["two_lenses::auc_gn"]
    way = "the wrong way (below 0.5: safe ablations have the larger near-null share)" if null < 0.5 else "the right way"
    text = (
        f"Paper B's near-null fraction, read as a screen for paper A's safe ablations, ranks them with an AUC of "
        f"{null:.3f}, {way}; the Gauss–Newton prediction of each ablation's ΔFVU from the same Jacobian ranks them "
        f"with an AUC of {gn:.3f}."
    )
    return Finding("A Gauss–Newton screen finds the safe ablations; the near-null criterion does not", text,
                   "two_lenses.html")  # fmt: skip


def _sector_order(v: Mapping[str, Any]) -> Finding:
    rr, cc, cr = (v[f"schur_coordinates::partition_diff_{b}"] for b in ("RR", "CC", "CR"))
    text = (
        f"Paper A orders the Schur blocks by modulus; a Schur form that only separates R from C (scipy's partition) "
        f"gives the same T_C→R (difference {cr:.0e}) but changes the T_RR and T_CC that an ablation zeroes by "
        f"{rr:.3f} and {cc:.3f} of ‖W‖: ablating T_RR or T_CC depends on the order inside each sector, which the paper "
        "fixes without saying that it matters."
    )
    return Finding("T_RR and T_CC ablations depend on the order inside each sector", text, "schur_coordinates.html")


def _trivial_rr(v: Mapping[str, Any]) -> Finding:
    mass, lo, hi = v["task_flipflop::mass_RR"], v["task_flipflop::nR_min"], v["task_flipflop::nR_max"]
    small = mass < line("negligible_mass")
    what = "less than the book's negligible mass" if small else "a non-negligible share"
    text = (
        f"On the 3-bit flip-flop, removing T_RR takes {mass:.4f} of the Schur form on average ({what}, "
        f"{line('negligible_mass'):g}): R holds {lo} to {hi} eigenvalues, so T_RR has almost no entries."
        + (" Its harmlessness is then close to trivial." if small else "")
    )
    return Finding("Flip-flop's harmless T_RR removes almost nothing", text, "task_flipflop.html")


#: The findings beyond the papers, each a rule on glued values.
BEYOND: tuple[Callable[[Mapping[str, Any]], Finding], ...] = (
    _split_straddles, _gauge, _screen, _sector_order, _trivial_rr,
)  # fmt: skip


def beyond(values: Mapping[str, Any]) -> list[Finding]:
    """Every finding of :data:`BEYOND` whose chapters were executed (a rule whose values are missing is left out)."""
    out = []
    for rule in BEYOND:
        try:
            out.append(rule(values))
        except KeyError:
            continue
    return out


def beyond_table(found: Sequence[Finding]) -> Table:
    """The findings as a table: what, the computed statement (linked to where it is shown)."""
    rows = tuple((Link(f.title, f.href), f.text) for f in found)
    return Table(("finding", "what the chapters computed"), rows)


#: Subjects of the questions in words, where their names are not (``lib.core.questions.answer``'s ``subject``).
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
        book = {s: questions.find(mine, question, s) for s in subjects}
        said = "; ".join(f"{SUBJECTS.get(s, s)}: {questions.phrase(book[s])}" for s in subjects)
        ledgers = {b["chapter"] for b in book.values() if b is not None}
        same = sorted({title(a["chapter"]) for a in mine if a["own_criterion"] is None and a["chapter"] not in ledgers})
        others = [f"the same answers in {', '.join(same)}"] if same else []
        others += [
            f"{title(a['chapter'])}, by {a['own_criterion']}: {questions.phrase(a)}"
            for a in mine
            if a["own_criterion"] is not None
        ]
        rows.append((questions.QUESTIONS[question].asks, said, "; ".join(others) or "—"))
    return Table(("question", "the book's answer", "other chapters"), tuple(rows))


def problems_table(problems: Sequence[str]) -> Table | None:
    """Where the chapters disagree on a question (``lib.core.questions.reconcile``); ``None`` (nothing shown) when
    they agree."""
    return Table(("where the chapters disagree",), tuple((p,) for p in problems)) if problems else None


def criteria_table() -> Table:
    """Each question's one criterion, with the lines it uses and their values."""
    rows = []
    for q in questions.QUESTIONS.values():
        used = ", ".join(f"{n.replace('_', ' ')} = {line(n):g}" for n in q.lines) or "—"
        rows.append((q.asks, q.criterion, used))
    return Table(("question", "the one criterion", "its lines"), tuple(rows))
