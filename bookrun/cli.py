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
import signal
import sys
from pathlib import Path

from lib.core import budget, settings
from lib.core.paths import REPO_ROOT, build_dir, display_path

from . import faults
from .chapter import Interrupted, Job
from .checks import check_environment, check_values, validation_cells
from .fingerprints import scratch_stale, stale_chapters
from .manifest import RENAMED, ManifestError, coerce, load_manifest, parameter_lines, select, toc_files, toc_pages
from .processes import NAME_RULE, Lock, cache_dir, clean_stale, kernel_env, lock_path, run_name
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
        print(f"{stem}  ({display_path(entry['source'])})")
        for line in parameter_lines(entry):
            print(f"    {line}")
    for pattern in manifest.patterns:
        example = pattern.stem.replace("{" + pattern.name + "}", f"<{pattern.name}>")
        print(f"{pattern.stem}  ({display_path(pattern.source)}; any {pattern.name}: --only {example})")
    print("renamed (the former name still works): " + ", ".join(f"{old} -> {new}" for old, new in RENAMED.items()))
    return 0


def _check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse what the command line alone shows to be wrong (parser.error: exit status 2, with the usage)."""
    if args.out is not None:  # it wrote the book's results beside DIR: gone, not contained
        parser.error(f"--out={args.out!r} is gone: a run writes inside its build folder only; BOOK_BUILD_DIR=DIR "
                     "puts the whole build (executed tree, results, logs, scratch runs) in DIR")  # fmt: skip
    if args.cell_timeout is not None and not 0 < args.cell_timeout < float("inf"):
        parser.error(f"--cell-timeout={args.cell_timeout:g} must be a positive number of seconds")
    if args.list:  # lists the chapters, runs nothing: the other arguments do not matter
        return
    if args.jobs < 1:
        parser.error(f"--jobs={args.jobs} must be at least 1")
    given = [name for name, _ in args.parameter]
    twice = sorted({name for name in given if given.count(name) > 1})
    if twice:
        values = "; ".join(f"-p {n} " + ", ".join(repr(v) for k, v in args.parameter if k == n) for n in twice)
        parser.error(f"a parameter given more than once ({values}): give each once, the value you mean")
    if (args.parameter or args.name) and not args.only:
        parser.error("-p and --name need --only: a scratch run executes named chapters")
    if args.name is not None:
        if not NAME_RULE.fullmatch(args.name):
            parser.error(f"--name={args.name!r} must be 1-120 letters, digits and . _ + = , - (starting alphanumeric)")
        if args.name.endswith(".failed") or ".partial-" in args.name:  # the executor's own: run X's failure, staging
            parser.error(f"--name={args.name!r} is a name the executor gives its own files (a failed run's "
                         "'<name>.failed', a run's '.<name>.partial-<pid>' staging); choose another")  # fmt: skip
        if args.only and len(dict.fromkeys(args.only)) > 1:
            parser.error(f"--name={args.name!r} names one run; give one chapter with --only (got {args.only})")


def main(argv: list[str] | None = None) -> int:
    """One run, top to bottom: the command line, the chapters and their parameters (``manifest``), where the run
    goes and its locks (``processes``), notebooks that cannot be read set aside (``faults``), what is stale
    (``fingerprints``), the environment and every value checked (``checks``), the chapters executed (``run``)."""
    parser = _parser()
    args = parser.parse_args(argv)
    _check_arguments(parser, args)
    # both travel to the check and to every kernel in their environment (lib.core.settings)
    if args.allow_long:
        os.environ[settings.ALLOW_LONG] = "1"
    if args.cell_timeout is not None:
        os.environ[settings.CELL_TIMEOUT] = repr(args.cell_timeout)
    if not Path.cwd().resolve().is_relative_to(REPO_ROOT):  # an editable install runs its own checkout's book
        print(f"running the book of the checkout {REPO_ROOT} (started from {Path.cwd()})", flush=True)

    # the chapters, with the reader's parameters applied and checked against what each chapter declares
    book = load_manifest(args.book_dir)
    if args.list:
        return _list(book)
    overrides = {name: coerce(value, name) for name, value in args.parameter}
    chapters, own_overrides = select(book, args.only, overrides)
    selected = list(chapters)
    scratch = bool(overrides) or args.name is not None or any(s not in book for s in selected)
    toc = toc_files(args.toc) if args.toc.is_file() and not scratch else []  # the book's order of pages
    pages = [] if scratch else toc_pages(toc, book)

    # where the run goes: the book's tree, or one folder per scratch run; each taken under a lock
    build = build_dir()
    out_root = (build / ("scratch" if scratch else "executed")).resolve()
    book_tree = (build / "executed" if scratch else out_root) / args.book_dir.name
    out_dir = out_root if scratch else book_tree
    env = kernel_env()
    cache = cache_dir(env)
    jobs_for: dict[str, Job] = {}
    for stem, entry in chapters.items():
        if scratch:
            name = args.name or run_name(stem, own_overrides[stem])
            run_dir, staging = out_dir / name, out_dir / f".{name}.partial-{os.getpid()}"
            failed = out_dir / f"{name}.failed"
            jobs_for[stem] = Job(stem, entry, 1, staging / "run.log", run_dir / "notebook.ipynb", failed,
                                 run_dir=run_dir, staging=staging, overrides=own_overrides[stem])  # fmt: skip
        else:
            jobs_for[stem] = Job(stem, entry, 1, build / "logs" / f"{stem}.log", out_dir / f"{stem}.ipynb",
                                 build / "logs" / f"{stem}.failed.ipynb")  # fmt: skip
    if scratch:
        targets = {job.run_dir: f"scratch run {display_path(job.run_dir)}" for job in jobs_for.values()}
    else:
        targets = {out_dir: f"the book tree {display_path(out_dir)}"}
    locks: dict[Path, Lock] = {}
    try:
        for target, what in targets.items():
            locks[target] = Lock(lock_path(build, target), what)
        # what killed runs of this build folder left: their processes, temporary folders, half-written cache files
        for line in clean_stale(build, cache, out_root if scratch else None):
            print(f"  cleaned: {line}", flush=True)
        # a notebook that cannot be read would stop any run that reads the book's tree: set aside, said at the end
        set_aside = faults.set_aside_unreadable(build / "executed" / args.book_dir.name, list(book), build / "logs")

        # what must execute: a stale record, a chapter it runs after executed again, or --force
        notebooks = {stem: book_tree / f"{stem}.ipynb" for stem in {**book, **chapters}}
        notebooks.update({stem: job.notebook for stem, job in jobs_for.items()})
        stale = stale_chapters({**book, **chapters}, selected, notebooks.__getitem__, args.force)
        if scratch:
            jobs_for = {s: job for s, job in jobs_for.items() if scratch_stale(job.notebook, job.run_dir, stale.get(s))}
            for target in [t for t in locks if t not in {job.run_dir for job in jobs_for.values()}]:
                locks.pop(target).release()  # a run that will not execute is not held
        else:
            jobs_for = {s: job for s, job in jobs_for.items() if s in stale}

        # the environment, then every value of every chapter to run, before anything starts: each chapter's own
        # validation cells (its parameters cell, the values given, the cell that checks them) in one plain process
        check_environment(env, cache)
        cells = {s: validation_cells(chapters[s]["source"], chapters[s]["parameters"]) for s in jobs_for}
        refused = check_values(cells, env, args.book_dir)
        if refused:
            raise ManifestError(
                "\n".join(f"chapter {s!r} refuses its parameters: {msg}" for s, msg in refused.items())
                + "\nnothing was executed"
            )

        run = Run(manifest=book, selected=selected, jobs_for=jobs_for, reasons=stale, scratch=scratch, build=build,
                  out_root=out_root, out_dir=out_dir, book_tree=book_tree, jobs=args.jobs, faults=set_aside,
                  pages=pages, toc=toc, env=env)  # fmt: skip
        return execute(run)
    finally:
        for lock in locks.values():
            lock.release()


def entry_point(argv: list[str] | None = None) -> int:
    """``main`` with the signals handled and errors printed: the exit status of ``python -m bookrun``."""

    def stop(signum, frame):
        raise Interrupted(signum)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, stop)
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
        print(f"error: cannot write{where}: {exc.strerror or exc}; the build folder {display_path(build_dir())} "
              "must be writable with free space (BOOK_BUILD_DIR names another)", file=sys.stderr)  # fmt: skip
        return 2
    except Interrupted as exc:  # before any chapter started: nothing to stop
        print(f"INTERRUPTED ({exc}): nothing was executed", file=sys.stderr)
        return 128 + exc.signum
