"""The executor around papermill: nothing good lost, errors on the terminal, named scratch runs, early checks, no
leftovers after a failure, Ctrl-C or a kill, and two runs at once that do not mix."""

from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from bookrun import chapter, manifest, processes, schedule
from bookrun.manifest import ManifestError, coerce
from tests.conftest import MYST_FRONT

ROOT = Path(__file__).resolve().parents[2]

HEADER = (
    MYST_FRONT
    + """```{{code-cell}} ipython3
:tags: [parameters]
n: int = 3  # a number
seconds: float = 0.0  # how long the chapter works
options: dict = {{}}  # a dict parameter
```

```{{code-cell}} ipython3
from lib.core import params

n = params.integer("n", n, min=0)
seconds = params.real("seconds", seconds, min=0)
if not isinstance(options, dict):
    raise TypeError(f"options={{options!r}} must be a dict")
```

```{{code-cell}} ipython3
from myst_nb import glue
{body}
```
"""
)

WORK = """
import time
from lib.core import engine
def nap(seconds):
    time.sleep(seconds)
print("working", flush=True)
if seconds:
    engine.run_jobs(nap, [{"seconds": seconds}] * 2, workers=2, progress=False)  # in spawned workers too
glue("twice", n * 2, display=False)
glue("size", len(options), display=False)
"""


@pytest.fixture
def book(tmp_path):
    book = tmp_path / "book"
    book.mkdir()
    (book / "ok.md").write_text(HEADER.format(body=WORK))
    (book / "chapters.yml").write_text("ok: {}\n")
    env = dict(os.environ, BOOK_BUILD_DIR=str(tmp_path / "_build"), BOOK_WORKERS="2", PYTHONPATH=str(ROOT))
    env.pop("BOOK_CACHE_DIR", None)
    return book, env


def _cmd(book: Path, *args) -> list[str]:
    return [sys.executable, "-m", "bookrun", "--book-dir", str(book), "--toc", "/none", *args]


def _run(book: Path, *args, env):
    return subprocess.run(_cmd(book, *args), capture_output=True, text=True, env=env, cwd=ROOT)


def _ours(build: Path) -> dict[int, str]:
    """Processes started by executions of the book in ``build`` (their environment carries its marker)."""
    return processes.marked_processes(f"{processes.build_tag(build.resolve())}:")


def _leftovers(build: Path) -> list[str]:
    """Temporary folders, kernel connection files and half-written files a run must not leave behind."""
    found = [str(p) for p in (build / ".tmp").glob("*")] if (build / ".tmp").is_dir() else []
    found += [str(p) for p in build.rglob("*.tmp") if p.is_file()]
    found += [str(p) for p in build.rglob("kernel-*.json")]
    found += [str(p) for p in build.rglob("*.partial-*")]
    return found


# --------------------------------------------------------------------------------------------- fast


def test_dict_and_list_parameters_parse_as_yaml():
    assert coerce("{length: 30}", "task_params") == {"length": 30}
    assert coerce("{'length': 30}", "task_params") == {"length": 30}
    assert coerce("[0.85, 0.9]", "alphas") == [0.85, 0.9]
    assert coerce("{omega_min: 1e-3, on: true, f: grid}") == {"omega_min": 0.001, "on": True, "f": "grid"}
    assert [coerce(v) for v in ("3", "0.5", "True", "None", "sine", "1e-3")] == [3, 0.5, True, None, "sine", 0.001]
    with pytest.raises(ManifestError, match=r"-p task_params '\{length: 30' is not a valid YAML dict"):
        coerce("{length: 30", "task_params")


def test_run_names_are_deterministic_and_distinct():
    name = processes.run_name
    assert name("task_sine", {"seeds": 4, "alpha": 0.85}) == "task_sine-alpha=0.85,seeds=4"
    assert name("task_sine", {"alpha": 0.85, "seeds": 4}) == name("task_sine", {"seeds": 4, "alpha": 0.85})
    a, b = name("t", {"task_params": {"length": 30}}), name("t", {"task_params": {"length": 31}})
    assert a != b and a.startswith("t-task_params=length-30-") and "/" not in a and " " not in a
    assert name("t", {"x": "a b"}) != name("t", {"x": "a_b"})
    assert len(name("t", {"x": "y" * 300})) <= 100


