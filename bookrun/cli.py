"""``python -m bookrun``: execute the book's chapters with papermill and collect every glued number.

Each chapter listed in ``book/chapters.yml`` is converted from MyST (jupytext) to a notebook, executed by papermill
with its manifest parameters into ``_build/executed/book/<stem>.ipynb`` (log: ``_build/logs/<stem>.log``), and its
glued values are gathered into ``_build/results.json`` as ``{"<stem>::<name>": value}``. Plain MyST pages named in
``_toc.yml``, the bibliography and a reader's modules (``book/**/*.py``, e.g. ``book/tasks/``) are copied beside
them, so the HTML is built from this tree with execution off and the notebooks re-execute there.

A chapter is re-executed only when its source, its parameters, the requirements, a repository file its kernels
imported during its last execution, or a chapter it runs after changed (``bookrun.fingerprints``). Any failure makes
the command exit non-zero and prints the chapter's error. Nothing good is lost: a notebook is replaced only by one
that succeeded, so a failure, Ctrl-C or SIGTERM leaves the previous notebook and its numbers in ``results.json``.

With ``-p`` (or ``--name``), or for a chapter made from a pattern of the manifest (``task_{task}``: ``--only
task_integrator`` runs the task template for the task ``integrator``), a chapter runs as a *scratch run* into its own
folder ``_build/scratch/<chapter>[-<parameters>]/`` (``notebook.ipynb``, ``run.log``, ``parameters.json``,
``results.json`` keyed ``<chapter>::<name>``), never touching the book's tree; an existing run is replaced only with
``--force``.

Examples::

    python -m bookrun                                   # the whole book, two chapters at a time
    python -m bookrun --only copy_task                  # one chapter of the book
    python -m bookrun --only copy_task -p solutions 3   # -> _build/scratch/copy_task-solutions=3/
    python -m bookrun --only task_integrator            # your own task (book/tasks/) -> _build/scratch/task_integrator/
    python -m bookrun --only task_sine -p task_params '{length: 30}' --name sine-short
    python -m bookrun --list                            # every chapter's parameters, as Python
"""

from __future__ import annotations

import argparse
import errno
import os
import shutil
import sys
from pathlib import Path

from lib.core import budget, settings
from lib.core.paths import REPO_ROOT, build_dir

from . import faults
from .chapter import Job, kernel_env
from .checks import check_environment, check_values
from .fingerprints import stale_chapters
from .manifest import (
    RENAMED,
    ManifestError,
    check_parameters,
    coerce,
    load_manifest,
    parameter_lines,
    renamed_parameters,
    validation_cells,
)
from .processes import NAME_RULE, Lock, cache_dir, clean_stale, lock_path, run_name, shown
from .run import Run, execute

#: The errors of a write that say the build folder cannot take it (a sentence, not a traceback).
UNWRITABLE = {errno.EROFS, errno.ENOSPC, errno.EACCES, errno.EPERM, errno.EDQUOT, errno.ENOTDIR}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bookrun",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--only", nargs="+", metavar="STEM", help="execute only these chapters")
    parser.add_argument(
        "-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
        help="override a chapter parameter (with --only; a scratch run). VALUE as papermill's -p; a dict or list "
        "as YAML: -p task_params '{length: 30}'",
    )  # fmt: skip
    parser.add_argument("--name", help="the scratch run's folder name (default: the chapter and its parameters)")
    parser.add_argument(
        "--force", "--overwrite", action="store_true",
        help="re-execute even if up to date; replace an existing scratch run",
    )  # fmt: skip
    parser.add_argument("--jobs", type=int, default=2, help="chapters executed at once (default 2)")
    parser.add_argument(
        "--allow-long", action="store_true",
        help=f"run a chapter whose estimated time is over {budget.LONG_FACTOR} × its budget of "
        f"{budget.BUDGET_SECONDS // 60} minutes (refused otherwise; a run estimated over the machine's memory is "
        "refused always); one cell may then run a day",
    )  # fmt: skip
    parser.add_argument(
        "--cell-timeout", type=float, metavar="SECONDS",
        help=f"stop a chapter whose cell runs longer (default {settings.CELL_SECONDS} s; "
        f"{settings.LONG_CELL_SECONDS} s with --allow-long)",
    )  # fmt: skip
    parser.add_argument("--out", help=argparse.SUPPRESS)  # gone: refused with what to use instead
    parser.add_argument("--book-dir", type=Path, default=REPO_ROOT / "book", help=argparse.SUPPRESS)
    parser.add_argument("--toc", type=Path, default=REPO_ROOT / "_toc.yml", help=argparse.SUPPRESS)
    parser.add_argument("--list", action="store_true", help="list the chapters and their parameters, then stop")
    return parser


