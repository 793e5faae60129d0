"""The walk of one run: the modules ("rooms") of the executor that one ``python -m bookrun`` passes through, in order.

Runs ``python -m bookrun --only CHAPTER --force`` in this process (``runpy``, the checkout of the current working
directory first on ``sys.path``) under ``sys.setprofile`` and ``threading.setprofile``, and records every call of a
function whose code lies in one of ``--packages`` (default: ``bookrun``, and ``bookrelease`` where it exists), in time
order across the threads (one sequence, under a lock). Code run when a module is imported (``<module>``, and class
bodies), lambdas and comprehensions (``<lambda>``, ``<listcomp>``, ``<genexpr>``, ``<dictcomp>``, ``<setcomp>``) are
left out. Each call is mapped to its module and consecutive repeats are collapsed. Printed: the *stops* (the length of
that sequence), the *rooms* (the distinct modules), the *returns* (stops − rooms: how often the run comes back to a
room it left) and the sequence; each thread's own walk too. The processes the run starts (the parameter check,
papermill and its kernel, the provenance) are not followed; the relay's polls of a running chapter (every half second,
in the main thread) fall between the chapter thread's calls as time has them, so two runs may differ by a few stops.

    BOOK_BUILD_DIR=/tmp/build .venv/bin/python scripts/walk.py [--chapter schur_coordinates] [--json walk.json]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import runpy
import sys
import threading
from pathlib import Path

SKIPPED = {"<module>", "<lambda>", "<listcomp>", "<genexpr>", "<dictcomp>", "<setcomp>"}
CO_OPTIMIZED = 0x0001  # set on a function's code; not on a module's nor on a class body's (run when defined)
DEFAULT_PACKAGES = ("bookrun", "bookrelease")


def package_folders(names: list[str], checkout: Path) -> dict[str, Path]:
    """``{package: folder}`` for the packages of ``names`` that ``checkout`` holds (the others are said, left out: an
    editable install may point at another checkout's)."""
    folders = {}
    for name in names:
        spec = importlib.util.find_spec(name)
        folder = Path(next(iter(spec.submodule_search_locations))).resolve() if spec and spec.origin else None
        if folder is None or not folder.is_relative_to(checkout):
            print(f"walk: no package {name!r} in {checkout}{f' (found {folder})' if folder else ''}; left out")
            continue
        folders[name] = folder
    return folders


class Walk:
    """The modules of ``folders`` whose functions are called, in the order of the calls (all threads)."""

    def __init__(self, folders: dict[str, Path]):
        self.folders = folders
        self.lock = threading.Lock()
        self.modules: list[str] = []
        self.entries: list[str] = []  # the function each stop starts with
        self.threads: dict[str, list[str]] = {}  # each thread's own walk (consecutive repeats collapsed)
        self.calls = 0
        self._module_of: dict[object, str | None] = {}  # code object -> its module, or None if not followed

    def module(self, code) -> str | None:
        if code in self._module_of:
            return self._module_of[code]
        module = None
        if code.co_name not in SKIPPED and code.co_flags & CO_OPTIMIZED:
            path = Path(os.path.realpath(code.co_filename))
            for name, folder in self.folders.items():
                if path.suffix == ".py" and path.is_relative_to(folder):
                    parts = [name, *path.relative_to(folder).with_suffix("").parts]
                    module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
                    break
        self._module_of[code] = module
        return module

    def profile(self, frame, event, arg):
        if event != "call":
            return
        module = self.module(frame.f_code)
        if module is None:
            return
        thread = threading.current_thread().name
        with self.lock:
            self.calls += 1
            if not self.modules or self.modules[-1] != module:
                self.modules.append(module)
                self.entries.append(f"{module}.{frame.f_code.co_qualname} ({thread})")
            own = self.threads.setdefault(thread, [])
            if not own or own[-1] != module:
                own.append(module)

    def run(self, argv: list[str]) -> int:
        """``python -m bookrun ARGV`` here, followed; its exit status."""
        sys.argv = ["bookrun", *argv]
        threading.setprofile(self.profile)
        sys.setprofile(self.profile)
        try:
            runpy.run_module("bookrun", run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finally:
            sys.setprofile(None)
            threading.setprofile(None)
        return code

    @staticmethod
    def figures(sequence: list[str]) -> dict:
        rooms = list(dict.fromkeys(sequence))
        return {"stops": len(sequence), "rooms": len(rooms), "returns": len(sequence) - len(rooms), "room_names": rooms}

    def summary(self) -> dict:
        threads = {name: {**self.figures(seq), "sequence": seq} for name, seq in self.threads.items()}
        return {**self.figures(self.modules), "calls": self.calls, "sequence": self.modules, "entries": self.entries,
                "threads": threads}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chapter", default="schur_coordinates", help="the chapter run (default schur_coordinates)")
    parser.add_argument("--packages", nargs="+", default=list(DEFAULT_PACKAGES), help="the packages followed")
    parser.add_argument("--json", type=Path, help="also write the figures and the sequence here")
    args = parser.parse_args(argv)
    cwd = os.getcwd()
    sys.path[:] = [cwd, *(p for p in sys.path if p and os.path.realpath(p) != os.path.realpath(cwd))]
    folders = package_folders(args.packages, Path(cwd).resolve())
    if not folders:
        parser.error(f"none of the packages {args.packages} is importable from {cwd}")
    walk = Walk(folders)
    code = walk.run(["--only", args.chapter, "--force"])
    result = {"chapter": args.chapter, "checkout": cwd, "packages": {k: str(v) for k, v in folders.items()},
              "exit_status": code, **walk.summary()}  # fmt: skip
    print(f"\nwalk of `python -m bookrun --only {args.chapter} --force` (exit status {code}; packages "
          f"{', '.join(folders)} in {cwd}):")  # fmt: skip
    print(f"stops {result['stops']}, rooms {result['rooms']}, returns {result['returns']} ({result['calls']} calls)")
    print(" → ".join(result["sequence"]))
    for name, own in result["threads"].items():
        print(f"  {name} alone: stops {own['stops']}, rooms {own['rooms']}, returns {own['returns']}")
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0 if code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
