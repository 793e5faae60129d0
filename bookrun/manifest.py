"""What the book executes: ``book/chapters.yml`` (chapters and chapter patterns), ``_toc.yml`` and the chapters'
papermill parameters (declared, coerced from the command line, checked).

A manifest entry names one executed chapter: ``stem: {source, parameters, after, title}``; ``after: all`` runs it after
every chapter of the book but the other ``after: all`` ones (the pages that read them all: the findings and the
scorecard; so a new chapter cannot overtake them). An entry whose stem holds a ``{placeholder}`` is a *pattern*:
``task_{task}: {source: neuro_task.md}`` runs ``neuro_task.md`` for any stem it matches, with the matched text as the
parameter ``task`` (``task_integrator`` → ``task=integrator``). A chapter whose stem matches a pattern and that has no
source of its own (``<stem>.md``) inherits the pattern's source and parameter, so adding one to the book is one line.
"""

from __future__ import annotations

import ast
import graphlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

KEYS = {"source", "parameters", "after", "title"}
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class ManifestError(ValueError):
    """The manifest, the table of contents, the environment or a parameter is wrong: nothing was started."""


@dataclass(frozen=True)
class Pattern:
    """A manifest entry for a family of chapters: ``stem`` with one ``{name}``, the source they all run."""

    stem: str
    name: str
    source: Path
    parameters: dict

    def match(self, stem: str) -> str | None:
        """The value this pattern gives its parameter for ``stem`` (None if ``stem`` does not match)."""
        head, tail = self.stem.split("{" + self.name + "}")
        found = re.fullmatch(re.escape(head) + r"([A-Za-z0-9][A-Za-z0-9_.-]*)" + re.escape(tail), stem)
        return coerce(found[1], self.name) if found else None  # read like ``-p name value``


class Manifest(dict):
    """``{stem: entry}`` of the book's chapters (entry: source, parameters, after, title), plus the patterns."""

    def __init__(self, chapters: dict[str, dict], patterns: list[Pattern], path: Path):
        super().__init__(chapters)
        self.patterns, self.path = patterns, path

    def entry(self, stem: str) -> dict | None:
        """The chapter ``stem``: the book's, else a new one from a matching pattern (no title, runs after nothing)."""
        if stem in self:
            return self[stem]
        for pattern in self.patterns:
            value = pattern.match(stem)
            if value is not None:
                params = {**pattern.parameters, pattern.name: value}
                return {"source": pattern.source, "parameters": params, "after": [], "title": None}
        return None

    def bound(self, stem: str) -> dict[str, Any]:
        """Parameters fixed by the chapter's name (its pattern's placeholder), e.g. ``{"task": "flipflop"}``."""
        entry = self.entry(stem)
        for pattern in self.patterns:
            value = pattern.match(stem)
            if value is not None and entry is not None and entry["source"] == pattern.source:
                return {pattern.name: value}
        return {}

    def stem_for(self, stem: str, name: str, value) -> str | None:
        """The stem that runs ``stem``'s pattern with ``name=value`` (for error messages), if there is one."""
        for pattern in self.patterns:
            if pattern.match(stem) is not None and pattern.name == name:
                return pattern.stem.replace("{" + name + "}", str(value))
        return None


def load_manifest(book_dir: Path) -> Manifest:
    """Read ``book_dir/chapters.yml``."""
    path = Path(book_dir) / "chapters.yml"
    raw = yaml.safe_load(path.read_text()) or {}
    patterns, chapters = [], {}
    for stem, entry in raw.items():
        entry = dict(entry or {})
        unknown = set(entry) - KEYS
        if unknown:
            raise ManifestError(f"{path}: chapter {stem!r} has unknown keys {sorted(unknown)}")
        names = _PLACEHOLDER.findall(stem)
        if names:
            if len(names) > 1 or set(entry) - {"source", "parameters"} or "source" not in entry:
                raise ManifestError(
                    f"{path}: pattern {stem!r} needs exactly one {{placeholder}} and a source; it may have parameters"
                )
            patterns.append(
                Pattern(stem, names[0], Path(book_dir) / entry["source"], dict(entry.get("parameters", {})))
            )
    manifest = Manifest({}, patterns, path)
    for stem, entry in raw.items():
        if _PLACEHOLDER.search(stem):
            continue
        entry = dict(entry or {})
        own = Path(book_dir) / entry.get("source", f"{stem}.md")
        inherited = manifest.entry(stem) if "source" not in entry and not own.is_file() else None
        source = inherited["source"] if inherited else own
        after = entry.get("after", [])
        if after == "all":  # every chapter that computes: not the patterns, nor the other pages that read them all
            readers = {o for o, e in raw.items() if (e or {}).get("after") == "all"}
            after = [o for o in raw if o not in readers and not _PLACEHOLDER.search(o)]
        elif not isinstance(after, list):
            raise ManifestError(f"{path}: chapter {stem!r} has after: {after!r}; allowed: a list of chapters or 'all'")
        for dep in after:
            if dep not in raw:
                raise ManifestError(f"{path}: chapter {stem!r} runs after {dep!r}, which is not in the manifest")
        chapters[stem] = {
            "source": source,
            "parameters": {**(inherited["parameters"] if inherited else {}), **dict(entry.get("parameters", {}))},
            "after": after,
            "title": entry.get("title"),
        }
    try:
        graphlib.TopologicalSorter({stem: entry["after"] for stem, entry in chapters.items()}).prepare()
    except graphlib.CycleError as exc:
        raise ManifestError(f"{path}: chapters run after each other in a circle: {' -> '.join(exc.args[1])}") from None
    dict.update(manifest, chapters)
    return manifest


