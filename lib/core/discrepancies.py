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
from lib.core.lines import line
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


def _variants(task: str, quantity: str, rec: Mapping[str, Any], v: Mapping[str, Any]) -> tuple[str, bool]:
    """The task choices the paper leaves open, as *Task dependence* ran them (its first seeds under each variant):
    the sentence citing each with its value, and whether any reaches the paper (within its tolerance; for a claim
    without a number, "little effect", within the safe line). ``quantity``: "fvu", "dfvu_<block>" or
    "sens_<block>"."""
    pre = "task_dependence::"
    labels = []
    while f"{pre}variant_label_{task}_{len(labels)}" in v:  # variants 0, 1, … as the chapter glued them
        labels.append(v[f"{pre}variant_label_{task}_{len(labels)}"])
    if not labels:
        ran = executed(v, "task_dependence")
        return ("" if ran else " The task variants were not computed here (Task dependence did not run)."), False
    kind, _, block = quantity.partition("_")
    names = [f"{pre}variant_fvu_{task}_{i}" if not block else f"{pre}variant_{kind}_{task}_{i}_{block}"
             for i in range(len(labels))]  # fmt: skip
    got = [v[name] for name in names]
    if rec.get("paper_number") is not None:
        within, what = [abs(x - rec["paper_number"]) <= rec["tolerance"] for x in got], "the paper's tolerance"
    else:
        within, what = [x <= line("safe_dfvu") for x in got], f"the safe line ({line('safe_dfvu'):g})"
    base = f" against {v[f'{pre}variant_base_{kind}_{task}_{block}']:.3g} under the book's choice" if block else ""
    cited = ", ".join(f"{label} gives {x:.3g}" for label, x in zip(labels, got, strict=True))
    verdict = f"{sum(within)} of {len(within)} within" if any(within) else "none within"
    return (
        f" Task choices the paper leaves open, tested (Task dependence, its first {v[f'{pre}variant_seeds']} seeds): "
        f"{cited}{base}; {verdict} {what}."
    ), any(within)


def _sampling(task: str, quantity: str) -> Callable[[Mapping[str, Any], Mapping[str, Any]], tuple[str, str]]:
    def test(rec: Mapping[str, Any], v: Mapping[str, Any]) -> tuple[str, str]:
        paper, first3_key = rec.get("paper_number"), f"task_{task}::{quantity}_first3"
        text, explained = "", False
        if first3_key in v:
            first3 = v[first3_key]
            if paper is None:  # "little effect": the safe line
                within, against = first3 <= line("safe_dfvu"), f"against the safe line ({line('safe_dfvu'):g})"
            else:
                within, against = abs(first3 - paper) <= rec["tolerance"], f"{first3 / paper:.1f}× the paper's"
            explained = within
            reach = "within the paper's tolerance" if paper is not None else "at or below it"
            verdict = f"{reach}: sampling can explain it." if within else "so sampling does not explain it."
            text = f"Sampling: a paper-sized study (our first three seeds) gives {first3:.3g}, {against}, {verdict}"
        variants, by_variant = _variants(task, quantity, rec, v)
        text = (text + variants).strip() + (
            f" Training takes the paper's {v[f'task_{task}::train_steps']} Adam steps; not tested: what the paper "
            "does not give and no variant covers (the input and readout initialisation)."
        )
        return text, "explained" if explained or by_variant else "unexplained"

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


def training_departures(mh: Mapping[str, Any]) -> list[str]:
    """How the Mexican hat's training departs from the authors' configuration (its steps, full batch, L1 weight),
    from the chapter's glued values; empty when it is trained as they configured it."""
    out = []
    if not mh["authors_steps_lo"] <= mh["train_steps"] <= mh["authors_steps_hi"]:
        out.append(f"{mh['train_steps']:,} steps where they give {mh['authors_steps_lo']:,}–{mh['authors_steps_hi']:,}")
    if mh["batch_size"] < mh["n_train_windows"]:
        out.append(f"minibatches of {mh['batch_size']} windows where they take all {mh['n_train_windows']}")
    if mh["l1_trained"] != mh["authors_l1"]:
        out.append(f"L1 weight {mh['l1_trained']:g} where they give {mh['authors_l1']:g}")
    return out


