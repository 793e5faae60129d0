"""What the book found, in two minutes: the findings page (``book/findings.md``).

Everything here is built from what the chapters computed: their claim records (``lib.core.claims``), their glued
values (``{"<chapter>::<name>": value}``, as in ``_build/results.json``) and their answers to the questions several
chapters answer (``lib.core.questions``). Nothing is typed in: a sentence that says something holds is chosen by a
rule on the computed numbers, written here before the numbers, and the page shows the number that decides it.

- :func:`central_table`: each paper's central claims, one line each, the verdict and the number that decides it.
- :func:`beyond`: what the book found that the papers did not say, each a computed statement with its link.
- the ledger of questions several chapters answer is ``lib.core.questions`` (``ledger_table``).

Every claim whose value differs from the paper's, with the cause the book tested or "unexplained", is
``lib.core.discrepancies``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from IPython.display import Markdown

from lib.core.lines import line
from lib.core.scorecard import SHORT, badge
from lib.core.tables import Link, Table, as_myst

#: Each paper's central claims, in the order a reader meets them (ids of ``lib.core.claims`` records): its headline
#: results, the ones the findings page leads with. Counts keep the findings apart from identities of the book's code.
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
        "B_c2_held_out",
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
        parts.append(f"holds in {rec['k']} of {rec['n']} {rec.get('unit') or 'solutions'}")
    paper = rec.get("paper_number")
    ours = rec.get("ours")
    if paper is not None and ours is not None:
        text = f"ours {number(ours)} against the paper's {rec['paper_value']}"
        r = _ratio(ours, paper)
        if r is not None and (rec.get("value_decision") is False or max(r, 1 / r) > line("kind_factor")):
            text += f" ({r:.1f}× the paper's)" if r >= 1 else f" ({1 / r:.1f}× below the paper's)"
        parts.append(text)
    elif ours is not None and not parts:
        paper_text = f" (the paper: {rec['paper_value']})" if rec.get("paper_value") not in (None, "") else ""
        parts.append(f"ours {number(ours)}{paper_text}")
    return "; ".join(parts) or "—"


#: The network each chapter of paper B judges its claims on (the findings page names it beside each claim).
NETWORKS = {
    "annulus": "the annulus classifier",
    "mexican_hat": "the Mexican-hat ASRNN",
    "lifting_criterion": "the criterion's small MLPs (an identity of the book's code)",
}


def central_table(records: Sequence[Mapping[str, Any]], paper: str) -> Table:
    """A paper's central claims: the statement (linked to where it is computed), the verdict and its reason; for
    paper B also the network it is judged on and the rule that judges it (its criterion)."""
    by_id = {r["id"]: r for r in records}
    rows = []
    for cid in CENTRAL[paper]:
        rec = by_id.get(cid)
        if rec is None:
            continue
        row = (Link(rec["statement"], rec["link"]), badge(rec["kind"], SHORT[rec["kind"]]), reason(rec))
        if paper == "B":
            row = (row[0], NETWORKS.get(rec["chapter"], rec["chapter"]), *row[1:], rec["criterion"])
        rows.append(row)
    head = ("the paper's claim", "verdict", "the number that decides it")
    if paper == "B":
        head = (head[0], "network", *head[1:], "judged against")
    return Table(head, tuple(rows), ".3g")


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
    """Per paper, how many of its central findings (group "finding") are reproduced (fully or in kind), undecided
    and not reproduced, which are not, in words; and apart, how many central identities of the book's code hold."""
    by_id = {r["id"]: r for r in records}
    out: dict[str, Any] = {}
    for paper, ids in CENTRAL.items():
        identities = [by_id[i] for i in ids if i in by_id and by_id[i]["group"] != "finding"]
        out[f"central_identities_{paper}"] = len(identities)
        out[f"central_identities_held_{paper}"] = sum(r["kind"] == "reproduced" for r in identities)
        recs = [by_id[i] for i in ids if i in by_id and by_id[i]["group"] == "finding"]
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


def _share(frac: float) -> str:
    return "every" if frac == 1 else "no" if frac == 0 else f"{frac:.0%} of the"


def _split_straddles(v: Mapping[str, Any]) -> Finding:
    frac, cut = v["task_context::frac_gap_below_001"], v["task_context::gap_cut"]
    lo, hi = v["task_context::nR_min"], v["task_context::nR_max"]
    sits = frac > line("majority")
    text = (
        f"In {_share(frac)} context-integration solution the edge of the leading sector lies within {cut:g}·ρ(W) of "
        f"the threshold α·ρ(W) (smallest gap {v['task_context::min_threshold_gap']:.1e}·ρ(W)), and n_R, the size of "
        f"R, runs from {lo} to {hi} across solutions"
        + (": which couplings count as T_RR or T_C→R there is decided by eigenvalues next to the line, and moves "
           "with α." if sits else ".")
    )  # fmt: skip
    title = (
        "The context task's split sits on its threshold"
        if sits
        else "The context task's split is clear of its threshold"
    )
    return Finding(title, text, "task_context.html")


