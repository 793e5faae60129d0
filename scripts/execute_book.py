#!/usr/bin/env python
"""Execute the book's chapters with papermill and collect every glued number into ``results.json``.

Each chapter listed in ``book/chapters.yml`` is converted from MyST (jupytext) to a notebook, executed by papermill
with its manifest parameters into ``_build/executed/book/<stem>.ipynb`` (atomically: a failed chapter leaves no
output behind), and its glued values are gathered into ``_build/results.json`` as ``{"<stem>::<name>": value}``.
Plain MyST pages named in ``_toc.yml`` are copied beside them, so the HTML is built from this tree with execution off.

A chapter is re-executed only when its source, its parameters, ``lib/`` or the requirements changed (a fingerprint
is stored in the executed notebook's metadata). Any failure makes the script exit non-zero.

Examples::

    python scripts/execute_book.py                      # the whole book, two chapters at a time
    python scripts/execute_book.py --only copy_task     # one chapter of the book
    python scripts/execute_book.py --only copy_task -p seeds 3   # other parameters -> _build/scratch/
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures as cf
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jupytext
import nbformat
import papermill
import yaml

from lib.parallel import available_cpus

ROOT = Path(__file__).resolve().parent.parent
FINGERPRINT_KEY = "book_fingerprint"


class ManifestError(ValueError):
    """The manifest, the table of contents or a parameter is inconsistent."""


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
    """The names (with types and defaults) declared in the chapter's ``parameters`` cell."""
    nb = jupytext.read(source)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "nb.ipynb"
        nbformat.write(nb, path)
        return papermill.inspect_notebook(str(path))


def coerce(value: str):
    """Parse a command-line parameter value like papermill's ``-p`` does (int, float, bool, None, else str)."""
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


# --------------------------------------------------------------------------------------------- execution


def kernel_env(workers: int = 1) -> dict[str, str]:
    """Environment of every kernel: one thread per chapter so results are reproducible and chapters run in parallel,
    and ``workers`` processes for a chapter's independent jobs (``lib.parallel``; ``$BOOK_WORKERS`` overrides)."""
    env = dict(os.environ)
    env.setdefault("BOOK_WORKERS", str(workers))
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("MKL_NUM_THREADS", "1")
    env.setdefault("PYTHONHASHSEED", "0")
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    env["BOOK_BUILD_DIR"] = str(build_dir())
    return env


def build_dir() -> Path:
    return Path(os.environ.get("BOOK_BUILD_DIR", ROOT / "_build")).resolve()


def set_title(nb, title: str | None) -> None:
    """Replace the first level-1 heading of the notebook by ``title`` (for chapters executed from one template)."""
    if not title:
        return
    for cell in nb.cells:
        if cell.cell_type == "markdown" and re.search(r"^# ", cell.source, flags=re.M):
            cell.source = re.sub(r"^# .*$", f"# {title}", cell.source, count=1, flags=re.M)
            return


