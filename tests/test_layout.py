"""The house rules of ``lib`` and the chapters, checked: small modules, one of each mechanism, no book plumbing in lib.

Each test names what it found, so a failure says where the rule was broken (issue #14).
"""

import ast
import re
from collections import defaultdict
from pathlib import Path

from tests.test_chapters import CHAPTERS, cells

ROOT = Path(__file__).resolve().parent.parent
LIB = ROOT / "lib"
MODULES = sorted(p for p in LIB.rglob("*.py") if "__pycache__" not in p.parts)
MAX_MODULE_LINES = 320  # "about 300"
MAX_CELL_LINES = 15
#: Roles that each module of a kind fills with its own implementation, one meaning each: a task module's
#: ``generate`` and ``generate_many`` (the registry calls them), a model's ``rollout``/``init_params``, a system's
#: ``training_code`` (its cache fingerprint), a chapter report's ``settings``/``claims_table``.
PROTOCOL_NAMES = {"generate", "generate_many", "rollout", "init_params", "training_code", "settings", "claims_table"}


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_no_module_is_a_big_room():
    big = [f"{_rel(p)}: {n} lines" for p in MODULES if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES]
    assert not big, f"modules over {MAX_MODULE_LINES} lines (split them by what they are):\n" + "\n".join(big)


def test_one_cache_reads_and_writes_checkpoints():
    """torch.save/torch.load appear in lib/core/cache.py only: every trained model goes through the one cache."""
    calls = [
        f"{_rel(p)}:{i}"
        for p in MODULES
        if p != LIB / "core" / "cache.py"
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r"\btorch\.(save|load)\(", line)
    ]
    assert not calls, "checkpoint I/O outside lib.core.cache:\n" + "\n".join(calls)


def _code_strings(tree: ast.AST) -> list[str]:
    """The string literals of a module's code (docstrings and other bare string statements left out)."""
    bare = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in bare
    ]


def test_lib_holds_no_book_plumbing():
    """lib computes; the executor runs chapters: no papermill, jupytext or nbformat, no path into book/ in code."""
    found = []
    for p in MODULES:
        text = p.read_text()
        for name in ("papermill", "jupytext", "nbformat"):
            if re.search(rf"^\s*(import|from) {name}\b", text, re.M):
                found.append(f"{_rel(p)} imports {name}")
        paths = [s for s in _code_strings(ast.parse(text)) if s == "book" or s.startswith("book/") or s.endswith(".md")]
        if paths:
            found.append(f"{_rel(p)} names book files in its code: {paths}")
    assert not found, "\n".join(found)


def _public_definitions() -> dict[str, list[str]]:
    where = defaultdict(list)
    for p in MODULES:
        for node in ast.parse(p.read_text()).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
                where[node.name].append(_rel(p))
    return where


def test_no_public_name_is_defined_twice_outside_plots():
    """A name means one thing: two modules defining the same public function or class is a collision.

    Figures are exempt between lib/plots and the module they draw (``plots.tasks.alpha_scan`` draws an α scan).
    """
    twice = {
        name: paths
        for name, paths in _public_definitions().items()
        if name not in PROTOCOL_NAMES
        and (
            len([p for p in paths if not p.startswith("lib/plots/")]) > 1
            or len([p for p in paths if p.startswith("lib/plots/")]) > 1
        )
    }
    assert not twice, "public names defined in more than one module:\n" + "\n".join(
        f"{name}: {', '.join(paths)}" for name, paths in sorted(twice.items())
    )


def test_chapter_cells_are_calls_not_programs():
    long = [
        f"{chapter.name}: a {len(code.strip().splitlines())}-line cell starting {code.strip().splitlines()[0][:50]!r}"
        for chapter in CHAPTERS
        for tags, code in cells(chapter)
        if "parameters" not in tags and len(code.strip().splitlines()) > MAX_CELL_LINES
    ]
    assert not long, f"code cells over {MAX_CELL_LINES} lines (move the logic to lib):\n" + "\n".join(long)
