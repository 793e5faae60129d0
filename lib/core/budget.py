"""How large a chapter's run is, known from its parameters before anything starts, and the runs this machine refuses.

Every chapter's validation cell ends with :func:`bound`: the work its parameters ask for, as the product of the sizes
that drive it (models × steps × width², the Jacobian's rows × columns, ...) against the same product at the book's
values, and the largest arrays it will hold. From them two estimates:

- **time**: the chapter's cold wall time at the book's values (:data:`REFERENCE_SECONDS`, measured) scaled by that
  ratio. A run estimated at more than :data:`LONG_FACTOR` × :data:`BUDGET_SECONDS` is refused unless the reader asks
  for it (``python -m bookrun --allow-long``, ``$BOOK_ALLOW_LONG=1``): a typo such as ``-p solutions 100000`` does
  not start ten thousand times the chapter's work.
- **memory**: :data:`KERNEL_BYTES` plus those arrays. A run whose estimate exceeds the memory this machine has
  available (``MemAvailable``) is refused always: it would end in a ``MemoryError`` after hours, or in the kernel's
  out-of-memory killer taking other processes with it.

Both refusals are ``ValueError``s (the executor's up-front check refuses the run, exit 2) that name the parameter
that grew most, the estimate and the machine's figure. The estimates are deliberately coarse (they decide only what
is far out of reach); the executor prints each chapter's on the terminal before it starts.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields

from lib.core import settings

#: A chapter's time budget on two cores: the slowest chapter at the papers' settings takes about seven minutes cold.
BUDGET_SECONDS = 15 * 60
#: A run estimated at more than this many budgets is refused without ``--allow-long``.
LONG_FACTOR = 10
#: A chapter kernel's own memory (Python, torch, numpy, matplotlib and the chapter's small arrays).
KERNEL_BYTES = 2**30
#: Each chapter's cold wall time at the book's values, two chapters at once on the 2-core Intel Xeon of `.ci/run`
#: (version 1.4.0, README's cost section; at_scale from version 1.6.0): the unit the time estimates scale.
REFERENCE_SECONDS = {
    "copy_task": 226, "task_flipflop": 59, "task_sine": 97, "task_context": 102, "task": 100, "mexican_hat": 375,
    "annulus": 139, "at_scale": 100, "many_solutions": 415, "task_dependence": 129, "two_lenses": 138,
    "paper_a_open": 53, "new_task": 32, "lifting_criterion": 8, "schur_coordinates": 6, "your_network": 13,
}  # fmt: skip
#: The sizes those times were measured at, where a chapter's settings are cells of its notebook (:func:`measured`).
REFERENCE_SIZES = {
    "annulus": {"steps": 200, "decision_mesh": 120},
    "at_scale": {"width": 1024, "epochs": 200, "rings": 8, "angles": 32, "flow_steps": 5},
    "mexican_hat": {"train_steps": 3000, "batch": 850, "l1_compare_steps": 500, "walk_steps": 20, "sketch_rank": 96,
                    "rollout_ics": 6, "rollout_steps": 100},
    "lifting_criterion": {"width": 32},
    "new_task": {"solutions": 3},
}  # fmt: skip

_last: list[Work] = []


@dataclass(frozen=True)
class Term:
    """One factor of a run's size: ``value`` against the book's ``default``, entering as ``value ** power``;
    ``params`` are the chapter parameters it comes from (named in a refusal)."""

    name: str
    value: float
    default: float
    power: float = 1.0
    params: tuple[str, ...] = ()

    @property
    def ratio(self) -> float:
        return (max(self.value, 1e-300) / self.default) ** self.power

    def text(self) -> str:
        power = {1.0: "", 2.0: "²", 3.0: "³"}.get(float(self.power), f"^{self.power:g}")
        return f"{_count(self.value)}{power} {self.name}"


@dataclass(frozen=True)
class Work:
    """A run's size: ``parts`` are (share of the reference time, its terms); ``arrays`` the largest arrays held at
    once, description → bytes."""

    chapter: str
    parts: tuple[tuple[float, tuple[Term, ...]], ...]
    arrays: Mapping[str, float] = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        """The run's work over the book's run of the chapter."""
        return sum(share * math.prod(t.ratio for t in terms) for share, terms in self.parts)

    @property
    def seconds(self) -> float:
        return reference_seconds(self.chapter) * self.ratio

    @property
    def memory(self) -> float:
        return KERNEL_BYTES + sum(self.arrays.values())

    def size(self) -> str:
        """``"24 models × 4000 steps × 72² width; ..."``: each part's terms."""
        return "; ".join(" × ".join(t.text() for t in terms) for _, terms in self.parts if terms)

    def largest(self) -> str:
        name = max(self.arrays, key=self.arrays.get) if self.arrays else None
        return f"{name}, {size_text(self.arrays[name])}" if name else "none over a few MB"

    def summary(self) -> str:
        """One line for the terminal: the size, the time and memory estimates."""
        return (f"{self.size()} (×{self.ratio:.3g} the book's run): about {_duration(self.seconds)} cold, "
                f"{size_text(self.memory)} (largest array: {self.largest()})")  # fmt: skip

    def grown(self) -> str:
        """The parameters of the term that grew most against the book's values, as ``"name=value"``."""
        terms = [t for _, ts in self.parts for t in ts]
        top = max(terms, key=lambda t: t.ratio) if terms else None
        if top is None or top.ratio <= 1:
            return "the values given"
        names = ", ".join(top.params) or top.name
        return f"{names} ({top.text()} against the book's {_count(top.default)})"


