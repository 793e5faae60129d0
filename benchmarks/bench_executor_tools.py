"""The executor's parts against the well-kept tools that do the same part, on this book's chapters.

Three parts (``--parts``, all by default), each timed in this process against ours as the baseline:

- **decide**: which chapters must execute. Ours (``bookrun.fingerprints.stale_chapters`` over the manifest, as
  ``python -m bookrun`` calls it) against doit (a dodo with one task per chapter: ``file_dep`` its recorded imports,
  read from the executed notebooks' ``book_execution`` records, its source, ``requirements.txt`` and
  ``pyproject.toml``, the ``after`` chapters' targets; ``config_changed`` on its parameters and arithmetic), Snakemake
  (a Snakefile with the same rule per chapter, dry-run) and jupyter-cache (the executed notebooks cached, each chapter
  matched by its code cells as papermill would receive them). All run on a copy of the checkout and of the executed
  notebooks in a temporary folder, under the same edits (:data:`SCENARIOS`: nothing, ``touch`` of a ``lib`` module, a
  comment added to it, a code cell or a markdown line of a chapter, the version in ``pyproject.toml``); each tool's
  chapters are compared with ours. Timed with nothing changed: ours and doit and jupyter-cache in this process (doit
  also as a command, as Snakemake), ``--repeats`` times, medians.
- **execute**: one chapter (``--chapter``, default ``schur_coordinates``) by ``python -m bookrun --only CHAPTER
  --force`` against papermill's own command on the same notebook (``jupytext`` converts it first, timed apart), in the
  same environment (the kernels' pins, a fresh build folder); alternated ``--repeats`` times after one warm-up run of
  ours. Ours is split by the times its lines appear: before the chapter starts, the chapter, after it.
- **progress**: the import time of ``bookrun.schedule`` (its Console and Relay) and of ``rich.progress`` (fresh
  processes), one status line updated 2,000 times by ours (``Console.status``) and by rich (``Progress`` on a terminal
  console), one relay poll of a papermill log (rich has no part that parses one), and the lines of ``Console`` and
  ``Relay``.

A tool that is not installed is skipped with a line saying so; the book's environment has papermill and jupyter-cache (a
dependency of myst-nb), not doit, Snakemake nor rich: put a folder holding them after the book's packages with
``--tools-site``. The closure of each tool's installed dependencies (megabytes, and those the book's environment lacks)
is reported with it. Writes ``_build/benchmarks/executor_tools.json`` (``--json`` elsewhere) atomically; the figures
CONTRIBUTING.md quotes are kept in ``benchmarks/executor_tools.json`` (``--json benchmarks/executor_tools.json``, run on
the executor before issue 51's refactor, the tools from ``/tmp/toolvenv``).

    python3 -m venv /tmp/toolvenv && /tmp/toolvenv/bin/pip install jupyter-cache doit snakemake rich papermill
    .venv/bin/python benchmarks/bench_executor_tools.py --tools-site /tmp/toolvenv/lib/python3.11/site-packages
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The build folder whose executed notebooks are copied (read only).
BUILD = Path(os.environ.get("BOOK_BUILD_DIR") or ROOT / "_build")
#: What of the checkout the decision reads (copied, so the edits never touch the checkout).
COPIED = ("lib", "bookrun", "book", "pyproject.toml", "requirements.txt", "_toc.yml")
#: The edits each tool decides after: (name, what it does). ``{module}`` and ``{chapter}`` are the options.
SCENARIOS = {
    "nothing": "nothing changed",
    "touch": "{module}: modification time moved, bytes unchanged",
    "edit": "{module}: a comment line added",
    "code": "book/{chapter}.md: a comment line added to its last code cell",
    "markdown": "book/{chapter}.md: a line of text added at its end",
    "version": "pyproject.toml: the version raised (metadata only)",
}
TOOLS = {"doit": "doit", "snakemake": "snakemake", "jupyter_cache": "jupyter-cache", "rich": "rich",
         "papermill": "papermill"}  # fmt: skip


def _median_time(fn, repeats: int):
    wall, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        wall.append(time.perf_counter() - t0)
    return statistics.median(wall), out


def _have(module: str) -> bool:
    import importlib.util

    if importlib.util.find_spec(module) is None:
        print(f"skipped {TOOLS.get(module, module)}: not installed (--tools-site names a folder that has it)")
        return False
    return True


#: This process's module path as it started (the script's folder left out), then ``--tools-site``: for the children.
MODULE_PATH = [p for p in sys.path[1:] if p]


def _subprocess_env(extra: dict | None = None) -> dict[str, str]:
    """This process's environment with its module path (the book's packages, then ``--tools-site``) for a child."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(MODULE_PATH), **(extra or {})}


