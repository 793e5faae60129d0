"""Book plumbing kept for now: execute the task chapter with papermill and read a chapter's parameters and glue.

Moved verbatim out of ``lib.paper_a.task_analysis`` (issue #14); the executor (``scripts/execute_book.py``) takes these
over, and this module is then deleted.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from lib.core import params, progress
from lib.core.paths import REPO_ROOT
from lib.paper_a.task_analysis.configuration import task_params_for
from lib.paper_a.tasks import available_tasks

#: The chapter template that analyses one task (executed by papermill with parameter ``task``).
TASK_CHAPTER = "neuro_task.md"


def chapter_parameters(source: Path | None = None) -> dict[str, dict[str, Any]]:
    """The parameters declared by the task chapter's ``parameters`` cell (name → papermill's description)."""
    import jupytext
    import nbformat
    import papermill

    source = Path(source) if source is not None else REPO_ROOT / "book" / TASK_CHAPTER
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "chapter.ipynb"
        nbformat.write(jupytext.read(source), path)
        return papermill.inspect_notebook(str(path))


def execute_task_chapter(output: Path, *, source: Path | None = None, **parameters) -> dict[str, Any]:
    """Execute the task chapter with papermill ``parameters`` into ``output`` (.ipynb); return its glued values.

    Unknown parameter names, an unregistered ``task`` and unknown ``task_params`` raise ``ValueError`` listing what is
    allowed before any kernel starts (papermill itself only warns about unknown names).
    """
    import jupytext
    import nbformat
    import papermill

    source = Path(source) if source is not None else REPO_ROOT / "book" / TASK_CHAPTER
    declared = chapter_parameters(source)
    params.subset("parameters", sorted(parameters), declared)
    task = parameters.get("task", declared["task"]["default"].strip("\"'"))
    params.choice("task", task, available_tasks())
    task_params_for(task, parameters.get("task_params"))
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "chapter.ipynb"
        nb = jupytext.read(source)
        nb.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
        nbformat.write(nb, path)
        with progress.child_stderr():  # the nested kernel's log lines go where the bars go, not in this notebook
            papermill.execute_notebook(
                str(path), str(output), parameters=parameters, kernel_name="python3", cwd=str(source.parent),
                progress_bar=False,
            )  # fmt: skip
    return glued_values(output)


def glued_values(path: Path) -> dict[str, Any]:
    """``{name: value}`` of every glued plain value (number, bool, str) of an executed notebook; figures skipped."""
    import ast

    import nbformat

    values = {}
    for cell in nbformat.read(Path(path), as_version=4).cells:
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            text = output.get("data", {}).get("application/papermill.record/text/plain")
            if not name or text is None:
                continue
            try:
                value = ast.literal_eval(text.strip())
            except (ValueError, SyntaxError):
                continue
            if isinstance(value, bool | int | float | str):
                values[name] = value
    return values


def copy_chapter_settings(source: Path | None = None) -> dict[str, Any]:
    """The copy-task chapter's parameters (its ``parameters`` cell defaults), as Python values."""
    import ast

    source = Path(source) if source is not None else REPO_ROOT / "book" / "copy_task.md"
    return {k: ast.literal_eval(v["default"]) for k, v in chapter_parameters(source).items()}
