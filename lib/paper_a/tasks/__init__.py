"""Task registry: every task module registers its generator with ``@register_task``.

A task states its parameters' defaults once, in the ``defaults`` it registers with, and writes one generator, either

* batched (``batched=True``), the book's own tasks: ``generate_many(n_batches, batch_size, *, seed, **task_params)``
  returns ``n_batches`` successive batches at once, each array with a leading (n_batches,) axis; the registry derives
  the single batch, ``generate_many(1, …)`` with that axis dropped; or
* single-batch, the simplest to write (a reader's own task, e.g. ``book/tasks/``): ``generate(batch_size, *, seed,
  **task_params)`` returns one batch; the registry stacks successive calls where many batches are asked for.

A batch is seeded and vectorised over the batch: ``inputs_btx`` (B, T, N_x), ``targets_bty`` (B, T, N_y) and optionally
a ``mask_bty``. Either way a caller sees the same :class:`TaskSpec`: ``generate(batch_size, *, seed, **task_params)``
and ``batches(n_batches, batch_size, *, seed, **task_params)``, with the defaults filled in for the parameters not
given and a ``ValueError`` naming a parameter the task does not have. Each task also carries metadata naming its
source and its input/output sizes; ``get_task`` gives a clear error for unknown names.

The modules of this package register themselves when it is imported (no list to edit). A reader's own task lives
outside ``lib``, in a module or a folder of modules of their own, e.g. ``book/tasks/``: ``load_task_modules(path)``
imports it, and the processes this one starts (``lib.core.engine``'s workers, a nested kernel) import it too.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import inspect
import os
import pkgutil
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from lib.core import faults, params, settings

_REGISTRY: dict[str, TaskSpec] = {}


@dataclass(frozen=True)
class TaskSpec:
    """A registered task: its generators (defaults filled in, parameter names checked), sizes, defaults, provenance.

    ``generate(batch_size, *, seed, **task_params)`` gives one batch; ``many`` is the batched generator a task
    registered (``None`` for a single-batch task); :meth:`batches` gives many batches either way.
    """

    name: str
    generate: Callable[..., Any]
    n_inputs: int
    n_outputs: int
    defaults: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    many: Callable[..., Any] | None = None

    def batches(self, n_batches: int, batch_size: int, *, seed, **task_params):
        """``n_batches`` batches, each array with a leading (n_batches,) axis: bit for bit the batches of as many
        successive :attr:`generate` calls on one Generator (the task's batched generator where it has one, fewer
        calls; else those calls stacked)."""
        if self.many is not None:
            return self.many(n_batches, batch_size, seed=seed, **task_params)
        n_batches = params.integer("n_batches", n_batches, min=1)
        rng = rng_for(seed)
        parts = [self.generate(batch_size, seed=rng, **task_params) for _ in range(n_batches)]
        return type(parts[0])(*(torch.stack(arrays) for arrays in zip(*parts, strict=True)))


def register_task(name: str, *, n_inputs: int, n_outputs: int, defaults=None, metadata=None, batched: bool = False):
    """Decorator: register a task's generator under ``name`` (names are unique) and return it, defaults filled in.

    ``batched=True``: the decorated function is ``generate_many(n_batches, batch_size, *, seed, **task_params)`` and
    the task's single batch is derived from it; else it is ``generate(batch_size, *, seed, **task_params)``.
    ``defaults`` names every task parameter and its default value, the one place they are stated (a generator's
    signature lists the names without defaults); omitted, they are read from the generator's keyword defaults.
    """

    def wrap(generator):
        if name in _REGISTRY:
            where = _REGISTRY[name].generate.__module__
            raise ValueError(f"task {name!r} is already registered (by {where}); a task module must use a new name")
        task_defaults = _checked_defaults(name, generator, defaults, batched)
        resolved = _with_defaults(name, generator, task_defaults)
        generate = _first_batch(name, resolved) if batched else resolved
        many = resolved if batched else None
        _REGISTRY[name] = TaskSpec(name, generate, n_inputs, n_outputs, task_defaults, dict(metadata or {}), many)
        return resolved

    return wrap


def _checked_defaults(name: str, generator, defaults, batched: bool) -> dict[str, Any]:
    """The task's defaults, checked against its generator's signature: ``ValueError`` names a mismatch."""
    signature = inspect.signature(generator)
    leading = ["n_batches", "batch_size"] if batched else ["batch_size"]
    positional = [n for n, p in signature.parameters.items() if p.kind is p.POSITIONAL_OR_KEYWORD]
    keywords = {n: p for n, p in signature.parameters.items() if p.kind is p.KEYWORD_ONLY and n != "seed"}
    if len(positional) != len(leading) or "seed" not in signature.parameters:
        form = f"{generator.__name__}({', '.join(leading)}, *, seed, **task_params)"
        raise ValueError(f"task {name!r}: register_task(batched={batched}) expects {form}, not {signature}")
    if defaults is None:
        defaults = {n: p.default for n, p in keywords.items() if p.default is not p.empty}
    defaults = dict(defaults)
    open_ended = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
    mismatched = sorted((set(defaults) ^ set(keywords)) - (set(defaults) if open_ended else set()))
    if mismatched:
        raise ValueError(
            f"task {name!r}: the defaults {list(defaults)} and the parameters {list(keywords)} of "
            f"{generator.__name__} differ in {mismatched}"
        )
    for key, p in keywords.items():  # a default stated twice must be stated alike
        if p.default is not p.empty and p.default != defaults[key]:
            raise ValueError(f"task {name!r}: {key}={p.default!r} in the signature but {defaults[key]!r} in defaults")
    return defaults


def _with_defaults(name: str, generator, defaults: dict[str, Any]):
    """``generator`` with each parameter of ``defaults`` an optional keyword; ``ValueError`` names any other."""
    signature = inspect.signature(generator)
    leading = [p for p in signature.parameters.values() if p.kind is p.POSITIONAL_OR_KEYWORD]
    allowed = {*defaults, *(p.name for p in leading)}

    @functools.wraps(generator)
    def resolved(*sizes, seed, **task_params):
        unknown = [key for key in task_params if key not in allowed]
        if unknown:
            raise ValueError(
                f"task {name!r} has no parameter {unknown[0]}={task_params[unknown[0]]!r}; "
                f"its parameters are {list(defaults)}"
            )
        return checked_batch(name, generator(*sizes, seed=seed, **{**defaults, **task_params}), len(leading))

    optional = [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=v) for k, v in defaults.items()]
    resolved.__signature__ = signature.replace(parameters=[*leading, signature.parameters["seed"], *optional])
    return resolved


class TaskBatchError(ValueError):
    """A task generated a batch that training and analysis cannot read (wrong shapes, non-finite entries)."""


def checked_batch(name: str, batch, leading: int = 1):
    """``batch`` if its arrays are what training and analysis read: ``inputs_btx`` and ``targets_bty`` of
    ``leading`` + 2 dimensions (``leading``: 1 for a batch, 2 for many, with their (n_batches,) axis first), the same
    trials and time steps, a ``mask_bty`` (if any) shaped as the targets, and every entry finite; else
    :class:`TaskBatchError` naming the task, the array and what it should be (a task's fault is found where its batch
    is made, never by a torch broadcast or a model trained on NaN)."""
    arrays = {key: getattr(batch, key, None) for key in ("inputs_btx", "targets_bty", "mask_bty")}
    axes = "(" + "n_batches, " * (leading - 1) + "B, T, N)"
    for key, array in arrays.items():
        if array is None and key != "mask_bty":
            raise TaskBatchError(f"task {name!r} returned a batch without {key}; it needs inputs_btx and targets_bty")
        if array is not None and (not hasattr(array, "shape") or len(array.shape) != leading + 2):
            shape = tuple(getattr(array, "shape", ()))
            raise TaskBatchError(f"task {name!r}: {key} has shape {shape}; it must be {axes}")
    inputs, targets, mask = (None if a is None else torch.as_tensor(a) for a in arrays.values())
    if inputs.shape[:-1] != targets.shape[:-1]:
        raise TaskBatchError(
            f"task {name!r}: targets_bty has shape {tuple(targets.shape)} but inputs_btx {tuple(inputs.shape)}; "
            f"both must be {axes} with the same trials and time steps"
        )
    if mask is not None and mask.shape != targets.shape:
        raise TaskBatchError(f"task {name!r}: mask_bty has shape {tuple(mask.shape)}; it must be that of targets_bty, "
                         f"{tuple(targets.shape)}")  # fmt: skip
    for key, array in zip(arrays, (inputs, targets, mask), strict=True):
        bad = 0 if array is None or not array.is_floating_point() else int((~torch.isfinite(array)).sum())
        if bad:
            raise TaskBatchError(f"task {name!r}: {key} has {bad} non-finite entries (NaN or ±inf) of {array.numel()}; "
                             "every entry must be finite")  # fmt: skip
    return batch


def _first_batch(name: str, many):
    """The single-batch generator of a batched one: ``many(1, …)`` with the leading (n_batches,) axis dropped."""

    def generate(batch_size, *, seed, **task_params):
        batch = many(1, batch_size, seed=seed, **task_params)
        return type(batch)(*(array[0] for array in batch))

    signature = inspect.signature(many)
    generate.__module__ = many.__module__  # the task's module (the training cache fingerprints it through this)
    summary = (many.__doc__ or "").strip().split("\n")[0]
    generate.__doc__ = f"One batch of task {name!r}, ``{many.__name__}(1, …)`` without its leading axis. {summary}"
    generate.__signature__ = signature.replace(parameters=list(signature.parameters.values())[1:])
    return generate


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
MODULES_ENV = settings.TASK_MODULES
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
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            spec.loader.exec_module(module)
    except Exception as exc:  # a clash with a registered name, a syntax error: refused, naming the module
        sys.modules.pop(name, None)
        for added in set(_REGISTRY) - before:
            del _REGISTRY[added]
        message = f"task module {str(path)!r}: {exc}"
        try:
            error = type(exc)(message)
        except Exception:  # an exception type that takes other arguments
            error = RuntimeError(message)
        raise error from exc
    for warning in caught:  # on the terminal at the end of the run, not in the page (lib.core.faults)
        faults.report(f"task module warns: {warning.message}", file=path, action="loaded anyway")
    _loaded[key] = name
    settings.add_task_module(path)
    return sorted(set(_REGISTRY) - before)


def registered(name: str) -> bool:
    """Whether a task called ``name`` is registered (in this process)."""
    return name in _REGISTRY


def load_task(task: str, task_module: str | os.PathLike) -> str:
    """``task``, once the reader's modules at ``task_module`` (:func:`load_task_modules`) are loaded: a chapter's
    check of its parameters ``task`` and ``task_module`` together. ``FileNotFoundError`` for a module that does not
    exist, ``ValueError`` for one that registers a name already taken or for a ``task`` still not registered."""
    loaded = load_task_modules(task_module)
    if task not in _REGISTRY:
        raise ValueError(
            f"task={task!r} is not registered (task_module={str(task_module)!r} registers {loaded or 'no new task'}); "
            f"available tasks: {available_tasks()}"
        )
    return task


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
        if path.is_dir():  # only the task modules of a folder are imported, never another script beside them
            tasks = [p for p in files if p.is_file() and "register_task" in p.read_text(errors="replace")]
            if not tasks:
                raise FileNotFoundError(
                    f"task module {str(where)!r} is a folder with no task module (a .py file that calls "
                    f"register_task; it holds {[p.name for p in files] or 'no .py file'}, none imported)"
                )
            files = tasks
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
for _path in settings.task_modules():
    if Path(_path).is_file():
        _load_file(Path(_path))