def _list(manifest) -> int:
    print(f"chapters of the checkout {REPO_ROOT} (python -m bookrun runs this checkout's book, wherever it is "
          "started)")  # fmt: skip
    for stem, entry in manifest.items():
        print(f"{stem}  ({shown(entry['source'])})")
        for line in parameter_lines(entry):
            print(f"    {line}")
    for pattern in manifest.patterns:
        example = pattern.stem.replace("{" + pattern.name + "}", f"<{pattern.name}>")
        print(f"{pattern.stem}  ({shown(pattern.source)}; any {pattern.name}: --only {example})")
    print("renamed (the former name still works): " + ", ".join(f"{old} -> {new}" for old, new in RENAMED.items()))
    return 0


def _chapters(parser, manifest, args, overrides) -> tuple[dict[str, dict], dict[str, dict]]:
    """The selected chapters' entries (copies), with the reader's parameters applied and checked, and each chapter's
    overrides under its own names (a former name renamed, :data:`bookrun.manifest.RENAMED`, with a note)."""
    selected = list(manifest) if not args.only else list(dict.fromkeys(args.only))
    chapters, own = {}, {}
    for stem in selected:
        entry = manifest.entry(stem)
        if entry is None:
            patterns = [p.stem for p in manifest.patterns]
            parser.error(f"unknown chapter(s) {[stem]}; chapters are: {list(manifest)}, and the patterns {patterns}")
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


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.out is not None:  # it wrote the book's results beside DIR: gone, not contained
        parser.error(f"--out={args.out!r} is gone: a run writes inside its build folder only; BOOK_BUILD_DIR=DIR "
                     "puts the whole build (executed tree, results, logs, scratch runs) in DIR")  # fmt: skip
    if args.cell_timeout is not None and not 0 < args.cell_timeout < float("inf"):
        parser.error(f"--cell-timeout={args.cell_timeout:g} must be a positive number of seconds")
    # both travel to the check and to every kernel in their environment (lib.core.settings)
    if args.allow_long:
        os.environ[settings.ALLOW_LONG] = "1"
    if args.cell_timeout is not None:
        os.environ[settings.CELL_TIMEOUT] = repr(args.cell_timeout)
    if not Path.cwd().resolve().is_relative_to(REPO_ROOT):  # an editable install runs its own checkout's book
        print(f"running the book of the checkout {REPO_ROOT} (started from {Path.cwd()})", flush=True)
    manifest = load_manifest(args.book_dir)
    if args.list:
        return _list(manifest)
    if args.jobs < 1:
        parser.error(f"--jobs={args.jobs} must be at least 1")
    given = [name for name, _ in args.parameter]
    twice = sorted({name for name in given if given.count(name) > 1})
    if twice:
        values = "; ".join(f"-p {n} " + ", ".join(repr(v) for k, v in args.parameter if k == n) for n in twice)
        parser.error(f"a parameter given more than once ({values}): give each once, the value you mean")
    overrides = {name: coerce(value, name) for name, value in args.parameter}
    if (overrides or args.name) and not args.only:
        parser.error("-p and --name need --only: a scratch run executes named chapters")
    chapters, own_overrides = _chapters(parser, manifest, args, overrides)
    selected = list(chapters)
    if args.name is not None:
        if not NAME_RULE.fullmatch(args.name):
            parser.error(f"--name={args.name!r} must be 1-120 letters, digits and . _ + = , - (starting alphanumeric)")
        if args.name.endswith(".failed") or ".partial-" in args.name:  # the executor's own: run X's failure, staging
            parser.error(f"--name={args.name!r} is a name the executor gives its own files (a failed run's "
                         "'<name>.failed', a run's '.<name>.partial-<pid>' staging); choose another")  # fmt: skip
        if len(selected) > 1:
            parser.error(f"--name={args.name!r} names one run; give one chapter with --only (got {selected})")
    scratch = bool(overrides) or args.name is not None or any(s not in manifest for s in selected)

    build = build_dir()
    out_root = (build / ("scratch" if scratch else "executed")).resolve()
    book_tree = (build / "executed" if scratch else out_root) / args.book_dir.name
    out_dir = out_root if scratch else book_tree
    env = kernel_env()
    check_environment(env)
    for line in clean_stale(build, cache_dir(env), out_root if scratch else None):
        print(f"  cleaned: {line}", flush=True)
    # a notebook that cannot be read would stop any run that reads the book's tree: set aside, said at the end
    set_aside = faults.set_aside_unreadable(build / "executed" / args.book_dir.name, list(manifest), build / "logs")

    jobs_for: dict[str, Job] = {}
    if scratch:
        for stem, entry in chapters.items():
            name = args.name or run_name(stem, own_overrides[stem])
            run_dir = out_dir / name
            staging = out_dir / f".{name}.partial-{os.getpid()}"
            jobs_for[stem] = Job(
                stem, entry, 1, staging / "run.log", run_dir / "notebook.ipynb", out_dir / f"{name}.failed",
                run_dir=run_dir, staging=staging, overrides=own_overrides[stem],
            )  # fmt: skip
    else:
        for stem, entry in chapters.items():
            jobs_for[stem] = Job(stem, entry, 1, build / "logs" / f"{stem}.log", out_dir / f"{stem}.ipynb",
                                 build / "logs" / f"{stem}.failed.ipynb")  # fmt: skip
    notebooks = {stem: job.notebook for stem, job in jobs_for.items()}

    def notebook_of(stem: str) -> Path:
        return notebooks.get(stem, book_tree / f"{stem}.ipynb")

    stale = stale_chapters({**manifest, **chapters}, selected, notebook_of, args.force)
    if scratch:
        for stem in selected:
            if not _scratch_stale(jobs_for[stem], stale.get(stem)):
                del jobs_for[stem]
    else:
        jobs_for = {s: job for s, job in jobs_for.items() if s in stale}
    # every value of every chapter to run, before anything starts: each chapter's own validation cells (its
    # parameters cell, the values given, and the cell that checks them), in one plain process; one line per refusal
    refused = check_values(
        {s: validation_cells(chapters[s]["source"], chapters[s]["parameters"]) for s in jobs_for}, env, args.book_dir
    )
    if refused:
        raise ManifestError(
            "\n".join(f"chapter {s!r} refuses its parameters: {msg}" for s, msg in refused.items())
            + "\nnothing was executed"
        )

    # one execution per book tree, one per scratch run: a second one is refused, not mixed in
    locks: list[Lock] = []
    try:
        if scratch:
            for job in jobs_for.values():
                locks.append(Lock(lock_path(build, job.run_dir), f"scratch run {shown(job.run_dir)}"))
            again = stale_chapters(chapters, list(jobs_for), notebook_of, args.force)
            jobs_for = {
                s: job for s, job in jobs_for.items() if _scratch_stale(job, again.get(s))
            }  # finished meanwhile?
        else:
            locks.append(Lock(lock_path(build, out_dir), f"the book tree {shown(out_dir)}"))
        if not scratch:
            _copy_pages(args, manifest, out_dir)
        run = Run(manifest=manifest, selected=selected, jobs_for=jobs_for, reasons=stale, scratch=scratch,
                  build=build, out_root=out_root, out_dir=out_dir, book_tree=book_tree, jobs=args.jobs,
                  faults=set_aside)  # fmt: skip
        return execute(run)
    finally:
        for lock in locks:
            lock.release()


