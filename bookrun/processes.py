"""The executor's housekeeping: where things go, run names, locks, and the processes a run starts.

Every process a run starts carries ``BOOK_EXECUTOR_RUN=<build tag>:<executor pid>:<chapter>:<random>`` in its
environment, so the executor can end a chapter's papermill, kernel and workers together, and a later run can find and
end those of a killed run (Linux ``/proc``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import time
from pathlib import Path

from lib.core import arithmetic, paths
from lib.core.paths import REPO_ROOT, build_dir, display_path

from .manifest import ManifestError

MARKER_VAR = "BOOK_EXECUTOR_RUN"  # in the environment of every process a run starts: papermill, kernel, workers


def cache_dir(env: dict[str, str]) -> Path:
    """The model cache the kernels will use (``lib.core.paths.cache_dir`` under the kernels' environment ``env``)."""
    return Path(env.get("BOOK_CACHE_DIR", Path(env.get("BOOK_BUILD_DIR", build_dir())) / "cache")).resolve()


def kernel_env(workers: int = 1) -> dict[str, str]:
    """Environment of every kernel: one thread per chapter so results are reproducible and chapters run in parallel,
    and ``workers`` processes for a chapter's independent jobs (``lib.core.engine``; ``$BOOK_WORKERS`` overrides, and
    ``$BOOK_SCHEDULER`` sends them to a Dask cluster instead); the book's arithmetic pins (``lib.core.arithmetic``),
    which its Dask workers inherit."""
    env = arithmetic.pinned_environment(dict(os.environ))
    env.setdefault("BOOK_WORKERS", str(workers))
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("MKL_NUM_THREADS", "1")
    env.setdefault("PYTHONHASHSEED", "0")
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    env["BOOK_BUILD_DIR"] = str(build_dir())
    # the kernels compute with this checkout's lib (not another one an editable install points at), so the imports
    # they record (bookrun.fingerprints) are this checkout's files
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]]
    )
    return env


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


def replace_folder(new: Path, target: Path) -> None:
    """Put folder ``new`` at ``target`` (two renames; the old ``target`` is removed only once ``new`` is in place)."""
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    if target.exists():
        os.replace(target, old)
    os.replace(new, target)
    shutil.rmtree(old, ignore_errors=True)


class Lock:
    """An exclusive ``flock`` on ``path`` (released by the kernel if this process dies); ManifestError if held, or if
    the lock file cannot be made (a read-only or full build folder). :meth:`release` removes the file: the lock is
    taken only on a file still at ``path`` (one removed meanwhile by its holder is let go and made again)."""

    def __init__(self, path: Path, what: str):
        import fcntl

        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            while True:
                self.fh = open(path, "a+")  # noqa: SIM115 - held until release()
                try:
                    fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    self.fh.seek(0)
                    holder = self.fh.read().strip() or "?"
                    self.fh.close()
                    busy = f"{what} is being executed by another process (pid {holder}); wait for it"
                    raise ManifestError(busy) from None
                if _same_file(self.fh, path):
                    break
                self.fh.close()  # its holder removed it on release: lock the one at path now
            self.fh.seek(0)
            self.fh.truncate()
            self.fh.write(str(os.getpid()))
            self.fh.flush()
        except OSError as exc:
            raise ManifestError(
                f"cannot make the lock file {display_path(path)} ({exc.strerror or exc}): the build folder must be "
                "writable with free space (BOOK_BUILD_DIR names another)"
            ) from None

    def release(self) -> None:
        """Remove the lock file, then let the lock go (a waiting process then finds the file gone and makes one)."""
        if self.fh.closed:
            return
        if _same_file(self.fh, self.path):
            with contextlib.suppress(OSError):
                self.path.unlink()
        self.fh.close()


def _remove_if_free(path: Path) -> bool:
    """Remove the lock file ``path`` if no process holds it (one left by an executor of before locks were removed)."""
    try:
        Lock(path, "").release()
    except ManifestError:
        return False
    return not path.exists()


def _same_file(fh, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(fh.fileno()), os.stat(path))
    except OSError:
        return False


#: The IPython start-up files of the executor's recorders (imports, cache events, faults), copied into each run.
STARTUP = Path(__file__).with_name("startup")


def kernel_startup(tmp: Path) -> dict[str, str]:
    """Put the start-up files of :data:`STARTUP` (each kernel's recorders: its imports, its cache events, its
    warnings) in the IPython start-up folder of a run's kernels, under ``tmp/ipython``; the ``IPYTHONDIR`` that makes
    them read it."""
    startup = tmp / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True, exist_ok=True)
    for source in sorted(STARTUP.glob("*.py")):
        shutil.copyfile(source, startup / source.name)
    return {"IPYTHONDIR": str(tmp / "ipython")}


def lock_path(build: Path, target: Path) -> Path:
    digest = hashlib.sha256(str(target.resolve()).encode()).hexdigest()[:12]
    return build / ".locks" / f"{target.name}-{digest}.lock"


# --------------------------------------------------------------------------------------------- processes


def alive(pid: int) -> bool:
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


def kill_group(proc: subprocess.Popen, sig: int) -> None:
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, sig)


def die_with_parent() -> None:
    """Linux: SIGTERM this process when the executor dies, even by SIGKILL (then it shuts its kernel down)."""
    parent = int(os.environ.get("BOOK_EXECUTOR_PID", "0"))
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if parent and os.getppid() != parent:  # the executor died before the line above
        os.kill(os.getpid(), signal.SIGTERM)


def build_tag(build: Path) -> str:
    return hashlib.sha256(str(build).encode()).hexdigest()[:8]


def clean_stale(build: Path, cache: Path, scratch_root: Path | None) -> list[str]:
    """Remove what killed runs of this build folder left: their processes, temporary folders (kernel files included),
    half-written cache files and scratch staging folders. Runs still alive are left alone. Returns what was done."""
    done = []
    for pid, marker in marked_processes(f"{build_tag(build)}:").items():
        owner = int(marker.split(":")[1])
        if not alive(owner):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                done.append(f"killed orphaned process {pid} of a killed run")
    pattern = re.compile(r".+-(\d+)-[0-9a-f]{8}$")
    for folder in (build / ".tmp").glob("*"):
        match = pattern.match(folder.name)
        if match and not alive(int(match[1])):
            shutil.rmtree(folder, ignore_errors=True)
            done.append(f"removed {display_path(folder)}")
    done += [f"removed {display_path(p)}" for p in paths.remove_stale_temporaries(cache)]
    removed = sum(_remove_if_free(lock) for lock in (build / ".locks").glob("*.lock"))
    if removed:
        done.append(f"removed {removed} lock file(s) of finished runs from {display_path(build / '.locks')}")
    if scratch_root is not None and scratch_root.is_dir():
        stale = re.compile(r"^\..+\.(?:partial|old)-(\d+)$")
        for folder in scratch_root.iterdir():
            match = stale.match(folder.name)
            if match and not alive(int(match[1])):
                shutil.rmtree(folder, ignore_errors=True)
                done.append(f"removed {display_path(folder)}")
    return done