def _timed_command(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    return time.perf_counter() - t0, done


# --------------------------------------------------------------------------------------------- install sizes


def install_size(name: str) -> dict | None:
    """Megabytes of the installed distribution ``name`` and every distribution it requires (found beside it), and
    of those the interpreter's own environment does not have."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    try:
        site = Path(metadata.distribution(name).locate_file("")).resolve()
    except metadata.PackageNotFoundError:
        return None
    there = {canonicalize_name(d.metadata["Name"]): d for d in metadata.distributions(path=[str(site)])}
    own = {
        canonicalize_name(d.metadata["Name"]) for d in metadata.distributions(path=[sysconfig.get_paths()["purelib"]])
    }
    todo, closure = [canonicalize_name(name)], {}
    while todo:
        key = todo.pop()
        if key in closure or key not in there:
            continue
        closure[key] = there[key]
        for text in there[key].requires or []:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(canonicalize_name(req.name))

    def size(dist) -> int:
        return sum(p.stat().st_size for f in dist.files or [] if (p := Path(dist.locate_file(f))).is_file())

    sizes = {key: size(dist) for key, dist in closure.items()}
    new = [] if site == Path(sysconfig.get_paths()["purelib"]).resolve() else [k for k in closure if k not in own]
    return {
        "version": there[canonicalize_name(name)].version,
        "distributions": len(closure),
        "megabytes": round(sum(sizes.values()) / 1e6, 1),
        "new_to_book_env": sorted(new),
        "new_megabytes": round(sum(sizes[k] for k in new) / 1e6, 1),
        "site": str(site),
    }


# --------------------------------------------------------------------------------------------- decide


def _copy_checkout(tmp: Path) -> tuple[Path, Path]:
    """A copy of the checkout's code and book, and of its executed notebooks; (repository, executed tree)."""
    repo, tree = tmp / "repo", tmp / "build" / "executed" / "book"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in COPIED:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, repo / name, ignore=ignore)
        elif src.is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, repo / name)
    tree.mkdir(parents=True)
    for notebook in (BUILD / "executed" / "book").glob("*.ipynb"):
        shutil.copy2(notebook, tree / notebook.name)
    return repo, tree


_COMMON = """import json
import time

TREE, ROOT, DONE = {tree!r}, {root!r}, {done!r}
SPEC = json.loads({spec!r})


def record(stem):
    with open(f"{{TREE}}/{{stem}}.ipynb", encoding="utf-8") as fh:
        return json.load(fh)["metadata"]["book_execution"]


def inputs(stem):
    rec = record(stem)
    after = [f"{{DONE}}/{{dep}}.done" for dep in SPEC[stem]["after"]]
    return [SPEC[stem]["source"], f"{{ROOT}}/requirements.txt", f"{{ROOT}}/pyproject.toml",
            *(f"{{ROOT}}/{{rel}}" for rel in rec["imports"]), *after]


def done(target):
    with open(target, "w") as fh:
        fh.write(str(time.time_ns()))
"""

_DODO = """
from doit.tools import config_changed


def task_chapter():
    for stem, spec in SPEC.items():
        target = f"{DONE}/{stem}.done"
        yield {"basename": stem, "actions": [(done, [target])], "file_dep": inputs(stem), "targets": [target],
               "task_dep": spec["after"], "uptodate": [config_changed(spec["config"])], "verbosity": 0}
"""


