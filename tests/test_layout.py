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


# --------------------------------------------------------------------------- one definition of each thing (#34)
# Each rule is a function of (path, source) that returns what breaks it, so that a planted violation can show that
# the rule catches what it is meant to (the tests at the end of this file).


def _module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str, root: Path = ROOT) -> bool:
    base = root.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def imports_of(path: Path, source: str, root: Path = ROOT) -> set[str]:
    """The ``lib`` modules a module imports anywhere (at its top or inside functions): ``from lib.x import y`` is
    ``lib.x.y`` when ``y`` is a module, else ``lib.x``; relative imports are resolved."""
    name = _module_name(path, root).split(".")
    package = name if path.name == "__init__.py" else name[:-1]
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "lib")
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
            if node.level == 0:
                base = node.module or ""
            if base.split(".")[0] != "lib":
                continue
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if _is_module(f"{base}.{alias.name}", root) else base)
    return found


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of ``graph`` (module → modules it imports): one cycle per strongly connected component."""
    index, low, stack, on, cycles, counter = {}, {}, [], set(), [], [0]

    def visit(v):  # Tarjan's algorithm
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph.get(v, ()):
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return cycles


def test_no_import_circles_in_lib():
    """No module of lib imports, directly or through others, a module that imports it (imports inside functions
    count: they only postpone the circle)."""
    graph = {_module_name(p): imports_of(p, p.read_text()) for p in MODULES}
    cycles = import_cycles(graph)
    assert not cycles, "import circles in lib:\n" + "\n".join(" ↔ ".join(c) for c in cycles)


def environment_reads(path: Path, source: str) -> list[str]:
    """Where a module reads or writes the process environment (``os.environ``, ``os.getenv``, ``os.putenv``)."""
    return [
        f"{_rel(path)}:{node.lineno}"
        for node in ast.walk(ast.parse(source))
        if (isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "putenv", "unsetenv"))
        or (
            isinstance(node, ast.ImportFrom)
            and node.module == "os"
            and {a.name for a in node.names} & {"environ", "getenv"}
        )
    ]


def test_the_environment_is_read_in_one_place():
    """lib reads environment variables through lib.core.settings only: one name, default and check for each."""
    reads = [r for p in MODULES if p != LIB / "core" / "settings.py" for r in environment_reads(p, p.read_text())]
    assert not reads, "environment read outside lib.core.settings (ask settings, or take an argument):\n" + "\n".join(
        reads
    )


#: The settings objects of the chapters and of training: built by keyword only (a parameter inserted in a cell must
#: not shift the values after it into the wrong fields).
SETTINGS_CLASS = re.compile(r"(Study|Config|Settings)$")


def positional_settings(path: Path, source: str) -> list[str]:
    """The dataclasses named ``…Study``, ``…Config`` or ``…Settings`` that accept positional arguments."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.ClassDef) and SETTINGS_CLASS.search(node.name)):
            continue
        for deco in node.decorator_list:
            name = deco.func if isinstance(deco, ast.Call) else deco
            if getattr(name, "id", getattr(name, "attr", None)) != "dataclass":
                continue
            keywords = {k.arg: k.value for k in deco.keywords} if isinstance(deco, ast.Call) else {}
            kw_only = keywords.get("kw_only")
            if not (isinstance(kw_only, ast.Constant) and kw_only.value is True):
                found.append(f"{_rel(path)}:{node.lineno} {node.name}")
    return found


def test_studies_and_configurations_are_keyword_only():
    positional = [r for p in MODULES for r in positional_settings(p, p.read_text())]
    assert not positional, "settings dataclasses without kw_only=True:\n" + "\n".join(positional)


#: The one masked fraction of variance unexplained; every other function named after the FVU builds on it.
FVU_HOME = LIB / "paper_a" / "metrics.py"


