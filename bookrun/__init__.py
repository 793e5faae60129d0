"""The book's executor: ``python -m bookrun`` executes the chapters of ``book/chapters.yml`` with papermill.

One run, top to bottom (:func:`bookrun.cli.main`): :mod:`~bookrun.cli` (the command line) → :mod:`~bookrun.manifest`
(the chapters and their parameters) → :mod:`~bookrun.processes` (where the run goes, its locks, the kernels'
environment) → :mod:`~bookrun.faults` (notebooks that cannot be read, set aside) → :mod:`~bookrun.fingerprints`
(what is stale) → :mod:`~bookrun.checks` (the environment and every value, before any kernel starts) →
:mod:`~bookrun.run` (one execution) → :mod:`~bookrun.schedule` (chapters side by side, their progress on the
terminal) → :mod:`~bookrun.chapter` (one chapter: its kernel's environment, its papermill process
:mod:`~bookrun.child`, what a success or a failure leaves) → :mod:`~bookrun.results` and :mod:`~bookrun.timings`
(what it glued, what it cost). Each kernel records its imports, cache events and warnings through the start-up files
of ``bookrun/startup/``; :mod:`~bookrun.scratch` runs a chapter from Python. The release work (provenance, downloads,
the runtime table, publish, changelog, citation, dist) is the package ``bookrelease``, apart from the executor; a
book run ends by asking it for the build's records (``bookrelease.records``). ``scripts/walk.py`` follows a run.
"""

from .manifest import chapter_settings, load_manifest, notebook_parameters
from .results import claim_records, glued_values, second_set_records
from .scratch import ScratchRun, run_chapter

__all__ = [
    "ScratchRun",
    "chapter_settings",
    "claim_records",
    "second_set_records",
    "glued_values",
    "load_manifest",
    "notebook_parameters",
    "run_chapter",
]
