"""Fault injection against the executor (issue 35): each test plants one fault, runs the smallest chapter that meets
it, and checks that the run refuses up front (exit 2, one line naming the parameter, nothing executed) or recovers
and says so on the terminal (the chapter, the file, what was done), with every good result unchanged and nothing on
the page. Marked ``faults``; ``make test`` runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bookrun.test_cli import HEADER, ROOT, _cmd, _leftovers

pytestmark = pytest.mark.faults

#: A chapter that reads and writes the model cache and a results table, and says which interpreter runs it.
CACHED = """
import sys
import torch
from lib.core import cache, results_table
from lib.core.paths import cache_dir
from faultjobs import double

payload, path, hit = cache.fetch("faulttest", {"n": n}, lambda: {"w": torch.arange(float(n))}, code="c1")
rows = results_table.sweep(double, [{"x": 1}, {"x": 2}], cache_dir() / "faulttable", code="c1", workers=1,
                           progress=False)
glue("total", float(payload["w"].sum()), display=False)
glue("rows", sum(r["y"] for r in rows), display=False)
glue("python", sys.executable, display=False)
"""


@pytest.fixture
def book(tmp_path):
    book = tmp_path / "book"
    book.mkdir()
    (book / "ok.md").write_text(HEADER.format(body=CACHED))
    (book / "other.md").write_text(HEADER.format(body='glue("twice", n * 2, display=False)'))
    (book / "faultjobs.py").write_text("def double(x):\n    return {'y': 2 * x}\n")
    (book / "chapters.yml").write_text("ok: {}\nother: {}\n")
    env = dict(os.environ, BOOK_BUILD_DIR=str(tmp_path / "_build"), BOOK_WORKERS="1", PYTHONPATH=str(ROOT))
    env.pop("BOOK_CACHE_DIR", None)
    env.pop("BOOK_FAULTS", None)
    return book, env, tmp_path / "_build"


def _run(book: Path, *args, env):
    return subprocess.run(_cmd(book, *args), capture_output=True, text=True, env=env, cwd=ROOT)


def _values(build: Path) -> dict:
    return json.loads((build / "results.json").read_text())


def _stderr_outputs(notebook: Path) -> list[str]:
    cells = json.loads(notebook.read_text())["cells"]
    return [o.get("text", "") for c in cells for o in c.get("outputs", []) if o.get("name") == "stderr"]


def _refused(proc, *fragments: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, proc.stderr


# --------------------------------------------------------------------------------------------- recovered from


def test_a_corrupt_cached_model_and_table_part_are_named_on_the_terminal_and_rebuilt(book):
    book, env, build = book
    assert _run(book, "--only", "ok", env=env).returncode == 0
    good = _values(build)
    model = next((build / "cache").glob("faulttest-*.pt"))
    part = next((build / "cache" / "faulttable").rglob("*.parquet"))
    model.write_bytes(model.read_bytes()[:40])  # truncated
    part.write_bytes(b"PAR1 not a table")
    proc = _run(book, "--only", "ok", "--force", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "recovered from 2 fault(s)" in proc.stderr, proc.stderr
    assert "ok: cached model cannot be read" in proc.stderr and model.name in proc.stderr, proc.stderr
    assert part.name in proc.stderr, proc.stderr
    assert _values(build) == good, "the rebuilt entries give the same numbers"
    assert not _stderr_outputs(build / "executed" / "book" / "ok.ipynb"), "nothing of it on the page"
    assert list((build / "cache").glob(f"{model.name}.corrupt-*")), "the bad file is kept aside for inspection"


def test_a_garbage_notebook_of_another_chapter_is_set_aside_not_a_crash(book):
    book, env, build = book
    assert _run(book, env=env).returncode == 0
    good = _values(build)
    other = build / "executed" / "book" / "other.ipynb"
    other.write_text("garbage{")
    proc = _run(book, "--only", "ok", "--force", env=env)  # an unrelated chapter
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "the executed notebook of chapter 'other' cannot be read" in proc.stderr, proc.stderr
    assert "python -m bookrun --only other" in proc.stderr
    assert list((build / "logs").glob("other.unreadable-*.ipynb")) and not other.exists()
    proc = _run(book, env=env)  # the whole book executes it again
    assert proc.returncode == 0 and "to run   other: no execution record" in proc.stdout, proc.stdout
    assert _values(build) == good
    assert not list((build / ".locks").glob("*.lock")), "locks are released and removed"
    assert not _leftovers(build)


def test_a_kernel_spec_of_another_environment_is_not_used(book, tmp_path):
    book, env, build = book
    spec = tmp_path / "elsewhere" / "kernels" / "python3"
    spec.mkdir(parents=True)  # what a moved checkout's installed spec looks like: an interpreter that is gone
    argv = ["/moved/away/.venv/bin/python", "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "Python 3", "language": "python"}))
    proc = _run(book, "--only", "ok", env={**env, "JUPYTER_PATH": str(tmp_path / "elsewhere")})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _values(build)["ok::python"] == sys.executable


# --------------------------------------------------------------------------------------------- refused up front


def test_an_unwritable_build_folder_is_one_sentence_not_a_traceback(book):
    book, env, build = book
    build.mkdir()
    (build / ".locks").write_text("a file where the lock folder goes")  # as a read-only or full folder: no lock
    proc = _run(book, "--only", "other", env=env)
    _refused(proc, "cannot make the lock file", "must be writable")
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


BAD_TASKS = {
    "nan_targets": "targets[:, 3] = np.nan",
    "short_targets": "targets = targets[:, :-1]",
}
TASK_MODULE = """
import numpy as np
from lib.paper_a.tasks import as_batch, register_task, rng_for


