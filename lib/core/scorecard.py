"""The scorecard page's tables: the tallies, one table per paper (badges, evidence, stability), the lines, the
claims whose solutions did not all learn their task, and the undecided claims."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from lib.core.claims import GROUPS, SECOND_SET_START, counts, pool
from lib.core.lines import LINES
from lib.core.tables import Badge, Code, Details, Table, names_as_code
from lib.core.verdict_text import statement_words, value_words
from lib.core.verdicts import CONFIDENCE, PAPER_SEMS, VERDICTS, decide, leave_one_out, wilson, without_unlearned

SUMMARY_KEYS = ("n_reproduced", "n_in_kind", "n_undecided", "n_not_reproduced", "n_not_testable")


def tally_values(records: Sequence[dict[str, Any]]) -> dict[str, int]:
    """The scorecard's counts: claims per verdict, overall (``n_reproduced``…), per paper (``n_reproduced_A``…) and
    per group (``n_reproduced_finding``…), and ``n_claims``, ``n_claims_A``/``_B``, ``n_claims_<group>``."""
    values = {"n_claims": len(records)}
    for key, kind in zip(SUMMARY_KEYS, VERDICTS, strict=True):
        values[key] = counts(records)[kind]
        for paper in ("A", "B"):
            values[f"{key}_{paper}"] = sum(r["kind"] == kind for r in records if r["paper"] == paper)
        for group in GROUPS:
            values[f"{key}_{group}"] = sum(r["kind"] == kind for r in records if r["group"] == group)
    for paper in ("A", "B"):
        values[f"n_claims_{paper}"] = sum(r["paper"] == paper for r in records)
    for group in GROUPS:
        values[f"n_claims_{group}"] = sum(r["group"] == group for r in records)
    return values


def page_values(records: Sequence[dict[str, Any]], second: Mapping[str, Any]) -> dict[str, Any]:
    """Everything the scorecard's prose glues: the tallies (:func:`tally_values`), the claims with a second set, the
    protocol's constants (the majority line, the confidence in percent, the paper's SEMs in its tolerance) and the
    first seed of the second set."""
    values = tally_values(records)
    values["n_second_set_claims"] = sum(r["id"] in second for r in records)
    values["line_majority"] = LINES["majority"].value
    values["ci_percent"] = round(100 * CONFIDENCE)
    values["paper_sems"] = f"{PAPER_SEMS:g}"
    values["second_set_start"] = SECOND_SET_START
    return values


#: The badge colour of each verdict (green, blue, amber, red, grey; each dark enough for white text).
BADGES = dict(zip(VERDICTS, ("#1a7f37", "#305f99", "#8a5a00", "#b42318", "#59636e"), strict=True))


def badge(kind: str, text: str | None = None) -> Badge:
    """A verdict as a coloured badge (the word, its colour from :data:`BADGES`)."""
    return Badge(text or kind, BADGES[kind])


def _shown(value: Any) -> Any:
    """A scorecard cell: numbers with three significant digits, lists joined, None as a dash."""
    if isinstance(value, list):
        return " / ".join(str(_shown(v)) for v in value)
    if isinstance(value, float):
        return f"{value:.3g}"
    return value


def tallies(records: Sequence[dict[str, Any]]) -> Table:
    """Claims per group and verdict (the scorecard's three tallies), the verdicts as badges."""
    rows = []
    for group, words in GROUPS.items():
        rs = [r for r in records if r["group"] == group]
        rows.append((words, len(rs), *(sum(r["kind"] == k for r in rs) for k in VERDICTS)))
    return Table(
        ("claims", "n", *(SHORT[k] for k in VERDICTS)), tuple(rows), caption="Verdicts of each group of claims"
    )


#: The verdicts as the badges write them.
SHORT = dict(zip(VERDICTS, ("reproduced", "in kind", "undecided", "not reproduced", "not testable"), strict=True))


def evidence_cell(rec: Mapping[str, Any]) -> str:
    """The evidence in a few words: k of n with its Wilson interval against the line (and the solutions that would
    decide it when undecided), or our interval against the paper's number ± tolerance."""
    if rec.get("n"):
        lo, hi = wilson(rec["k"], rec["n"])
        text = f"{rec['k']} of {rec['n']} ({lo:.2f}–{hi:.2f}) vs {rec['line']:g}"
        if rec["kind"] == VERDICTS[2] and rec.get("statement_decision") is None:
            text += f"; n = {rec['needed']} decides" if rec.get("needed") else "; no n decides"
        return text
    if rec.get("statistic") and rec.get("interval") and rec["interval"][0] is not None:
        lo, hi = rec["interval"]
        return f"{lo:.3g} to {hi:.3g} vs {rec['paper_number']:g} ± {rec['tolerance']:.2g}"
    return "one computation"


def without_one_cell(rec: Mapping[str, Any]) -> str:
    """Whether leaving out any one solution changes the verdict ("same", or which solution and to what)."""
    n = max(len(rec.get("per_solution") or ()), len(rec.get("ours_values") or ()))
    if n < 2:
        return "—"
    changed = leave_one_out(rec)
    return "same" if not changed else "; ".join(f"#{i + 1}: {SHORT[k]}" for i, k in changed)


#: Notation of a claim's criterion, in words (the rest of its plain-text maths is written with subscripts).
_CRITERION_WORDS = {"2 SEM_paper": "twice the paper's SEM", "SEM_paper": "the paper's SEM"}


def criterion_words(text: str) -> str:
    """A claim's criterion as the reader reads it: its notation in words."""
    for notation, words in _CRITERION_WORDS.items():
        text = text.replace(notation, words)
    return names_as_code(text)


def chapter_title(stem: str, entry: Mapping[str, Any] | None = None) -> str:
    """The title of chapter ``stem``: its manifest ``entry``'s title, else the first heading of the entry's
    ``source``, else the stem in words."""
    entry = entry or {}
    if entry.get("title"):
        return entry["title"]
    source = Path(entry["source"]) if entry.get("source") else None
    if source is not None and source.is_file():
        for line in source.read_text().splitlines():
            if line.startswith("# "):
                return line[2:].strip()
    return stem.replace("_", " ")


def chapter_titles(manifest: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Every chapter's title (:func:`chapter_title`), from the execution manifest (``bookrun.load_manifest``)."""
    return {stem: chapter_title(stem, entry) for stem, entry in manifest.items()}


def scorecard(
    records: Iterable[dict[str, Any]],
    paper: str,
    second: Mapping[str, dict] | None = None,
    titles: Mapping[str, str] | None = None,
) -> Table:
    """Paper ``paper``'s claims by section: the statement (on demand: its id as code, verdict, criterion and a link,
    named by the chapter's title in ``titles``, to where it is computed), the paper's value and ours, the verdict
    badge, the evidence, and the verdict without any one solution and on the second set (both sets pooled:
    :func:`pooled_table`)."""
    second, titles = second or {}, titles or {}
    rows = sorted((r for r in records if r["paper"] == paper), key=lambda r: (r["section"], r["id"]))
    return Table(
        ("claim", "paper", "ours", "verdict", "evidence", "any one left out", "second set"),
        tuple(
            (
                Details(
                    f"{r['section']} · {r['statement']}",
                    f"{r['verdict']}. {criterion_words(r['criterion'])}. Computed in",
                    r["link"] or f"{r['chapter']}.html",
                    titles.get(r["chapter"]) or chapter_title(r["chapter"]),
                    code=r["id"],
                ),  # fmt: skip
                _shown(r["paper_value"]),
                _shown(r["ours"]),
                badge(r["kind"], SHORT[r["kind"]]),
                evidence_cell(r),
                without_one_cell(r),
                badge(second[r["id"]]["kind"], SHORT[second[r["id"]]["kind"]]) if r["id"] in second else "—",
            )
            for r in rows
        ),
        caption=f"Paper {paper}: every claim, ours beside the paper's, the verdict, its evidence and its stability",
    )


def pooled_table(records: Iterable[dict[str, Any]], second: Mapping[str, dict]) -> Table:
    """Every claim with a second set of solutions: its verdict and evidence on the first set, on the second and on
    both pooled (:func:`lib.core.claims.pool`), one row each."""
    rows = []
    for r in sorted((r for r in records if r["id"] in second), key=lambda r: r["id"]):
        both = pool(dict(r), dict(second[r["id"]]))
        sets = (r, second[r["id"]], both)
        named = zip(("first", "second", "pooled"), sets, strict=True)
        evidence = " · ".join(f"{name}: {x['robustness']}" for name, x in named)
        rows.append((r["statement"], *(badge(x["kind"], SHORT[x["kind"]]) for x in sets), evidence))
    head = ("claim", "first set", "second set", "both pooled", "evidence")
    return Table(head, tuple(rows), caption="Claims with a second set of solutions: each set alone, and both pooled")


def lines_table() -> Table:
    """Every line of :data:`LINES`: its name, value, what it decides and its source."""
    rows = tuple(
        (Code(name), f"{ln.value:g}", names_as_code(ln.decides), names_as_code(ln.source)) for name, ln in LINES.items()
    )
    return Table(("line", "value", "decides", "source"), rows, caption="Every line a verdict uses, named once")


def unlearned_table(records: Sequence[Mapping[str, Any]]) -> Table:
    """Claims averaged over solutions of which some did not learn their task: the verdict with all of them (the
    one the scorecard counts) and without those."""
    rows = []
    for r in sorted(records, key=lambda r: r["id"]):
        out = without_unlearned(r)
        if out is not None:
            rows.append((r["statement"], f"{out[0]} of {len(r['learned'])}", badge(r["kind"]), badge(out[1]),
                         Code(r["id"])))  # fmt: skip
    caption = "Claims over solutions that include some that did not learn the task: verdict with all, and without"
    return Table(("claim", "did not learn", "verdict, all solutions", "verdict without them", "id"), tuple(rows),
                 caption=caption)  # fmt: skip


def undecided_table(records: Sequence[Mapping[str, Any]]) -> Table:
    """Every undecided claim: why (k of n against its line, or our interval against the paper's tolerance)."""
    rows = []
    for r in sorted(records, key=lambda r: r["id"]):
        if r["kind"] != VERDICTS[2]:
            continue
        d = decide(r)
        parts = [statement_words(d) if d.statement is None else "", value_words(d) if d.value is None else ""]
        why = "; ".join(p for p in parts if p)
        if d.value is None and r.get("kind_band"):
            why += f" (in kind: {r['kind_band'][0]:.3g} to {r['kind_band'][1]:.3g})"
        rows.append((r["statement"], why, Code(r["id"])))
    return Table(("claim", "why undecided", "id"), tuple(rows), caption="Every undecided claim, and why")