def select(manifest: Manifest, only: list[str] | None, overrides: dict) -> tuple[dict[str, dict], dict[str, dict]]:
    """The chapters named by ``only`` (all when None) as entries (copies), the reader's ``overrides`` applied and
    checked (:func:`check_parameters`), and each chapter's overrides under its own names (a former name renamed,
    :data:`RENAMED`, with a note printed). ManifestError for a chapter the manifest does not know."""
    chapters, own = {}, {}
    for stem in list(manifest) if not only else list(dict.fromkeys(only)):
        entry = manifest.entry(stem)
        if entry is None:
            patterns = [p.stem for p in manifest.patterns]
            raise ManifestError(f"unknown chapter(s) {[stem]}; chapters are: {list(manifest)}, and the patterns "
                                f"{patterns}")  # fmt: skip
        if not entry["source"].is_file():
            raise ManifestError(f"chapter {stem!r} needs {entry['source']}, which does not exist")
        own[stem], notes = renamed_parameters(stem, entry["source"], overrides)
        for note in notes:
            print(f"  {note}", flush=True)
        for name, value in own[stem].items():
            fixed = manifest.bound(stem).get(name)
            if fixed is not None and fixed != value:
                other = manifest.stem_for(stem, name, value)
                raise ManifestError(f"chapter {stem!r} runs {name}={fixed!r} (its name says so); run --only {other}")
        entry = {**entry, "parameters": {**entry["parameters"], **own[stem]}}
        if overrides:  # the manifest's title describes the book's parameters, not the reader's
            entry["title"] = None
        entry["parameters"] = check_parameters(stem, entry["source"], entry["parameters"])
        chapters[stem] = entry
    return chapters, own


def toc_pages(toc: list[str], manifest: Manifest) -> list[tuple[Path, str]]:
    """What travels with the book's executed notebooks, as (source, its place in the executed tree): the plain pages of
    the table of contents (``toc``: its entries, :func:`toc_files`; the chapters of ``manifest`` excepted), the
    bibliography and a reader's modules (``book/**/*.py``, in their folders)."""
    from lib.core.paths import REPO_ROOT

    book_dir = manifest.path.parent
    pages = []
    for rel in toc:
        if Path(rel).name in manifest:
            continue
        source = REPO_ROOT / f"{rel}.md"
        if not source.is_file():
            raise ManifestError(f"the table of contents names {rel}, but neither {source} nor a manifest chapter "
                                "exists")  # fmt: skip
        pages.append((source, source.name))
    pages += [(bib, bib.name) for bib in sorted(book_dir.glob("*.bib"))]
    modules = [m for m in sorted(book_dir.rglob("*.py")) if "__pycache__" not in m.parts]
    return pages + [(m, str(m.relative_to(book_dir))) for m in modules]