def _snakefile(spec: dict) -> str:
    rules = ['rule all:\n    input: [f"{DONE}/{stem}.done" for stem in SPEC]\n']
    for stem in spec:
        rules.append(
            f'rule {stem}:\n    input: inputs({stem!r})\n    output: f"{{DONE}}/{stem}.done"\n'
            f'    params: config=SPEC[{stem!r}]["config"]\n    run:\n        done(output[0])\n'
        )
    return "\n".join(rules)


def _md_edit(path: Path, where: str) -> None:
    text = path.read_text()
    if where == "code":
        start = text.rindex("```{code-cell}")
        end = text.index("\n```", start)
        text = text[:end] + "\n# edited by bench_executor_tools" + text[end:]
    else:
        text = text.rstrip("\n") + "\n\nEdited by bench_executor_tools.\n"
    path.write_text(text)


@contextlib.contextmanager
def _scenario(name: str, repo: Path, module: str, chapter: str):
    """Apply one edit to the copy for the length of the block, then put its bytes and times back."""
    target = {"touch": repo / module, "edit": repo / module, "code": repo / "book" / f"{chapter}.md",
              "markdown": repo / "book" / f"{chapter}.md", "version": repo / "pyproject.toml"}.get(name)  # fmt: skip
    if target is None:
        yield
        return
    data, st = target.read_bytes(), target.stat()
    try:
        if name == "touch":
            os.utime(target, ns=(st.st_atime_ns, time.time_ns() + 2 * 10**9))  # newer than every tool's outputs
        elif name == "edit":
            target.write_text(target.read_text() + "\n# edited by bench_executor_tools\n")
        elif name in ("code", "markdown"):
            _md_edit(target, name)
        else:
            target.write_text(re.sub(r'(?m)^version = "([^"]+)"', r'version = "\1.post1"', target.read_text(), count=1))
        yield
    finally:
        target.write_bytes(data)
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))


class Ours:
    """``stale_chapters`` of the copy's ``bookrun``, imported from the copy (so its repository root is the copy)."""

    def __init__(self, repo: Path, tree: Path):
        sys.path.insert(0, str(repo))
        from bookrun import fingerprints, manifest

        self.fingerprints, self.repo, self.tree = fingerprints, repo, tree
        self.manifest = manifest.load_manifest(repo / "book")
        assert Path(fingerprints.REPO_ROOT).resolve() == repo.resolve(), "bookrun was imported from elsewhere"

    def decide(self) -> list[str]:
        from bookrun.manifest import load_manifest

        manifest = load_manifest(self.repo / "book")
        stale = self.fingerprints.stale_chapters(manifest, list(manifest), lambda stem: self.tree / f"{stem}.ipynb")
        return sorted(stale)

    def spec(self) -> dict:
        """Each chapter's source, ``after`` and configuration (parameters, arithmetic) for the other tools."""
        arithmetic = self.fingerprints.arithmetic_record()
        return {
            stem: {"source": str(e["source"]), "after": list(e["after"]),
                   "config": json.dumps({"parameters": e["parameters"], "arithmetic": arithmetic}, sort_keys=True)}
            for stem, e in self.manifest.items()
        }  # fmt: skip


class Doit:
    def __init__(self, work: Path, common: str):
        self.work = work
        (work / "done").mkdir(parents=True)
        self.dodo = work / "dodo.py"
        self.dodo.write_text(common + _DODO)
        self.db = work / "state" / ".doit.db"
        self.db.parent.mkdir()
        self.run()  # every task once: doit knows nothing is to do only after a first run

    def run(self) -> list[str]:
        import runpy

        from doit.cmd_base import ModuleTaskLoader
        from doit.doit_cmd import DoitMain

        out = self.work.with_name("doit-output.txt")  # doit's default output stream is bound when it is imported
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = DoitMain(ModuleTaskLoader(runpy.run_path(str(self.dodo))), config_filenames=()).run(
                ["run", "--db-file", str(self.db), "--output-file", str(out)]
            )
        text = out.read_text()
        if code != 0:
            raise RuntimeError(f"doit failed ({code}): {text[-500:]}")
        return sorted(m[1] for m in re.finditer(r"(?m)^\.\s+(\S+)", text))

    def decide(self) -> list[str]:
        """The chapters a real run executes (the state put back after: deciding must not change it)."""
        backup = self.work.with_name("doit-backup")
        shutil.copytree(self.work, backup)
        try:
            return self.run()
        finally:
            shutil.rmtree(self.work)
            backup.rename(self.work)

    def command(self) -> list[str]:
        return [sys.executable, "-m", "doit", "run", "-f", str(self.dodo), "--db-file", str(self.db)]


