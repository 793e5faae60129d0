"""The copy-task chapter (chapter ``copy_task``): its settings, solutions, replay score, glue values and tables.

The ablations of the trained controllers, their tables and the chapter's claims are in
:mod:`lib.paper_a.chapters.copy_ablations`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from lib.core import budget, params
from lib.core.claims import SECOND_SET_START
from lib.core.lines import line
from lib.core.tables import Table
from lib.paper_a import metrics, rnn, schur, train
from lib.paper_a.batched_training import seeds_in_flight
from lib.paper_a.tasks import get_task
from lib.papers import schur_ablation

#: The chapter's glue name of each subset of couplings (paper A's Fig. 1), in the order of schur.all_subsets().
SUBSET_NAMES = {
    (): "full",
    ("CC",): "minus_CC",
    ("RR",): "minus_RR",
    ("RR", "CC"): "minus_RR_CC",
    ("CR",): "minus_CR",
    ("CR", "CC"): "minus_CR_CC",
    ("RR", "CR"): "minus_RR_CR",
    ("RR", "CR", "CC"): "minus_all",
}
#: The two models of the paper's Table 1 and the chapter's tag for each.
MODELS = (("dense orthogonal", "orth"), ("Cayley", "cayley"))


def plain(value: Any) -> Any:
    """A glued value: bools, ints and strings as they are, every other number a float rounded to 12 digits."""
    if isinstance(value, bool | int | str):
        return value
    return float(f"{float(value):.12g}")


def plain_values(values: dict[str, Any]) -> dict[str, Any]:
    """:func:`plain` of every value (name → value)."""
    return {name: plain(value) for name, value in values.items()}


@dataclass(frozen=True, kw_only=True)
class CopyStudy(train.CopyTraining):
    """The copy chapter's settings, validated on construction (before any training).

    The training settings and their defaults are :class:`lib.paper_a.train.CopyTraining`'s (``n_hidden`` even,
    ``lr``, ``batch_size``, ``replay_steps``, ``max_steps``, ``stop_accuracy``, ``stop_every``), checked by the
    solutions' TrainConfigs, built here; α and the Table-1 thresholds by :func:`lib.paper_a.schur.check_alpha`; the
    rest here. ``solutions``: how many solutions of each construction (dense orthogonal, Cayley) at ``n_hidden``,
    seeds 0..solutions−1. ``CopyStudy()`` is the chapter as the book runs it; the chapters that reuse its solutions
    read their settings from it.
    """

    solutions: int = 5
    representative_seed: int = 0
    other_constructions: Sequence[str] = ("dense_default", "dense_normal")
    other_widths: Sequence[int] = (56, 64)
    alpha: float = schur.PAPER_ALPHA
    alphas: Sequence[float] = (0.85, 0.9, 0.95)
    eval_lags: int = 128
    heldout_trials: int = 1024
    heldout_seed: int = 2026
    preserve_tol: float = line("replay_tolerance")
    negligible_mass: float = line("negligible_mass")
    solved: float = line("replays")
    second_set: int = 5
    configs: dict[str, train.TrainConfig] = field(init=False, repr=False)
    second_configs: dict[str, train.TrainConfig] = field(init=False, repr=False)

    def __post_init__(self):
        solutions = params.integer("solutions", self.solutions, min=1, max=20)
        widths = [rnn.check_width(f"other_widths[{i}]", w) for i, w in enumerate(self.other_widths)]
        representative = params.integer("representative_seed", self.representative_seed, min=0, max=solutions - 1)
        checked = {
            "solutions": solutions,
            "representative_seed": representative,
            "other_constructions": params.subset("other_constructions", self.other_constructions, rnn.CONSTRUCTIONS),
            "other_widths": widths,
            "alpha": schur.check_alpha(self.alpha),
            "alphas": [schur.check_alpha(a) for a in self.alphas],
            "eval_lags": params.integer("eval_lags", self.eval_lags, min=1),
            "heldout_trials": params.integer("heldout_trials", self.heldout_trials, min=1),
            "heldout_seed": params.integer("heldout_seed", self.heldout_seed, min=0),
            "preserve_tol": params.real("preserve_tol", self.preserve_tol, min=0.0),
            "negligible_mass": params.real("negligible_mass", self.negligible_mass, min=0.0),
            "solved": params.real("solved", self.solved, min=0.0, max=1.0),
            "second_set": params.integer("second_set", self.second_set, min=0, max=20),
        }
        for name, value in checked.items():
            object.__setattr__(self, name, value)
        object.__setattr__(self, "configs", self._configs())  # TrainConfig validates the training settings
        object.__setattr__(self, "second_configs", self._configs(self.second_seeds, others=False))
        self.work()

    def work(self) -> budget.Work:
        """The run's size (:func:`lib.core.budget.bound`, refused when out of reach): the models × Adam steps × N_h² ×
        trials × steps per trial, and the arrays of the seed-batched training and the held-out replay."""
        book, width = budget.defaults(CopyStudy), max(self.n_hidden, *self.other_widths)
        models = len(self.configs) + len(self.second_configs)
        book_models = 2 * (book["solutions"] + book["second_set"]) + len(book["other_constructions"]) + len(
            book["other_widths"])  # fmt: skip
        trial, replay = 8 + self.replay_steps, self.heldout_trials * (8 + self.eval_lags)
        return budget.bound(
            "copy_task",
            budget.Term("models", models, book_models, params=("solutions", "second_set")),
            budget.Term("steps", self.max_steps, book["max_steps"], params=("max_steps",)),
            budget.Term("N_h", width, book["n_hidden"], 2, params=("n_hidden", "other_widths")),
            budget.Term(
                "trials × steps per Adam step",
                self.batch_size * trial,
                book["batch_size"] * (8 + book["replay_steps"]),
                params=("batch_size", "replay_steps"),
            ),  # fmt: skip
            arrays={
                "the seed-batched training's states (float32, kept for backpropagation)": budget.floats(
                    seeds_in_flight(self.solutions), self.batch_size, trial, width, itemsize=4, copies=4
                ),
                "the held-out replay's states": budget.floats(replay, width, copies=3),
                "the recurrent weights, their gradients and Adam's moments": budget.floats(
                    models, width, width, copies=4
                ),
            },  # fmt: skip
        )

    @property
    def second_seeds(self) -> range:
        """The second set's seeds: ``second_set`` of them from ``SECOND_SET_START`` (disjoint from the first set's
        0..solutions−1)."""
        return range(SECOND_SET_START, SECOND_SET_START + self.second_set)

    def _configs(self, seeds: Sequence[int] | None = None, others: bool = True) -> dict[str, train.TrainConfig]:
        """name → TrainConfig of every solution: both constructions per seed (``seeds``, default 0..solutions−1),
        then (``others``) the other constructions and widths."""
        chosen = {}
        for seed in range(self.solutions) if seeds is None else seeds:
            for construction in ("dense_orthogonal", "cayley"):
                chosen[f"{construction} N_h={self.n_hidden} seed {seed}"] = (construction, self.n_hidden, seed)
        for construction in self.other_constructions if others else ():
            chosen.setdefault(f"{construction} N_h={self.n_hidden} seed 0", (construction, self.n_hidden, 0))
        for width in self.other_widths if others else ():
            chosen.setdefault(f"dense_orthogonal N_h={width} seed 0", ("dense_orthogonal", width, 0))
        return {name: self.config(c, n, s) for name, (c, n, s) in chosen.items()}

    def first(self, construction: str, count: int, name: str = "count") -> list[train.TrainConfig]:
        """The TrainConfigs of the first ``count`` solutions of ``construction`` at n_hidden (seeds 0..count−1): what
        a chapter that reuses this chapter's solutions reads; ``ValueError`` naming ``name`` if the chapter trains
        fewer (``solutions``)."""
        count = params.integer(name, count, min=0, max=self.solutions)
        return [self.configs[f"{construction} N_h={self.n_hidden} seed {seed}"] for seed in range(count)]

    def glue_values(self) -> dict[str, Any]:
        """The paper's copy-task numbers (Fig. 1, Table 1, the classes) and the chapter's settings, as glued."""
        values = {f"paper_acc_{key}": schur_ablation.COPY_DENSE_ORTH[s].text for s, key in SUBSET_NAMES.items()}
        for model, tag in MODELS:
            for k, q in schur_ablation.TABLE1[model].items():
                values[f"paper_table1_{k}_{tag}"] = q.text
        values["paper_n_classes"] = len(schur_ablation.CLASSES)
        values["paper_classes"] = ", ".join(q.text for q in schur_ablation.CLASSES)
        values["paper_width"] = schur_ablation.COPY["representative_width"]
        values["paper_lags"] = schur_ablation.COPY["lags"]
        values["paper_alphas"] = " / ".join(f"{a:g}" for a in schur_ablation.TABLE1_ALPHAS)
        stop_rule = self.config("dense_orthogonal", self.n_hidden, 0)
        values["stop_lags"] = stop_rule.stop_task_params["replay_steps"]
        values["stop_trials"] = stop_rule.stop_batch_size
        values["replay_periods"] = self.replay_steps / schur_ablation.COPY["symbols"]
        settings = {"n_hidden": self.n_hidden, "seeds": self.solutions}  # the glue keeps its name "seeds"
        names = ("alpha", "lr", "batch_size", "replay_steps", "stop_accuracy", "stop_every", "max_steps", "eval_lags")
        names += ("heldout_trials", "preserve_tol", "solved", "negligible_mass", "second_set")
        values |= settings | {name: getattr(self, name) for name in names}
        return plain_values(values)

    def representative(self, construction: str) -> str:
        """The name of the representative solution of ``construction`` (at n_hidden, the representative seed)."""
        return f"{construction} N_h={self.n_hidden} seed {self.representative_seed}"

    def group(self, names: Sequence[str], construction: str) -> list[str]:
        """The solutions of ``construction`` at n_hidden, among ``names``."""
        return [n for n in names if n.startswith(f"{construction} N_h={self.n_hidden} ")]


def example_table(replay_steps: int = 16) -> Table:
    """One trial's channel 0: the eight input symbols and the cyclic replay target."""
    spec = get_task("copy")
    example = spec.generate(1, seed=0, replay_steps=replay_steps)

    def signs(v: torch.Tensor) -> str:
        return " ".join(f"{x:+d}" for x in v.int().tolist())

    return Table(
        ("sequence (channel 0 of one trial)", "values"),
        (
            ("input, steps 1–8", signs(example.inputs_btx[0, :8, 0])),
            (f"target, replay steps 1–{replay_steps}", signs(example.targets_bty[0, 8:, 0])),
        ),
        caption=f"One trial: the symbols and the cyclic replay target ({spec.metadata['source']})",
    )


