"""Task registry: every task module registers a generator with ``@register_task``.

A task generator is a callable ``generate(batch_size, *, seed, **task_params) -> Batch`` returning seeded,
batch-vectorised ``inputs_btx``, ``targets_bty`` (and optionally a ``mask_bty``). Each task carries metadata naming
its source, its input/output sizes and its default parameters; ``get_task`` gives a clear error for unknown names.

The modules of this package register themselves when it is imported (no list to edit). A reader's own task lives
outside ``lib``, in a module or a folder of modules of their own, e.g. ``book/tasks/``: ``load_task_modules(path)``
imports it, and the processes this one starts (``lib.core.engine``'s workers, a nested kernel) import it too.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import pkgutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

_REGISTRY: dict[str, TaskSpec] = {}


@dataclass(frozen=True)
class TaskSpec:
    """A registered task: its generator, sizes, defaults and provenance."""

    name: str
    generate: Callable[..., Any]
    n_inputs: int
    n_outputs: int
    defaults: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    many: Callable[..., Any] | None = None

    def batches(self, n_batches: int, batch_size: int, *, seed, **task_params):
        """``n_batches`` batches, each array with a leading (n_batches,) axis: the task's ``many`` generator where
        it has one (bit for bit the same batches, fewer calls), else ``n_batches`` calls of ``generate`` stacked."""
        if self.many is not None:
            return self.many(n_batches, batch_size, seed=seed, **task_params)
        rng = rng_for(seed)
        parts = [self.generate(batch_size, seed=rng, **task_params) for _ in range(n_batches)]
        return type(parts[0])(*(torch.stack(arrays) for arrays in zip(*parts, strict=True)))


def register_task(name: str, *, n_inputs: int, n_outputs: int, defaults=None, metadata=None, many=None):
    """Decorator: register ``generate`` under ``name`` (names are unique).

    ``many`` (optional): ``many(n_batches, batch_size, *, seed, **task_params)``, the batches of ``n_batches``
    successive ``generate`` calls on one Generator at once, each array with a leading (n_batches,) axis, bit for bit
    (training draws its batches through it, :meth:`TaskSpec.batches`).
    """

    def wrap(generate):
        if name in _REGISTRY:
            raise ValueError(f"task {name!r} is already registered")
        _REGISTRY[name] = TaskSpec(
            name, generate, n_inputs, n_outputs, dict(defaults or {}), dict(metadata or {}), many
        )
        return generate

    return wrap


def available_tasks() -> list[str]:
    """Names of all registered tasks, sorted."""
    return sorted(_REGISTRY)


def get_task(name: str) -> TaskSpec:
    """The registered task ``name``; ``ValueError`` listing the available names otherwise."""
    if name not in _REGISTRY:
        raise ValueError(f"task={name!r} is not registered; available tasks: {available_tasks()}")
    return _REGISTRY[name]


#: The reader's task modules loaded in this process (absolute paths, ``os.pathsep``-separated), inherited by the
#: processes it starts so that they register the same tasks.
MODULES_ENV = "BOOK_TASK_MODULES"
_loaded: dict[tuple[str, str], str] = {}  # (file name, sha256 of its bytes) -> module name


def _load_file(path: Path) -> list[str]:
    """Import the task module at ``path`` once per content (the same file copied elsewhere is the same module)."""
    key = (path.name, hashlib.sha256(path.read_bytes()).hexdigest())
    if key in _loaded:
        return []
    before = set(_REGISTRY)
    name = f"book_tasks_{key[1][:12]}.{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # the training cache fingerprints the task's module through sys.modules
    spec.loader.exec_module(module)
    _loaded[key] = name
    known = [p for p in os.environ.get(MODULES_ENV, "").split(os.pathsep) if p]
    os.environ[MODULES_ENV] = os.pathsep.join(dict.fromkeys([*known, str(path)]))
    return sorted(set(_REGISTRY) - before)


def registered(name: str) -> bool:
    """Whether a task called ``name`` is registered (in this process)."""
    return name in _REGISTRY


def load_task_modules(where: str | os.PathLike) -> list[str]:
    """Register the tasks of a reader's own modules: a ``.py`` file, a folder of them, or a dotted module name.

    Relative paths are relative to the working directory (a chapter's: its folder). Returns the task names it
    registered; ``FileNotFoundError`` names a path that does not exist.
    """
    path = Path(where)
    if path.suffix == ".py" or path.is_dir() or os.sep in str(where):
        if not path.exists():
            raise FileNotFoundError(f"task module {str(where)!r} does not exist (from {Path.cwd()})")
        files = sorted(p for p in path.glob("*.py") if not p.name.startswith("_")) if path.is_dir() else [path]
        return [name for file in files for name in _load_file(file.resolve())]
    before = set(_REGISTRY)
    try:
        importlib.import_module(str(where))
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            f"task module {str(where)!r} is neither a file or folder (from {Path.cwd()}) nor an importable module"
        ) from None
    return sorted(set(_REGISTRY) - before)


from ._common import Batch, as_batch, rng_for  # noqa: E402,F401 - what a task module builds its batches with

# Task modules register themselves on import: every module of this package, then the reader's (see MODULES_ENV).
for _module in pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")
for _path in [p for p in os.environ.get(MODULES_ENV, "").split(os.pathsep) if p]:
    if Path(_path).is_file():
        _load_file(Path(_path))
