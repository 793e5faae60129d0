"""Run a command with the book's arithmetic: ``python -m bookrun.arithmetic [--] COMMAND [ARG ...]``.

The pins (``lib.core.arithmetic.PINS``) must be in a process's environment before numpy, scipy and torch load, so they
are set here and the command replaces this process. The Makefile runs pytest and nbval this way; a reader starts
Jupyter this way to compute a chapter with the book's bits (``python -m bookrun.arithmetic jupyter lab``). Without a
command it prints what this machine runs under the pins (``lib.core.arithmetic.provenance``) and exits 0, or 3 when
the arithmetic is not the book's (each departure on its own line on stderr).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from lib.core import arithmetic


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--":
        argv = argv[1:]
    try:
        env = arithmetic.pinned_environment(dict(os.environ))
    except ValueError as exc:
        print(f"bookrun.arithmetic: {exc}", file=sys.stderr)
        return 2
    if not argv:  # report, from a fresh process that loads the libraries under the pins
        code = "import json; from lib.core import arithmetic as a; print(json.dumps(a.provenance()))"
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        if done.returncode:
            print(done.stderr, file=sys.stderr)
            return done.returncode
        record = json.loads(done.stdout)
        print(json.dumps(record, indent=1))
        for line in record["departures"]:
            print(f"not pinned: {line}", file=sys.stderr)
        return 0 if record["pinned"] else 3
    program = shutil.which(argv[0], path=env.get("PATH"))
    if program is None:
        print(f"bookrun.arithmetic: command {argv[0]!r} not found on PATH", file=sys.stderr)
        return 127
    os.execve(program, argv, env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