class Snakemake:
    def __init__(self, work: Path, common: str, spec: dict):
        self.work = work
        work.mkdir(parents=True)
        (work / "Snakefile").write_text(common + "\n\n" + _snakefile(spec))
        cmd = [sys.executable, "-m", "snakemake", "--cores", "1", "--quiet", "all"]
        done = subprocess.run(cmd, cwd=work, env=_subprocess_env(), capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"snakemake failed: {done.stderr[-800:]}")

    def command(self) -> list[str]:
        return [sys.executable, "-m", "snakemake", "--cores", "1", "--dry-run"]

    def decide(self) -> tuple[float, list[str]]:
        seconds, done = _timed_command(self.command(), self.work, _subprocess_env())
        if done.returncode != 0:
            raise RuntimeError(f"snakemake failed: {done.stderr[-800:]}")
        return seconds, sorted(set(re.findall(r"(?m)^rule (\w+):", done.stdout + done.stderr)) - {"all"})


class JupyterCache:
    """The executed notebooks in a jupyter-cache; a chapter is stale when its notebook, as papermill receives it
    (jupytext's reading of its source, its parameters injected), matches no cached one. Cell metadata is hashed by
    jupyter-cache: papermill's (timings) and nbclient's are taken off the cached copies, as its own executor would
    not have written them."""

    def __init__(self, work: Path, tree: Path, spec: dict, parameters: dict):
        import nbformat
        from jupyter_cache import get_cache

        self.cache, self.spec, self.parameters = get_cache(str(work)), spec, parameters
        for stem in spec:
            nb = nbformat.read(tree / f"{stem}.ipynb", as_version=4)
            for cell in nb.cells:
                for key in ("papermill", "execution"):
                    cell.metadata.pop(key, None)
            self.cache.cache_notebook_bundle(self._bundle(nb, stem), check_validity=False, overwrite=True)

    @staticmethod
    def _bundle(nb, uri):
        from jupyter_cache.base import CacheBundleIn

        return CacheBundleIn(nb, uri)

    def notebook(self, stem: str):
        import jupytext
        from papermill.parameterize import parameterize_notebook

        nb = jupytext.read(self.spec[stem]["source"])
        nb.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
        nb.metadata.setdefault("papermill", {"default_parameters": {}, "parameters": {}, "environment_variables": {}})
        for cell in nb.cells:  # as papermill reads a notebook (papermill.iorw.load_notebook_node)
            cell.metadata.setdefault("tags", [])
        if self.parameters[stem]:
            nb = parameterize_notebook(nb, self.parameters[stem], kernel_name="python3", language="python")
        return nb

    def decide(self) -> list[str]:
        stale = []
        for stem in self.spec:
            try:
                self.cache.match_cache_notebook(self.notebook(stem))
            except KeyError:
                stale.append(stem)
        return sorted(stale)