def toc_files(toc_path: Path) -> list[str]:
    """Every ``file:`` entry of a jb-book ``_toc.yml`` (root first), relative to the repository root."""
    toc = yaml.safe_load(Path(toc_path).read_text())
    files = [toc["root"]]

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                files.append(node["file"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk({k: v for k, v in toc.items() if k != "root"})
    return files


# --------------------------------------------------------------------------------------------- parameters


def notebook_parameters(source: Path) -> dict[str, dict]:
    """The names (with types, defaults as source text, help) declared in the chapter's ``parameters`` cell."""
    import jupytext
    import papermill

    return papermill.inspect_notebook(jupytext.read(source))


def chapter_settings(stem: str, book_dir: Path | None = None) -> dict[str, Any]:
    """The parameters chapter ``stem`` runs with in the book: its ``parameters`` cell's defaults as Python values,
    the manifest's values applied (for the results tests; a chapter that reuses another's solutions reads that
    chapter's settings object in ``lib`` instead, e.g. ``CopyStudy()``). A default written ``line("name")`` is that
    line's value (:func:`lib.core.lines.line`)."""
    from lib.core.paths import REPO_ROOT

    entry = load_manifest(book_dir or REPO_ROOT / "book").entry(stem)
    if entry is None:
        raise ValueError(f"chapter {stem!r} is not in the manifest")
    defaults = {k: ast.literal_eval(_python(v["default"])) for k, v in notebook_parameters(entry["source"]).items()}
    return {**defaults, **entry["parameters"]}


class _FlowLoader(yaml.SafeLoader):
    """YAML for ``-p`` values: floats also without a dot (``1e-3``), and only true/false/True/False are booleans; no
    aliases (``*a``), whose nesting can expand a few hundred characters into billions of nodes."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(None, None, f"an alias (*{event.anchor}) is not allowed; write the "
                                              "value out", event.start_mark)  # fmt: skip
        return super().compose_node(parent, index)


_FlowLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_FlowLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_FlowLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*\.?[0-9_]*|\.[0-9_]+)[eE][-+]?[0-9]+$"),
    list("-+0123456789."),
)


def _check_plain(name: str, value, raw: str):
    """``value`` if it is made of None, bool, int, float, str, lists and dicts with string keys (what papermill can
    inject); otherwise ManifestError."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list):
        return [_check_plain(name, v, raw) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _check_plain(name, v, raw) for k, v in value.items()}
    raise ManifestError(
        f"-p {name} {raw!r} holds a {type(value).__name__}; allowed are numbers, strings, True/False/None and "
        "lists and dicts of them (dict keys are strings)"
    )


def coerce(value: str, name: str = "value"):
    """Parse a command-line parameter value: like papermill's ``-p`` (int, float, True/False/None, else str), and a
    value starting with ``{`` or ``[`` as a YAML dict or list, like papermill's ``-y`` (``{length: 30}``)."""
    text = value.strip()
    if text[:1] in ("{", "["):
        kind = "dict" if text[0] == "{" else "list"
        try:
            parsed = yaml.load(text, Loader=_FlowLoader)  # noqa: S506 - a SafeLoader subclass
        except yaml.YAMLError as exc:
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise ManifestError(
                f"-p {name} {value!r} is not a valid YAML {kind} ({problem}); write it like "
                + ("'{length: 30}'" if kind == "dict" else "'[0.85, 0.9]'")
            ) from None
        return _check_plain(name, parsed, value)
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    return {"True": True, "False": False, "None": None}.get(value, value)


#: Parameters renamed (issue 34: ``solutions`` counts trained networks, ``seed``/``seeds`` are seed integers): the
#: former name → the new one. A chapter that declares the new name still takes the former one, with a note.
RENAMED = {"seeds": "solutions", "copy_seeds": "copy_solutions", "variant_seeds": "variant_solutions"}


def renamed_parameters(stem: str, source: Path, parameters: dict) -> tuple[dict, list[str]]:
    """``parameters`` under the chapter's own names: a former name (:data:`RENAMED`) that the chapter no longer
    declares becomes the new one it does; a one-line note for each. ManifestError if both names are given."""
    declared, renamed, notes = notebook_parameters(source), {}, []
    for name, value in parameters.items():
        new = RENAMED.get(name)
        if new is not None and name not in declared and new in declared:
            if new in parameters:
                raise ManifestError(f"chapter {stem!r}: {name!r} is now {new!r}; give {new} once, not both")
            notes.append(f"note: {name} is now {new} (chapter {stem!r} runs {new}={value!r})")
            name = new
        renamed[name] = value
    return renamed, notes


def check_parameters(stem: str, source: Path, parameters: dict) -> dict:
    """``parameters`` under the chapter's names (:func:`renamed_parameters`); refuse those the chapter does not
    declare, naming the allowed ones."""
    parameters, _ = renamed_parameters(stem, source, parameters)
    declared = notebook_parameters(source)
    unknown = sorted(set(parameters) - set(declared))
    if unknown:
        allowed = ", ".join(f"{k}: {v['inferred_type_name']} = {v['default']}" for k, v in declared.items())
        raise ManifestError(f"chapter {stem!r} has no parameter(s) {unknown}; its parameters are: {allowed}")
    return parameters


def _python(text: str) -> str:
    """A default's source text as canonical Python (``"sine"`` -> ``'sine'``; ``line("safe_dfvu")``, a threshold that
    starts at its line of :mod:`lib.core.lines`, -> that line's value), or as it is if neither."""
    named = re.fullmatch(r"""line\(\s*(['"])(\w+)\1\s*\)""", text.strip())
    if named:
        from lib.core.lines import line

        return repr(line(named[2]))
    try:
        return repr(ast.literal_eval(text))
    except (ValueError, SyntaxError):
        return text


def parameter_lines(entry: dict) -> list[str]:
    """The chapter's parameters as Python lines ``name: type = value  # help``, the manifest's values applied."""
    lines = []
    for name, p in notebook_parameters(entry["source"]).items():
        value = repr(entry["parameters"][name]) if name in entry["parameters"] else _python(p["default"])
        kind = p.get("inferred_type_name")
        note = "(chapters.yml) " if name in entry["parameters"] else ""
        if not note and p["default"].strip().startswith("line("):
            note = f"({p['default'].strip()}) "  # the line it starts at
        comment = f"  # {note}{p['help']}" if p.get("help") or note else ""
        lines.append(f"{name}{': ' + kind if kind and kind != 'None' else ''} = {value}{comment}".rstrip())
    return lines