def _gauge(v: Mapping[str, Any]) -> Finding:
    paper, minnorm = v["annulus::growth_c_fixed_full_trained"], v["annulus::growth_c_fixed_minnorm_full_trained"]
    factor = max(paper / minnorm, minnorm / paper)
    depends = factor > line("kind_factor")
    text = (
        f"Paper B's fixed c* walk on the trained annulus grows the defect {paper:.1f}× in the paper's gauge and "
        f"{minnorm:.1f}× in the minimum-norm gauge, a factor {factor:.1f} apart against the book's half-decade line "
        f"({line('kind_factor'):g}): the size of the failure it reports "
        + ("depends on the gauge." if depends else "does not depend on the gauge.")
    )
    title = "The fixed-direction failure " + ("depends on the gauge" if depends else "does not depend on the gauge")
    return Finding(title, text, "annulus.html")


def _auc_words(auc: float) -> str:
    if auc == 1:
        return "separates them perfectly"
    if auc > 0.5:
        return "ranks them the right way"
    return "ranks them the wrong way" if auc < 0.5 else "ranks them no better than chance"


def _screen(v: Mapping[str, Any]) -> Finding:
    null, gn = v["two_lenses::auc_null"], v["two_lenses::auc_gn"]
    text = (
        f"Read as a screen for paper A's safe ablations, paper B's near-null fraction {_auc_words(null)} (AUC "
        f"{null:.3f}; below 0.5 the safe ablations have the larger near-null share), and the Gauss–Newton prediction "
        f"of each ablation's ΔFVU from the same Jacobian {_auc_words(gn)} (AUC {gn:.3f})."
    )
    short = {auc: _auc_words(auc).replace("them ", "") for auc in (null, gn)}
    title = f"The near-null fraction {short[null]}; the Gauss–Newton screen {short[gn]}"
    return Finding(title, text, "two_lenses.html")


def _sector_order(v: Mapping[str, Any]) -> Finding:
    rr, cc, cr = (v[f"schur_coordinates::partition_diff_{b}"] for b in ("RR", "CC", "CR"))
    tiny = line("round_off")
    moved = [name for name, d in (("T_RR", rr), ("T_CC", cc)) if d > tiny]
    same_cr = "the same T_C→R" if cr <= tiny else "another T_C→R"
    if moved:
        what = " and ".join(moved)
        tail = f"changes the {what} that an ablation zeroes: ablating {what} depends on the order inside each sector."
    else:
        tail = "leaves T_RR and T_CC as they are: the order inside each sector does not matter here."
    text = (
        f"Paper A orders the Schur blocks by modulus. A Schur form that only separates R from C (scipy's partition) "
        f"gives {same_cr} (difference {cr:.0e} of ‖W‖), and differs in T_RR by {rr:.3f} and in T_CC by {cc:.3f} of "
        f"‖W‖; against the round-off line ({tiny:g}) it " + tail
    )
    title = (f"{' and '.join(moved)} ablations depend on the order inside each sector" if moved
             else "The order inside each sector does not matter")  # fmt: skip
    return Finding(title, text, "schur_coordinates.html")


def _trivial_rr(v: Mapping[str, Any]) -> Finding:
    mass, lo, hi = v["task_flipflop::mass_RR"], v["task_flipflop::nR_min"], v["task_flipflop::nR_max"]
    small = mass < line("negligible_mass")
    what = "less than" if small else "at least"
    text = (
        f"On the 3-bit flip-flop, removing T_RR takes {mass:.4f} of the Schur form on average, {what} the book's "
        f"negligible mass ({line('negligible_mass'):g}); R holds {lo} to {hi} eigenvalues."
        + (" That T_RR can be removed there says little: there is almost nothing to remove." if small else "")
    )
    title = "Flip-flop's harmless T_RR " + ("removes almost nothing" if small else "removes a real share of the form")
    return Finding(title, text, "task_flipflop.html")


#: The findings beyond the papers: each a rule on the glued values of one chapter (the link's).
BEYOND: tuple[Callable[[Mapping[str, Any]], Finding], ...] = (
    _split_straddles, _gauge, _screen, _sector_order, _trivial_rr,
)  # fmt: skip
#: The chapter whose values each rule reads.
SOURCES = {
    _split_straddles: "task_context",
    _gauge: "annulus",
    _screen: "two_lenses",
    _sector_order: "schur_coordinates",
    _trivial_rr: "task_flipflop",
}


def executed(values: Mapping[str, Any], chapter: str) -> bool:
    """Whether ``values`` (``{"<chapter>::<name>": value}``) hold anything of ``chapter``."""
    return any(key.startswith(f"{chapter}::") for key in values)


def beyond(values: Mapping[str, Any]) -> list[Finding]:
    """Every finding of :data:`BEYOND` whose chapter was executed; a value missing from an executed chapter is an
    error (KeyError naming it), not a finding left out."""
    return [rule(values) for rule in BEYOND if executed(values, SOURCES[rule])]


def beyond_table(found: Sequence[Finding]) -> Table:
    """The findings as a table: what, the computed statement (linked to where it is shown)."""
    rows = tuple((Link(f.title, f.href), f.text) for f in found)
    return Table(("finding", "what the chapters computed"), rows)