def test_list_prints_parameters_as_python(capsys):
    from bookrun.cli import main

    assert main(["--list"]) == 0
    out = capsys.readouterr().out
    lines = [ln.strip() for ln in out.splitlines() if ln.startswith("    ")]
    assert lines and all(ast.parse(ln) for ln in lines)  # each line is valid Python
    assert "task: str = 'integrator'" in out and "solutions: int = 3" in out and "'\"" not in out
    assert "renamed (the former name still works): seeds -> solutions" in out


def test_a_renamed_parameter_is_read_under_its_new_name_with_a_note(tmp_path, capsys):
    """``-p seeds 8`` runs a chapter that now declares ``solutions`` with solutions=8 (issue 34), saying so."""

    source = tmp_path / "new.md"
    source.write_text(MYST_FRONT + "```{code-cell} ipython3\n:tags: [parameters]\nsolutions: int = 3  # count\n```\n")
    renamed, notes = manifest.renamed_parameters("new", source, {"seeds": 8, "alpha": 0.5})
    assert renamed == {"solutions": 8, "alpha": 0.5}
    assert notes == ["note: seeds is now solutions (chapter 'new' runs solutions=8)"]
    assert manifest.check_parameters("new", source, {"seeds": 8}) == {"solutions": 8}
    with pytest.raises(ManifestError, match="'seeds' is now 'solutions'; give solutions once, not both"):
        manifest.check_parameters("new", source, {"seeds": 8, "solutions": 4})
    with pytest.raises(ManifestError, match=r"has no parameter\(s\) \['seed'\]; its parameters are: solutions"):
        manifest.check_parameters("new", source, {"seed": 8})  # not a former name
    kept = tmp_path / "old.md"  # a chapter that still declares the former name keeps it
    kept.write_text(MYST_FRONT + "```{code-cell} ipython3\n:tags: [parameters]\nseeds: int = 3  # count\n```\n")
    assert manifest.renamed_parameters("old", kept, {"seeds": 8}) == ({"seeds": 8}, [])

    book = manifest.load_manifest(ROOT / "book")  # the book's chapters, through the command line's own path
    chapters, own = manifest.select(book, ["copy_task", "task_sine"], {"seeds": 8})
    assert own == {"copy_task": {"solutions": 8}, "task_sine": {"solutions": 8}}
    assert chapters["copy_task"]["parameters"] == {"solutions": 8}
    assert chapters["task_sine"]["parameters"] == {"task": "sine", "solutions": 8}
    assert processes.run_name("copy_task", own["copy_task"]) == "copy_task-solutions=8"
    printed = capsys.readouterr().out.splitlines()
    assert "  note: seeds is now solutions (chapter 'copy_task' runs solutions=8)" in printed


def test_error_lines_give_type_and_message(tmp_path):
    err, log = tmp_path / "error.json", tmp_path / "log"
    log.write_text("Executing Cell 1---\nsome output\nTraceback ...\nValueError: last words\n")
    assert chapter.error_lines(err, log) == ["some output", "Traceback ...", "ValueError: last words"]
    err.write_text(json.dumps({"ename": "ValueError", "evalue": "alpha=1.5 is out of range", "cell": 2}))
    assert chapter.error_lines(err, log) == ["ValueError: alpha=1.5 is out of range (in cell [2])"]


