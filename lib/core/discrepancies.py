"""Every claim whose value differs from the paper's, with the cause the book tested, or "unexplained".

For each claim of a paper whose value differs from ours (in kind, or not reproduced), :data:`CAUSES` names the test the
book can run on what the chapters computed (a paper-sized sample of our solutions, the probe set's own angle) and
says what it showed; where no test fits (the paper does not give what it would need), the cause is named as untested
and the status is "unexplained". The findings page (``lib.core.findings``) shows the table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lib.core.findings import executed, reason
from lib.core.scorecard import SHORT
from lib.core.tables import Link, Table


@dataclass(frozen=True)
class Discrepancy:
    """A claim whose value differs from the paper's: the gap, the cause tested (or why none could be) and the
    status ("explained", "unexplained")."""

    claim: str
    statement: str
    gap: str
    test: str
    status: str
    href: str


def _sampling(task: str, block: str) -> Callable[[Mapping[str, Any], Mapping[str, Any]], tuple[str, str]]:
    def test(rec: Mapping[str, Any], v: Mapping[str, Any]) -> tuple[str, str]:
        first3, paper = v[f"task_{task}::dfvu_{block}_first3"], rec["paper_number"]
        within = abs(first3 - paper) <= rec["tolerance"]
        verdict = (
            "within the paper's tolerance: sampling can explain it" if within else "so sampling does not explain it"
        )
        text = (
            f"Sampling: a paper-sized study (our first three seeds) gives {first3:.3g}, {first3 / paper:.1f}× the "
            f"paper's, {verdict}. Training takes the paper's {v[f'task_{task}::train_steps']} Adam steps; not tested: "
            "the task details the paper does not give (pulse statistics, noise, input and readout initialisation)."
        )
        return text, "explained" if within else "unexplained"

    return test


def _copy_controller(rec: Mapping[str, Any], v: Mapping[str, Any]) -> tuple[str, str]:
    return (
        "Not testable: the paper reports one controller and gives no copy-task training settings, so no run of its "
        f"configuration is possible; our values are over {rec.get('n') or 'several'} solutions of our own.",
        "unexplained",
    )


def _annulus_probe(rec: Mapping[str, Any], v: Mapping[str, Any]) -> tuple[str, str]:
    conds = ("wedge_init", "full_init", "wedge_trained", "full_trained")
    pairs = [(v[f"annulus::cos_function_start_{c}"], v[f"annulus::cos_targets_start_{c}"]) for c in conds]
    bounds = [v[f"annulus::orth_bound_start_{c}"] for c in conds]
    inherited = all(inherits(f, t, b) for (f, t), b in zip(pairs, bounds, strict=True))
    worst = max(abs(t) for _, t in pairs)
    text = (
        f"Probe set: the targets X f and −δ themselves have a cosine up to {worst:.3g} on the annulus's probe set, "
        "which is not rotation-invariant (eq. 22 needs one); the realised moves "
        + (
            "inherit it, within what the residuals allow, in every condition."
            if inherited
            else "do not only inherit it."
        )
    )
    return text, "explained" if inherited else "unexplained"


def inherits(realised: float, targets: float, allowance: float) -> bool:
    """Whether the realised moves' cosine is the targets' own, up to what the lifts' residuals allow (both sides)."""
    return abs(realised - targets) <= allowance


def _mexican_probe(rec: Mapping[str, Any], v: Mapping[str, Any]) -> tuple[str, str]:
    t, f, b = v["mexican_hat::cos_cb_targets"], v["mexican_hat::cos_cb_function_plain"], v["mexican_hat::cos_cb_bound"]
    inherited = inherits(f, t, b)
    text = f"Probe set: the targets η and δ have a cosine of {t:.3g} on this probe set; the realised moves " + (
        "stay within it plus what the residuals allow."
        if inherited
        else "depart from it by more than the residuals allow."
    )
    return text, "explained" if inherited else "unexplained"