def decide_part(tmp: Path, repeats: int, module: str, chapter: str) -> dict:
    """The decision of each tool under each edit of :data:`SCENARIOS`, on a copy of the checkout in ``tmp`` (kept by
    the caller: this process has imported the copy's ``bookrun``)."""
    repo, tree = _copy_checkout(tmp)
    ours = Ours(repo, tree)
    spec = ours.spec()
    tools: dict = {}
    result: dict = {"chapters": len(spec), "module": module, "chapter": chapter, "tools": {}, "scenarios": {}}
    t_ours, _ = _median_time(ours.decide, repeats)
    result["tools"]["ours"] = {"in_process_s": t_ours}
    code = (f"import sys, time; t = time.perf_counter(); sys.path.insert(0, {str(repo)!r}); "
            "from bookrun.fingerprints import stale_chapters; from bookrun.manifest import load_manifest; "
            f"m = load_manifest({str(repo / 'book')!r}); from pathlib import Path; "
            f"s = stale_chapters(m, list(m), lambda stem: Path({str(tree)!r}) / f'{{stem}}.ipynb')")  # fmt: skip
    cmd_ours = [sys.executable, "-c", code]
    result["tools"]["ours"]["command_s"] = statistics.median(
        _timed_command(cmd_ours, repo, _subprocess_env())[0] for _ in range(repeats)
    )
    result["tools"]["python_startup"] = {
        "command_s": statistics.median(
            _timed_command([sys.executable, "-c", "pass"], repo, _subprocess_env())[0] for _ in range(repeats)
        )
    }
    common = {name: _COMMON.format(tree=str(tree), root=str(repo), done=done, spec=json.dumps(spec))
              for name, done in (("doit", str(tmp / "doit" / "done")), ("snakemake", "done"))}  # fmt: skip
    if _have("doit"):
        tools["doit"] = Doit(tmp / "doit", common["doit"])
        t, _ = _median_time(tools["doit"].run, repeats)
        cmd = statistics.median(
            _timed_command(tools["doit"].command(), tmp / "doit", _subprocess_env())[0] for _ in range(repeats)
        )
        result["tools"]["doit"] = {"in_process_s": t, "command_s": cmd}
    if _have("snakemake"):
        tools["snakemake"] = Snakemake(tmp / "snakemake", common["snakemake"], spec)
        times = [tools["snakemake"].decide()[0] for _ in range(repeats)]
        result["tools"]["snakemake"] = {"command_s": statistics.median(times)}
    if _have("jupyter_cache"):
        parameters = {stem: e["parameters"] for stem, e in ours.manifest.items()}
        tools["jupyter_cache"] = JupyterCache(tmp / "jcache", tree, spec, parameters)
        t, _ = _median_time(tools["jupyter_cache"].decide, repeats)
        result["tools"]["jupyter_cache"] = {"in_process_s": t}
    for name, what in SCENARIOS.items():
        with _scenario(name, repo, module, chapter):
            decided = {"ours": ours.decide()}
            for tool, obj in tools.items():
                out = obj.decide()
                decided[tool] = out[1] if isinstance(out, tuple) else out
        entry = {"what": what.format(module=module, chapter=chapter), "decided": decided, "differs": {}}
        for tool, chapters in decided.items():
            missed, extra = sorted(set(decided["ours"]) - set(chapters)), sorted(set(chapters) - set(decided["ours"]))
            if missed or extra:
                entry["differs"][tool] = {"misses": missed, "extra": extra}
        result["scenarios"][name] = entry
    for tool, r in result["tools"].items():
        for key in ("in_process_s", "command_s"):
            base = result["tools"]["ours"].get(key)
            if key in r and base and tool != "ours":
                r[key.replace("_s", "_ratio_to_ours")] = r[key] / base
    return result


# --------------------------------------------------------------------------------------------- execute


def _checkout_kernel_env(build: Path) -> dict[str, str]:
    """The environment ``python -m bookrun`` gives its kernels (the checkout's own ``kernel_env``)."""
    code = "import json; from bookrun.processes import kernel_env; print(json.dumps(kernel_env()))"
    env = {**os.environ, "BOOK_BUILD_DIR": str(build), "BOOK_CACHE_DIR": str(build / "cache")}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode == 0:
        return json.loads(done.stdout)
    print(f"kernel_env not found in the checkout ({done.stderr.strip()[-200:]}); papermill gets PYTHONPATH only")
    return {**env, "PYTHONPATH": os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)}