def test_relay_reports_cell_and_latest_bar_without_flooding(tmp_path):
    log = tmp_path / "run.log"
    log.write_text("Executing Cell 3---------\n")  # papermill's log says which cell runs; the bars go to .progress
    bars = chapter.progress_path(log)
    bars.write_text("training:  10%|#  | 3/30 [00:01<00:09]\rtraining:  20%|## | 6/30 [00:02")
    job = chapter.Job("task_sine", {}, 1, log, tmp_path / "nb", tmp_path / "f", n_cells=9)
    lines = []

    class Fake(schedule.Console):
        def line(self, text, err=False):
            lines.append(text)

    relay = schedule.Relay(Fake(), alone=False, together_every=30.0)
    relay.add(job)
    relay.last_emit = 0.0
    relay.poll()
    assert lines == ["  task_sine: cell 3/9  training:  20%|## | 6/30 [00:02"]
    with open(bars, "a") as fh:
        fh.write("<00:08]\rtraining:  30%|### | 9/30\n")
    relay.poll()  # within 30 s of the last line: nothing printed
    assert len(lines) == 1
    job.log.unlink()
    bars.unlink()
    relay.last_emit = 0.0
    relay.poll()  # vanished files never break anything
    assert relay.text("task_sine").endswith("9/30")


def test_kill_marked_ends_every_marked_process():
    marker = f"test-{os.getpid()}-{time.time_ns()}"
    env = dict(os.environ, **{processes.MARKER_VAR: marker})
    procs = [subprocess.Popen(["sleep", "60"], env=env, start_new_session=True) for _ in range(2)]
    try:
        # a child shows its own environment only once it has exec'd: wait for that, not for a fixed time
        deadline = time.monotonic() + 10
        while set(processes.marked_processes(marker)) != {p.pid for p in procs} and time.monotonic() < deadline:
            time.sleep(0.02)
        assert set(processes.marked_processes(marker)) == {p.pid for p in procs}
        assert processes.kill_marked(marker) == []
        for p in procs:
            assert p.wait(timeout=5) != 0
        assert processes.marked_processes(marker) == {}
    finally:
        for p in procs:
            p.kill()


