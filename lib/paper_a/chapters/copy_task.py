"""The copy-task chapter (chapter ``copy_task``): its settings, solutions, replay score, glue values and tables.

The ablations of the trained controllers, their tables and the chapter's claims are in
:mod:`lib.paper_a.chapters.copy_ablations`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from lib.core import params
from lib.core.claims import SECOND_SET_START
from lib.core.tables import Table
from lib.paper_a import metrics, rnn, schur, train
from lib.paper_a.tasks import get_task
from lib.papers import schur_ablation as paper_a

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


@dataclass(frozen=True)
class CopyStudy:
    """The copy chapter's settings, validated on construction (before any training).

    The training settings (``n_hidden`` even, ``lr``, ``batch_size``, ``max_steps``, ``stop_accuracy``,
    ``stop_every``, ``replay_steps``) are validated by the solutions' :class:`lib.paper_a.train.TrainConfig`, built
    here; α and the Table-1 thresholds by :func:`lib.paper_a.schur.check_alpha`; the rest here.
    """

    n_hidden: int = 72
    seeds: int = 5
    representative_seed: int = 0
    other_constructions: Sequence[str] = ("dense_default", "dense_normal")
    other_widths: Sequence[int] = (56, 64)
    alpha: float = schur.PAPER_ALPHA
    alphas: Sequence[float] = (0.85, 0.9, 0.95)
    lr: float = 3e-3
    batch_size: int = 64
    replay_steps: int = 32
    max_steps: int = 4000
    stop_accuracy: float = 0.995
    stop_every: int = 100
    eval_lags: int = 128
    heldout_trials: int = 1024
    heldout_seed: int = 2026
    preserve_tol: float = 0.01
    negligible_mass: float = 0.01
    solved: float = 0.99
    second_set: int = 5
    configs: dict[str, train.TrainConfig] = field(init=False, repr=False)
    second_configs: dict[str, train.TrainConfig] = field(init=False, repr=False)

    def __post_init__(self):
        seeds = params.integer("seeds", self.seeds, min=1, max=20)
        widths = [params.integer("other_widths[]", w, min=2) for w in self.other_widths]
        if any(w % 2 for w in widths):
            raise ValueError(f"other_widths={widths} must all be even")
        representative = params.integer("representative_seed", self.representative_seed, min=0, max=seeds - 1)
        checked = {
            "seeds": seeds,
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

    @property
    def second_seeds(self) -> range:
        """The second set's seeds: ``second_set`` of them from ``SECOND_SET_START`` (disjoint from ``seeds``' 0..)."""
        return range(SECOND_SET_START, SECOND_SET_START + self.second_set)

    def _configs(self, seeds: Sequence[int] | None = None, others: bool = True) -> dict[str, train.TrainConfig]:
        """name → TrainConfig of every solution: both constructions per seed (``seeds``, default 0..seeds−1), then
        (``others``) the other constructions and widths."""
        solutions = {}
        for seed in range(self.seeds) if seeds is None else seeds:
            for construction in ("dense_orthogonal", "cayley"):
                solutions[f"{construction} N_h={self.n_hidden} seed {seed}"] = (construction, self.n_hidden, seed)
        for construction in self.other_constructions if others else ():
            solutions.setdefault(f"{construction} N_h={self.n_hidden} seed 0", (construction, self.n_hidden, 0))
        for width in self.other_widths if others else ():
            solutions.setdefault(f"dense_orthogonal N_h={width} seed 0", ("dense_orthogonal", width, 0))
        overrides = dict(
            lr=self.lr,
            batch_size=self.batch_size,
            steps=self.max_steps,
            stop_accuracy=self.stop_accuracy,
            stop_every=self.stop_every,
            task_params={"replay_steps": self.replay_steps},
        )
        return {name: train.copy_config(c, n, s, **overrides) for name, (c, n, s) in solutions.items()}

    def glue_values(self) -> dict[str, Any]:
        """The paper's copy-task numbers (Fig. 1, Table 1, the classes) and the chapter's settings, as glued."""
        values = {f"paper_acc_{key}": paper_a.COPY_DENSE_ORTH[s].text for s, key in SUBSET_NAMES.items()}
        for model, tag in MODELS:
            for k, q in paper_a.TABLE1[model].items():
                values[f"paper_table1_{k}_{tag}"] = q.text
        values["paper_n_classes"] = len(paper_a.CLASSES)
        values["paper_classes"] = ", ".join(q.text for q in paper_a.CLASSES)
        values["paper_width"] = paper_a.COPY["representative_width"]
        values["paper_lags"] = paper_a.COPY["lags"]
        values["paper_alphas"] = " / ".join(f"{a:g}" for a in paper_a.TABLE1_ALPHAS)
        stop_rule = train.copy_config("dense_orthogonal", self.n_hidden, 0)
        values["stop_lags"] = stop_rule.stop_task_params["replay_steps"]
        values["stop_trials"] = stop_rule.stop_batch_size
        values["replay_periods"] = self.replay_steps / paper_a.COPY["symbols"]
        settings = ("n_hidden", "seeds", "alpha", "lr", "batch_size", "replay_steps", "stop_accuracy", "stop_every")
        settings += ("max_steps", "eval_lags", "heldout_trials", "preserve_tol", "solved", "negligible_mass")
        settings += ("second_set",)
        values |= {name: getattr(self, name) for name in settings}
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


def solutions_table(solutions: dict[str, train.TrainResult], accuracies: dict[str, float]) -> Table:
    """Every trained controller: Adam steps run and held-out replay accuracy."""
    return Table(
        ("solution", "Adam steps", "held-out Acc_rc"),
        tuple((name, r.steps_run, accuracies[name]) for name, r in solutions.items()),
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
        "missed_099": "; ".join(missed) if missed else "none",
        "n_stopped": sum(r.steps_run < study.max_steps for r in solutions.values()),
    }
    return plain_values(values)