@register_task("{name}", n_inputs=1, n_outputs=1, defaults={{"length": 10}})
def generate(batch_size, *, seed, length):
    inputs = rng_for(seed).standard_normal((batch_size, length, 1))
    targets = np.cumsum(inputs, axis=1)
    {fault}
    return as_batch(inputs, targets)
"""


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        ({"task_params": "{length: -5}"}, "length=-5 is out of range; allowed: [1, inf)"),
        ({"steps": "0"}, "steps=0 is out of range; allowed: [1, inf)"),
        ({"seeds": "[0, 0]"}, "solutions=[0, 0] must be an integer"),
        ({"task_module": "/no/such/tasks.py"}, "task module '/no/such/tasks.py' does not exist"),
        ({"task_module": "sine.py"}, "task 'sine' is already registered (by lib.paper_a.tasks.sine)"),
        ({"task": "nan_targets", "task_module": "nan_targets.py"}, "targets_bty has 1 non-finite entries"),
        ({"task": "short_targets", "task_module": "short_targets.py"}, "shape (1, 9, 1) but inputs_btx (1, 10, 1)"),
    ],
    ids=[
        "negative-length",
        "steps-0",
        "seed-list",
        "missing-task-module",
        "task-name-clash",
        "nan-targets",
        "wrong-shape",
    ],
)
def test_bad_task_chapter_values_are_refused_before_any_kernel_starts(parameters, message, tmp_path):
    for name, fault in BAD_TASKS.items():
        (tmp_path / f"{name}.py").write_text(TASK_MODULE.format(name=name, fault=fault))
    (tmp_path / "sine.py").write_text(TASK_MODULE.format(name="sine", fault=""))
    given = {k: str(tmp_path / v) if k == "task_module" and not v.startswith("/") else v for k, v in parameters.items()}
    stem = f"task_{given.pop('task', 'sine')}"  # the task chapter of that task (a pattern of the manifest)
    args = [a for name, value in given.items() for a in ("-p", name, value)]
    env = dict(os.environ, BOOK_BUILD_DIR=str(tmp_path / "_build"), PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "bookrun", "--only", stem, *args], capture_output=True, text=True,
                          env=env, cwd=ROOT)  # fmt: skip
    _refused(proc, f"chapter {stem!r} refuses its parameters", message, "nothing was executed")
    assert not (tmp_path / "_build" / "scratch").exists() or not any((tmp_path / "_build" / "scratch").iterdir())
    assert not (tmp_path / "_build" / "cache").exists() or not any((tmp_path / "_build" / "cache").rglob("*.pt"))


def test_a_fault_outside_the_executor_is_a_warning_never_silent(monkeypatch):
    from lib.core import faults  # here, not at the top: the suite also runs against a checkout without it

    monkeypatch.delenv("BOOK_FAULTS", raising=False)
    with pytest.warns(faults.FaultWarning, match=r"cannot be read \(x.pt\): recomputed"):
        faults.report("cannot be read", file="x.pt", action="recomputed")


def test_duplicate_seeds_are_refused_not_trained_and_counted_twice():
    from lib.paper_a.task_analysis import TaskStudy

    with pytest.raises(ValueError, match=r"seeds=\[0, 3, 0\] names the seed\(s\) \[0\] twice"):
        TaskStudy(task="sine", seeds=[0, 3, 0])
    assert TaskStudy(task="sine", seeds=[0, 3]).seeds == (0, 3)


def test_every_chapter_of_the_book_passes_its_own_check_on_a_fresh_build(tmp_path, monkeypatch):
    """The up-front check runs each chapter's validation cells before anything is executed: on a fresh clone no
    chapter has run yet, so a validation cell that reads the executed tree (the scorecard's once did) stops
    ``make book`` before it starts."""
    from bookrun import load_manifest
    from bookrun.checks import check_values, validation_cells
    from bookrun.processes import kernel_env

    monkeypatch.setenv("BOOK_BUILD_DIR", str(tmp_path / "_build"))
    manifest = load_manifest(ROOT / "book")
    cells = {stem: validation_cells(manifest[stem]["source"], manifest[stem]["parameters"]) for stem in manifest}
    assert len(cells) >= 14
    assert check_values(cells, kernel_env(), ROOT / "book") == {}
    assert not (tmp_path / "_build" / "executed").exists()
