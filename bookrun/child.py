"""The process that executes one chapter: papermill in it (its output is the chapter's log), the kernel shut down on
SIGTERM; ``python -m bookrun.child <spec.json>``, started by :mod:`bookrun.chapter`."""

from __future__ import annotations

import json
import re
import signal
import sys
from pathlib import Path

from lib.core import budget, settings

from .processes import die_with_parent, kill_marked

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def papermill_child(spec_path: str) -> int:
    """One chapter. Exit status 0 (success), 1 (the chapter raised: ``error.json`` has its type, message and the
    last frame of its traceback) or 130 (stopped). Whatever the way out, the processes this run started (kernel,
    workers) are ended before it returns."""
    import logging

    import papermill

    die_with_parent()
    spec = json.loads(Path(spec_path).read_text())
    own_kernel(Path(spec_path).parent)
    stopping: list[int] = []

    def stop(signum, frame):
        if not stopping:  # the first signal interrupts papermill; the others must not interrupt the clean-up
            stopping.append(signum)
            raise KeyboardInterrupt

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    error, code = None, 0
    limit = settings.cell_timeout()
    budget.cap_memory()  # the kernel and its workers inherit it: an allocation past the machine's memory raises there
    try:
        papermill.execute_notebook(
            spec["input"], spec["output"], parameters=spec["parameters"], kernel_name="python3", cwd=spec["cwd"],
            log_output=True, progress_bar=False, request_save_on_cell_execute=True, execution_timeout=limit,
        )  # fmt: skip
    except TimeoutError as exc:  # nbclient's CellTimeoutError: one cell ran past the limit
        import nbformat

        cells = [c for c in nbformat.read(spec["output"], 4).cells if c.cell_type == "code"]
        ran = [i for i, c in enumerate(cells, 1) if c.get("execution_count")]
        preview = str(exc).split("-------------------\n")[1].strip().splitlines() if "----" in str(exc) else []
        first = next((ln for ln in preview if ln.strip() and not ln.startswith("#")), "")
        where = f"code cell {ran[-1]} of {len(cells)}" if ran else "a code cell"
        starts = f" (it starts: {first[:80]})" if first else ""
        error = {"ename": "CellTimeout", "evalue": f"{where}{starts} ran past the limit of {limit:g} s per cell "
                 f"(python -m bookrun --cell-timeout SECONDS raises it); the run was stopped there"}  # fmt: skip
        code = 1
    except KeyboardInterrupt:
        print("stopped by a signal: the kernel and its workers are shut down", file=sys.stderr, flush=True)
        error, code = {"ename": "Interrupted", "evalue": "stopped by a signal"}, 130
    except papermill.PapermillExecutionError as exc:
        error = {"ename": exc.ename, "evalue": exc.evalue, "cell": exc.exec_count, "at": last_frame(exc.traceback)}
        code = 1
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


def own_kernel(folder: Path) -> None:
    """Make the kernel ``python3`` this interpreter (a kernel spec in ``folder``, first on ``$JUPYTER_PATH``), not the
    one a kernel spec installed elsewhere names: a checkout that is moved or copied runs its chapters with its own
    environment, never with the absolute path of another one's (or a missing) interpreter."""
    import os

    spec_dir = folder / "jupyter" / "kernels" / "python3"
    spec_dir.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-Xfrozen_modules=off", "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    kernel = {"argv": argv, "display_name": "Python 3", "language": "python", "metadata": {"debugger": True}}
    (spec_dir / "kernel.json").write_text(json.dumps(kernel, indent=1))
    os.environ["JUPYTER_PATH"] = os.pathsep.join(
        [str(folder / "jupyter"), *[p for p in os.environ.get("JUPYTER_PATH", "").split(os.pathsep) if p]]
    )


def last_frame(traceback: list[str]) -> str | None:
    """Where an IPython traceback ends: ``"<file>:<line> ...: <code>"`` of its last frame (None if none is found)."""
    frames = [_ANSI.sub("", t) for t in traceback or [] if "---->" in _ANSI.sub("", t)]
    if not frames:
        return None
    lines = frames[-1].strip().splitlines()
    code = next((ln.split("---->", 1)[1].strip() for ln in lines if "---->" in ln), "")
    code = re.sub(r"^\d+\s*", "", code)
    return f"{lines[0].strip()}: {code}" if code else lines[0].strip()


if __name__ == "__main__":
    sys.exit(papermill_child(sys.argv[1]))