class HeldoutReplay:
    """Acc_rc of float64 weights on the held-out trials (their first ``eval_lags`` replay steps), paper A §3."""

    def __init__(self, study: CopyStudy):
        self.lags = study.eval_lags
        self.batch = train.task_batch("copy", study.heldout_trials, seed=study.heldout_seed, replay_steps=self.lags)
        self.inputs_btx = self.batch.inputs_btx.to(torch.float64)

    def __call__(self, weights: dict[str, torch.Tensor]) -> float:
        with torch.no_grad():
            out, _ = rnn.rollout_fast(weights, self.inputs_btx)
        return metrics.replay_accuracy(out, self.batch.targets_bty, lags=self.lags)


def solution_words(name: str) -> str:
    """A solution's name as the reader reads it: "dense_orthogonal N_h=72 seed 0" → "dense orthogonal, width 72,
    seed 0"."""
    construction, _, rest = name.partition(" N_h=")
    width, _, seed = rest.partition(" ")
    return f"{construction.replace('_', ' ')}, width {width}, {seed}" if rest else name.replace("_", " ")


def solutions_table(solutions: dict[str, train.TrainResult], accuracies: dict[str, float]) -> Table:
    """Every trained controller: Adam steps run and held-out replay accuracy."""
    return Table(
        ("solution", "Adam steps", "held-out Acc_rc"),
        tuple((solution_words(name), r.steps_run, accuracies[name]) for name, r in solutions.items()),
        ".4f",
        caption="Every trained controller: Adam steps run and held-out replay accuracy",
    )


def training_values(
    study: CopyStudy, solutions: dict[str, train.TrainResult], accuracies: dict[str, float]
) -> dict[str, Any]:
    """Steps run (representatives, largest), how many met the stop rule, how many replay at ``solved``."""
    reached = [name for name, acc in accuracies.items() if acc >= study.solved]
    missed = [name for name, acc in accuracies.items() if acc < study.solved]
    values = {
        "min_acc_full_all": min(accuracies.values()),
        "n_solutions": len(accuracies),
        "steps_orth": solutions[study.representative("dense_orthogonal")].steps_run,
        "steps_cayley": solutions[study.representative("cayley")].steps_run,
        "max_steps_run": max(r.steps_run for r in solutions.values()),
        "n_reached_099": len(reached),
        "missed_099": "; ".join(solution_words(m) for m in missed) if missed else "none",
        "n_stopped": sum(r.steps_run < study.max_steps for r in solutions.values()),
    }
    return plain_values(values)
