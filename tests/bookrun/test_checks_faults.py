"""The up-front check is a gate (issue 50): a task module that fails or hangs on import, a checker that crashes, a
YAML alias bomb, a parameter given twice and a run name of the executor's own files each refuse the run before
anything executes (exit 2, one sentence naming the chapter or parameter and what happened), where the check used to
say "skipped" and start the chapter. Marked ``faults``; ``make test`` runs them."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.bookrun.test_cli import ROOT

pytestmark = pytest.mark.faults

TASK = """
import numpy as np
from lib.paper_a.tasks import as_batch, register_task, rng_for
{fault}

@register_task("{name}", n_inputs=1, n_outputs=1, defaults={{"length": 10}})
def generate(batch_size, *, seed, length):
    inputs = rng_for(seed).standard_normal((batch_size, length, 1))
    return as_batch(inputs, np.cumsum(inputs, axis=1))
"""


def _bookrun(tmp_path, *args, env=None):
    env = {**os.environ, "BOOK_BUILD_DIR": str(tmp_path / "_build"), "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "bookrun", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=300)  # fmt: skip


def _refused(proc, *fragments: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, proc.stderr
    assert "started" not in proc.stdout, proc.stdout


def _nothing_ran(tmp_path) -> None:
    scratch = tmp_path / "_build" / "scratch"
    assert not scratch.exists() or not any(p.suffix == ".ipynb" for p in scratch.rglob("*")), list(scratch.rglob("*"))


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ("raise ImportError('no module named cupy')", "ImportError while checking the values: task module '"),
        ("raise RuntimeError('needs a GPU')", "RuntimeError while checking the values: task module '"),
        ("def broken(:\n    pass", "SyntaxError"),
    ],
    ids=["import-error", "runtime-error", "syntax-error"],
)
def test_a_task_module_that_fails_on_import_is_refused_naming_what_failed(tmp_path, fault, message):
    module = tmp_path / "faulty.py"
    module.write_text(TASK.format(name="faulty", fault=fault))
    proc = _bookrun(tmp_path, "--only", "task_faulty", "-p", "task_module", str(module))
    _refused(proc, "chapter 'task_faulty' refuses its parameters", message, "faulty.py", "nothing was executed")
    if "'" in fault:  # the module's own words reach the reader
        assert fault.split("'")[1] in proc.stderr, proc.stderr
    _nothing_ran(tmp_path)


def test_a_checker_that_hangs_or_exits_refuses_the_chapter_it_was_checking(tmp_path, monkeypatch):
    """In-process, with the time limit cut to 3 s: a module that sleeps on import, then one that exits the checker
    (``os._exit(0)``) with no result, each refuse the chapter being checked, never 'skipped'. The limit is each
    chapter's own (its clock starts when the checker reaches it), so the checker's start-up on a loaded machine (its
    imports of IPython, numpy and torch) refuses nothing: the well-behaved chapters take milliseconds of their 3 s."""
    from bookrun import checks
    from bookrun.processes import kernel_env

    monkeypatch.setenv("BOOK_BUILD_DIR", str(tmp_path / "_build"))
    monkeypatch.setattr(checks, "CHECK_TIMEOUT", 3.0)
    for name, code, message in (
        ("sleepy", "import time\ntime.sleep(60)", "did not finish within 3 s"),
        ("leaver", "import os\nos._exit(0)", "crashed (it exited without a result"),
    ):
        cells = {"fine": ["x = 1"], name: ["y = 2", code], "after": ["z = 3"]}
        refused = checks.check_values(cells, kernel_env(), ROOT / "book")
        assert list(refused) == [name], refused
        assert message in refused[name] and "refused, not run unchecked" in refused[name]


def test_a_yaml_alias_bomb_is_refused_before_it_expands(tmp_path):
    bomb = "{a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1], b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a], c: [*b, *b, *b, *b]}"
    proc = _bookrun(tmp_path, "--only", "task_sine", "-p", "task_params", bomb)
    _refused(proc, "-p task_params", "an alias (*a) is not allowed; write the value out")
    _nothing_ran(tmp_path)


def test_a_parameter_given_twice_is_refused_with_both_values(tmp_path):
    proc = _bookrun(tmp_path, "--only", "task_sine", "-p", "solutions", "3", "-p", "solutions", "100000")
    _refused(proc, "a parameter given more than once (-p solutions '3', '100000')", "give each once")
    _nothing_ran(tmp_path)


@pytest.mark.parametrize("name", ["sine.failed", "x.partial-123"])
def test_a_run_name_of_the_executors_own_files_is_refused(tmp_path, name):
    """``--name X.failed`` is where run X's failure goes: a failing run X would replace it, a successful one delete
    it; a staging name could be swept as a leftover."""
    proc = _bookrun(tmp_path, "--only", "task_sine", "--name", name)
    _refused(proc, f"--name={name!r} is a name the executor gives its own files", "choose another")
    _nothing_ran(tmp_path)