def _training(mh: Mapping[str, Any]) -> str:
    gone = training_departures(mh)
    if not gone:
        return "Our model is trained as the authors configured it."
    return (
        f"Our training departs from the authors' configuration: {'; '.join(gone)}. With their L1 weight on our "
        f"schedule the rank is {mh['l1run_rank']} (without: {mh['ours_rank']}) and the validation MSE "
        f"{mh['l1run_val_mse']:.2g} (without: {mh['ours_val_mse']:.2g}); "
        + (
            f"with their schedule and L1 weight the rank is {mh['authors_rank']} and the validation MSE "
            f"{mh['authors_val_mse']:.2g}."
            if "authors_rank" in mh
            else f"their schedule is not run (its shortest version is {mh['authors_full_batch_work']:.0f}× our "
            "training's work)."
        )  # fmt: skip
    )


class _Chapter(dict):
    """One chapter's values by their glue names; a missing one raises KeyError naming "<chapter>::<name>" (so that a
    value missing from an executed chapter is an error, not a cause "not computed")."""

    def __init__(self, chapter: str, v: Mapping[str, Any]):
        super().__init__({k.split("::", 1)[1]: x for k, x in v.items() if k.startswith(f"{chapter}::")})
        self.chapter = chapter

    def __missing__(self, name: str):
        raise KeyError(f"{self.chapter}::{name}")


def _mexican(v: Mapping[str, Any]) -> dict[str, Any]:
    return _Chapter("mexican_hat", v)


def _rank_conventions(rec: Mapping[str, Any], v: Mapping[str, Any]) -> tuple[str, str]:
    mh = _mexican(v)
    text = (
        f"The cutoff's reading, tested: {mh['rank_conv_finding']} (τ on J: {mh['rank_conv_J_tau']}, τ²: "
        f"{mh['rank_conv_J_tau2']}, τ on JᵀJ's eigenvalues: {mh['rank_conv_J_gram']}; after the gauge: "
        f"{mh['rank_conv_JD_tau']}, {mh['rank_conv_JD_tau2']}, {mh['rank_conv_JD_gram']}). " + _training(mh)
    )
    explained = mh["rank_conv_match"] != "none" or mh["l1run_rank"] == int(float(mh["paper_rank"]))
    return text, "explained" if explained else "unexplained"


def _val_mse(rec: Mapping[str, Any], v: Mapping[str, Any]) -> tuple[str, str]:
    mh = _mexican(v)
    text = (
        f"Their {mh['paper_val_mse']} comes from a model trained {mh['paper_val_mse_steps']:,} full-batch steps with "
        "rotation augmentation (the notes). " + _training(mh)
    )
    return text, "unexplained"


def _table_against_text(rec: Mapping[str, Any], v: Mapping[str, Any]) -> tuple[str, str]:
    """The paper's 2 % against its own table: the largest |end/start − 1| its printed c* rows allow."""
    from lib.papers.symmetry_lifting import ANNULUS_TABLE, RESOLVED_C_TOLERANCE

    ours, limit = rec["ours"], RESOLVED_C_TOLERANCE.value
    spans = []
    for (kind, _), row in ANNULUS_TABLE.items():
        if kind == "c":
            (s, hs), (e, he) = ((row[k].value, row[k].half_unit) for k in ("start", "end"))
            ends = sorted(abs(x) for x in ((e - he) / (s + hs) - 1, (e + he) / (s - hs) - 1))
            low = 0.0 if (e - he) / (s + hs) - 1 < 0 < (e + he) / (s - hs) - 1 else ends[0]
            spans.append((low, ends[1], abs(e / s - 1)))  # |end/start − 1| its printed digits allow
    lo, hi, shown = max(spans, key=lambda x: x[2])
    inside, beyond = lo <= abs(ours) <= hi, lo > limit
    text = (
        f"The paper's own table: its c* rows move ‖(I−Π)f‖ by up to {shown:.4f} of the start ({lo:.4f} to {hi:.4f} "
        f"within its printed digits), {'beyond' if beyond else 'within'} its text's {limit:g}; ours, {ours:.4f}, "
        + (
            "lies within what its table prints: the paper's text and its table disagree, and ours follows the table."
            if inside and beyond
            else "does not explain the gap by the table alone."
        )  # fmt: skip
    )
    return text, "explained" if inside and beyond else "unexplained"


