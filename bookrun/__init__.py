"""The book's executor: ``python -m bookrun`` executes the chapters of ``book/chapters.yml`` with papermill.

Modules, by what they are: :mod:`~bookrun.manifest` (chapters, patterns, parameters), :mod:`~bookrun.fingerprints`
(when a chapter must execute again), :mod:`~bookrun.chapter` (running one chapter) with :mod:`~bookrun.child` (the
papermill process), :mod:`~bookrun.run` and :mod:`~bookrun.terminal` (chapters side by side, what the terminal
shows), :mod:`~bookrun.results` (glued values, ``results.json``, claims), :mod:`~bookrun.timings` (each chapter's
cold and warm cost), :mod:`~bookrun.downloads` (the files the pages offer), :mod:`~bookrun.checks` (before anything
runs), :mod:`~bookrun.processes` (paths, locks, process groups), :mod:`~bookrun.scratch` (a chapter run from Python),
:mod:`~bookrun.cli` (the command).
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
