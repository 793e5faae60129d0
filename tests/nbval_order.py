"""A pytest plugin for ``make nbval``: the most expensive notebooks first, so two workers finish together.

nbval re-executes every chapter, one notebook per pytest-xdist scope (``--dist loadfile``), and xdist hands the scopes
out in collection order, two to each worker to begin with. In alphabetical order a long re-execution (two_lenses)
came last and ran alone for minutes. This plugin orders the notebooks longest first (the classic longest-processing-
time rule; the cells of a notebook keep their order) by the best estimate there is:

1. what each notebook's re-execution took in the last nbval run, ``_build/nbval_timings.json`` (written by this plugin
   at the end of every run, atomically, from the reports of every cell);
2. on a first run, the time its execution took under the executor (``_build/timings.json``), which also counts the
   training a re-execution reads from the model cache, so it is only a rough guide.

It orders; it never skips or changes a cell. ``make nbval`` loads it with ``-p tests.nbval_order`` and
``--no-loadscope-reorder`` (xdist's own reordering, by number of cells, would undo it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from bookrun.timings import read_timings, update_timings
from lib.core.paths import build_dir

#: Per-notebook seconds of the last nbval run (re-execution of every cell, summed over setup, call and teardown).
RECORD = "nbval_timings.json"
#: Per-chapter seconds of the last execution by the executor (``bookrun``).
EXECUTOR_RECORD = "timings.json"


def read_costs(folder: Path) -> dict[str, float]:
    """Chapter stem → estimated seconds of its re-execution: the last nbval run's record, else the executor's."""
    return read_timings(folder / RECORD) or read_timings(folder / EXECUTOR_RECORD)


def longest_first(stems: Iterable[str], costs: Mapping[str, float]) -> list[str]:
    """The distinct ``stems`` in the order of decreasing cost; unknown ones first (a new chapter may be long), then
    ties in their given order."""
    unique = list(dict.fromkeys(stems))
    rank = {stem: i for i, stem in enumerate(unique)}
    return sorted(unique, key=lambda s: (s in costs, -costs.get(s, 0.0), rank[s]))


def notebook_of(nodeid: str) -> str | None:
    """The stem of the notebook whose cell ``nodeid`` is (``book/annulus.ipynb::Cell 5`` → ``annulus``), else None."""
    path = Path(str(nodeid).split("::", 1)[0])
    return path.stem if path.suffix == ".ipynb" else None


def pytest_collection_modifyitems(session, config, items) -> None:
    """Group the collected cells by notebook, notebooks longest first, cells in their order; other tests untouched."""
    stems = [notebook_of(item.nodeid) for item in items]
    if None in stems:  # not an nbval run of notebooks only: leave the order as collected
        return
    order = {stem: i for i, stem in enumerate(longest_first(stems, read_costs(build_dir())))}
    items.sort(key=lambda item: order[notebook_of(item.nodeid)])  # stable: a notebook's cells keep their order


class _Recorder:
    """Sums each notebook's cell durations as the reports arrive (on the xdist controller, or the lone process)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def pytest_runtest_logreport(self, report) -> None:
        stem = notebook_of(report.nodeid)
        if stem is not None:
            self.seconds[stem] = self.seconds.get(stem, 0.0) + float(report.duration)

    def pytest_sessionfinish(self, session, exitstatus) -> None:
        """Only a run that passed is recorded: a failed or interrupted one may have stopped part-way."""
        if self.seconds and exitstatus == 0:
            update_timings(build_dir() / RECORD, self.seconds)


def pytest_configure(config) -> None:
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist) records; workers only order
        config.pluginmanager.register(_Recorder(), "bookrun-nbval-recorder")
