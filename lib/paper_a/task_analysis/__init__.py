"""Per-task analysis of paper A §4: train solutions over seeds, ablate every subset of Schur couplings, scan α.

The pipeline for any registered task (``lib.paper_a.tasks.available_tasks()``)::

    analysis = analyse_task("flipflop", solutions=10, alpha=0.9)   # trains (or loads cached) models, then ablates
    analysis.table()                                              # mean ± SEM over seeds of every ablation subset
    analysis.dfvu("CR"), analysis.sens("CC")                      # (n_seeds,) per-solution values
    analysis.fraction(lambda p: p.dfvu["CR"] > p.dfvu["CC"])      # how often an ordering holds
    scan = alpha_scan(analysis, np.round(np.arange(0.80, 0.951, 0.01), 2))

The modules: :mod:`.configuration` (the §4 settings, :class:`TaskStudy`), :mod:`.profiles` (one solution),
:mod:`.analysis` (one task), :mod:`.orderings` (the §4 orderings), :mod:`.alpha_scans`, :mod:`.paper_claims`,
:mod:`.copy_analysis` (the copy task scored by replay FVU), :mod:`.chapter_tables`.

Metrics follow :mod:`.metrics`: FVU on a held-out batch with ȳ the per-channel mean target over every held-out
trial and time step; ΔFVU = FVU(W̃) − FVU(W); S_ΔT = ΔFVU / (‖ΔT‖_F / ‖T‖_F).

**Empty blocks.** An ablation that removes no Schur mass (T_RR when R is a single block, T_C→R and T_CC when C is
empty or a single block) is *empty*: it is not an intervention, so it is not "safe" either. Its FVU, ΔFVU and S_ΔT are
NaN; it is counted apart (``TaskAnalysis.n_empty``) and left out of means, safe fractions and orderings. In an
ordering, a comparison a > b with b empty is dropped (an empty block has no effect to exceed); with a empty the
ordering is undefined for that solution, which is then left out of the fraction (``TaskAnalysis.count``).

Held-out trials come from the numpy stream ``default_rng([HELDOUT_SEED, HELDOUT_STREAM])``, which no training run
draws from (training uses stream 0 of its own seed), and are the same for every solution of a task. Everything after
training is float64.
"""

from lib.paper_a.ablation import fvu_of, subset_key
from lib.paper_a.task_analysis.alpha_scans import AlphaScan, alpha_scan
from lib.paper_a.task_analysis.analysis import TaskAnalysis, analyse, analyse_task
from lib.paper_a.task_analysis.chapter_tables import comparison_table, spec_table
from lib.paper_a.task_analysis.configuration import (
    HELDOUT_SEED,
    N_HELDOUT,
    PAPER,
    PAPER_ALPHA,
    PAPER_TRAINING,
    SINGLE_BLOCKS,
    TASK_VARIANTS,
    TaskStudy,
    heldout_batch,
    paper_value,
    solution_seeds,
    task_params_for,
    train_config,
    train_solutions,
    trial_steps,
)
from lib.paper_a.task_analysis.copy_analysis import COPY_LAGS, analyse_copy
from lib.paper_a.task_analysis.orderings import (
    GENERIC_ORDERINGS,
    ORDERING_TEXT,
    ORDERINGS,
    PAPER_CLAIMS,
    Ordering,
    holds,
    holds_in_means,
    paper_orderings,
    safe_fraction,
    subset_fraction,
)
from lib.paper_a.task_analysis.paper_claims import KIND_FACTOR, copy_claims, task_claims
from lib.paper_a.task_analysis.profiles import SolutionProfile, profile_solution
from lib.paper_a.tasks import available_tasks, get_task

__all__ = [
    "COPY_LAGS",
    "GENERIC_ORDERINGS",
    "HELDOUT_SEED",
    "KIND_FACTOR",
    "N_HELDOUT",
    "ORDERINGS",
    "ORDERING_TEXT",
    "PAPER",
    "PAPER_ALPHA",
    "PAPER_CLAIMS",
    "PAPER_TRAINING",
    "SINGLE_BLOCKS",
    "TASK_VARIANTS",
    "AlphaScan",
    "Ordering",
    "SolutionProfile",
    "TaskAnalysis",
    "TaskStudy",
    "alpha_scan",
    "analyse",
    "analyse_copy",
    "analyse_task",
    "available_tasks",
    "comparison_table",
    "copy_claims",
    "fvu_of",
    "get_task",
    "heldout_batch",
    "holds",
    "holds_in_means",
    "paper_orderings",
    "paper_value",
    "profile_solution",
    "safe_fraction",
    "solution_seeds",
    "spec_table",
    "subset_fraction",
    "subset_key",
    "task_claims",
    "task_params_for",
    "train_config",
    "train_solutions",
    "trial_steps",
]