def fvu_implementations(path: Path, source: str) -> list[str]:
    """Functions whose name says FVU and that divide (a fraction of variance) without calling a function whose name
    says FVU: a second implementation. The one in metrics is the exception; differences and accessors divide nothing."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and "fvu" in node.name.lower()):
            continue
        if path == FVU_HOME and node.name == "fvu":
            continue
        if not any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div) for n in ast.walk(node)):
            continue
        called = {getattr(c.func, "id", getattr(c.func, "attr", "")) for c in ast.walk(node) if isinstance(c, ast.Call)}
        if not any("fvu" in name.lower() for name in called):
            found.append(f"{_rel(path)}:{node.lineno} {node.name}")
    return found


def test_one_masked_fvu():
    """The FVU is computed by lib.paper_a.metrics.fvu alone: every other "fvu" function calls it (or one that does)."""
    found = [r for p in MODULES for r in fvu_implementations(p, p.read_text())]
    assert not found, "FVU computed outside lib.paper_a.metrics.fvu:\n" + "\n".join(found)


def module_aliases(path: Path, source: str) -> list[str]:
    """Imports of a module under a name that says something else: ``lib.papers.schur_ablation as paper_a``."""
    return [
        f"{_rel(path)}:{node.lineno} {a.name} as {a.asname}"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom | ast.Import)
        for a in node.names
        if a.asname in {"paper_a", "paper_b"}
    ]


def test_no_module_is_imported_under_a_misleading_name():
    found = [r for p in MODULES for r in module_aliases(p, p.read_text())]
    assert not found, "modules imported as paper_a/paper_b (a package of lib of that name exists):\n" + "\n".join(found)


# ------------------------------------------------------------------ each rule fails on a planted violation


def test_the_circle_rule_finds_a_planted_circle(tmp_path):
    pkg = tmp_path / "lib" / "pkg"
    pkg.mkdir(parents=True)
    (tmp_path / "lib" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    sources = {
        "a.py": "from lib.pkg import b\n",
        "b.py": "def f():\n    from lib.pkg.c import g  # inside a function\n",
        "c.py": "from . import a\n",
        "d.py": "from lib.pkg import a\n",
    }
    for name, text in sources.items():
        (pkg / name).write_text(text)
    graph = {f"lib.pkg.{name[:-3]}": imports_of(pkg / name, text, root=tmp_path) for name, text in sources.items()}
    assert graph["lib.pkg.b"] == {"lib.pkg.c"} and graph["lib.pkg.c"] == {"lib.pkg.a"}
    assert import_cycles(graph) == [["lib.pkg.a", "lib.pkg.b", "lib.pkg.c"]]


def test_the_environment_rule_finds_a_planted_read():
    path = LIB / "paper_a" / "rnn.py"
    assert environment_reads(path, "import os\nx = os.environ.get('BOOK_X')\n")
    assert environment_reads(path, "import os\nx = os.getenv('BOOK_X')\n")
    assert environment_reads(path, "from os import environ\n")
    assert not environment_reads(path, "from lib.core import settings\nx = settings.variable('BOOK_X')\n")


def test_the_keyword_rule_finds_a_planted_positional_study():
    path = LIB / "paper_a" / "chapters" / "copy_task.py"
    assert positional_settings(path, "@dataclass(frozen=True)\nclass CopyStudy:\n    seeds: int = 5\n")
    assert positional_settings(path, "@dataclass\nclass TrainConfig:\n    lr: float = 1e-3\n")
    assert not positional_settings(
        path, "@dataclass(frozen=True, kw_only=True)\nclass CopyStudy:\n    seeds: int = 5\n"
    )


def test_the_fvu_rule_finds_a_planted_second_fvu():
    path = LIB / "lenses" / "solution.py"
    planted = "def path_fvu(y, t):\n    return ((y - t) ** 2).sum() / ((t - t.mean()) ** 2).sum()\n"
    assert fvu_implementations(path, planted) == [f"{_rel(path)}:1 path_fvu"]
    assert not fvu_implementations(path, "def path_fvu(y, t):\n    return metrics.fvu(y, t) / 2\n")
    assert not fvu_implementations(path, "def delta_fvu(a, b):\n    return a - b\n")


def test_the_alias_rule_finds_a_planted_alias():
    path = LIB / "paper_a" / "ablation.py"
    assert module_aliases(path, "from lib.papers import schur_ablation as paper_a\n")
    assert not module_aliases(path, "from lib.papers import schur_ablation\n")


#: The one check that a width is even (the dense-normal and Cayley constructions are built of 2×2 blocks).
WIDTH_HOME = LIB / "paper_a" / "rnn.py"


def parity_checks(path: Path, source: str) -> list[str]:
    """Expressions ``x % 2`` (an evenness check) outside :func:`lib.paper_a.rnn.check_width`."""
    return [
        f"{_rel(path)}:{node.lineno}"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod)
        and isinstance(node.right, ast.Constant) and node.right.value == 2
    ]  # fmt: skip


def test_one_width_check():
    found = [r for p in MODULES if p != WIDTH_HOME for r in parity_checks(p, p.read_text())]
    assert not found, "evenness checked outside lib.paper_a.rnn.check_width:\n" + "\n".join(found)


def test_the_width_rule_finds_a_planted_check():
    path = LIB / "paper_a" / "chapters" / "copy_task.py"
    assert parity_checks(path, "if any(w % 2 for w in widths):\n    raise ValueError\n")
    assert not parity_checks(path, "widths = [rnn.check_width('w', w) for w in widths]\n")


#: The fields of one solution's ablations, declared once (:class:`lib.paper_a.ablation.SolutionAblations`); the
#: records of the profiles, the lenses and the confound study build on it.
ABLATION_FIELDS = {"seed", "n_R", "fvu_full", "dfvu", "mass", "empty"}
RECORD_HOME = (LIB / "paper_a" / "ablation.py", "SolutionAblations")


def redeclared_records(path: Path, source: str) -> list[str]:
    """Classes other than the one record that declare three or more of its fields themselves."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ClassDef) or (path, node.name) == RECORD_HOME:
            continue
        own = {s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
        if len(own & ABLATION_FIELDS) >= 3:
            found.append(f"{_rel(path)}:{node.lineno} {node.name} declares {sorted(own & ABLATION_FIELDS)}")
    return found


def test_one_per_solution_record():
    found = [r for p in MODULES for r in redeclared_records(p, p.read_text())]
    assert not found, "per-solution fields declared again (build on ablation.SolutionAblations):\n" + "\n".join(found)


def test_the_record_rule_finds_a_planted_record():
    path = LIB / "lenses" / "solution.py"
    planted = "@dataclass\nclass SolutionLens:\n    seed: int\n    n_R: int\n    fvu_full: float\n"
    assert redeclared_records(path, planted)
    assert not redeclared_records(path, "@dataclass\nclass SolutionLens(SolutionAblations):\n    gn: dict\n")


# ---------------------------------------------------------------------------------- one home per threshold line

#: A name that says threshold: one of its words (split at '_', any case) is one of these, so ``safe_tolerance``,
#: ``preserve_tol``, ``mass_threshold``, ``gate_band``, ``GAP_CUT``, ``negligible_mass`` and ``eps`` are read, and
#: ``lr``, ``alpha_step``, ``taus``, ``flow_rate``, ``pc_level``, ``linthresh`` or ``POST_RTOL`` are not (step sizes,
#: rates, scans and levels; a numerical method's relative tolerance ``rtol`` decides no verdict).
THRESHOLD_NAME = re.compile(
    r"(?:^|_)(?:tol|tolerance|threshold|thresh|cut|cutoff|band|line|margin|eps|epsilon|negligible)(?:_|$)", re.I
)
#: Names that say threshold and hold a line's value by coincidence: numerical settings of a method that decide no
#: verdict, call or count (path relative to the repository, name) → why.
NOT_A_LINE = {
    ("lib/kernels/adam.py", "eps"): "Adam's ε, torch's default (a regulariser of the step, not a threshold)",
    ("lib/paper_b/lifting.py", "dead_tol"): "the lift's dead-column cutoff (numerics of the sensitivity gauge)",
}


def _line_values() -> dict[float, list[str]]:
    """Each value of a line of lib.core.lines → the lines that hold it. Zero (the line "some") is left out: a zero
    default is no slack at all, not a copy of a line."""
    from lib.core.lines import LINES

    values = defaultdict(list)
    for name, ln in LINES.items():
        if ln.value != 0:
            values[float(ln.value)].append(name)
    return values


def _defaults(tree: ast.Module) -> list[tuple[str, ast.expr]]:
    """(name, default) of what a source sets a default in: the keyword and positional defaults of every function,
    the fields of every class (``field(default=...)`` too) and the constants of the module (a parameters cell's
    knobs are such constants)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            a = node.args
            positional = a.posonlyargs + a.args
            found += [
                (arg.arg, d) for arg, d in zip(positional[len(positional) - len(a.defaults) :], a.defaults, strict=True)
            ]
            found += [(arg.arg, d) for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None]
        elif isinstance(node, ast.ClassDef | ast.Module):
            for s in node.body:
                targets = s.targets if isinstance(s, ast.Assign) else [s.target] if isinstance(s, ast.AnnAssign) else []
                value = getattr(s, "value", None)
                if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "field":
                    value = next((k.value for k in value.keywords if k.arg == "default"), None)
                found += [(t.id, value) for t in targets if isinstance(t, ast.Name) and value is not None]
    return found


def threshold_copies(path: Path, source: str) -> list[str]:
    """Literal copies of a line's value (:data:`lib.core.lines.LINES`) where a name says threshold: a default or a
    constant written ``0.01`` instead of ``line("safe_dfvu")``, so that moving the line would leave it behind."""
    values, rel, found = _line_values(), _rel(path), []
    for name, value in _defaults(ast.parse(source)):
        if not (THRESHOLD_NAME.search(name) and isinstance(value, ast.Constant)) or (rel, name) in NOT_A_LINE:
            continue
        number = value.value
        if isinstance(number, int | float) and not isinstance(number, bool) and float(number) in values:
            lines = ", ".join(values[float(number)])
            where = f"{rel}:{value.lineno}" if path.suffix == ".py" else f"{rel} (parameters cell, line {value.lineno})"
            found.append(f"{where} {name} = {number!r} (write line(...) of one of: {lines})")
    return found


def test_every_threshold_starts_at_its_line():
    """A threshold that decides a verdict, a safe/unsafe call or a count is a line of lib.core.lines, named once: a
    chapter's parameter, a default or a constant that sets one is ``line("name")``, never a copy of its value."""
    found = [r for p in MODULES for r in threshold_copies(p, p.read_text())]
    found += [r for c in CHAPTERS for r in threshold_copies(c, cells(c)[0][1])]
    assert not found, "copies of a line's value (take it from lib.core.lines.line):\n" + "\n".join(found)


def test_the_threshold_rule_finds_planted_copies():
    path, chapter = LIB / "paper_a" / "ablation.py", ROOT / "book" / "two_lenses.md"
    assert threshold_copies(path, "def preserved(self, tol: float = 0.01):\n    pass\n")
    assert threshold_copies(path, "def f(x, *, margin=3.0):\n    pass\n")
    assert threshold_copies(path, "@dataclass\nclass Gate:\n    band: float = field(default=0.05)\n")
    assert threshold_copies(path, "GAP_CUT = 0.01\n")
    assert threshold_copies(chapter, "solutions: int = 10  # count\nsafe_tolerance: float = 0.01  # safe\n")
    assert not threshold_copies(path, 'def preserved(self, tol: float = line("safe_dfvu")):\n    pass\n')
    assert not threshold_copies(
        path, "def f(x, lr=0.01, alpha_step=0.01, taus=(0.01, 0.1), order_tolerance=0.0):\n    pass\n"
    )
    assert not threshold_copies(chapter, 'from lib.core.lines import line\nsafe_tolerance: float = line("safe_dfvu")\n')