def test_stale_leftovers_of_killed_runs_are_removed(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    build, cache, scratch = tmp_path / "_build", tmp_path / "_build" / "cache", tmp_path / "_build" / "scratch"
    stale_tmp = build / ".tmp" / f"ok-{dead_pid}-0123abcd"
    live_tmp = build / ".tmp" / f"ok-{os.getpid()}-0123abcd"
    for folder in (stale_tmp / "sub", live_tmp, scratch / f".ok-n=5.partial-{dead_pid}", cache):
        folder.mkdir(parents=True)
    (stale_tmp / "kernel-1.json").write_text("{}")
    (cache / f".abc.pt.{dead_pid}.a1b2c3d4.tmp").write_bytes(b"half")
    done = processes.clean_stale(build, cache, scratch)
    assert len(done) == 3, done
    assert [p.name for p in (build / ".tmp").iterdir()] == [live_tmp.name]
    assert list(cache.iterdir()) == [] and list(scratch.iterdir()) == []


def test_environment_is_checked_before_anything_starts(book, tmp_path):
    book, env = book
    proc = _run(book, "--only", "ok", env={**env, "BOOK_WORKERS": "abc"})
    assert proc.returncode == 2 and "BOOK_WORKERS='abc' must be a positive integer" in proc.stderr
    proc = _run(book, "--only", "ok", env={**env, "BOOK_SCHEDULER": "tcp://a host:1"})
    assert proc.returncode == 2 and "$BOOK_SCHEDULER='tcp://a host:1' is not allowed" in proc.stderr
    (tmp_path / "file").write_text("")
    proc = _run(book, "--only", "ok", env={**env, "BOOK_CACHE_DIR": str(tmp_path / "file" / "cache")})
    assert proc.returncode == 2 and "model cache" in proc.stderr and "is not writable" in proc.stderr
    assert not (tmp_path / "_build" / "logs").exists(), "nothing may have started"


def test_existing_scratch_run_is_not_overwritten(book, tmp_path):
    book, env = book
    run = tmp_path / "_build" / "scratch" / "ok-n=5"
    run.mkdir(parents=True)
    nb = nbformat.v4.new_notebook(metadata={"book_execution": {"imports": {}, "parameters": "another execution"}})
    nbformat.write(nb, run / "notebook.ipynb")
    proc = _run(book, "--only", "ok", "-p", "n", "5", env=env)
    assert proc.returncode == 2 and "already exists" in proc.stderr and "--force" in proc.stderr
    kept = nbformat.read(run / "notebook.ipynb", as_version=4).metadata["book_execution"]
    assert kept["parameters"] == "another execution"
    proc = _run(book, "--only", "ok", "--name", "bad/name", env=env)
    assert proc.returncode == 2 and "--name='bad/name' must be" in proc.stderr


# --------------------------------------------------------------------------------------------- slow: real runs


@pytest.mark.slow
def test_bad_values_are_refused_before_anything_runs(book, tmp_path):
    book, env = book
    proc = _run(book, "--only", "ok", "-p", "n", "-1", "-p", "options", "[1]", env=env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "chapter 'ok' refuses its parameters: ValueError: n=-1 is out of range; allowed: [0, inf)" in proc.stderr
    assert "nothing was executed" in proc.stderr and not (tmp_path / "_build" / "scratch" / "ok-n=-1").exists()
    proc = _run(ROOT / "book", "--only", "schur_coordinates", "-p", "alpha", "1.5", env=env)  # a real chapter
    assert proc.returncode == 2 and "alpha=1.5 is out of range; allowed: (0.0, 1.0]" in proc.stderr


@pytest.mark.slow
def test_failure_prints_the_error_and_keeps_the_previous_notebook(book, tmp_path):
    book, env = book
    out = tmp_path / "_build" / "executed" / "book" / "ok.ipynb"
    results = tmp_path / "_build" / "results.json"
    assert _run(book, env=env).returncode == 0
    good, good_results = out.read_bytes(), results.read_text()
    assert json.loads(good_results) == {"ok::twice": 6, "ok::size": 0}

    source = book / "ok.md"
    source.write_text(
        source.read_text().replace('print("working", flush=True)', 'raise RuntimeError("boom: n is wrong")')
    )
    proc = _run(book, env=env)
    assert proc.returncode == 1
    assert "FAILED   ok after" in proc.stdout and "RuntimeError: boom: n is wrong (in cell [" in proc.stdout
    assert "raised at Cell In[" in proc.stdout and 'raise RuntimeError("boom: n is wrong")' in proc.stdout
    assert "log: " in proc.stdout and "ok.log" in proc.stdout and "ok.failed.ipynb" in proc.stdout
    assert out.read_bytes() == good and results.read_text() == good_results, "the good notebook and its numbers stay"
    assert (tmp_path / "_build" / "logs" / "ok.failed.ipynb").is_file()

    # a failed scratch run goes beside the good one, never over it
    source.write_text(HEADER.format(body=WORK))
    assert _run(book, "--only", "ok", "-p", "n", "5", env=env).returncode == 0
    run = tmp_path / "_build" / "scratch" / "ok-n=5"
    kept = {p.name: p.read_bytes() for p in run.iterdir()}
    source.write_text(source.read_text().replace('print("working", flush=True)', 'raise RuntimeError("boom")'))
    proc = _run(book, "--only", "ok", "-p", "n", "5", "--force", env=env)
    assert proc.returncode == 1 and "RuntimeError: boom" in proc.stdout and "ok-n=5.failed" in proc.stdout
    assert {p.name: p.read_bytes() for p in run.iterdir()} == kept
    assert json.loads((run.with_name("ok-n=5.failed") / "parameters.json").read_text())["status"] == "failed"
    assert _leftovers(tmp_path / "_build") == []


@pytest.mark.slow
def test_scratch_runs_are_named_folders_with_their_parameters(book, tmp_path):
    book, env = book
    proc = _run(book, "--only", "ok", "-p", "n", "5", "-p", "options", "{a: 1, b: [2, 3]}", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    runs = [p for p in (tmp_path / "_build" / "scratch").iterdir() if not p.name.startswith(".")]
    assert len(runs) == 1 and runs[0].name.startswith("ok-n=5,options=a-1_b-2_3-")
    run = runs[0]
    assert sorted(p.name for p in run.iterdir()) == [
        "notebook.ipynb",
        "parameters.json",
        "results.json",
        "run.log",
        "run.progress",
    ]
    assert json.loads((run / "results.json").read_text()) == {"ok::twice": 10, "ok::size": 2}
    meta = json.loads((run / "parameters.json").read_text())
    assert meta["parameters"] == {"n": 5, "options": {"a": 1, "b": [2, 3]}} and meta["status"] == "succeeded"
    assert not (tmp_path / "_build" / "logs").exists(), "scratch runs do not write the book's logs"

    again = _run(book, "--only", "ok", "-p", "options", "{a: 1, b: [2, 3]}", "-p", "n", "5", env=env)
    assert again.returncode == 0 and "up to date" in again.stdout
    named = _run(book, "--only", "ok", "--name", "mine", env=env)
    assert named.returncode == 0 and json.loads((run.with_name("mine") / "results.json").read_text())["ok::twice"] == 6


def _wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.slow
def test_ctrl_c_keeps_everything_good_and_leaves_nothing_behind(book, tmp_path):
    """SIGINT to the executor's process group mid-chapter (what Ctrl-C does): the previous notebook and results stay,
    papermill, the kernel and its worker process end, no temporary folder, kernel file or half-written file stays."""
    book, env = book
    build = tmp_path / "_build"
    out, results = build / "executed" / "book" / "ok.ipynb", build / "results.json"
    assert _run(book, env=env).returncode == 0
    good, good_results = out.read_bytes(), results.read_text()

    (book / "chapters.yml").write_text("ok: {parameters: {seconds: 120}}\n")  # a new execution, busy for 2 minutes
    proc = subprocess.Popen(_cmd(book), env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # fmt: skip
    try:
        # papermill, the kernel and its spawned worker are all running
        _wait_for(lambda: len(_ours(build)) >= 3, 120, "the kernel and its worker")
        _wait_for(lambda: "working" in (build / "logs" / "ok.log").read_text(), 60, "the chapter to work")
        start = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
        stopped_in = time.monotonic() - start
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, stdout + stderr
    assert "INTERRUPTED (SIGINT)" in stderr and "unchanged" in stderr
    assert stopped_in < 30
    assert out.read_bytes() == good and results.read_text() == good_results
    assert _ours(build) == {}, "no orphan processes"
    assert _leftovers(build) == []


@pytest.mark.slow
def test_killing_the_executor_takes_its_children(book, tmp_path):
    """SIGKILL to the executor alone: papermill learns it (parent-death signal) and ends the kernel and workers."""
    book, env = book
    build = tmp_path / "_build"
    proc = subprocess.Popen(_cmd(book, "--only", "ok", "-p", "seconds", "120"), env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    try:
        _wait_for(lambda: len(_ours(build)) >= 3, 120, "the kernel and its worker")
        proc.kill()
        proc.wait()
        _wait_for(lambda: _ours(build) == {}, 30, "the children to end")
    finally:
        for pid in _ours(build):
            os.kill(pid, signal.SIGKILL)
    # the next start removes what the killed run could not
    assert _run(book, "--only", "ok", "-p", "n", "0", env=env).returncode == 0
    assert _leftovers(build) == []


@pytest.mark.slow
def test_two_scratch_runs_at_once_do_not_mix(book, tmp_path):
    book, env = book
    scratch = tmp_path / "_build" / "scratch"
    a = subprocess.Popen(_cmd(book, "--only", "ok", "-p", "n", "1", "-p", "seconds", "3"), env=env, cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    b = subprocess.Popen(_cmd(book, "--only", "ok", "-p", "n", "2", "-p", "seconds", "3"), env=env, cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    _wait_for(lambda: any(scratch.glob(".ok-n=1,seconds=3.partial-*")), 120, "the first run to start")
    same = _run(book, "--only", "ok", "-p", "n", "1", "-p", "seconds", "3", env=env)  # the first one's run
    assert same.returncode == 2 and "is being executed by another process" in same.stderr
    out_a, out_b = a.communicate(timeout=300), b.communicate(timeout=300)
    assert a.returncode == 0 and b.returncode == 0, out_a + out_b
    for n in (1, 2):
        run = scratch / f"ok-n={n},seconds=3"
        assert json.loads((run / "results.json").read_text()) == {"ok::twice": 2 * n, "ok::size": 0}
        assert json.loads((run / "parameters.json").read_text())["overrides"] == {"n": n, "seconds": 3}
        assert "working" in (run / "run.log").read_text()
    assert _leftovers(tmp_path / "_build") == []


# --------------------------------------------------------------------------------------------- fast: what re-executes


def _record(imports: dict[str, str], root: Path, source: Path, after=None) -> dict:
    from bookrun import fingerprints

    return fingerprints.make_record(source, {}, list(imports), after or {})


def test_a_changed_module_re_executes_only_the_chapters_that_imported_it(tmp_path, monkeypatch):
    from bookrun import fingerprints

    monkeypatch.setattr(fingerprints, "REPO_ROOT", tmp_path)
    for rel in ("lib/paper_b/flows.py", "lib/paper_a/schur.py", "lib/core/params.py", "requirements.txt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(f"# {rel}\n")
    book = tmp_path / "book"
    book.mkdir()
    chapters, notebooks = {}, {}
    imported = {"annulus": ["lib/paper_b/flows.py", "lib/core/params.py"], "copy_task": ["lib/paper_a/schur.py"]}
    imported["copy_task"].append("lib/core/params.py")
    for stem, imports in imported.items():
        source = book / f"{stem}.md"
        source.write_text(stem)
        chapters[stem] = {"source": source, "parameters": {}, "after": []}
        notebooks[stem] = tmp_path / f"{stem}.ipynb"
        nb = nbformat.v4.new_notebook(metadata={"book_execution": _record(dict.fromkeys(imports), tmp_path, source)})
        nbformat.write(nb, notebooks[stem])
    chapters["scorecard"] = {"source": book / "annulus.md", "parameters": {}, "after": ["annulus", "copy_task"]}
    notebooks["scorecard"] = tmp_path / "scorecard.ipynb"
    after = {d: fingerprints.record_digest(fingerprints.stored_record(notebooks[d])) for d in ("annulus", "copy_task")}
    record = _record({}, tmp_path, book / "annulus.md", after)
    nbformat.write(nbformat.v4.new_notebook(metadata={"book_execution": record}), notebooks["scorecard"])
    stems = list(chapters)
    assert fingerprints.stale_chapters(chapters, stems, notebooks.get) == {}

    (tmp_path / "lib/paper_b/flows.py").write_text("# changed\n")
    stale = fingerprints.stale_chapters(chapters, stems, notebooks.get)
    assert stale == {
        "annulus": "lib/paper_b/flows.py changed",
        "scorecard": "it runs after annulus, which executes again",
    }
    assert fingerprints.stale_chapters(chapters, ["scorecard"], notebooks.get) == {}, "annulus has not run again yet"
    (tmp_path / "lib/paper_b/flows.py").write_text("# lib/paper_b/flows.py\n")
    (tmp_path / "lib/core/params.py").write_text("# changed\n")
    assert set(fingerprints.stale_chapters(chapters, stems, notebooks.get)) == {"annulus", "copy_task", "scorecard"}
    (tmp_path / "lib/core/params.py").write_text("# lib/core/params.py\n")

    chapters["new"] = {"source": book / "annulus.md", "parameters": {}, "after": []}  # no record yet: it runs
    assert fingerprints.stale_chapters(chapters, stems + ["new"], lambda s: tmp_path / f"{s}.ipynb") == {
        "new": "no execution record"
    }
    chapters["copy_task"]["parameters"] = {"solutions": 3}
    assert fingerprints.stale_chapters(chapters, ["copy_task"], notebooks.get) == {
        "copy_task": "its parameters changed"
    }


def test_patterns_name_chapters_after_their_parameter(tmp_path):
    book = tmp_path / "book"
    book.mkdir()
    (book / "template.md").write_text(HEADER.format(body="glue('x', n, display=False)"))
    (book / "t_own.md").write_text(HEADER.format(body=""))
    (book / "chapters.yml").write_text("t_{n}: {source: template.md}\nt_5: {title: Five}\nt_own: {}\n")
    found = manifest.load_manifest(book)
    assert found["t_5"]["source"] == book / "template.md" and found["t_5"]["parameters"] == {"n": 5}
    assert found["t_own"]["source"] == book / "t_own.md", "a chapter with a source of its own keeps it"
    assert found.entry("t_7")["parameters"] == {"n": 7} and found.entry("x_7") is None
    assert found.bound("t_5") == {"n": 5} and found.bound("t_own") == {}
    from bookrun.cli import main

    with pytest.raises(ManifestError, match=r"chapter 't_5' runs n=5 \(its name says so\); run --only t_9"):
        main(["--book-dir", str(book), "--toc", "/none", "--only", "t_5", "-p", "n", "9"])


def test_after_all_runs_a_chapter_after_every_other_and_circles_are_refused(tmp_path):
    book = tmp_path / "book"
    book.mkdir()
    for stem in ("a", "b", "last"):
        (book / f"{stem}.md").write_text(HEADER.format(body=""))
    (book / "chapters.yml").write_text("t_{n}: {source: a.md}\na: {}\nb: {after: [a]}\nlast: {after: all}\n")
    assert manifest.load_manifest(book)["last"]["after"] == ["a", "b"], "every chapter, no pattern"
    (book / "chapters.yml").write_text("a: {after: [last]}\nb: {}\nlast: {after: all}\n")
    with pytest.raises(ManifestError, match="in a circle: "):
        manifest.load_manifest(book)
    (book / "chapters.yml").write_text("a: {after: everything}\n")
    with pytest.raises(ManifestError, match="has after: 'everything'; allowed: a list of chapters or 'all'"):
        manifest.load_manifest(book)


def test_the_pages_that_read_every_chapter_run_after_every_chapter_that_computes():
    """The scorecard and the findings page read every chapter's claims (CI once started the scorecard before
    ``many_solutions`` had finished); neither waits for the other, which reads the same chapters."""
    book = manifest.load_manifest(ROOT / "book")
    for reader in ("scorecard", "findings"):
        assert set(book[reader]["after"]) == set(book) - {"scorecard", "findings"}


def test_glued_values_read_plain_values_and_claims(tmp_path):
    from bookrun.results import claim_records, glued_values

    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("")
    record = lambda name, text: nbformat.v4.new_output(  # noqa: E731
        "display_data",
        data={"application/papermill.record/text/plain": text},
        metadata={"scrapbook": {"name": name}},
    )
    claim = json.dumps({"id": "A1", "kind": "holds"})
    cell.outputs = [record("a", "0.5"), record("b", "'sine'"), record("c", "np.float64(0.25)"), record("fig", "<F>")]
    cell.outputs.append(record("claim_A1", repr(claim)))
    nb.cells.append(cell)
    nbformat.write(nb, tmp_path / "ch.ipynb")
    assert glued_values(tmp_path / "ch.ipynb") == {"a": 0.5, "b": "sine", "c": 0.25, "claim_A1": claim}
    assert claim_records(tmp_path, ["ch"]) == [{"id": "A1", "kind": "holds", "chapter": "ch"}]
    with pytest.raises(FileNotFoundError, match="execute chapter 'other' before the scorecard"):
        claim_records(tmp_path, ["other"])


def test_a_task_module_of_your_own_registers_here_and_in_the_processes_started(tmp_path, monkeypatch):
    from lib.paper_a import tasks

    monkeypatch.delenv(tasks.MODULES_ENV, raising=False)
    folder = tmp_path / "tasks"
    folder.mkdir()
    name = f"mine_{os.getpid()}"
    (folder / "mine.py").write_text(
        "from lib.paper_a.tasks import as_batch, register_task, rng_for\n\n\n"
        f"@register_task({name!r}, n_inputs=1, n_outputs=1)\n"
        "def generate(batch_size, *, seed):\n"
        "    x = rng_for(seed).standard_normal((batch_size, 3, 1))\n"
        "    return as_batch(x, x)\n"
    )
    assert tasks.load_task_modules(folder) == [name] and tasks.load_task_modules(folder / "mine.py") == []
    assert tasks.get_task(name).generate(2, seed=0).inputs_btx.shape == (2, 3, 1)
    child = subprocess.run(
        [sys.executable, "-c", f"from lib.paper_a.tasks import available_tasks; print({name!r} in available_tasks())"],
        capture_output=True, text=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )  # fmt: skip
    assert child.stdout.strip() == "True", child.stderr
    with pytest.raises(FileNotFoundError, match="does not exist"):
        tasks.load_task_modules(tmp_path / "nothing" / "here.py")


def test_failure_lines_say_where_the_error_was_raised():
    from bookrun.child import last_frame

    frames = [
        "\x1b[0;31m---------------------------------------------------------------------------\x1b[0m",
        "Cell In[3], line 2\n      1 x = 1\n----> 2 f(x)\n",
        "File /repo/lib/core/params.py:41, in real(name, value)\n     40 if value < 0:\n---> 41     raise ValueError\n",
        "ValueError: x=-1 is out of range",
    ]
    frames[2] = frames[2].replace("--->", "---->")
    assert last_frame(frames) == "File /repo/lib/core/params.py:41, in real(name, value): raise ValueError"
    assert last_frame([]) is None


# --------------------------------------------------------------------------------------------- slow: imports recorded

NESTED = """
from jupyter_client.manager import start_new_kernel

km, kc = start_new_kernel()  # a kernel this chapter starts (as new_task runs the task template)
try:
    kc.execute_interactive("import lib.core.tables", timeout=120)
finally:
    kc.stop_channels()
    km.shutdown_kernel(now=True)
glue("twice", n * 2, display=False)
"""


@pytest.mark.slow
def test_imports_of_every_kernel_are_recorded_and_decide_what_re_executes(book, tmp_path):
    from bookrun import fingerprints

    book, env = book
    (book / "nested.md").write_text(HEADER.format(body=NESTED))
    (book / "chapters.yml").write_text("ok: {}\nnested: {}\n")
    out = tmp_path / "_build" / "executed" / "book"
    proc = _run(book, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ok, nested = (fingerprints.stored_record(out / f"{s}.ipynb") for s in ("ok", "nested"))
    assert "lib/core/engine.py" in ok["imports"] and "lib/core/params.py" in ok["imports"]
    assert "lib/core/tables.py" not in ok["imports"]
    assert "lib/core/tables.py" in nested["imports"], "the nested kernel's imports count"

    # as if lib/core/engine.py had changed since: only the chapter that imported it executes again
    notebook = nbformat.read(out / "ok.ipynb", as_version=4)
    notebook.metadata["book_execution"]["imports"]["lib/core/engine.py"] = "an older version"
    nbformat.write(notebook, out / "ok.ipynb")
    proc = _run(book, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "to run   ok: lib/core/engine.py changed" in proc.stdout and "up to date nested" in proc.stdout
    assert "executing 1 of 2" in proc.stdout


@pytest.mark.slow
def test_a_pattern_chapter_runs_under_its_own_name(tmp_path):
    book = tmp_path / "book"
    book.mkdir()
    (book / "template.md").write_text(HEADER.format(body="glue('twice', n * 2, display=False)"))
    (book / "chapters.yml").write_text("t_{n}: {source: template.md}\n")
    env = dict(os.environ, BOOK_BUILD_DIR=str(tmp_path / "_build"), PYTHONPATH=str(ROOT))
    proc = _run(book, "--only", "t_4", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads((tmp_path / "_build" / "scratch" / "t_4" / "results.json").read_text()) == {"t_4::twice": 8}
    (book / "chapters.yml").write_text("t_{n}: {source: template.md}\nt_4: {}\n")  # one line: in the book
    proc = _run(book, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads((tmp_path / "_build" / "results.json").read_text()) == {"t_4::twice": 8}


def test_kernels_import_this_checkouts_lib(monkeypatch):
    """An editable install may point at another checkout: the kernels' PYTHONPATH puts this one first."""
    from bookrun.processes import kernel_env
    from lib.core.paths import REPO_ROOT

    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    assert kernel_env()["PYTHONPATH"].split(os.pathsep) == [str(REPO_ROOT), "/elsewhere"]
