"""Task registry: every task module registers a generator with ``@register_task``.

A task generator is a callable ``generate(batch_size, *, seed, **task_params) -> Batch`` returning seeded,
batch-vectorised ``inputs_btx``, ``targets_bty`` (and optionally a ``mask_bty``). Each task carries metadata naming
its source, its input/output sizes and its default parameters; ``get_task`` gives a clear error for unknown names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

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


def register_task(name: str, *, n_inputs: int, n_outputs: int, defaults=None, metadata=None):
    """Decorator: register ``generate`` under ``name`` (names are unique)."""

    def wrap(generate):
        if name in _REGISTRY:
            raise ValueError(f"task {name!r} is already registered")
        _REGISTRY[name] = TaskSpec(name, generate, n_inputs, n_outputs, dict(defaults or {}), dict(metadata or {}))
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


# Task modules register themselves on import. Keep this list sorted.
from . import context, copy, flipflop, integrator, sine  # noqa: E402,F401