def _rank_conventions(rec: Mapping[str, Any], v: Mapping[str, Any]) -> tuple[str, str]:
    mh = {k.split("::", 1)[1]: x for k, x in v.items() if k.startswith("mexican_hat::")}
    text = (
        f"The cutoff's reading, tested: {mh['rank_conv_finding']} (τ on J: {mh['rank_conv_J_tau']}, τ²: "
        f"{mh['rank_conv_J_tau2']}, τ on JᵀJ's eigenvalues: {mh['rank_conv_J_gram']}; after the gauge: "
        f"{mh['rank_conv_JD_tau']}, {mh['rank_conv_JD_tau2']}, {mh['rank_conv_JD_gram']}). The network and its "
        f"training remain: this rank is of a model trained {mh['train_steps']} minibatch steps with L1 weight "
        f"{mh['l1_trained']:g}, where the authors' configuration gives {mh['authors_steps_lo']:,}–"
        f"{mh['authors_steps_hi']:,} full-batch steps with L1 weight {mh['authors_l1']:g}."
    )
    return text, "explained" if mh["rank_conv_match"] != "none" else "unexplained"


def _unexplained(why: str) -> Callable[[Mapping[str, Any], Mapping[str, Any]], tuple[str, str]]:
    return lambda rec, v: (why, "unexplained")


#: The cause the book can test for each claim whose value can differ from the paper's.
CAUSES: dict[str, Callable[[Mapping[str, Any], Mapping[str, Any]], tuple[str, str]]] = {
    "A4_flipflop_dfvu_CR": _sampling("flipflop", "CR"),
    "A4_context_dfvu_CR": _sampling("context", "CR"),
    "A4_context_dfvu_CC": _sampling("context", "CC"),
    "A4_sine_dfvu_CC": _sampling("sine", "CC"),
    "A3_classes": _copy_controller,
    "A3_table1_minus_CR_orth": _copy_controller,
    "B_c3_annulus_orthogonal": _annulus_probe,
    "B_c3_orthogonal_lifts": _mexican_probe,
    "B96_rank": _rank_conventions,
    "B88_resolved_c_2pct": _unexplained(
        "Not tested: the paper's 2 % comes from its notes without the step size or the number of re-solves."
    ),
    "B93_val_mse": _unexplained(
        "Not tested: the notes give too little of their training (its data and schedule in part) to rerun it as "
        "they did."
    ),
    "B_eq22_square": _unexplained(
        "Not tested: the notes' −0.1 is for their network; the sign and the departure from zero are what the claim is."
    ),
    "A4_sine_RR_little": _unexplained(
        "Not tested: the paper gives neither its n_R nor the sine task's frequencies and cue, which decide how many "
        "eigenvalues R holds."
    ),
}


def discrepancies(records: Sequence[Mapping[str, Any]], values: Mapping[str, Any]) -> list[Discrepancy]:
    """Every claim of a paper's findings whose value differs from the paper's (in kind, or not reproduced), each with
    its tested cause or "unexplained". A cause whose chapter was not executed is "not computed"; a value missing from
    an executed chapter is an error (KeyError naming it)."""
    out = []
    for rec in records:
        differs = rec.get("value_decision") is False or SHORT[rec["kind"]] == "not reproduced"
        if not differs or rec["group"] != "finding":
            continue
        gap = reason(rec)
        test = CAUSES.get(rec["id"])
        if test is None and rec["id"].startswith("A3_fig1_"):
            test = _copy_controller
        if test is None:
            text, status = "No cause the book can test.", "unexplained"
        else:
            try:
                text, status = test(rec, values)
            except KeyError as missing:
                if executed(values, str(missing.args[0]).split("::", 1)[0]):
                    raise
                text, status = f"Not tested here: the value {missing} was not computed.", "unexplained"
        out.append(Discrepancy(rec["id"], rec["statement"], gap, text, status, rec["link"]))
    return out


def discrepancy_table(found: Sequence[Discrepancy]) -> Table:
    """The discrepancies, the claims that share a cause in one row: the claims (linked to the first one's section),
    ours against the paper's for each, the cause tested, explained or not."""
    groups: dict[tuple[str, str], list[Discrepancy]] = {}
    for d in found:
        groups.setdefault((d.test, d.status), []).append(d)
    rows = tuple(
        (Link(" · ".join(d.statement for d in ds), ds[0].href), " · ".join(d.gap for d in ds), test, status)
        for (test, status), ds in groups.items()
    )
    return Table(("claim", "ours against the paper's", "the cause tested", "status"), rows)


def discrepancy_values(found: Sequence[Discrepancy]) -> dict[str, Any]:
    """How many discrepancies there are and how many the book explains."""
    return {
        "n_discrepancies": len(found),
        "n_explained": sum(d.status == "explained" for d in found),
        "n_unexplained": sum(d.status == "unexplained" for d in found),
    }
