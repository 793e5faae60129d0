"""The one way the book runs independent jobs (models to train, solutions to study, flows to integrate): Dask.

:func:`run_jobs` computes ``[fn(**job) for job in jobs]`` on a ``dask.distributed`` cluster and returns the results in
job order. Which cluster, decided before any work starts (:func:`choose`):

- ``scheduler`` (an argument, which chapters take as a papermill parameter) or else ``$BOOK_SCHEDULER``: the address
  of a running scheduler (``tcp://host:8786``). The jobs go to its workers, wherever they are; an address that cannot
  be reached within a few seconds is an error naming it. A cluster of a batch system works the same way: start
  ``dask_jobqueue.SLURMCluster(processes=cores, cores=cores, job_script_prologue=["export OMP_NUM_THREADS=1"])`` (or
  ``PBSCluster``) in a Python session, ``cluster.scale(jobs=…)``, and give its ``cluster.scheduler_address`` to the
  chapter (``-p scheduler tcp://…``). The book does not depend on dask-jobqueue. The workers must import this
  repository's ``lib`` (same environment, a shared file system) and should run one thread each (``--nthreads 1``).
- otherwise a ``LocalCluster`` started for the call: ``workers`` processes (default :func:`default_workers`, that is
  ``$BOOK_WORKERS`` or one per CPU), one thread each, started with ``spawn`` (a worker imports ``lib`` afresh and
  inherits none of this process's thread pools), no memory limit, ``OMP_NUM_THREADS=1`` in their environment. It is
  closed when the call returns, fails or is interrupted (Ctrl-C).
- the serial path: no scheduler and one worker (or a single job) runs the jobs here, one after the other, with no
  cluster at all. nbval re-executes the book this way (``BOOK_WORKERS=1``).

Every job computes on one torch thread (``torch.set_num_threads(1)`` around it, on the serial path too), so its
result is bit-identical whatever the engine and the number of workers. Seeds travel inside the jobs. Jobs must be
picklable (a top-level function of an importable module and plain arguments) and must not depend on which process
runs them. A worker that dies (killed, out of memory) has its jobs retried elsewhere by the scheduler (Dask's
``distributed.scheduler.allowed-failures``, 3 by default); a job that raises has its exception raised here and the
jobs not yet finished are cancelled.

The progress bar over jobs goes where ``lib.core.progress`` sends bars (the terminal under the executor, never the
executed page), and so do the address of a cluster and of its dashboard (served by ``bokeh``, a requirement) and the
workers' own log lines. Results that must survive an interrupted sweep go through :mod:`lib.core.results_table`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lib.core import params, settings
from lib.core import progress as book_progress

#: Environment variable naming the scheduler to use when no ``scheduler`` argument is given.
SCHEDULER_ENV = settings.SCHEDULER
#: Seconds to wait for a scheduler to answer before calling its address unreachable.
CONNECT_TIMEOUT = 5.0
#: The environment of a LocalCluster's workers: one thread for every numerical library.
WORKER_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def available_cpus() -> int:
    """The CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def default_workers() -> int:
    """Processes used when none are given: ``$BOOK_WORKERS`` if set, else :func:`available_cpus`."""
    value = settings.workers()
    return available_cpus() if value is None else value


@dataclass(frozen=True)
class Engine:
    """Where jobs run: a scheduler's address, or ``None`` for a LocalCluster of ``workers`` (serial if one)."""

    scheduler: str | None
    workers: int

    @property
    def serial(self) -> bool:
        """True when the jobs run in this process, one after the other (no scheduler, one worker)."""
        return self.scheduler is None and self.workers == 1

    def runs_here(self, jobs: int) -> bool:
        """True when ``jobs`` jobs would run in this process: the serial path, or a single job and no scheduler."""
        return self.scheduler is None and min(self.workers, jobs) <= 1


def choose(scheduler: str | None = None, workers: int | None = None) -> Engine:
    """The validated engine: ``scheduler`` (else ``$BOOK_SCHEDULER``) and ``workers`` (else :func:`default_workers`).

    Raises before any work: ``workers`` not a positive integer, ``BOOK_WORKERS`` not one, a scheduler address that is
    not a non-empty string. With a scheduler, its cluster decides how many workers run; ``workers`` is only checked.
    """
    workers = default_workers() if workers is None else params.integer("workers", workers, min=1)
    name = "scheduler"
    if scheduler is None:
        scheduler, name = settings.scheduler(), f"${SCHEDULER_ENV}"
    if scheduler is not None and (not isinstance(scheduler, str) or not scheduler.strip() or " " in scheduler.strip()):
        raise ValueError(
            f"{name}={scheduler!r} is not allowed; give a Dask scheduler address such as 'tcp://host:8786', "
            "or None for a local cluster"
        )
    return Engine(scheduler.strip() if scheduler else None, workers)


