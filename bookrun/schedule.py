"""The schedule: chapters run side by side in ``after`` order (:func:`schedule`), and what the terminal shows of them
meanwhile, their progress relayed from the kernels' logs and progress files (:class:`Console`, :class:`Relay`)."""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import re
import shutil
import sys
import threading
import time
from pathlib import Path

from .chapter import ChapterFailed, Interrupted, Job, progress_path
from .child import _ANSI
from .manifest import ManifestError

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


def schedule(
    jobs_for: dict[str, Job], run, jobs: int, console: Console | None = None, relay: Relay | None = None
) -> tuple[dict[str, float], list[str]]:
    """Run ``run(job)`` for every job of ``jobs_for`` respecting the ``after`` edges between them, ``jobs`` at a
    time, each watched by ``relay`` while it runs.

    A chapter's failure is reported (its error's last lines, then where the log is) and the others go on; an
    ``Interrupted`` raised here (a signal) propagates once the running chapters have been handed to the caller.
    """
    console = console or Console()
    after = {stem: [d for d in job.entry["after"] if d in jobs_for] for stem, job in jobs_for.items()}
    done: set[str] = set()
    pending = list(jobs_for)
    running: dict[cf.Future, str] = {}
    timings, failures = {}, []
    pool = cf.ThreadPoolExecutor(max_workers=jobs)
    try:
        while pending or running:
            ready = [s for s in pending if all(d in done for d in after[s])]
            blocked = [s for s in pending if any(d in failures for d in after[s])]
            for stem in blocked:
                pending.remove(stem)
                failures.append(stem)
                console.line(f"  skipped  {stem}: a chapter it runs after failed")
            for stem in ready:
                if len(running) >= jobs:
                    break
                pending.remove(stem)
                console.line(f"  started  {stem}")
                if relay is not None:
                    relay.add(jobs_for[stem])
                running[pool.submit(run, jobs_for[stem])] = stem
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