def _scratch_stale(job: Job, reason: str | None) -> bool:
    """True if the scratch run must execute: it has no successful run, or (``--force``) it is stale; ManifestError
    if its folder holds a run of another execution and ``--force`` is not given."""
    if not job.notebook.is_file():
        return True
    if reason is None:
        print(f"  up to date {shown(job.run_dir)} (--force runs it again)", flush=True)
        return False
    if reason == "--force":
        return True
    raise ManifestError(
        f"scratch run {shown(job.run_dir)} already exists (executed with other parameters or code: {reason}); pass "
        "--force to replace it, or --name to run beside it"
    )


def _copy_pages(args, manifest, out_dir: Path) -> None:
    """Plain pages of the table of contents, the bibliography and the reader's modules travel with the notebooks."""
    from .manifest import toc_files

    out_dir.mkdir(parents=True, exist_ok=True)
    if args.toc.is_file():
        for rel in toc_files(args.toc):
            stem = Path(rel).name
            if stem in manifest:
                continue
            src = REPO_ROOT / f"{rel}.md"
            if not src.is_file():
                raise ManifestError(f"{args.toc} names {rel}, but neither {src} nor a manifest chapter exists")
            shutil.copy2(src, out_dir / src.name)
    for extra in args.book_dir.glob("*.bib"):
        shutil.copy2(extra, out_dir / extra.name)
    for module in args.book_dir.rglob("*.py"):
        if "__pycache__" not in module.parts:
            target = out_dir / module.relative_to(args.book_dir)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(module, target)


def entry_point(argv: list[str] | None = None) -> int:
    """``main`` with the signals handled and errors printed: the exit status of ``python -m bookrun``."""
    from .run import Interrupted, install_signal_handlers

    install_signal_handlers()
    try:
        return main(argv)
    except BrokenPipeError:  # e.g. --list | head
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except ManifestError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # the build folder cannot be written (read-only, full disk, not ours)
        if exc.errno not in UNWRITABLE:
            raise
        where = f" {exc.filename}" if exc.filename else ""
        print(f"error: cannot write{where}: {exc.strerror or exc}; the build folder {shown(build_dir())} must be "
              "writable with free space (BOOK_BUILD_DIR names another)", file=sys.stderr)  # fmt: skip
        return 2
    except Interrupted as exc:  # before any chapter started: nothing to stop
        print(f"INTERRUPTED ({exc}): nothing was executed", file=sys.stderr)
        return 128 + exc.signum
