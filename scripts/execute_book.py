#!/usr/bin/env python
"""Execute the book's chapters with papermill and collect every glued number into ``results.json``.

Each chapter listed in ``book/chapters.yml`` is converted from MyST (jupytext) to a notebook, executed by papermill
with its manifest parameters into ``_build/executed/book/<stem>.ipynb`` (log: ``_build/logs/<stem>.log``), and its
glued values are gathered into ``_build/results.json`` as ``{"<stem>::<name>": value}``. Plain MyST pages named in
``_toc.yml`` are copied beside them, so the HTML is built from this tree with execution off.

A chapter is re-executed only when its source, its parameters, ``lib/`` or the requirements changed (a fingerprint
is stored in the executed notebook's metadata). Any failure makes the script exit non-zero.

Nothing good is lost: a notebook is replaced only by one that succeeded, so a failure, Ctrl-C or SIGTERM leaves the
previous notebook and its numbers in ``results.json``. Before anything runs, the environment (``BOOK_WORKERS``, a
writable cache) and every chapter's parameters are checked (the chapter's own validation cell, run on its own), and
what killed runs left behind (temporary folders, kernel files, half-written cache files, orphaned kernels) is removed.

With ``-p`` (or ``--name``) a chapter runs as a named *scratch run* into its own folder
``_build/scratch/<chapter>-<parameters>/`` (``notebook.ipynb``, ``run.log``, ``parameters.json``, ``results.json``),
never touching the book's tree; an existing run is replaced only with ``--force``.

Examples::

    python scripts/execute_book.py                      # the whole book, two chapters at a time
    python scripts/execute_book.py --only copy_task     # one chapter of the book
    python scripts/execute_book.py --only copy_task -p seeds 3   # -> _build/scratch/copy_task-seeds=3/
    python scripts/execute_book.py --only task_sine -p task_params '{length: 30}' --name sine-short
    python scripts/execute_book.py --list               # every chapter's parameters, as Python
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures as cf
import contextlib
import hashlib
import io
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import jupytext
import nbformat
import papermill
import yaml

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = Path(__file__).resolve()
FINGERPRINT_KEY = "book_fingerprint"
MARKER_VAR = "BOOK_EXECUTOR_RUN"  # in the environment of every process a run starts: papermill, kernel, workers
CHILD_PAPERMILL = "--papermill-child"  # hidden modes of this script (the processes it starts)
CHILD_CHECK = "--check-values-child"
STOP_GRACE = 20.0  # seconds a stopped chapter gets to shut its kernel down before it is killed
CHECK_TIMEOUT = 300.0  # seconds the parameter check of all chapters may take


class ManifestError(ValueError):
    """The manifest, the table of contents, the environment or a parameter is wrong: nothing was started."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT), SIGTERM or SIGHUP reached the executor."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


# --------------------------------------------------------------------------------------------- manifest


def load_manifest(book_dir: Path) -> dict[str, dict]:
    """Read ``chapters.yml``: stem -> {source, parameters, after, title}."""
    path = book_dir / "chapters.yml"
    raw = yaml.safe_load(path.read_text()) or {}
    manifest = {}
    for stem, entry in raw.items():
        entry = dict(entry or {})
        unknown = set(entry) - {"source", "parameters", "after", "title"}
        if unknown:
            raise ManifestError(f"{path}: chapter {stem!r} has unknown keys {sorted(unknown)}")
        source = book_dir / entry.get("source", f"{stem}.md")
        after = list(entry.get("after", []))
        for dep in after:
            if dep not in raw:
                raise ManifestError(f"{path}: chapter {stem!r} runs after {dep!r}, which is not in the manifest")
        manifest[stem] = {
            "source": source,
            "parameters": dict(entry.get("parameters", {})),
            "after": after,
            "title": entry.get("title"),
        }
    return manifest


def toc_files(toc_path: Path) -> list[str]:
    """Every ``file:`` entry of a jb-book ``_toc.yml`` (root first), relative to the repository root."""
    toc = yaml.safe_load(toc_path.read_text())
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


# --------------------------------------------------------------------------------------------- fingerprints


def fingerprint(source: Path, parameters: dict) -> str:
    """Hash of everything an execution depends on: the source, its parameters, lib/ and the pinned requirements."""
    h = hashlib.sha256()
    h.update(source.read_bytes())
    h.update(json.dumps(parameters, sort_keys=True).encode())
    for path in sorted((ROOT / "lib").rglob("*.py")):
        h.update(str(path.relative_to(ROOT)).encode())
        h.update(path.read_bytes())
    for name in ("requirements.txt", "pyproject.toml"):
        if (ROOT / name).is_file():
            h.update((ROOT / name).read_bytes())
    return h.hexdigest()


def stored_fingerprint(path: Path) -> str | None:
    if not path.is_file():
        return None
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception:
        return None
    return nb.metadata.get(FINGERPRINT_KEY)


# --------------------------------------------------------------------------------------------- parameters


def notebook_parameters(source: Path) -> dict[str, dict]:
    """The names (with types, defaults as source text, help) declared in the chapter's ``parameters`` cell."""
    return papermill.inspect_notebook(jupytext.read(source))


class _FlowLoader(yaml.SafeLoader):
    """YAML for ``-p`` values: floats also without a dot (``1e-3``), and only true/false/True/False are booleans."""


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


def check_parameters(stem: str, source: Path, parameters: dict) -> None:
    """Refuse parameters the chapter does not declare, naming the allowed ones."""
    declared = notebook_parameters(source)
    unknown = sorted(set(parameters) - set(declared))
    if unknown:
        allowed = ", ".join(f"{k}: {v['inferred_type_name']} = {v['default']}" for k, v in declared.items())
        raise ManifestError(f"chapter {stem!r} has no parameter(s) {unknown}; its parameters are: {allowed}")


