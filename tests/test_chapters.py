"""The chapters' sources read as a book: folded code, visible knobs with a rerun line, short code lines, one table
renderer (no Markdown tables assembled in code), no bars or prints of implementation detail."""

import ast
import re
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parent.parent / "book"
CHAPTERS = sorted(p for p in BOOK.glob("*.md") if "```{code-cell}" in p.read_text())
MAX_LINE = 100
CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(?P<body>.*?)^```$", re.M | re.S)


def cells(path: Path) -> list[tuple[list[str], str]]:
    """(tags, code) of every code cell of a MyST notebook."""
    found = []
    for match in CELL.finditer(path.read_text()):
        body = match.group("body")
        tags = re.search(r"^:tags:\s*\[(.*)\]\s*$", body, re.M)
        names = [t.strip() for t in tags.group(1).split(",")] if tags else []
        code = "\n".join(line for line in body.splitlines() if not line.startswith(":"))
        found.append((names, code))
    return found


@pytest.fixture(params=CHAPTERS, ids=lambda p: p.stem)
def chapter(request) -> Path:
    return request.param


def test_there_are_chapters():
    assert len(CHAPTERS) >= 8


def test_code_lines_fit_the_page(chapter):
    long = [
        f"{chapter.name}: {line.strip()[:60]}… ({len(line)} characters)"
        for _, code in cells(chapter)
        for line in code.splitlines()
        if len(line) > MAX_LINE
    ]
    assert not long, f"code lines over {MAX_LINE} characters:\n" + "\n".join(long)


def test_only_the_parameters_cell_shows_its_code(chapter):
    found = cells(chapter)
    assert "parameters" in found[0][0], f"{chapter.name}: the first code cell must be tagged 'parameters'"
    shown = [code.strip().splitlines()[0] for tags, code in found[1:] if not {"hide-input", "remove-input"} & set(tags)]
    assert not shown, f"{chapter.name}: cells that show their code (tag them hide-input): {shown}"


def test_a_rerun_line_sits_above_the_parameters_cell(chapter):
    text = chapter.read_text()
    before = text[: text.index(":tags: [parameters")]
    last_prose = before.rstrip().rsplit("\n\n", 2)[-2]
    assert "scripts/execute_book.py --only" in last_prose, f"{chapter.name}: no rerun line above the parameters cell"


def test_tables_come_from_the_one_renderer(chapter):
    for _, code in cells(chapter):
        assert "to_markdown" not in code and "Markdown(" not in code, f"{chapter.name}: a table built as Markdown"
        assert "from lib.paper_a.ablation import Table" not in code, (
            f"{chapter.name}: import Table from lib.core.tables"
        )


def test_no_progress_or_process_trivia_in_the_prose(chapter):
    prose = CELL.sub("", chapter.read_text())
    for phrase in ("process(es)", "loaded from cache", "it/s]"):
        assert phrase not in prose, f"{chapter.name}: implementation detail {phrase!r} in the prose"


def test_papermill_can_read_every_parameter(chapter):
    """papermill skips a parameters line holding more than one '=' (so --list and the checks would miss it). The one
    line without is the import of ``line`` (a threshold starts at its line of lib.core.lines), first in the cell:
    papermill joins a line without '=' to the parameter before it."""
    tags, code = cells(chapter)[0]
    lines = [line for line in code.splitlines() if line.strip() and not line.startswith("#")]
    lines = lines[1:] if lines and lines[0].startswith("from lib.core.lines import line") else lines
    bad = [line for line in lines if line.count("=") != 1]
    assert not bad, f"{chapter.name}: parameters papermill cannot parse (one '=' per line, none in the comment): {bad}"


# ------------------------------------------------------------------------------------------------- typed numbers

FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
FENCE = re.compile(r"^```(?!\{glue:figure\})[^\n]*\n.*?^```$", re.M | re.S)  # code; figure captions are prose
#: Where a digit may stand in prose: glue roles and other roles, maths, inline code, directive options, section /
#: equation / figure / table numbers, years, identifiers that contain digits (float64), list markers, "3-bit", "2×2".
ALLOWED_DIGITS = [
    re.compile(r"\$\$.*?\$\$", re.S),
    re.compile(r"(?<!\$)\$(?!\$)[^$]+?\$"),
    re.compile(r"\{[a-z:-]+\}`[^`]*`"),
    re.compile(r"`[^`\n]*`"),
    re.compile(r"^:[a-z-]+:.*$", re.M),
    re.compile(
        r"(?:§|App\.|Appendix|[Ee]qs?\.|Figs?\.|Table|Section|Sec\.|[Cc]ontributions?|Step)\s*\(?[A-Z]?[\d.]+\)?"
        r"(?:\s*(?:–|-|and|,)\s*\(?[\d.]+\)?)*"
    ),
    re.compile(r"\b(?:19|20)\d\d\b"),
    re.compile(r"\b[A-Za-z_]+\d+\w*\b"),
    re.compile(r"^\s*\d+\.\s", re.M),
    re.compile(r"\b\d-bit\b"),
    re.compile(r"\b\d×\d\b"),
]


