"""How to cite the book, from ``CITATION.cff``: the section ``scripts/book_html.py`` puts in place of :data:`MARKER`
in the introduction when the book is rendered (a reference in words, its BibTeX, and the two papers), so the
citation is written once, in the Citation File Format."""

from __future__ import annotations

import datetime
import re
from pathlib import Path

import yaml

from lib.core.paths import REPO_ROOT

CFF = REPO_ROOT / "CITATION.cff"
MARKER = "<!-- how-to-cite -->"


def load(path: Path = CFF) -> dict:
    """``CITATION.cff`` as plain data (dates as ISO text, as the Citation File Format writes them)."""

    def plain(value):
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        if isinstance(value, list):
            return [plain(v) for v in value]
        return value.isoformat() if isinstance(value, datetime.date) else value

    return plain(yaml.safe_load(Path(path).read_text()))


def person(entry: dict) -> str:
    """An author as a reference writes them: "Given Family", or an entity's name."""
    if "name" in entry:
        return entry["name"]
    return " ".join(entry[k] for k in ("given-names", "name-particle", "family-names", "name-suffix") if k in entry)


def names(authors: list[dict]) -> str:
    """Authors joined as a reference lists them: A; A and B; A, B and C."""
    people = [person(a) for a in authors]
    return people[0] if len(people) == 1 else ", ".join(people[:-1]) + " and " + people[-1]


def year(cff: dict) -> str:
    return str(cff.get("date-released", ""))[:4] or str(cff.get("year", ""))


def reference_text(cff: dict) -> str:
    """The book, as one line of Markdown: authors (year). *Title*, version V, released D."""
    text = f"{names(cff['authors'])} ({year(cff)}). *{cff['title']}*, version {cff['version']}"
    return text + (f", released {cff['date-released']}." if cff.get("date-released") else ".")


def paper_text(ref: dict) -> str:
    """A reference of ``CITATION.cff`` (a paper) as one line of Markdown."""
    where = ", ".join(i["value"] for i in ref.get("identifiers", []))
    text = f"{names(ref['authors'])} ({ref['year']}). *{ref['title']}*. {ref.get('journal', '')}".rstrip()
    return text + (f" {where}" if where else "") + (f" ({ref['notes']})" if ref.get("notes") else "") + "."


def bibtex_key(cff: dict) -> str:
    """A key from the first author and the year: "The symmetry-book team" → ``symmetrybookteam2026``."""
    first = person(cff["authors"][0])
    words = [w for w in re.split(r"[^a-z0-9]+", first.lower()) if w and w not in {"the", "of", "and"}]
    return "".join(words) + year(cff)


def bibtex(cff: dict) -> str:
    """The book as a BibTeX ``@misc`` entry (entities braced, so BibTeX keeps their names whole)."""
    authors = " and ".join(f"{{{a['name']}}}" if "name" in a else f"{a['family-names']}, {a['given-names']}"
                           for a in cff["authors"])  # fmt: skip
    fields = {
        "author": authors,
        "title": f"{{{cff['title']}}}",
        "year": year(cff),
        "version": cff["version"],
        "note": f"Version {cff['version']}",
    }
    if cff.get("url") or cff.get("repository-code"):
        fields["url"] = cff.get("url") or cff["repository-code"]
    body = ",\n".join(f"  {k:<7} = {{{v}}}" for k, v in fields.items())
    return f"@misc{{{bibtex_key(cff)},\n{body}\n}}"


def section(path: Path = CFF) -> str:
    """The MyST text that replaces :data:`MARKER`: the reference in words, its BibTeX, and the papers to cite."""
    cff = load(path)
    lines = [
        "Please cite the book as",
        "",
        f"> {reference_text(cff)}",
        "",
        "or in BibTeX:",
        "",
        "```bibtex",
        bibtex(cff),
        "```",
    ]
    papers = [r for r in cff.get("references", []) if r.get("type") == "article"]
    if papers:
        lines += ["", "and cite the papers it recomputes:", ""] + [f"- {paper_text(r)}" for r in papers]
    lines += ["", "`CITATION.cff`, at the root of the repository, holds the same citation for citation managers."]
    return "\n".join(lines) + "\n"