def _python(text: str) -> str:
    """A default's source text as canonical Python (``"sine"`` -> ``'sine'``), or as it is if not a literal."""
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
        comment = f"  # {note}{p['help']}" if p.get("help") or note else ""
        lines.append(f"{name}{': ' + kind if kind and kind != 'None' else ''} = {value}{comment}".rstrip())
    return lines


def injected_code(parameters: dict) -> str:
    """The cell papermill injects for ``parameters`` (empty when there are none: papermill injects nothing then)."""
    if not parameters:
        return ""
    from papermill.translators import translate_parameters

    return translate_parameters("python3", "python", parameters, "Parameters")


def validation_cells(source: Path, parameters: dict) -> list[str]:
    """The code that decides whether the parameters are valid: the ``parameters`` cell, papermill's injected cell
    and the chapter's next code cell (CONTRIBUTING.md: it validates every parameter with ``lib.core.params``)."""
    code = [c.source for c in jupytext.read(source).cells if c.cell_type == "code"]
    return [code[0], injected_code(parameters), *code[1:2]]


def check_values(chapters: dict[str, dict], env: dict[str, str], cwd: Path) -> dict[str, str]:
    """Run every chapter's validation cells in one plain IPython process; ``{stem: "Type: message"}`` for those that
    refuse their parameters. A checker that cannot run (or runs too long) is reported on stderr and skipped."""
    if not chapters:
        return {}
    tmp = make_run_tmp(build_dir(), "check")
    try:
        spec = tmp / "check.json"
        out = tmp / "result.json"
        spec.write_text(json.dumps([{"stem": s, "cells": c} for s, c in chapters.items()]))
        cmd = [sys.executable, str(SCRIPT), CHILD_CHECK, str(spec), str(out)]
        proc = subprocess.Popen(
            cmd, cwd=cwd, env={**env, "MPLBACKEND": "Agg"}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        try:
            output, _ = proc.communicate(timeout=CHECK_TIMEOUT)
        except BaseException:  # a timeout, Ctrl-C: the check is not worth a leftover process
            _kill_group(proc, signal.SIGKILL)
            proc.wait()
            if sys.exc_info()[0] is subprocess.TimeoutExpired:
                print(f"warning: the parameter check took over {CHECK_TIMEOUT:.0f} s; skipped", file=sys.stderr)
                return {}
            raise
        if proc.returncode != 0 or not out.is_file():
            tail = output.decode(errors="replace").strip().splitlines()[-3:]
            print(f"warning: the parameter check could not run ({' / '.join(tail)}); skipped", file=sys.stderr)
            return {}
        return {k: v for k, v in json.loads(out.read_text()).items() if v}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _check_values_child(spec_path: str, out_path: str) -> int:
    """Child process of :func:`check_values`: each chapter's cells in a fresh IPython namespace, output discarded."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    results = {}
    for item in json.loads(Path(spec_path).read_text()):
        shell.reset(new_session=False)
        error = None
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            for code in item["cells"]:
                result = shell.run_cell(code, store_history=False, silent=True)
                exc = result.error_before_exec or result.error_in_exec
                if exc is not None:
                    error = f"{type(exc).__name__}: {exc}"
                    break
        results[item["stem"]] = error
    Path(out_path).write_text(json.dumps(results))
    return 0


def check_environment(env: dict[str, str]) -> None:
    """``BOOK_WORKERS`` and the model cache, checked before any chapter starts (ManifestError naming the fix)."""
    from lib.core import paths
    from lib.core.parallel import default_workers

    saved = os.environ.get("BOOK_WORKERS")
    try:
        if "BOOK_WORKERS" in env:
            os.environ["BOOK_WORKERS"] = env["BOOK_WORKERS"]
        default_workers()
    except ValueError as exc:
        raise ManifestError(f"{exc}; unset it to use one process per CPU") from None
    finally:
        if saved is None:
            os.environ.pop("BOOK_WORKERS", None)
        else:
            os.environ["BOOK_WORKERS"] = saved
    try:
        paths.ensure_writable(cache_dir(env), "model cache")
    except PermissionError as exc:
        raise ManifestError(str(exc)) from None


# --------------------------------------------------------------------------------------------- paths, names, locks


def build_dir() -> Path:
    return Path(os.environ.get("BOOK_BUILD_DIR", ROOT / "_build")).resolve()


def cache_dir(env: dict[str, str] | None = None) -> Path:
    """The model cache the kernels will use (``lib.core.paths.cache_dir`` under the kernels' environment)."""
    env = os.environ if env is None else env
    return Path(env.get("BOOK_CACHE_DIR", Path(env.get("BOOK_BUILD_DIR", build_dir())) / "cache")).resolve()


def shown(path: Path) -> str:
    """``path`` relative to the working directory when it is below it (shorter on the terminal)."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


_SAFE = re.compile(r"[A-Za-z0-9._+-]+")
NAME_RULE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+=,-]{0,119}")


def _slug(value) -> tuple[str, bool]:
    """A file-name-safe text for a parameter value, and whether it is exact (else a hash is added to the name)."""
    if value is None or isinstance(value, bool | int | float):
        return str(value), True
    if isinstance(value, str):
        return (value, True) if _SAFE.fullmatch(value) else (re.sub(r"[^A-Za-z0-9._+-]+", "_", value) or "_", False)
    if isinstance(value, list):
        return "_".join(_slug(v)[0] for v in value) or "empty", False
    if isinstance(value, dict):
        return "_".join(f"{k}-{_slug(v)[0]}" for k, v in sorted(value.items())) or "empty", False
    return "_", False


def run_name(stem: str, overrides: dict) -> str:
    """The folder of a scratch run: ``<stem>-<name>=<value>,...`` (sorted), plus a short hash where the text is not
    exact (strings with other characters, lists, dicts) or too long."""
    parts, exact = [], True
    for key in sorted(overrides):
        text, ok = _slug(overrides[key])
        parts.append(f"{key}={text}")
        exact &= ok
    name = f"{stem}-{','.join(parts)}" if parts else stem
    if not exact or len(name) > 100:
        digest = hashlib.sha256(json.dumps(overrides, sort_keys=True).encode()).hexdigest()[:8]
        name = f"{name[:90]}-{digest}"
    return name


def make_run_tmp(build: Path, stem: str) -> Path:
    """A private temporary folder ``<build>/.tmp/<stem>-<executor pid>-<random>`` (stale once that pid is gone)."""
    root = build / ".tmp"
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"{stem}-{os.getpid()}-{secrets.token_hex(4)}"
    path.mkdir()
    return path


class Lock:
    """An exclusive ``flock`` on ``path`` (released by the kernel if this process dies); ManifestError if held."""

    def __init__(self, path: Path, what: str):
        import fcntl

        path.parent.mkdir(parents=True, exist_ok=True)
        self.fh = open(path, "a+")  # noqa: SIM115 - held until release()
        try:
            fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.fh.seek(0)
            holder = self.fh.read().strip() or "?"
            self.fh.close()
            raise ManifestError(f"{what} is being executed by another process (pid {holder}); wait for it") from None
        self.fh.seek(0)
        self.fh.truncate()
        self.fh.write(str(os.getpid()))
        self.fh.flush()

    def release(self) -> None:
        self.fh.close()


# --------------------------------------------------------------------------------------------- processes


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def marked_processes(prefix: str) -> dict[int, str]:
    """``{pid: marker}`` of the processes whose environment has ``BOOK_EXECUTOR_RUN=<prefix>...`` (Linux /proc)."""
    key = f"{MARKER_VAR}={prefix}".encode()
    found = {}
    proc = Path("/proc")
    if not proc.is_dir():
        return found
    for entry in os.listdir(proc):
        if not entry.isdigit():
            continue
        try:
            environ = (proc / entry / "environ").read_bytes()
        except OSError:
            continue
        for item in environ.split(b"\0"):
            if item.startswith(key):
                found[int(entry)] = item.split(b"=", 1)[1].decode(errors="replace")
                break
    return found


def kill_marked(prefix: str, exclude: set[int] | None = None, grace: float = 3.0) -> list[int]:
    """SIGTERM every process marked ``prefix`` (the kernel, its workers), then SIGKILL what is left after ``grace``."""
    exclude = {os.getpid()} | (exclude or set())
    pids = [p for p in marked_processes(prefix) if p not in exclude]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
        deadline = time.monotonic() + (grace if sig == signal.SIGTERM else 1.0)
        while pids and time.monotonic() < deadline:
            time.sleep(0.05)
            pids = [p for p in pids if p in marked_processes(prefix)]
        if not pids:
            break
    return pids


def _kill_group(proc: subprocess.Popen, sig: int) -> None:
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, sig)


def _die_with_parent() -> None:
    """Linux: SIGTERM this process when the executor dies, even by SIGKILL (then it shuts its kernel down)."""
    parent = int(os.environ.get("BOOK_EXECUTOR_PID", "0"))
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if parent and os.getppid() != parent:  # the executor died before the line above
        os.kill(os.getpid(), signal.SIGTERM)


def _build_tag(build: Path) -> str:
    return hashlib.sha256(str(build).encode()).hexdigest()[:8]


def clean_stale(build: Path, cache: Path, scratch_root: Path | None) -> list[str]:
    """Remove what killed runs of this build folder left: their processes, temporary folders (kernel files included),
    half-written cache files and scratch staging folders. Runs still alive are left alone. Returns what was done."""
    from lib.core import paths

    done = []
    tag = _build_tag(build)
    for pid, marker in marked_processes(f"{tag}:").items():
        owner = int(marker.split(":")[1])
        if not _alive(owner):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                done.append(f"killed orphaned process {pid} of a killed run")
    pattern = re.compile(r".+-(\d+)-[0-9a-f]{8}$")
    for folder in (build / ".tmp").glob("*"):
        match = pattern.match(folder.name)
        if match and not _alive(int(match[1])):
            shutil.rmtree(folder, ignore_errors=True)
            done.append(f"removed {shown(folder)}")
    done += [f"removed {shown(p)}" for p in paths.remove_stale_temporaries(cache)]
    if scratch_root is not None and scratch_root.is_dir():
        stale = re.compile(r"^\..+\.(?:partial|old)-(\d+)$")
        for folder in scratch_root.iterdir():
            match = stale.match(folder.name)
            if match and not _alive(int(match[1])):
                shutil.rmtree(folder, ignore_errors=True)
                done.append(f"removed {shown(folder)}")
    return done


# --------------------------------------------------------------------------------------------- the papermill child


def _papermill_child(spec_path: str) -> int:
    """One chapter: papermill in this process (its output is the chapter's log), the kernel shut down on SIGTERM.

    Exit status 0 (success), 1 (the chapter raised: ``error.json`` has its type and message) or 130 (stopped).
    Whatever the way out, the processes this run started (kernel, workers) are ended before it returns.
    """
    import logging

    _die_with_parent()
    spec = json.loads(Path(spec_path).read_text())
    stopping: list[int] = []

    def stop(signum, frame):
        if not stopping:  # the first signal interrupts papermill; the others must not interrupt the clean-up
            stopping.append(signum)
            raise KeyboardInterrupt

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    error, code = None, 0
    try:
        papermill.execute_notebook(
            spec["input"], spec["output"], parameters=spec["parameters"], kernel_name="python3", cwd=spec["cwd"],
            log_output=True, progress_bar=False, request_save_on_cell_execute=True,
        )  # fmt: skip
    except KeyboardInterrupt:
        print("stopped by a signal: the kernel and its workers are shut down", file=sys.stderr, flush=True)
        error, code = {"ename": "Interrupted", "evalue": "stopped by a signal"}, 130
    except papermill.PapermillExecutionError as exc:
        error, code = {"ename": exc.ename, "evalue": exc.evalue, "cell": exc.exec_count}, 1
    except BaseException as exc:  # papermill or the kernel failed outside a cell
        import traceback

        traceback.print_exc()
        error, code = {"ename": type(exc).__name__, "evalue": str(exc)}, 1
    finally:
        stopping.append(0)
        kill_marked(spec["marker"])  # the kernel and its workers, if papermill did not shut them down
    if error:
        Path(spec["error"]).write_text(json.dumps(error))
    return code


# --------------------------------------------------------------------------------------------- execution


def kernel_env(workers: int = 1) -> dict[str, str]:
    """Environment of every kernel: one thread per chapter so results are reproducible and chapters run in parallel,
    and ``workers`` processes for a chapter's independent jobs (``lib.core.parallel``; ``$BOOK_WORKERS`` overrides)."""
    env = dict(os.environ)
    env.setdefault("BOOK_WORKERS", str(workers))
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("MKL_NUM_THREADS", "1")
    env.setdefault("PYTHONHASHSEED", "0")
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    env["BOOK_BUILD_DIR"] = str(build_dir())
    return env


def set_title(nb, title: str | None) -> None:
    """Replace the first level-1 heading of the notebook by ``title`` (for chapters executed from one template)."""
    if not title:
        return
    for cell in nb.cells:
        if cell.cell_type == "markdown" and re.search(r"^# ", cell.source, flags=re.M):
            cell.source = re.sub(r"^# .*$", f"# {title}", cell.source, count=1, flags=re.M)
            return


@dataclass
class Job:
    """One chapter to execute: where its log, notebook and results go (book tree or a scratch run folder)."""

    stem: str
    entry: dict
    fingerprint: str
    workers: int
    log: Path
    notebook: Path  # the notebook a success replaces
    failed: Path  # where a failed run's notebook (book) or folder (scratch) goes
    run_dir: Path | None = None  # scratch: the run's folder; None for the book
    staging: Path | None = None  # scratch: the folder being written (renamed to run_dir on success)
    overrides: dict = field(default_factory=dict)
    n_cells: int = 0
    started: float = 0.0


class ChapterFailed(RuntimeError):
    def __init__(self, job: Job, seconds: float, error: list[str], where: str):
        super().__init__(f"chapter {job.stem!r} failed after {seconds:.0f} s")
        self.job, self.seconds, self.error, self.where = job, seconds, error, where


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def error_lines(error_file: Path, log: Path) -> list[str]:
    """The failure in a few lines: ``Type: message`` from the chapter's error, else the log's last lines."""
    if error_file.is_file():
        try:
            err = json.loads(error_file.read_text())
            text = _ANSI.sub("", f"{err['ename']}: {err['evalue']}").strip().splitlines()
            where = f" (in cell [{err['cell']}])" if err.get("cell") else ""
            lines = text[:3] + (["…"] if len(text) > 3 else [])
            lines[0] += where
            return lines
        except (ValueError, KeyError, OSError):
            pass
    try:
        tail = [ln for ln in _ANSI.sub("", log.read_text(errors="replace")).splitlines() if ln.strip()]
    except OSError:
        tail = []
    return tail[-3:] or ["(no error message; the log is empty)"]


class Executor:
    """Runs jobs as papermill children, each in its own process group; stops them all on request."""

    def __init__(self, build: Path, out_dir: Path, results_path: Path | None, stems: list[str]):
        self.build, self.out_dir, self.results_path, self.stems = build, out_dir, results_path, stems
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.procs: dict[str, subprocess.Popen] = {}
        self.markers: dict[str, str] = {}
        self.active: set[str] = set()  # chapters between the start of run() and the end of their clean-up
        self.results_lock = threading.Lock()
        self.tag = _build_tag(build)

    def run(self, job: Job) -> float:
        """Execute ``job``; on success replace its notebook and results; raise ChapterFailed or Interrupted."""
        marker = f"{self.tag}:{os.getpid()}:{job.stem}:{secrets.token_hex(4)}"
        with self.lock:
            self.active.add(job.stem)
        tmp = make_run_tmp(self.build, job.stem)
        try:
            return self._run(job, marker, tmp)
        finally:
            kill_marked(marker)  # anything the chapter's processes left running
            shutil.rmtree(tmp, ignore_errors=True)  # the notebooks in flight and the kernel's connection file
            with self.lock:
                self.procs.pop(job.stem, None)
                self.markers.pop(job.stem, None)
                self.active.discard(job.stem)

    def _run(self, job: Job, marker: str, tmp: Path) -> float:
        nb = jupytext.read(job.entry["source"])
        nb.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
        job.n_cells = len(nb.cells) + bool(job.entry["parameters"])
        src, executed, error = tmp / f"{job.stem}.ipynb", tmp / f"{job.stem}.executed.ipynb", tmp / "error.json"
        nbformat.write(nb, src)
        spec = tmp / "spec.json"
        spec.write_text(
            json.dumps(
                {
                    "input": str(src),
                    "output": str(executed),
                    "parameters": job.entry["parameters"],
                    "cwd": str(job.entry["source"].parent),
                    "marker": marker,
                    "error": str(error),
                }
            )
        )
        env = kernel_env(job.workers)
        # TMPDIR: the kernel's connection file and anything else temporary stays in tmp, removed with it
        env.update({MARKER_VAR: marker, "BOOK_EXECUTOR_PID": str(os.getpid()), "TMPDIR": str(tmp)})
        env["JUPYTER_RUNTIME_DIR"] = str(tmp)
        # the kernel's progress bars (lib.core.progress) go to a file beside the log, relayed to the terminal, never the
        # notebook
        env["BOOK_PROGRESS"] = str(progress_path(job.log))
        job.log.parent.mkdir(parents=True, exist_ok=True)
        progress_path(job.log).write_text("")
        job.log.parent.mkdir(parents=True, exist_ok=True)
        job.started = time.perf_counter()
        with open(job.log, "w") as fh:
            with self.lock:
                if self.stop.is_set():
                    raise Interrupted(signal.SIGINT)
                proc = subprocess.Popen(
                    [sys.executable, str(SCRIPT), CHILD_PAPERMILL, str(spec)],
                    stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, cwd=ROOT,
                    start_new_session=True,  # its own process group: signals reach it from the executor only
                )  # fmt: skip
                self.procs[job.stem], self.markers[job.stem] = proc, marker
            code = proc.wait()
        elapsed = time.perf_counter() - job.started
        if code == 0 and executed.is_file():
            self._commit(job, executed, elapsed)
            return elapsed
        if self.stop.is_set():  # stopped on request: nothing to keep (a scratch run's staging folder goes too)
            if job.staging is not None:
                shutil.rmtree(job.staging, ignore_errors=True)
            raise Interrupted(signal.SIGINT)
        lines = error_lines(error, job.log)
        where = self._keep_failed(job, executed, "failed", elapsed, lines)
        raise ChapterFailed(job, elapsed, lines, where)

    def _commit(self, job: Job, executed: Path, elapsed: float) -> None:
        result = nbformat.read(executed, as_version=4)
        set_title(result, job.entry.get("title"))
        result.metadata[FINGERPRINT_KEY] = job.fingerprint
        result.metadata["book_execution_seconds"] = round(elapsed, 1)
        if job.run_dir is None:  # the book: replace the notebook, then its numbers in results.json
            write_notebook_atomic(job.notebook, result)
            job.failed.unlink(missing_ok=True)
            if self.results_path is not None:
                with self.results_lock:
                    write_results(self.results_path, self.out_dir, self.stems)
            return
        nbformat.write(result, job.staging / "notebook.ipynb")
        values = glued_values(job.staging / "notebook.ipynb")
        write_json_atomic(job.staging / "results.json", values)
        self._write_run_parameters(job, "succeeded", elapsed)
        replace_folder(job.staging, job.run_dir)
        shutil.rmtree(job.failed, ignore_errors=True)

    def _keep_failed(self, job: Job, executed: Path, status: str, elapsed: float, lines) -> str:
        """Keep what a failed or stopped run produced beside, never over, the last good run; return where."""
        if job.run_dir is None:
            if executed.is_file():
                tmp = job.failed.with_name(f".{job.failed.name}.{os.getpid()}.tmp")
                shutil.copy(executed, tmp)
                os.replace(tmp, job.failed)
                return f"log: {shown(job.log)}  (failed notebook: {shown(job.failed)})"
            return f"log: {shown(job.log)}"
        if executed.is_file():
            shutil.copy(executed, job.staging / "notebook.ipynb")
        self._write_run_parameters(job, status, elapsed, lines)
        replace_folder(job.staging, job.failed)
        return f"log: {shown(job.failed / 'run.log')}  (run folder: {shown(job.failed)})"

    def _write_run_parameters(self, job: Job, status: str, elapsed: float | None = None, error=None) -> None:
        write_json_atomic(
            job.staging / "parameters.json",
            {
                "chapter": job.stem,
                "source": shown(job.entry["source"]),
                "overrides": job.overrides,
                "parameters": job.entry["parameters"],
                "status": status,
                "seconds": None if elapsed is None else round(elapsed, 1),
                "error": error,
                "fingerprint": job.fingerprint,
                "executed_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "command": " ".join(sys.argv),
            },
        )

    def terminate(self, sig: int) -> None:
        """Send ``sig`` to every running papermill child's process group; no new chapter starts after this."""
        with self.lock:
            self.stop.set()
            procs = [p for p in self.procs.values() if p.poll() is None]
            markers = list(self.markers.values())
        for proc in procs:
            _kill_group(proc, sig)
        if sig == signal.SIGKILL:
            for marker in markers:
                kill_marked(marker, grace=0.5)


def write_notebook_atomic(path: Path, nb) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    nbformat.write(nb, tmp)
    os.replace(tmp, path)


def replace_folder(new: Path, target: Path) -> None:
    """Put folder ``new`` at ``target`` (two renames; the old ``target`` is removed only once ``new`` is in place)."""
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    if target.exists():
        os.replace(target, old)
    os.replace(new, target)
    shutil.rmtree(old, ignore_errors=True)


# --------------------------------------------------------------------------------------------- progress relay


def progress_path(log: Path) -> Path:
    """Where a chapter's kernel writes its progress bars (``$BOOK_PROGRESS``): beside its log."""
    return log.with_suffix(".progress")


_CELL = re.compile(r"^Executing Cell (\d+)-")
_BAR = re.compile(r"\d+%\||\d+/\d+ \[|\d+(?:\.\d+)?(?:it|s)/s\]")


class Console:
    """Terminal output: lines, and (on a TTY) one status line updated in place."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stdout
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.lock = threading.Lock()
        self.status_shown = False

    def line(self, text: str, err: bool = False) -> None:
        with self.lock:
            self._clear()
            try:
                print(text, file=sys.stderr if err else self.stream, flush=True)
            except (OSError, ValueError):
                pass

    def status(self, text: str) -> None:
        with self.lock:
            width = max(20, shutil.get_terminal_size((100, 20)).columns - 1)
            try:
                self.stream.write("\r" + text[:width] + "\x1b[K")
                self.stream.flush()
                self.status_shown = True
            except (OSError, ValueError):
                pass

    def _clear(self) -> None:
        if self.status_shown:
            with contextlib.suppress(OSError, ValueError):
                self.stream.write("\r\x1b[K")
                self.stream.flush()
            self.status_shown = False


class Relay:
    """Progress of running chapters: which cell runs (from the log) and the latest bar (from the progress file).

    One chapter alone: on a TTY its status line is updated in place; otherwise a line at most every
    ``alone_every`` seconds. Chapters side by side: at most one line per chapter every ``together_every`` seconds.
    Never raises: a relay problem must not break a run.
    """

    def __init__(self, console: Console, alone: bool, alone_every: float = 10.0, together_every: float = 30.0):
        self.console, self.alone = console, alone
        self.every = alone_every if alone else together_every
        self.watched: dict[str, dict] = {}
        self.last_emit = time.monotonic()

    def add(self, job: Job) -> None:
        files = {job.log: [0, ""], progress_path(job.log): [0, ""]}  # path -> [read position, unfinished line]
        self.watched[job.stem] = {"job": job, "files": files, "cell": 0, "bar": "", "shown": ""}

    def remove(self, stem: str) -> None:
        self.watched.pop(stem, None)

    def text(self, stem: str) -> str:
        w = self.watched[stem]
        n = w["job"].n_cells
        status = f"{stem}: cell {w['cell']}/{n}" if w["cell"] else f"{stem}: starting"
        return f"{status}  {w['bar']}" if w["bar"] else status

    def poll(self) -> None:
        try:
            for w in list(self.watched.values()):
                self._read(w)
            self._emit()
        except Exception:  # noqa: BLE001 - progress is a convenience
            pass

    def _read(self, w: dict) -> None:
        for path, state in w["files"].items():  # the log (which cell runs) and the kernel's progress file (bars)
            self._read_file(w, path, state)

    def _read_file(self, w: dict, path: Path, state: list) -> None:
        try:
            with open(path, "rb") as fh:
                fh.seek(state[0])
                data = fh.read(1 << 20)
        except OSError:
            return
        state[0] += len(data)
        parts = re.split(r"[\r\n]", state[1] + data.decode(errors="replace"))
        state[1] = parts[-1]
        for segment in parts:  # the unfinished last part too: tqdm's current bar is not followed by \r yet
            segment = _ANSI.sub("", segment).strip()
            cell = _CELL.match(segment)
            if cell:
                w["cell"], w["bar"] = int(cell[1]), ""
            elif segment and _BAR.search(segment):
                w["bar"] = segment

    def _emit(self) -> None:
        now = time.monotonic()
        if self.alone and self.console.tty:
            for stem in list(self.watched):
                text = self.text(stem)
                if text != self.watched[stem]["shown"]:
                    self.watched[stem]["shown"] = text
                    self.console.status("  " + text)
            return
        if now - self.last_emit < self.every:
            return
        self.last_emit = now
        for stem, w in list(self.watched.items()):
            text = self.text(stem)
            if text != w["shown"]:
                w["shown"] = text
                self.console.line("  " + text[:160])


# --------------------------------------------------------------------------------------------- scheduling


def schedule(
    manifest: dict, todo: list[str], run, jobs: int, console: Console | None = None, relay: Relay | None = None
) -> tuple[dict[str, float], list[str]]:
    """Run ``run(stem)`` for every chapter in ``todo`` respecting ``after`` edges, ``jobs`` at a time.

    A chapter's failure is reported (its error's last lines, then where the log is) and the others go on; an
    ``Interrupted`` raised here (a signal) propagates once the running chapters have been handed to the caller.
    """
    console = console or Console()
    done: set[str] = set(manifest) - set(todo)
    pending = list(todo)
    running: dict[cf.Future, str] = {}
    timings, failures = {}, []
    pool = cf.ThreadPoolExecutor(max_workers=jobs)
    try:
        while pending or running:
            ready = [s for s in pending if all(d in done for d in manifest[s]["after"])]
            blocked = [s for s in pending if any(d in failures for d in manifest[s]["after"])]
            for stem in blocked:
                pending.remove(stem)
                failures.append(stem)
                console.line(f"  skipped  {stem}: a chapter it runs after failed")
            for stem in ready:
                if len(running) >= jobs:
                    break
                pending.remove(stem)
                console.line(f"  started  {stem}")
                running[pool.submit(run, stem)] = stem
            if not running:
                if pending:  # only possible with a dependency cycle
                    raise ManifestError(f"cannot order chapters {pending}: their 'after' entries form a cycle")
                break
            finished, _ = cf.wait(running, timeout=0.5, return_when=cf.FIRST_COMPLETED)
            if relay is not None:
                relay.poll()
            for future in finished:
                stem = running.pop(future)
                if relay is not None:
                    relay.remove(stem)
                try:
                    timings[stem] = future.result()
                    console.line(f"  finished {stem} in {timings[stem]:.0f} s")
                except Interrupted:
                    pass
                except ChapterFailed as exc:  # report every failure, keep the others going
                    failures.append(stem)
                    console.line(f"  FAILED   {stem} after {exc.seconds:.0f} s:")
                    for line in exc.error:
                        console.line(f"           {line}")
                    console.line(f"           {exc.where}")
                except Exception as exc:  # noqa: BLE001 - the executor's own trouble with one chapter
                    failures.append(stem)
                    console.line(f"  FAILED   {stem}: {type(exc).__name__}: {exc}")
                done.add(stem)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return timings, failures


# --------------------------------------------------------------------------------------------- results


_NUMPY_SCALAR = re.compile(r"^np\.(?:float|int|uint|bool_?)\w*\((.*)\)$")


def parse_glued(text: str):
    """The Python value of a glued ``text/plain`` repr (numbers, bools, strings; numpy scalar reprs unwrapped)."""
    text = text.strip()
    match = _NUMPY_SCALAR.match(text)
    if match:
        text = match.group(1)
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None


def glued_values(path: Path) -> dict:
    """``{name: value}`` for every glued scalar of an executed notebook (figures and other objects are skipped)."""
    nb = nbformat.read(path, as_version=4)
    values = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            data = output.get("data", {})
            if not name or any(k.startswith("application/papermill.record/image") for k in data):
                continue
            text = data.get("application/papermill.record/text/plain")
            if text is None:
                continue
            value = parse_glued(text)
            if isinstance(value, bool | int | float | str):
                values[name] = value
    return values


def write_json_atomic(path: Path, payload) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)


def write_results(results_path: Path, out_dir: Path, stems: list[str]) -> dict:
    """Write ``results.json`` (every glued value of the executed tree) and, beside it, ``claims.json``: every claim
    record a chapter glued as ``claim_<id>`` (``lib.core.claims``), with the chapter that computed it."""
    results = collect_results(out_dir, stems)
    write_json_atomic(results_path, results)
    claims = {}
    for key, value in results.items():
        stem, name = key.split("::", 1)
        if name.startswith("claim_") and isinstance(value, str) and value.startswith("{"):
            record = json.loads(value)
            if name == f"claim_{record['id']}":
                claims[record["id"]] = {**record, "chapter": stem}
    write_json_atomic(results_path.with_name("claims.json"), claims)
    return results


def collect_results(out_dir: Path, stems: list[str]) -> dict:
    results = {}
    for stem in stems:
        path = out_dir / f"{stem}.ipynb"
        if path.is_file():
            for name, value in glued_values(path).items():
                results[f"{stem}::{name}"] = value
    return results


# --------------------------------------------------------------------------------------------- main


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", nargs="+", metavar="STEM", help="execute only these chapters")
    parser.add_argument(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUE"),
        help="override a chapter parameter (with --only; a scratch run). VALUE as papermill's -p; a dict or list "
        "as YAML: -p task_params '{length: 30}'",
    )
    parser.add_argument("--name", help="the scratch run's folder name (default: the chapter and its parameters)")
    parser.add_argument(
        "--force",
        "--overwrite",
        action="store_true",
        help="re-execute even if up to date; replace an existing scratch run",
    )
    parser.add_argument("--jobs", type=int, default=2, help="chapters executed at once (default 2)")
    parser.add_argument("--out", type=Path, help="output tree (default _build/executed, or _build/scratch)")
    parser.add_argument("--book-dir", type=Path, default=ROOT / "book", help=argparse.SUPPRESS)
    parser.add_argument("--toc", type=Path, default=ROOT / "_toc.yml", help=argparse.SUPPRESS)
    parser.add_argument("--list", action="store_true", help="list the chapters and their parameters, then stop")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    parser = _parser()
    manifest = load_manifest(args.book_dir)
    if args.list:
        for stem, entry in manifest.items():
            print(f"{stem}  ({shown(entry['source'])})")
            for line in parameter_lines(entry):
                print(f"    {line}")
        return 0
    if args.jobs < 1:
        parser.error(f"--jobs={args.jobs} must be at least 1")
    selected = list(manifest) if not args.only else list(dict.fromkeys(args.only))
    unknown = [s for s in selected if s not in manifest]
    if unknown:
        parser.error(f"unknown chapter(s) {unknown}; chapters are: {list(manifest)}")
    overrides = {name: coerce(value, name) for name, value in args.parameter}
    if (overrides or args.name) and not args.only:
        parser.error("-p and --name need --only: a scratch run executes named chapters")
    if args.name is not None:
        if not NAME_RULE.fullmatch(args.name):
            parser.error(f"--name={args.name!r} must be 1-120 letters, digits and . _ + = , - (starting alphanumeric)")
        if len(selected) > 1:
            parser.error(f"--name={args.name!r} names one run; give one chapter with --only (got {selected})")
    scratch = bool(overrides) or args.name is not None

    build = build_dir()
    out_root = (args.out or build / ("scratch" if scratch else "executed")).resolve()
    out_dir = out_root if scratch else out_root / args.book_dir.name
    log_dir = build / "logs"
    env = kernel_env()
    check_environment(env)
    for line in clean_stale(build, cache_dir(env), out_root if scratch else None):
        print(f"  cleaned: {line}", flush=True)

    for stem in selected:
        entry = manifest[stem]
        if overrides:  # the manifest's title describes the book's parameters, not the reader's
            entry["title"] = None
        if not entry["source"].is_file():
            raise ManifestError(f"chapter {stem!r} needs {entry['source']}, which does not exist")
        entry["parameters"].update(overrides)
        check_parameters(stem, entry["source"], entry["parameters"])
    fingerprints = {s: fingerprint(manifest[s]["source"], manifest[s]["parameters"]) for s in selected}
    for stem in selected:  # a chapter that reads others' notebooks or models also depends on what they hold
        deps = [
            fingerprints.get(d) or stored_fingerprint(out_dir / f"{d}.ipynb") or "" for d in manifest[stem]["after"]
        ]
        if deps:
            fingerprints[stem] = hashlib.sha256("".join([fingerprints[stem], *deps]).encode()).hexdigest()

    jobs_for: dict[str, Job] = {}
    if scratch:
        for stem in selected:
            name = args.name or run_name(stem, overrides)
            run_dir = out_dir / name
            if _scratch_up_to_date(run_dir, fingerprints[stem], args.force):
                continue
            staging = out_dir / f".{name}.partial-{os.getpid()}"
            jobs_for[stem] = Job(
                stem, manifest[stem], fingerprints[stem], 1, staging / "run.log", run_dir / "notebook.ipynb",
                out_dir / f"{name}.failed", run_dir=run_dir, staging=staging, overrides=overrides,
            )  # fmt: skip
        # every value the reader gave, before anything starts: each chapter's own validation cell, run on its own
        refused = check_values(
            {s: validation_cells(manifest[s]["source"], manifest[s]["parameters"]) for s in jobs_for},
            env,
            args.book_dir,
        )
        if refused:
            raise ManifestError(
                "\n".join(f"chapter {s!r} refuses its parameters: {msg}" for s, msg in refused.items())
                + "\nnothing was executed"
            )
    else:
        for stem in selected:
            if args.force or stored_fingerprint(out_dir / f"{stem}.ipynb") != fingerprints[stem]:
                jobs_for[stem] = Job(
                    stem, manifest[stem], fingerprints[stem], 1, log_dir / f"{stem}.log", out_dir / f"{stem}.ipynb",
                    log_dir / f"{stem}.failed.ipynb",
                )  # fmt: skip
    todo = list(jobs_for)

    # one execution per book tree, one per scratch run: a second one is refused, not mixed in
    locks: list[Lock] = []
    try:
        if scratch:
            for job in jobs_for.values():
                locks.append(Lock(_lock_path(build, job.run_dir), f"scratch run {shown(job.run_dir)}"))
                _scratch_up_to_date(job.run_dir, job.fingerprint, args.force)  # it may have appeared meanwhile
        else:
            locks.append(Lock(_lock_path(build, out_dir), f"the book tree {shown(out_dir)}"))
        return _execute(args, manifest, selected, todo, jobs_for, scratch, build, out_root, out_dir, log_dir)
    finally:
        for lock in locks:
            lock.release()


def _lock_path(build: Path, target: Path) -> Path:
    digest = hashlib.sha256(str(target.resolve()).encode()).hexdigest()[:12]
    return build / ".locks" / f"{target.name}-{digest}.lock"


def _scratch_up_to_date(run_dir: Path, fp: str, force: bool) -> bool:
    """True if ``run_dir`` holds a successful run of exactly this execution; ManifestError if it holds another one
    (and ``force`` is not given)."""
    notebook = run_dir / "notebook.ipynb"
    if force or not notebook.is_file():
        return False
    if stored_fingerprint(notebook) == fp:
        print(f"  up to date {shown(run_dir)} (--force runs it again)", flush=True)
        return True
    raise ManifestError(
        f"scratch run {shown(run_dir)} already exists (executed with other parameters or code); pass --force to "
        "replace it, or --name to run beside it"
    )


def _execute(args, manifest, selected, todo, jobs_for, scratch, build, out_root, out_dir, log_dir) -> int:
    out_dir.mkdir(parents=True, exist_ok=True)
    if not scratch:  # a scratch run's log is in its own folder
        log_dir.mkdir(parents=True, exist_ok=True)
    # Plain pages of the table of contents and the bibliography travel with the executed notebooks.
    if not scratch and args.toc.is_file():
        for rel in toc_files(args.toc):
            stem = Path(rel).name
            if stem in manifest:
                continue
            src = ROOT / f"{rel}.md"
            if not src.is_file():
                raise ManifestError(f"{args.toc} names {rel}, but neither {src} nor a manifest chapter exists")
            shutil.copy2(src, out_dir / src.name)
        for extra in args.book_dir.glob("*.bib"):
            shutil.copy2(extra, out_dir / extra.name)

    where = shown(out_dir)
    print(f"executing {len(todo)} of {len(selected)} chapter(s) into {where} ({args.jobs} at a time)", flush=True)
    if not scratch:
        for stem in selected:
            if stem not in todo:
                print(f"  up to date {stem}", flush=True)

    from lib.core.parallel import available_cpus

    # the CPUs are shared out: chapters running side by side each get one worker process, a chapter alone gets all
    workers = max(1, available_cpus() // max(1, min(args.jobs, len(todo))))
    results_path = None if scratch else out_root.parent / "results.json"
    executor = Executor(build, out_dir, results_path, list(manifest))
    console = Console()
    relay = Relay(console, alone=len(todo) == 1)
    sub_manifest = {s: {**manifest[s], "after": [d for d in manifest[s]["after"] if d in todo]} for s in todo}

    def run(stem: str) -> float:
        job = jobs_for[stem]
        job.workers = workers
        if job.staging is not None:
            job.staging.mkdir(parents=True, exist_ok=True)
            executor._write_run_parameters(job, "running")
        relay.add(job)
        return executor.run(job)

    start = time.perf_counter()
    interrupted = None
    timings, failures = {}, []
    try:
        timings, failures = schedule(sub_manifest, todo, run, args.jobs, console, relay)
    except Interrupted as exc:
        interrupted = exc
        _stop(executor, console, exc)
    total = time.perf_counter() - start

    if results_path is not None:
        results = write_results(results_path, out_dir, list(manifest))
        if timings:
            timing_path = build / "timings.json"
            previous = json.loads(timing_path.read_text()) if timing_path.is_file() else {}
            previous.update({s: round(t, 1) for s, t in timings.items()})
            write_json_atomic(timing_path, previous)
        print(f"executed {len(timings)} chapter(s) in {total:.0f} s wall; {len(results)} glued values collected")
    else:
        print(f"executed {len(timings)} chapter(s) in {total:.0f} s wall")
        for stem in timings:
            job = jobs_for[stem]
            print(f"  run folder: {shown(job.run_dir)} (notebook.ipynb, run.log, parameters.json, results.json)")
    if interrupted is not None:
        kept = "the previous notebooks and results.json are unchanged" if not scratch else "earlier runs are unchanged"
        print(f"INTERRUPTED ({interrupted}): stopped before finishing; {kept}", file=sys.stderr)
        return 128 + interrupted.signum
    if failures:
        print(f"FAILED: {failures}", file=sys.stderr)
        return 1
    return 0


def _stop(executor: Executor, console: Console, exc: Interrupted) -> None:
    """After a signal: stop every chapter (SIGTERM to its papermill, which shuts the kernel down), wait for them to
    clean up, kill what is left after ``STOP_GRACE`` seconds (or at a second signal)."""
    hurry = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: hurry.set())
    console.line(f"{exc}: stopping the running chapters (the previous results stay)", err=True)
    executor.terminate(signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE
    while executor.active and time.monotonic() < deadline and not hurry.is_set():
        time.sleep(0.1)
    if executor.active:
        executor.terminate(signal.SIGKILL)
    deadline = time.monotonic() + 10
    while executor.active and time.monotonic() < deadline:  # the job threads remove their temporary folders
        time.sleep(0.1)


def _install_signal_handlers() -> None:
    def handler(signum, frame):
        raise Interrupted(signum)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, handler)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == CHILD_PAPERMILL:
        sys.exit(_papermill_child(sys.argv[2]))
    if len(sys.argv) > 3 and sys.argv[1] == CHILD_CHECK:
        sys.exit(_check_values_child(sys.argv[2], sys.argv[3]))
    _install_signal_handlers()
    try:
        sys.exit(main())
    except BrokenPipeError:  # e.g. --list | head
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
    except ManifestError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    except Interrupted as exc:  # before any chapter started: nothing to stop
        print(f"INTERRUPTED ({exc}): nothing was executed", file=sys.stderr)
        sys.exit(128 + exc.signum)