def connect(scheduler: str | None = None, workers: int | None = None, *, timeout: float | None = None):
    """A ``distributed.Client``: to ``scheduler`` (or ``$BOOK_SCHEDULER``), else to a new LocalCluster of ``workers``.

    An unreachable address raises ``ConnectionError`` naming it after ``timeout`` seconds (default
    :data:`CONNECT_TIMEOUT`). The caller closes the client (and ``client.cluster``, the LocalCluster it owns, when
    there is one). The cluster's address and dashboard are announced where progress bars go.
    """
    engine = choose(scheduler, workers)
    timeout = params.real("timeout", CONNECT_TIMEOUT if timeout is None else timeout, min=0.0, min_open=True)
    from distributed import Client

    if engine.scheduler is not None:
        handshake(engine.scheduler, "scheduler", timeout=timeout)
        try:
            client = Client(engine.scheduler, timeout=timeout, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:  # refused, timed out, malformed address
            raise ConnectionError(
                f"scheduler={engine.scheduler!r} cannot be reached within {timeout:g} s ({type(exc).__name__}: "
                f"{exc}); start a Dask scheduler there (dask scheduler, dask-jobqueue) or leave it unset for a "
                "local cluster"
            ) from None
        _announce(client, f"Dask scheduler {engine.scheduler}")
        return client
    from distributed import LocalCluster

    with book_progress.child_stderr():  # the workers' log lines go where the bars go, never into the page
        cluster = LocalCluster(
            n_workers=engine.workers,
            threads_per_worker=1,
            processes=True,
            memory_limit=0,
            silence_logs=logging.ERROR,
            dashboard_address=":0",  # a free port: never the one of another cluster
            env=dict(WORKER_ENV),
        )
    client = Client(cluster, set_as_default=False)
    _announce(client, f"Dask LocalCluster of {engine.workers} workers at {cluster.scheduler_address}")
    return client


def handshake(address: str, name: str = f"${SCHEDULER_ENV}", *, timeout: float = CONNECT_TIMEOUT) -> str:
    """``address`` once a Dask scheduler has answered there, else ``ConnectionError`` naming ``name`` and what
    answered, within about ``timeout`` seconds and without a Dask client (whose failures print tracebacks).

    A Dask scheduler speaks first on a TCP connection: its comm handshake (a msgpack map naming ``compression``,
    ``python`` and ``pickle-protocol``). A server that waits instead is asked ``GET /``; an HTTP answer is most often
    the scheduler's dashboard, given in its place. ``tls://`` and other transports are left to the Dask client."""
    import socket

    scheme, _, rest = address.rpartition("://")
    if scheme not in ("", "tcp"):
        return address
    host, _, port = rest.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConnectionError(f"{name}={address!r} is not a scheduler address; give tcp://host:port (a Dask "
                              "scheduler listens on 8786 unless told otherwise)")  # fmt: skip
    fix = "start a Dask scheduler there (dask scheduler, dask-jobqueue) or leave it unset for a local cluster"
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout) as sock:
            sock.settimeout(min(2.0, timeout))
            try:
                first = sock.recv(256)
            except TimeoutError:  # it waits for us to speak: not Dask; is it a web server?
                sock.sendall(b"GET / HTTP/1.0\r\n\r\n")
                sock.settimeout(min(2.0, timeout))
                try:
                    first = sock.recv(256) or b"(closed)"
                except TimeoutError:
                    first = b""
    except OSError as exc:  # refused, unreachable, unknown host, connect timeout
        raise ConnectionError(f"{name}={address!r} cannot be reached within {timeout:g} s ({type(exc).__name__}: "
                              f"{exc}); {fix}") from None  # fmt: skip
    if first.startswith(b"HTTP/"):
        raise ConnectionError(f"{name}={address!r} answers HTTP: this is not a Dask scheduler (its dashboard is "
                              "on another port than the scheduler, which listens on 8786 unless told "
                              "otherwise)")  # fmt: skip
    if b"compression" not in first or b"python" not in first:
        said = "nothing" if not first else f"{first[:24]!r}"
        raise ConnectionError(f"{name}={address!r} is not a Dask scheduler: it answered {said} where a scheduler "
                              f"opens with its handshake; {fix}")  # fmt: skip
    return address


def _has_dashboard() -> bool:
    try:
        import bokeh  # noqa: F401
    except ImportError:
        return False
    return True


