"""Results that survive an interrupted sweep: a Parquet table of one row per finished job, and :func:`sweep`.

A :class:`ResultsTable` is a folder of Parquet files (``part-<time>-<pid>-<n>.parquet``, written through pyarrow).
Each row is keyed by ``key``: the hash of the job's full configuration (:func:`lib.core.cache.config_hash`) joined
to a fingerprint of the code that computes it, so a row computed by other code is not reused. Each
:meth:`ResultsTable.append` writes a new part through a temporary file and an atomic rename: a sweep killed at any
moment leaves whole rows or none, never a torn file. Two processes appending to one table do not overwrite each
other; a key written twice counts once (the last). :meth:`ResultsTable.compact` merges the parts into one.

The corruption policy is :mod:`lib.core.cache`'s: a part that cannot be read back is reported (a fault naming the
file and why), moved aside to ``<name>.corrupt-<time>-<pid>`` and its jobs are computed again; it is never deleted
silently and never used.

:func:`sweep` runs a job function over a list of configurations with :func:`lib.core.engine.run_jobs`. Only the
client (this process) writes, one row as each job finishes; a sweep interrupted by Ctrl-C, a lost client or a crash
resumes where it stopped (finished jobs are read, not computed again), and a worker killed mid-job has that job
retried by the scheduler.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from lib.core import arithmetic, engine, faults
from lib.core.cache import atomic_write_bytes, config_hash, fingerprint
from lib.core.paths import ensure_writable, remove_stale_temporaries

#: Columns the table adds to each job's row: its key, the code fingerprint and the configuration (JSON).
RESERVED = ("key", "code", "config")
_counter = itertools.count()


class CorruptTableError(RuntimeError):
    """A part of a results table exists but cannot be read back as one (truncated, foreign, without keys)."""


class ResultsTable:
    """The rows of finished jobs in the folder ``path`` (created at the first append), keyed by ``key``."""

    def __init__(self, path: str | os.PathLike):
        if not isinstance(path, (str, os.PathLike)) or not str(path):
            raise TypeError(f"path={path!r} must be a folder path (str or Path) for the table's Parquet files")
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"ResultsTable({str(self.path)!r})"

    @staticmethod
    def key(config: Mapping[str, Any], code: str) -> str:
        """The row key of ``config`` computed by ``code``: ``<hash of the configuration and the arithmetic>-<code>``
        (a row computed with another CPU's native rounding is never reused by a pinned build, nor the reverse)."""
        return f"{config_hash({'config': config, 'arithmetic': arithmetic.signature()})}-{code}"

    def parts(self) -> list[Path]:
        """The table's Parquet files, oldest first."""
        return sorted(self.path.glob("part-*.parquet")) if self.path.is_dir() else []

    def done(self, keys: Iterable[str]) -> set[str]:
        """The ones of ``keys`` that have a row."""
        present: set[str] = set()
        for part in self.parts():
            table = _load(part, columns=["key"])
            if table is not None:
                present.update(table.column("key").to_pylist())
        return present & set(keys)

    def append(self, rows: Sequence[Mapping[str, Any]]) -> Path | None:
        """Write ``rows`` (dicts with a str ``key``) as a new part, atomically; return it (None for no rows)."""
        rows = [dict(row) for row in rows]
        if not rows:
            return None
        bad = [row for row in rows if not isinstance(row.get("key"), str)]
        if bad:
            raise ValueError(f"rows must each have a str 'key'; got {bad[0]!r}")
        try:
            table = pa.Table.from_pylist(rows)
        except (pa.ArrowException, TypeError, ValueError) as exc:
            raise TypeError(f"rows {rows!r} cannot be stored in Parquet ({type(exc).__name__}: {exc})") from None
        return self._write(table)

    def read(self) -> list[dict[str, Any]]:
        """Every row, each key once (its last write), in the order written."""
        tables = [t for t in (_load(part) for part in self.parts()) if t is not None]
        latest: dict[str, dict[str, Any]] = {}
        for table in tables:
            for row in table.to_pylist():
                latest.pop(row["key"], None)
                latest[row["key"]] = {k: v for k, v in row.items() if k in table.schema.names}
        return list(latest.values())

    def compact(self) -> Path | None:
        """Merge the readable parts into one (atomically written before the old ones go); return it."""
        parts = self.parts()
        if len(parts) <= 1:
            return parts[0] if parts else None
        tables = [t for t in (_load(part) for part in parts) if t is not None]
        try:
            merged = pa.concat_tables(tables, promote_options="permissive")
        except (pa.ArrowException, TypeError) as exc:  # a column whose type changed between parts: keep the parts
            faults.report(
                f"results table is not compacted: its parts do not share a schema ({exc})",
                file=self.path,
                action="its parts are kept as they are",
            )
            return None
        keys = merged.column("key").to_pylist()
        last = {key: i for i, key in enumerate(keys)}
        merged_path = self._write(merged.take(sorted(last.values())))
        for part in parts:
            part.unlink(missing_ok=True)  # a part moved aside as corrupt is no longer listed here
        return merged_path

    def _write(self, table: pa.Table) -> Path:
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        path = self.path / f"part-{time.time_ns():020d}-{os.getpid()}-{next(_counter)}.parquet"
        atomic_write_bytes(path, sink.getvalue().to_pybytes())
        return path


def _load(part: Path, columns: list[str] | None = None) -> pa.Table | None:
    """The part's table; None when it is gone or corrupt (then reported and moved aside)."""
    try:
        try:
            table = pq.read_table(part, columns=columns)
        except (pa.ArrowException, OSError) as exc:
            if not part.exists():
                return None
            raise CorruptTableError(f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}") from None
        if "key" not in table.schema.names:
            raise CorruptTableError("it has no 'key' column")
        return table
    except CorruptTableError as exc:
        aside = part.with_name(f"{part.name}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
        try:
            os.replace(part, aside)
            where = f"moved aside to {aside.name}"
        except OSError as move_error:
            where = f"left in place (cannot move it: {move_error.strerror})"
        faults.report(f"results table part cannot be read ({exc})", file=part, action=f"{where}; its jobs ran again")
        return None


def code_of(fn: Callable[..., Any]) -> str:
    """The default code fingerprint of a job function: its qualified name, its module's source, the torch version."""
    module = sys.modules.get(getattr(fn, "__module__", None) or "")
    torch = sys.modules.get("torch")
    source = fingerprint([module]) if module is not None and getattr(module, "__file__", None) else "unknown"
    name = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"
    return config_hash({"function": name, "source": source, "torch": getattr(torch, "__version__", None)})


def sweep(
    fn: Callable[..., Mapping[str, Any]],
    configs: Sequence[Mapping[str, Any]],
    table: ResultsTable | str | os.PathLike,
    *,
    code: str | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
    desc: str = "jobs",
    progress: bool = True,
    label: Callable[[Mapping[str, Any], Any], str] | None = None,
) -> list[dict[str, Any]]:
    """``[fn(**config) for config in configs]`` with every row kept in ``table``: finished jobs are read, not rerun.

    ``configs``: JSON-serialisable dicts (the keyword arguments of ``fn``, seeds included); ``fn`` returns a dict of
    Parquet-storable values (numbers, strings, booleans, lists of them) whose names are not in :data:`RESERVED`.
    ``code`` fingerprints what computes a row (default :func:`code_of`: ``fn``'s module; give
    ``lib.core.cache.fingerprint`` of every module it depends on when they matter). Returns the rows as read back
    from the table, in the order of ``configs``, without the reserved columns. The engine is
    :func:`lib.core.engine.run_jobs`'s (``scheduler``, ``workers``); bad arguments raise before any job runs.
    """
    table = table if isinstance(table, ResultsTable) else ResultsTable(table)
    if not callable(fn):
        raise TypeError(f"fn={fn!r} must be a callable (a top-level function of an importable module)")
    if isinstance(configs, Mapping) or not isinstance(configs, Sequence):
        raise TypeError(f"configs must be a list of dicts (keyword arguments of fn); got a {type(configs).__name__}")
    texts = [_config_text(i, config) for i, config in enumerate(configs)]
    code = code_of(fn) if code is None else code
    if not isinstance(code, str) or not code.isalnum():
        raise ValueError(f"code={code!r} must be a fingerprint of letters and digits (lib.core.cache.fingerprint)")
    engine.choose(scheduler, workers)
    keys = [ResultsTable.key(config, code) for config in configs]
    ensure_writable(table.path, "results table")
    remove_stale_temporaries(table.path)
    finished = table.done(keys)
    todo = {key: (dict(config), text) for key, config, text in zip(keys, configs, texts, strict=True)}
    todo = {key: job for key, job in todo.items() if key not in finished}
    order = list(todo)

    def save(i: int, config: Mapping[str, Any], result: Any) -> None:
        table.append([_row(fn, order[i], code, todo[order[i]][1], result)])

    engine.run_jobs(
        fn, [todo[key][0] for key in order], scheduler=scheduler, workers=workers, desc=desc, progress=progress,
        label=label, on_result=save,
    )  # fmt: skip
    if todo:
        table.compact()
    rows = {row["key"]: row for row in table.read()}
    missing = [key for key in keys if key not in rows]
    if missing:
        raise RuntimeError(
            f"{table} lost the rows {missing[:3]} while the sweep ran (the faults listed at the end of the run say why)"
        )
    return [{k: v for k, v in rows[key].items() if k not in RESERVED} for key in keys]


def _config_text(i: int, config: Any) -> str:
    if not isinstance(config, Mapping) or not all(isinstance(k, str) for k in config):
        raise TypeError(f"configs[{i}]={config!r} must be a dict of keyword arguments (str keys)")
    try:
        return json.dumps(config, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"configs[{i}]={config!r} is not plain JSON ({exc}): a row key needs a faithful hash") from None


def _row(fn: Callable[..., Any], key: str, code: str, config: str, result: Any) -> dict[str, Any]:
    """The table row of one finished job, checked (the job ran; its result is what is wrong)."""
    name = getattr(fn, "__qualname__", repr(fn))
    if not isinstance(result, Mapping) or not all(isinstance(k, str) for k in result):
        raise TypeError(f"{name}(**{config}) returned {result!r}; a sweep's job must return a dict with str keys")
    clash = sorted(set(result) & set(RESERVED))
    if clash:
        raise ValueError(f"{name}(**{config}) returned the columns {clash}, reserved by the results table")
    return {"key": key, "code": code, "config": config, **result}