def available_memory() -> int:
    """Bytes this machine can give a new process now: ``MemAvailable`` of ``/proc/meminfo`` (Linux), else the
    physical memory."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def bound(chapter: str, *terms: Term, parts=None, arrays: Mapping[str, float] | None = None) -> Work:
    """The run's :class:`Work` (``terms`` as one part, or ``parts``), refused (``ValueError``) when its memory
    estimate exceeds :func:`available_memory`, or its time estimate exceeds ``LONG_FACTOR × BUDGET_SECONDS`` without
    :func:`lib.core.settings.allow_long`."""
    work = Work(chapter, tuple(parts) if parts is not None else ((1.0, tuple(terms)),), dict(arrays or {}))
    _last[:] = [work]
    have = available_memory()
    if work.memory > have:
        raise ValueError(
            f"{chapter}'s run would need about {size_text(work.memory)} of memory ({work.size()}; largest array: "
            f"{work.largest()}) and this machine has {size_text(have)} available: lower {work.grown()}"
        )
    if work.seconds > LONG_FACTOR * BUDGET_SECONDS and not settings.allow_long():
        raise ValueError(
            f"{chapter}'s run is estimated at {_duration(work.seconds)} ({work.size()}, ×{work.ratio:.3g} the "
            f"book's {_duration(reference_seconds(chapter))}), over {LONG_FACTOR} × its "
            f"{_duration(BUDGET_SECONDS)} budget: lower {work.grown()}, or pass --allow-long to run it anyway"
        )
    return work


def reference_seconds(chapter: str) -> float:
    """:data:`REFERENCE_SECONDS` of ``chapter``; a task chapter of the template (``task_<name>``) as a task's."""
    return REFERENCE_SECONDS.get(chapter, REFERENCE_SECONDS["task"])


def defaults(cls) -> dict:
    """The book's values of a settings dataclass: its fields' defaults (what a Term compares with)."""
    return {f.name: f.default for f in fields(cls)}


def measured(chapter: str) -> dict:
    """The sizes :data:`REFERENCE_SECONDS` of ``chapter`` was measured at, for a chapter whose settings are cells of
    its notebook rather than a dataclass of ``lib`` (``tests/core/test_budget_faults.py`` holds them equal to the
    chapter's parameters cell: a changed value there asks for a new measurement)."""
    return dict(REFERENCE_SIZES[chapter])


def last(*, forget: bool = False) -> Work | None:
    """The :class:`Work` of the last :func:`bound` in this process (what the executor's check prints); ``forget``:
    and forget it (the next chapter checked in the same process starts with none)."""
    work = _last[0] if _last else None
    if forget:
        _last.clear()
    return work


def cap_memory(headroom: int | None = None) -> int:
    """Cap this process's address space, and so that of every process it starts (a chapter's kernel and its workers
    inherit it), at its present size plus ``headroom`` (default: the machine's physical memory): past it an
    allocation raises ``MemoryError`` in the process that asked, where the out-of-memory killer would take whatever
    process it chose. The cap is on address space (reserved, not resident), so it is loose by design: a backstop
    behind :func:`bound`'s estimates, never the rule. Returns the cap in bytes (0 where it cannot be set)."""
    import resource

    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    try:
        with open("/proc/self/status") as status:
            size = next(int(ln.split()[1]) * 1024 for ln in status if ln.startswith("VmSize:"))
        cap = size + (total if headroom is None else headroom)
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            cap = min(cap, hard)
        if soft == resource.RLIM_INFINITY or cap < soft:
            resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
        return cap
    except (OSError, ValueError, StopIteration):
        return 0


def floats(*shape: float, itemsize: int = 8, copies: float = 1) -> float:
    """Bytes of ``copies`` arrays of ``shape`` (float64 unless ``itemsize``)."""
    return math.prod(shape) * itemsize * copies


def _count(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() and abs(value) < 1e15 else f"{value:.3g}"


def size_text(n: float) -> str:
    """Bytes for a sentence: ``"7.31 TiB"``, ``"1.24 GiB"``, ``"230 MiB"`` (three significant digits)."""
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n / 2**10:.3g} KiB"


def _duration(seconds: float) -> str:
    if seconds >= 2 * 86400:
        return f"{seconds / 86400:,.0f} days"
    if seconds >= 2 * 3600:
        return f"{seconds / 3600:.3g} hours"
    if seconds >= 120:
        return f"{seconds / 60:.3g} minutes"
    return f"{seconds:.3g} s"