def _announce(client, what: str) -> None:
    link = client.dashboard_link if _has_dashboard() else "none (install bokeh for one)"
    book_progress.note(f"{what}; dashboard: {link}")


class JobResults(list):
    """The results of :func:`run_jobs` in job order, with ``workers``: how many processes could run them."""

    def __init__(self, results: list[Any], *, workers: int):
        super().__init__(results)
        self.workers = workers


def run_jobs(
    fn: Callable[..., Any],
    jobs: Sequence[Mapping[str, Any]],
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    desc: str = "jobs",
    progress: bool = True,
    label: Callable[[Mapping[str, Any], Any], str] | None = None,
    on_result: Callable[[int, Mapping[str, Any], Any], None] | None = None,
) -> JobResults:
    """``[fn(**job) for job in jobs]`` on the engine :func:`choose` picks; results in job order.

    The bar counts finished jobs and ``label(job, result)`` names the last one. ``on_result(i, job, result)`` runs
    here (never on a worker) as each job finishes, in the order they finish: the place to save what must survive an
    interruption. A job's exception is raised here; the jobs not yet finished are cancelled.
    """
    if not callable(fn):
        raise TypeError(f"fn={fn!r} must be a callable (a top-level function of an importable module)")
    if isinstance(jobs, Mapping) or not isinstance(jobs, Sequence):
        raise TypeError(f"jobs must be a list of dicts of keyword arguments for fn; got a {type(jobs).__name__}")
    bad = [i for i, job in enumerate(jobs) if not isinstance(job, Mapping) or not all(isinstance(k, str) for k in job)]
    if bad:
        raise TypeError(f"jobs[{bad[0]}]={jobs[bad[0]]!r} must be a dict of keyword arguments for fn (str keys)")
    engine = choose(scheduler, workers)
    jobs = list(jobs)
    if not jobs:
        return JobResults([], workers=0)
    here = engine.runs_here(len(jobs))
    n = 1 if here else min(engine.workers, len(jobs))
    where = "here" if here else engine.scheduler or f"{n} processes"
    results: list[Any] = [None] * len(jobs)
    with contextlib.closing(book_progress.bar(total=len(jobs), desc=f"{desc} ({where})", disable=not progress)) as bar:

        def finished(i: int, result: Any) -> None:
            results[i] = result
            if on_result is not None:
                on_result(i, jobs[i], result)
            if label is not None:
                bar.set_postfix_str(label(jobs[i], result), refresh=False)
            bar.update(1)

        if here:
            for i, job in enumerate(jobs):
                finished(i, one_thread(fn, job))
            return JobResults(results, workers=1)
        with _client(engine, n) as client:
            if engine.scheduler is not None:
                n = len(client.nthreads())
            with contextlib.closing(_on_cluster(client, fn, jobs)) as done:
                for i, result in done:
                    finished(i, result)
    return JobResults(results, workers=n)


@contextlib.contextmanager
def _client(engine: Engine, workers: int) -> Iterator[Any]:
    """A client for ``engine`` (a LocalCluster of ``workers`` when it names no scheduler), closed afterwards."""
    client = connect(engine.scheduler, workers)
    try:
        yield client
    finally:
        cluster = client.cluster if engine.scheduler is None else None
        client.close()
        if cluster is not None:
            cluster.close()


def _on_cluster(client, fn: Callable[..., Any], jobs: list[Mapping[str, Any]]) -> Iterator[tuple[int, Any]]:
    """``(index, result)`` of each job as it finishes on ``client``'s cluster; unfinished jobs cancelled on exit."""
    import dask
    from distributed import as_completed

    with dask.config.set({"distributed.admin.large-graph-warning-threshold": "1TiB"}):  # jobs carry their data
        futures = [
            client.submit(one_thread, fn, dict(job), pure=False, priority=len(jobs) - i)  # in job order
            for i, job in enumerate(jobs)
        ]
    index = {future.key: i for i, future in enumerate(futures)}
    try:
        for future in as_completed(futures, loop=client.loop):
            result = future.result()  # a job's exception is raised here
            yield index[future.key], result
            future.release()
    finally:
        client.cancel([f for f in futures if not f.done()])


def one_thread(fn: Callable[..., Any], job: Mapping[str, Any]) -> Any:
    """``fn(**job)`` on one torch thread (the thread count restored afterwards): the same numbers in any process."""
    torch = sys.modules.get("torch")
    saved = torch.get_num_threads() if torch is not None else 1
    if saved != 1:
        torch.set_num_threads(1)
    try:
        return fn(**job)
    finally:
        if saved != 1:
            torch.set_num_threads(saved)
