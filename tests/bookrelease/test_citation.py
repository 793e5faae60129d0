"""Licences and citation (issue 37): ``LICENSE`` (MIT, the code), ``LICENSE-BOOK`` (CC BY 4.0, the text and figures),
``CITATION.cff`` valid against the Citation File Format 1.2.0 schema (vendored, ``tests/data``) and in agreement with
what else states the same facts, and the introduction's *How to cite*, rendered from it (``bookrelease.citation``)."""

from __future__ import annotations

import copy
import json
import re
import tomllib
from pathlib import Path

import jsonschema
import latexcodec  # noqa: F401 (registers the "latex" codec that decodes book/references.bib)
import pytest
import yaml
from pybtex.database import parse_file

from bookrelease import changelog, citation, release
from lib.papers import schur_ablation, symmetry_lifting

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "tests" / "data" / "citation-cff-1.2.0.schema.json").read_text())
PAPERS = (schur_ablation, symmetry_lifting)


def schema_errors(cff: dict) -> list[str]:
    """Every violation of the CFF 1.2.0 schema (formats such as dates and URIs checked too)."""
    validator = jsonschema.Draft7Validator(SCHEMA, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in validator.iter_errors(cff)]


@pytest.fixture(scope="module")
def cff() -> dict:
    return citation.load()


def test_the_citation_file_is_valid_cff_1_2_0(cff):
    assert SCHEMA["$id"] == "https://citation-file-format.github.io/1.2.0/schema.json"
    assert cff["cff-version"] == "1.2.0"
    assert schema_errors(cff) == []


@pytest.mark.parametrize(
    "plant",
    [
        lambda c: c.pop("authors"),
        lambda c: c.update({"cff-version": "1.2"}),
        lambda c: c.update({"date-released": "3 December 2026"}),
        lambda c: c.update({"licence": "MIT"}),
        lambda c: c["references"][0].update({"type": "preprint-ish"}),
        lambda c: c["references"][1]["authors"].append({"family": "Nobody"}),
    ],
    ids=["no authors", "bad cff-version", "bad date", "misspelt key", "bad reference type", "bad person"],
)
def test_the_schema_check_finds_a_planted_error(cff, plant):
    broken = copy.deepcopy(cff)
    plant(broken)
    assert schema_errors(broken), "the schema check passed a CITATION.cff it should refuse"


def test_the_citation_states_what_the_repository_states(cff):
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert cff["version"] == release.version(), "CITATION.cff's version differs from pyproject.toml's"
    assert cff["title"] == config["title"]
    assert [a.get("name") for a in cff["authors"]] == [config["author"]]
    assert set(cff["license"]) == {"MIT", "CC-BY-4.0"}
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["license"] == "MIT"
    dated = changelog.sections((ROOT / "CHANGELOG.md").read_text()).get(cff["version"])
    assert cff.get("date-released") == (None if dated == changelog.UNRELEASED else dated), (
        "CITATION.cff's date-released must be the date of its version in CHANGELOG.md (none while unreleased)"
    )


def _latex(text) -> str:
    """BibTeX text as printed: LaTeX accents decoded, protective braces gone (``Dr{\\"a}ger`` → ``Dräger``)."""
    return re.sub(r"[{}]", "", str(text).encode().decode("latex"))


def _bib_entry(key: str) -> dict:
    entry = parse_file(str(ROOT / "book" / "references.bib")).entries[key]
    return {
        "title": _latex(entry.fields["title"]),
        "year": int(entry.fields["year"]),
        "arxiv": re.search(r"arXiv:(\d{4}\.\d{4,5})", entry.fields["journal"]).group(1),
        "authors": [(_latex(" ".join(p.last_names)), _latex(" ".join(p.first_names))) for p in entry.persons["author"]],
    }


@pytest.mark.parametrize("paper", PAPERS, ids=lambda m: m.PAPER)
def test_each_paper_is_referenced_as_the_book_cites_it(cff, paper):
    """The CFF reference of each paper agrees with ``book/references.bib`` under the key ``lib.papers`` cites it by,
    and with the arXiv identifier its module names."""
    bib = _bib_entry(paper.CITATION)
    assert f"arXiv {bib['arxiv']}" in paper.__doc__
    refs = [r for r in cff["references"] if f"arXiv:{bib['arxiv']}" in [i["value"] for i in r.get("identifiers", [])]]
    assert len(refs) == 1, f"CITATION.cff has {len(refs)} references to arXiv:{bib['arxiv']}"
    ref = refs[0]
    assert ref["type"] == "article" and ref["url"] == f"https://arxiv.org/abs/{bib['arxiv']}"
    assert (ref["title"], ref["year"]) == (bib["title"], bib["year"])
    assert [(a["family-names"], a["given-names"]) for a in ref["authors"]] == bib["authors"]


def test_the_reference_check_finds_a_wrong_author():
    bib = _bib_entry(schur_ablation.CITATION)
    assert bib["authors"] == [("Dräger", "Simon")]  # decoded from Dr{\"a}ger: a mismatch would be seen, not hidden
    assert bib["authors"] != [("Drager", "Simon")]


def test_the_introduction_says_how_to_cite_from_the_citation_file(cff, tmp_path):
    intro = (ROOT / "book" / "intro.md").read_text()
    assert intro.count(citation.MARKER) == 1, "book/intro.md must hold the how-to-cite marker once"
    text = citation.section()
    assert f"version {cff['version']}" in text and cff["title"] in text and "```bibtex" in text
    assert all(r["title"] in text for r in cff["references"])
    planted = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    planted["title"] = "Another title"
    (tmp_path / "CITATION.cff").write_text(yaml.safe_dump(planted, allow_unicode=True))
    assert "Another title" in citation.section(tmp_path / "CITATION.cff"), "the section is not read from the file"


def test_the_bibtex_entry_is_balanced_and_keyed(cff):
    entry = citation.bibtex(cff)
    assert entry.startswith(f"@misc{{{citation.bibtex_key(cff)},") and entry.count("{") == entry.count("}")
    assert "{{The symmetry-book team}}" in entry


def test_the_licences_are_stated():
    mit = (ROOT / "LICENSE").read_text()
    assert mit.startswith("MIT License\n\nCopyright (c) 2026 ") and "WITHOUT WARRANTY OF ANY KIND" in mit
    book = (ROOT / "LICENSE-BOOK").read_text()
    for marker in ("Creative Commons Attribution 4.0 International Public License", "Section 8 -- Interpretation.",
                   "Creative Commons may be contacted at creativecommons.org."):  # fmt: skip
        assert marker in book, f"LICENSE-BOOK lacks the legal code's {marker!r}"
    readme = (ROOT / "README.md").read_text()
    assert "LICENSE-BOOK" in readme and "CITATION.cff" in readme and "CHANGELOG.md" in readme