def execute_chapter(stem: str, entry: dict, out_dir: Path, log_dir: Path, fp: str, workers: int = 1) -> float:
    """Execute one chapter into ``out_dir/<stem>.ipynb`` (``workers`` processes for its jobs); return the wall time.
    Raises on failure."""
    out = out_dir / f"{stem}.ipynb"
    log = log_dir / f"{stem}.log"
    nb = jupytext.read(entry["source"])
    nb.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
    with tempfile.TemporaryDirectory(prefix=f"{stem}-") as tmp:
        src = Path(tmp) / f"{stem}.ipynb"
        params = Path(tmp) / "parameters.yml"
        executed = Path(tmp) / f"{stem}.executed.ipynb"
        nbformat.write(nb, src)
        params.write_text(yaml.safe_dump(entry["parameters"]))
        cmd = [
            sys.executable, "-m", "papermill", str(src), str(executed),
            "-f", str(params), "-k", "python3", "--cwd", str(entry["source"].parent),
            "--log-output", "--no-progress-bar", "--request-save-on-cell-execute",
        ]  # fmt: skip
        env = kernel_env(workers)
        progress = log_dir / f"{stem}.progress"  # the kernel's progress bars (lib.progress), never the notebook
        progress.write_text("")
        env["BOOK_PROGRESS"] = str(progress)
        start = time.perf_counter()
        with open(log, "w") as fh:
            proc = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        elapsed = time.perf_counter() - start
        if proc.returncode != 0:
            failed = log_dir / f"{stem}.failed.ipynb"
            if executed.is_file():
                shutil.copy(executed, failed)
            out.unlink(missing_ok=True)
            raise RuntimeError(f"chapter {stem!r} failed after {elapsed:.0f} s; see {log} and {failed}")
        result = nbformat.read(executed, as_version=4)
        set_title(result, entry.get("title"))
        result.metadata[FINGERPRINT_KEY] = fp
        result.metadata["book_execution_seconds"] = round(elapsed, 1)
        tmp_out = out_dir / f".{stem}.ipynb.tmp"
        nbformat.write(result, tmp_out)
        os.replace(tmp_out, out)
    return elapsed


def schedule(manifest: dict, todo: list[str], run, jobs: int) -> tuple[dict[str, float], list[str]]:
    """Run ``run(stem)`` for every chapter in ``todo`` respecting ``after`` edges, ``jobs`` at a time."""
    done: set[str] = set(manifest) - set(todo)
    pending = list(todo)
    running: dict[cf.Future, str] = {}
    timings, failures = {}, []
    with cf.ThreadPoolExecutor(max_workers=jobs) as pool:
        while pending or running:
            ready = [s for s in pending if all(d in done for d in manifest[s]["after"])]
            blocked = [s for s in pending if any(d in failures for d in manifest[s]["after"])]
            for stem in blocked:
                pending.remove(stem)
                failures.append(stem)
                print(f"  skipped  {stem}: a chapter it runs after failed", flush=True)
            for stem in ready:
                if len(running) >= jobs:
                    break
                pending.remove(stem)
                print(f"  started  {stem}", flush=True)
                running[pool.submit(run, stem)] = stem
            if not running:
                if pending:  # only possible with a dependency cycle
                    raise ManifestError(f"cannot order chapters {pending}: their 'after' entries form a cycle")
                break
            finished, _ = cf.wait(running, return_when=cf.FIRST_COMPLETED)
            for future in finished:
                stem = running.pop(future)
                try:
                    timings[stem] = future.result()
                    print(f"  finished {stem} in {timings[stem]:.0f} s", flush=True)
                except Exception as exc:  # report every failure, keep the others going
                    failures.append(stem)
                    print(f"  FAILED   {stem}: {exc}", flush=True)
                done.add(stem)
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
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)


def collect_results(out_dir: Path, stems: list[str]) -> dict:
    results = {}
    for stem in stems:
        path = out_dir / f"{stem}.ipynb"
        if path.is_file():
            for name, value in glued_values(path).items():
                results[f"{stem}::{name}"] = value
    return results