def _stamped(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, list[tuple[float, str]], int]:
    """Run ``cmd``; (wall seconds, its output lines with the second each appeared, exit status)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = [(time.perf_counter() - t0, line.rstrip("\n")) for line in proc.stdout]
    code = proc.wait()
    return time.perf_counter() - t0, lines, code


def _phases(chapter: str, wall: float, lines: list[tuple[float, str]]) -> dict[str, float]:
    """Ours split where its lines appear: before the chapter starts, the chapter, after it (results, provenance,
    the reference comparison, the appendix)."""
    started = next((t for t, ln in lines if ln.strip().startswith(f"started  {chapter}")), None)
    finished = next((t for t, ln in lines if ln.strip().startswith(f"finished {chapter}")), None)
    if started is None or finished is None:
        return {}
    return {"before_chapter_s": started, "chapter_s": finished - started, "after_chapter_s": wall - finished}


def execute_part(repeats: int, chapter: str) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="bench_executor_tools."))
    try:
        build = tmp / "build"
        shutil.copytree(BUILD / "executed" / "book", build / "executed" / "book")
        env_ours = {**os.environ, "BOOK_BUILD_DIR": str(build), "BOOK_CACHE_DIR": str(build / "cache"),
                    "PYTHONUNBUFFERED": "1"}  # fmt: skip
        env_pm = {**_checkout_kernel_env(build), "BOOK_BUILD_DIR": str(build), "BOOK_CACHE_DIR": str(build / "cache")}
        env_pm.pop("PYTHONUNBUFFERED", None)
        ours_cmd = [sys.executable, "-m", "bookrun", "--only", chapter, "--force"]
        source = ROOT / "book" / f"{chapter}.md"
        params = json.loads(
            subprocess.run([sys.executable, "-c", "import json; from bookrun.manifest import load_manifest; "
                            f"print(json.dumps(load_manifest({str(ROOT / 'book')!r})[{chapter!r}]['parameters']))"],
                           cwd=ROOT, env=env_ours, capture_output=True, text=True, check=True).stdout
        )  # fmt: skip
        nb_in, nb_out = tmp / f"{chapter}.ipynb", tmp / f"{chapter}.out.ipynb"
        convert = [sys.executable, "-m", "jupytext", "--to", "ipynb", "-o", str(nb_in), str(source)]
        pm_cmd = [sys.executable, "-m", "papermill", str(nb_in), str(nb_out), "-k", "python3", "--cwd",
                  str(source.parent), "--no-progress-bar", "--log-output", "--request-save-on-cell-execute",
                  *(["-y", json.dumps(params)] if params else [])]  # fmt: skip
        warm, _, code = _stamped(ours_cmd, ROOT, env_ours)  # the chapter's cache (if any) filled, the files read once
        if code != 0:
            raise RuntimeError(f"python -m bookrun --only {chapter} failed")
        runs: dict[str, list] = {"ours": [], "jupytext": [], "papermill": [], "phases": []}
        for _ in range(repeats):
            wall, lines, code = _stamped(ours_cmd, ROOT, env_ours)
            if code != 0:
                raise RuntimeError("\n".join(ln for _, ln in lines[-20:]))
            ours_lines = [[round(t, 2), ln[:200]] for t, ln in lines[:100]]
            runs["ours"].append(wall)
            runs["phases"].append(_phases(chapter, wall, lines))
            t, done = _timed_command(convert, ROOT, env_pm)
            runs["jupytext"].append(t)
            wall, lines, code = _stamped(pm_cmd, ROOT, env_pm)
            if code != 0:
                raise RuntimeError("\n".join(ln for _, ln in lines[-20:]))
            runs["papermill"].append(wall)
        med = {k: statistics.median(v) for k, v in runs.items() if k != "phases"}
        phases = {k: statistics.median(p[k] for p in runs["phases"] if k in p) for k in runs["phases"][0]}
        return {
            "chapter": chapter, "warm_up_ours_s": warm, "runs": runs, "ours_s": med["ours"],
            "papermill_s": med["papermill"], "jupytext_s": med["jupytext"], "ours_phases_s": phases,
            "ratio_ours_to_papermill": med["ours"] / med["papermill"], "ours_lines_last_run": ours_lines,
            "ratio_ours_to_jupytext_and_papermill": med["ours"] / (med["papermill"] + med["jupytext"]),
        }  # fmt: skip
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------------------------- progress


def _import_seconds(module: str, repeats: int, cwd: Path) -> float:
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    times = []
    for _ in range(repeats):
        done = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=_subprocess_env(), capture_output=True,
                              text=True, check=True)  # fmt: skip
        times.append(float(done.stdout.strip().splitlines()[-1]))
    return statistics.median(times)


def _source_lines(module, names: tuple[str, ...]) -> dict[str, int]:
    """Lines of each class of ``names`` in ``module``, and of each of their methods."""
    import inspect

    lines = {}
    for name in names:
        cls = getattr(module, name, None)
        if cls is None:
            continue
        lines[name] = len(inspect.getsourcelines(cls)[0])
        for attr, value in vars(cls).items():
            if inspect.isfunction(value):
                lines[f"{name}.{attr}"] = len(inspect.getsourcelines(value)[0])
    return lines


def progress_part(repeats: int, updates: int = 2000) -> dict:
    sys.path.insert(0, str(ROOT))
    from bookrun import schedule as terminal

    result: dict = {"ours_import_s": _import_seconds("bookrun.schedule", repeats, ROOT),
                    "lines": _source_lines(terminal, ("Console", "Relay"))}  # fmt: skip
    texts = [f"schur_coordinates: cell {i % 40}/40  {i % 100}%|████      | {i}/{updates} [00:01<00:02, 9.1it/s]"
             for i in range(updates)]  # fmt: skip

    def ours_status():
        console = terminal.Console(stream=io.StringIO())
        console.tty = True
        for text in texts:
            console.status("  " + text)

    result["ours_status_s"], _ = _median_time(ours_status, repeats)
    with tempfile.TemporaryDirectory() as tmp:  # one poll of a papermill log and a progress file of 200 cells
        log = Path(tmp) / "x.log"
        log.write_text("".join(f"Executing Cell {i}-------\nsome output\n" for i in range(1, 201)))
        log.with_suffix(".progress").write_text("".join(f"\r{i}%|###  | {i}/100 [00:01<00:01, 9.1it/s]" for i in
                                                         range(100)))  # fmt: skip
        job = terminal.Job("x", {}, 1, log, Path(tmp) / "x.ipynb", Path(tmp) / "x.failed.ipynb")

        def poll():
            relay = terminal.Relay(terminal.Console(stream=io.StringIO()), alone=False)
            relay.add(job)
            relay.poll()
            return relay.text("x")

        result["ours_relay_poll_s"], result["ours_relay_text"] = _median_time(poll, repeats)
    if _have("rich"):
        import rich
        from rich.console import Console
        from rich.progress import Progress, TextColumn

        result["rich_import_s"] = _import_seconds("rich.progress", repeats, ROOT)
        result["rich_version"] = getattr(rich, "__version__", None) or install_size("rich")["version"]

        def rich_status():
            console = Console(file=io.StringIO(), force_terminal=True, width=100)
            with Progress(TextColumn("{task.description}"), console=console, auto_refresh=False) as progress:
                task = progress.add_task("", total=None)
                for text in texts:
                    progress.update(task, description="  " + text)
                    progress.refresh()

        result["rich_status_s"], _ = _median_time(rich_status, repeats)
        result["import_ratio_rich_to_ours"] = result["rich_import_s"] / result["ours_import_s"]
        result["status_ratio_rich_to_ours"] = result["rich_status_s"] / result["ours_status_s"]
    result["updates"] = updates
    return result


# --------------------------------------------------------------------------------------------- main

PARTS = {"decide", "execute", "progress"}


def _print(report: dict) -> None:
    d = report.get("decide")
    if d:
        base, python = d["tools"]["ours"], d["tools"]["python_startup"]["command_s"]
        print(f"decide ({d['chapters']} chapters, nothing stale): ours {base['in_process_s'] * 1e3:.0f} ms in this "
              f"process, {base['command_s']:.2f} s as a command (python alone {python:.2f} s)")  # fmt: skip
        for tool, r in d["tools"].items():
            if tool in ("ours", "python_startup"):
                continue
            parts = []
            if "in_process_s" in r:
                parts.append(f"{r['in_process_s'] * 1e3:.0f} ms in this process ({r['in_process_ratio_to_ours']:.2f}×)")
            if "command_s" in r:
                parts.append(f"{r['command_s']:.2f} s as a command ({r['command_ratio_to_ours']:.2f}×)")
            print(f"  {tool}: " + ", ".join(parts))
        for name, s in d["scenarios"].items():
            print(f"  {name} ({s['what']}): ours {len(s['decided']['ours'])} {s['decided']['ours']}")
            for tool, diff in s["differs"].items():
                print(f"    {tool} differs: misses {diff['misses']}, extra {diff['extra']}")
    e = report.get("execute")
    if e:
        phases = ", ".join(f"{k} {v:.1f}" for k, v in e["ours_phases_s"].items())
        print(f"execute {e['chapter']}: ours {e['ours_s']:.1f} s ({phases}), papermill {e['papermill_s']:.1f} s "
              f"(+ jupytext {e['jupytext_s']:.1f} s): {e['ratio_ours_to_papermill']:.2f}× papermill alone")  # fmt: skip
    p = report.get("progress")
    if p:
        text = f"progress: import bookrun.schedule {p['ours_import_s'] * 1e3:.0f} ms"
        if "rich_import_s" in p:
            text += f", rich.progress {p['rich_import_s'] * 1e3:.0f} ms ({p['import_ratio_rich_to_ours']:.2f}×)"
        text += f"; {p['updates']} status updates: ours {p['ours_status_s'] * 1e3:.0f} ms"
        if "rich_status_s" in p:
            text += f", rich {p['rich_status_s'] * 1e3:.0f} ms ({p['status_ratio_rich_to_ours']:.1f}×)"
        lines = p["lines"]
        print(f"{text}; one relay poll {p['ours_relay_poll_s'] * 1e3:.1f} ms; Console {lines.get('Console')} lines, "
              f"Relay {lines.get('Relay')}")  # fmt: skip
    for tool, size in report.get("install", {}).items():
        print(f"install {tool} {size['version']}: {size['distributions']} distributions, {size['megabytes']} MB; new "
              f"to the book's environment: {size['new_megabytes']} MB ({len(size['new_to_book_env'])})")  # fmt: skip


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", nargs="+", choices=sorted(PARTS), default=["decide", "execute", "progress"])
    parser.add_argument("--repeats", type=int, default=3, help="timed repeats of each measurement (median)")
    parser.add_argument("--chapter", default="schur_coordinates", help="the chapter executed and edited")
    parser.add_argument("--module", default="lib/paper_b/euler_flows.py", help="the lib module touched and edited")
    parser.add_argument("--tools-site", type=Path, help="a folder of installed packages (after the book's)")
    parser.add_argument("--json", type=Path, help="the figures file (default: _build/benchmarks/executor_tools.json)")
    args = parser.parse_args(argv)
    if args.json is None:
        from lib.core.paths import build_dir

        args.json = build_dir() / "benchmarks" / "executor_tools.json"
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if args.tools_site is not None:
        sys.path.append(str(args.tools_site.resolve()))
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    report: dict = {"checkout": str(ROOT), "commit": commit or None, "machine": platform.processor() or
                    platform.machine(), "cpu_count": os.cpu_count(), "python": platform.python_version(),
                    "repeats": args.repeats}  # fmt: skip
    MODULE_PATH.extend([str(args.tools_site.resolve())] if args.tools_site is not None else [])
    tmp = Path(tempfile.mkdtemp(prefix="bench_executor_tools."))
    try:
        if "decide" in args.parts:  # first: it imports the copy's bookrun, which the progress part then uses
            report["decide"] = decide_part(tmp, args.repeats, args.module, args.chapter)
        if "execute" in args.parts:
            report["execute"] = execute_part(args.repeats, args.chapter)
        if "progress" in args.parts:
            report["progress"] = progress_part(args.repeats)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    report["install"] = {tool: size for tool in ("jupyter-cache", "doit", "snakemake", "rich", "papermill")
                         if (size := install_size(tool)) is not None}  # fmt: skip
    report["load_average_after"] = os.getloadavg()
    _print(report)
    tmp = args.json.with_name(f".{args.json.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(report, indent=1) + "\n")
    os.replace(tmp, args.json)
    print(f"wrote {args.json}")
    return report


if __name__ == "__main__":
    main()