def _unexplained(why: str) -> Callable[[Mapping[str, Any], Mapping[str, Any]], tuple[str, str]]:
    return lambda rec, v: (why, "unexplained")


#: The cause the book can test for each claim whose value can differ from the paper's.
CAUSES: dict[str, Callable[[Mapping[str, Any], Mapping[str, Any]], tuple[str, str]]] = {
    **{f"A4_{t}_dfvu_{b}": _sampling(t, f"dfvu_{b}") for t in ("flipflop", "sine", "context") for b in ("CR", "CC")},
    **{f"A4_{t}_sens_{b}": _sampling(t, f"sens_{b}") for t in ("flipflop", "sine", "context") for b in ("CR", "CC")},
    **{f"A4_{t}_fvu_full": _sampling(t, "fvu") for t in ("flipflop", "sine", "context")},
    "A4_sine_RR_little": _sampling("sine", "dfvu_RR"),
    "A4_flipflop_RR_negligible": _sampling("flipflop", "dfvu_RR"),
    "A3_classes": _copy_controller,
    "A3_table1_minus_CR_orth": _copy_controller,
    "A3_table1_nR_cayley": _copy_controller,
    "A3_table1_nR_orth": _copy_controller,
    "B_c3_annulus_orthogonal": _annulus_probe,
    "B_c3_orthogonal_lifts": _mexican_probe,
    "B96_rank": _rank_conventions,
    "B88_resolved_c_2pct": _table_against_text,
    "B93_val_mse": _val_mse,
    "B_eq22_square": _unexplained(
        "Not tested: the notes' −0.1 is for their network; the sign and the departure from zero are what the claim is."
    ),
}


def differs(rec: Mapping[str, Any]) -> bool:
    """Whether a claim's value differs from the paper's, whatever its verdict: the value is decided to differ, the
    claim is not reproduced, or (unless the value is decided to match) ours is more than the line ``kind_factor``
    from the paper's number either way, or the paper's number lies outside our interval."""
    if rec.get("value_decision") is False or SHORT[rec["kind"]] == "not reproduced":
        return True
    if rec.get("value_decision") is True:  # our interval inside the paper's tolerance: the values agree
        return False
    paper, ours = rec.get("paper_number"), rec.get("ours")
    if isinstance(paper, (int, float)) and paper and isinstance(ours, (int, float)) and not isinstance(ours, bool):
        if ours and max(ours / paper, paper / ours) > line("kind_factor"):
            return True
    lo_hi = rec.get("interval")
    return bool(lo_hi and lo_hi[0] is not None and paper is not None and not lo_hi[0] <= paper <= lo_hi[1])


def discrepancies(records: Sequence[Mapping[str, Any]], values: Mapping[str, Any]) -> list[Discrepancy]:
    """Every claim of a paper's findings whose value differs from the paper's (in kind, or not reproduced), each with
    its tested cause or "unexplained". A cause whose chapter was not executed is "not computed"; a value missing from
    an executed chapter is an error (KeyError naming it)."""
    out = []
    for rec in records:
        if not differs(rec) or rec["group"] != "finding":
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