def typed_numbers(text: str) -> list[str]:
    """Prose lines of a MyST notebook that still hold a digit outside every allowed place."""
    text = FENCE.sub("", FRONT_MATTER.sub("", text))
    for pattern in ALLOWED_DIGITS:
        text = pattern.sub(" ", text)
    return [line.strip() for line in text.splitlines() if re.search(r"[0-9]", line)]


def test_typed_numbers_are_found():
    assert typed_numbers("The accuracy is 0.876 here.") == ["The accuracy is 0.876 here."]
    allowed = "Paper A §3, eq. (5), Fig. 1 (2026): {glue:text}`acc:.3f`, $n_R = 64$, `-p seeds 3`, float64, 3-bit."
    assert typed_numbers(allowed) == []


def test_prose_has_no_typed_numbers(chapter):
    found = typed_numbers(chapter.read_text())
    assert not found, f"{chapter.name}: numbers typed into the prose (glue them):\n" + "\n".join(found)


# ------------------------------------------------------------------------------------- settings, by name (#34)

#: Chapter → its settings object (module, class): the one place its parameters' defaults live.
STUDIES = {
    "copy_task": ("lib.paper_a.chapters.copy_task", "CopyStudy"),
    "many_solutions": ("lib.paper_a.chapters.many_solutions", "SolutionSweep"),
    "task_dependence": ("lib.paper_a.chapters.task_dependence", "DependenceStudy"),
    "two_lenses": ("lib.lenses.chapter", "LensStudy"),
    "paper_a_open": ("lib.paper_a.chapters.paper_a_open", "OpenStudy"),
    "schur_coordinates": ("lib.paper_a.chapters.schur_coordinates", "SchurExample"),
    "your_network": ("lib.own_network.chapter", "OwnNetworkStudy"),
}


def parameter_defaults(path: Path) -> dict[str, object]:
    """The parameters cell's names and default values (``name: type = value  # help``; a value ``line("name")`` is
    that line of lib.core.lines)."""
    from lib.core import lines

    tags, code = cells(path)[0]
    found = {}
    for node in ast.parse(code).body:
        if isinstance(node, ast.AnnAssign):
            value = node.value
            named = isinstance(value, ast.Call) and getattr(value.func, "id", None) == "line"
            found[node.target.id] = lines.line(value.args[0].value) if named else ast.literal_eval(value)
    return found


@pytest.mark.parametrize("stem", sorted(STUDIES))
def test_a_chapter_passes_its_parameters_by_name_to_the_object_that_holds_their_defaults(stem):
    """Every parameter goes to the chapter's settings object as ``name=name`` (never by position), and the cell's
    defaults are that object's, so the book runs the object's defaults and no value is stated twice differently."""
    import dataclasses
    import importlib

    module, name = STUDIES[stem]
    study = getattr(importlib.import_module(module), name)
    path = BOOK / f"{stem}.md"
    defaults = parameter_defaults(path)
    fields = {f.name: f for f in dataclasses.fields(study) if f.init and f.default_factory is dataclasses.MISSING}
    assert set(defaults) == set(fields), f"{stem}: parameters {sorted(defaults)} against {name}'s {sorted(fields)}"
    for key, value in defaults.items():
        held = fields[key].default
        held = list(held) if isinstance(held, tuple) else held
        assert value == held, f"{stem}: {key} = {value!r} in the cell, {held!r} in {name}"
    built = next(code for _, code in cells(path)[1:] if f"{name}(" in code)
    missing = [key for key in defaults if not re.search(rf"\b{key}={key}\b", built)]
    assert not missing, f"{stem}: parameters not passed to {name} by name: {missing}"


def test_the_chapters_that_reuse_the_copy_solutions_read_the_copy_chapters_settings():
    """The copy chapter's training is defined once (train.CopyTraining, extended by CopyStudy); the chapters that
    reuse its solutions read them from CopyStudy() and may not ask for more than it trains."""
    import dataclasses

    from lib.lenses.chapter import LensStudy
    from lib.paper_a import train
    from lib.paper_a.chapters.copy_task import CopyStudy
    from lib.paper_a.chapters.paper_a_open import OpenStudy
    from lib.paper_a.chapters.task_dependence import DependenceStudy

    copy = CopyStudy()
    for f in dataclasses.fields(train.CopyTraining):
        assert getattr(copy, f.name) == getattr(train.COPY_TRAINING, f.name)
    first = copy.first("dense_orthogonal", 3)
    assert first == [train.copy_config("dense_orthogonal", copy.n_hidden, s) for s in range(3)]
    assert first == [copy.configs[f"dense_orthogonal N_h={copy.n_hidden} seed {s}"] for s in range(3)]
    for study in (DependenceStudy, LensStudy, OpenStudy):
        assert study().copy_chapter == copy
        with pytest.raises(ValueError, match=rf"copy_solutions={copy.solutions + 1} is out of range"):
            study(copy_solutions=copy.solutions + 1)