# --------------------------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="STEM", help="execute only these chapters")
    parser.add_argument(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUE"),
        help="override a papermill parameter (with --only; output goes to the scratch tree)",
    )
    parser.add_argument("--force", action="store_true", help="re-execute even if up to date")
    parser.add_argument("--jobs", type=int, default=2, help="chapters executed at once (default 2)")
    parser.add_argument("--out", type=Path, help="output tree (default _build/executed, or _build/scratch with -p)")
    parser.add_argument("--book-dir", type=Path, default=ROOT / "book", help=argparse.SUPPRESS)
    parser.add_argument("--toc", type=Path, default=ROOT / "_toc.yml", help=argparse.SUPPRESS)
    parser.add_argument("--list", action="store_true", help="list the chapters and their parameters, then stop")
    args = parser.parse_args(argv)

    manifest = load_manifest(args.book_dir)
    if args.list:
        for stem, entry in manifest.items():
            declared = notebook_parameters(entry["source"])
            shown = {k: entry["parameters"].get(k, v["default"]) for k, v in declared.items()}
            print(f"{stem:20s} {entry['source'].name:24s} {shown}")
        return 0
    if args.jobs < 1:
        parser.error(f"--jobs={args.jobs} must be at least 1")
    selected = list(manifest) if not args.only else args.only
    unknown = [s for s in selected if s not in manifest]
    if unknown:
        parser.error(f"unknown chapter(s) {unknown}; chapters are: {list(manifest)}")
    overrides = {name: coerce(value) for name, value in args.parameter}
    if overrides and not args.only:
        parser.error("-p needs --only: parameters are given to named chapters")
    scratch = bool(overrides)
    out_root = args.out or build_dir() / ("scratch" if scratch else "executed")
    out_dir = out_root / args.book_dir.name
    log_dir = build_dir() / "logs"
    out_dir.mkdir(parents=True, exist_ok=True)
    log_dir.mkdir(parents=True, exist_ok=True)

    for stem in selected:
        if overrides:  # the manifest's title describes the book's parameters, not the reader's
            manifest[stem]["title"] = None
        if not manifest[stem]["source"].is_file():
            raise ManifestError(f"chapter {stem!r} needs {manifest[stem]['source']}, which does not exist")
        manifest[stem]["parameters"].update(overrides)
        check_parameters(stem, manifest[stem]["source"], manifest[stem]["parameters"])

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

    fingerprints = {s: fingerprint(manifest[s]["source"], manifest[s]["parameters"]) for s in selected}
    for stem in selected:  # a chapter that reads others' notebooks (the scorecard) also depends on what they hold
        after = manifest[stem]["after"]
        deps = [fingerprints.get(d) or stored_fingerprint(out_dir / f"{d}.ipynb") or "" for d in after]
        if deps:
            fingerprints[stem] = hashlib.sha256("".join([fingerprints[stem], *deps]).encode()).hexdigest()
    todo = [s for s in selected if args.force or stored_fingerprint(out_dir / f"{s}.ipynb") != fingerprints[s]]
    print(f"executing {len(todo)} of {len(selected)} chapter(s) into {out_dir} ({args.jobs} at a time)", flush=True)
    for stem in selected:
        if stem not in todo:
            print(f"  up to date {stem}", flush=True)

    # the CPUs are shared out: chapters running side by side each get one worker process, a chapter alone gets all
    workers = max(1, available_cpus() // max(1, min(args.jobs, len(todo))))
    start = time.perf_counter()
    sub_manifest = {s: {**manifest[s], "after": [d for d in manifest[s]["after"] if d in todo]} for s in todo}
    timings, failures = schedule(
        sub_manifest,
        todo,
        lambda s: execute_chapter(s, manifest[s], out_dir, log_dir, fingerprints[s], workers),
        args.jobs,
    )
    total = time.perf_counter() - start

    results = collect_results(out_dir, list(manifest))
    write_json_atomic(out_root.parent / ("scratch-results.json" if scratch else "results.json"), results)
    if not scratch:  # every claim record (glue claim_<id>, lib.claims) for outside use
        claims = {}
        for key, value in results.items():
            stem, name = key.split("::", 1)
            if name.startswith("claim_") and isinstance(value, str) and value.startswith("{"):
                record = json.loads(value)
                if name == f"claim_{record['id']}":
                    claims[record["id"]] = {**record, "chapter": stem}
        write_json_atomic(out_root.parent / "claims.json", claims)
    if not scratch and timings:
        timing_path = build_dir() / "timings.json"
        previous = json.loads(timing_path.read_text()) if timing_path.is_file() else {}
        previous.update({s: round(t, 1) for s, t in timings.items()})
        write_json_atomic(timing_path, previous)
    print(f"executed {len(timings)} chapter(s) in {total:.0f} s wall; {len(results)} glued values collected")
    if failures:
        print(f"FAILED: {failures}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ManifestError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
