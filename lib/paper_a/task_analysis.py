"""Per-task analysis of paper A §4: train solutions over seeds, ablate every subset of Schur couplings, scan α.

The pipeline for any registered task (``lib.paper_a.tasks.available_tasks()``)::

    analysis = analyse_task("flipflop", seeds=10, alpha=0.9)     # trains (or loads cached) models, then ablates
    analysis.table()                                              # mean ± SEM over seeds of every ablation subset
    analysis.dfvu("CR"), analysis.sens("CC")                      # (n_seeds,) per-solution values
    analysis.fraction(lambda p: p.dfvu["CR"] > p.dfvu["CC"])      # how often an ordering holds
    scan = alpha_scan(analysis, np.round(np.arange(0.80, 0.951, 0.01), 2))

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

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from numbers import Integral
from typing import Any

import numpy as np
import torch

from lib.core import params
from lib.core.claims import Claim, matches_mean_sem, matches_printed
from lib.core.tables import Table, mean_sem_text
from lib.paper_a import ablation, metrics, rnn, schur
from lib.paper_a.tasks import get_task
from lib.paper_a.train import HELDOUT_STREAM, TrainConfig, TrainResult, load_or_train_many, task_batch
from lib.papers import schur_ablation as paper_a

#: The held-out evaluation set: seed of the numpy stream (never a training seed's stream, see module docstring).
HELDOUT_SEED = 20_260_000
#: Held-out trials per task.
N_HELDOUT = 1024
#: Paper A §4: N_h = 64, dense orthogonal init, Adam 1e-3, batch 64, 30 epochs × 128 batches, α = 0.9 (lib.papers).
_T = paper_a.TASKS_TRAINING
PAPER_TRAINING = {
    "n_hidden": _T["n_hidden"],
    "construction": _T["construction"],
    "lr": _T["lr"],
    "batch_size": _T["batch_size"],
    "steps": _T["epochs"] * _T["batches_per_epoch"],
}
PAPER_ALPHA = paper_a.ALPHA
#: The single-block ablations, in the paper's figure order.
SINGLE_BLOCKS = ("RR", "CR", "CC")

#: Paper A §4 numbers as (mean, SEM) per task (a view of ``lib.papers.schur_ablation.TASKS``).
PAPER = {
    task: {
        "fvu_full": d["fvu_full"].value,
        "dfvu": {b: (q.value, q.sem) for b, q in d["dfvu"].items()},
        "sens": {b: (q.value, q.sem) for b, q in d["sens"].items()},
        "claim": d["claim"],
    }
    for task, d in paper_a.TASKS.items()
}


def paper_value(task: str, kind: str, block: str) -> tuple[float, float] | None:
    """The paper's (mean, SEM) of ``kind`` ∈ {"dfvu", "sens"} for a block, or None if the paper gives none."""
    return PAPER.get(task, {}).get(kind, {}).get(block)


# ------------------------------------------------------------------------------------------------- configuration


def task_params_for(task: str, task_params: dict[str, Any] | None = None) -> dict[str, Any]:
    """Validated overrides of a task's defaults: unknown names raise ``ValueError`` listing the allowed ones."""
    spec = get_task(task)
    task_params = dict(task_params or {})
    params.subset("task_params keys", sorted(task_params), spec.defaults)
    return task_params


def train_config(task: str, seed: int, task_params: dict[str, Any] | None = None, **overrides) -> TrainConfig:
    """The paper's §4 training configuration for ``task`` and ``seed`` (``overrides`` change TrainConfig fields)."""
    return TrainConfig(
        task=task, task_params=task_params_for(task, task_params), seed=seed, **{**PAPER_TRAINING, **overrides}
    )


def train_solutions(
    task: str,
    seeds: int | Sequence[int],
    task_params: dict[str, Any] | None = None,
    *,
    progress: bool = True,
    workers: int | None = None,
    **overrides,
) -> list[TrainResult]:
    """Train (or load from the cache) one solution per seed; ``seeds`` = a count (0..n−1) or explicit seeds.

    Missing solutions train ``workers`` at a time in separate processes (default: one per CPU; the same weights).
    """
    configs = [train_config(task, s, task_params, **overrides) for s in _seed_list(seeds)]
    return load_or_train_many(configs, workers=workers, progress=progress)


def heldout_batch(task: str, task_params: dict[str, Any] | None = None, n_trials: int = N_HELDOUT):
    """The task's held-out evaluation batch as float64 (inputs_btx, targets_bty, mask_bty or None)."""
    batch = task_batch(task, n_trials, seed=HELDOUT_SEED, stream=HELDOUT_STREAM, **task_params_for(task, task_params))
    mask = getattr(batch, "mask_bty", None)
    to64 = lambda t: torch.as_tensor(t, dtype=torch.float64)  # noqa: E731
    return to64(batch.inputs_btx), to64(batch.targets_bty), None if mask is None else to64(mask)


# ------------------------------------------------------------------------------------------------- one solution


def fvu_of(weights: dict[str, torch.Tensor], batch) -> float:
    """Held-out FVU of the network on ``batch`` = (inputs_btx, targets_bty, mask_bty or None), float64 rollout."""
    w = rnn.as_float64(weights)
    with torch.no_grad():
        out, _ = rnn.rollout_fast(w, batch[0])
    return metrics.fvu(out, batch[1], batch[2])


@dataclass(frozen=True)
class SolutionProfile:
    """Ablation profile of one trained solution at one α: FVU, ΔFVU, removed mass and S_ΔT per subset.

    ``dfvu``/``sens``/``mass``/``fvu`` map a subset label key (``"RR"``, ``"CR+CC"``, ``""`` = full …) to a float;
    ``gaps``: |λ|/ρ − α per diagonal block; ``min_gap``: the nearest block to the threshold, min |gaps|;
    ``empty``: the subset keys that remove no Schur mass (their FVU, ΔFVU and S_ΔT are NaN, see the module docstring).
    """

    seed: int
    alpha: float
    n_R: int
    fvu_full: float
    fvu: dict[str, float]
    dfvu: dict[str, float]
    mass: dict[str, float]
    sens: dict[str, float]
    moduli_over_rho: np.ndarray = field(repr=False)
    gaps: np.ndarray = field(repr=False)
    min_gap: float = math.nan
    coupling_mass: float = math.nan
    empty: tuple[str, ...] = ()

    @property
    def signed_gap(self) -> float:
        """|λ|/ρ − α of the block nearest the threshold (negative: it sits just below α·ρ, in C)."""
        return float(self.gaps[np.argmin(np.abs(self.gaps))])


def subset_key(subset: Iterable[str]) -> str:
    """``("RR", "CC")`` → ``"RR+CC"``; ``()`` → ``""``."""
    return "+".join(k for k in schur.ABLATION_BLOCKS if k in tuple(subset))


def profile_solution(
    weights: dict[str, torch.Tensor],
    batch,
    *,
    alpha: float = PAPER_ALPHA,
    seed: int = -1,
    subsets: Sequence[tuple[str, ...]] | None = None,
    form: schur.SchurForm | None = None,
) -> SolutionProfile:
    """Ablate each subset of {T_RR, T_C→R, T_CC} (default: all 8) of one solution and score its FVU on ``batch``.

    Built on :func:`lib.paper_a.ablation.ablation_profile` with the held-out FVU as score; the full model must be among
    ``subsets`` (it is the reference of ΔFVU).
    """
    alpha = params.real("alpha", alpha, min=0.0, max=1.0, min_open=True)
    subsets = schur.all_subsets() if subsets is None else [tuple(s) for s in subsets]
    if () not in subsets:
        raise ValueError(f"subsets={subsets!r} must include () (the full model, the reference of ΔFVU)")
    form = form if form is not None else schur.ordered_real_schur(weights["W_hh"])
    sp = schur.split(form, alpha)
    result = ablation.ablation_profile(weights, lambda w: fvu_of(w, batch), alpha, subsets, form=form)
    full = result.score(())
    fvu, dfvu, mass, sens, empty = {}, {}, {}, {}, []
    for r in result.records:
        key = subset_key(r["subset"])
        mass[key] = float(r["removed_mass"])
        if key and mass[key] == 0.0:  # an empty ablation removes nothing: no intervention, no effect to score
            empty.append(key)
            fvu[key] = dfvu[key] = sens[key] = math.nan
            continue
        fvu[key] = float(r["score"])
        dfvu[key] = metrics.delta_fvu(fvu[key], full)
        sens[key] = metrics.sensitivity(dfvu[key], mass[key])
    return SolutionProfile(
        seed=int(seed),
        alpha=alpha,
        n_R=int(sp.n_R),
        fvu_full=float(full),
        fvu=fvu,
        dfvu=dfvu,
        mass=mass,
        sens=sens,
        moduli_over_rho=np.asarray(form.moduli) / form.rho,
        gaps=np.asarray(sp.block_gaps),
        min_gap=float(sp.min_gap),
        coupling_mass=float(result.coupling_mass),
        empty=tuple(empty),
    )


# ------------------------------------------------------------------------------------------------- one task


@dataclass
class TaskAnalysis:
    """Every solution of one task (one configuration of its parameters) profiled at one α."""

    task: str
    task_params: dict[str, Any]
    alpha: float
    profiles: list[SolutionProfile]
    solutions: list[TrainResult] = field(repr=False, default_factory=list)
    batch: Any = field(repr=False, default=None)

    @property
    def seeds(self) -> list[int]:
        return [p.seed for p in self.profiles]

    def values(self, kind: str, key: str) -> np.ndarray:
        """(n_seeds,) of ``kind`` ∈ {"fvu", "dfvu", "mass", "sens"} for a subset key (e.g. "CR", "RR+CC")."""
        params.choice("kind", kind, ("fvu", "dfvu", "mass", "sens"))
        return np.array([getattr(p, kind)[key] for p in self.profiles], dtype=np.float64)

    def dfvu(self, key: str) -> np.ndarray:
        return self.values("dfvu", key)

    def sens(self, key: str) -> np.ndarray:
        return self.values("sens", key)

    def fvu_full(self) -> np.ndarray:
        return np.array([p.fvu_full for p in self.profiles])

    def n_R(self) -> np.ndarray:
        return np.array([p.n_R for p in self.profiles])

    def mean_sem(self, kind: str, key: str) -> tuple[float, float, int]:
        """(mean, SEM, count) over the seeds where the value is defined (S_ΔT is NaN for an empty block)."""
        v = self.values(kind, key)
        v = v[np.isfinite(v)]
        if v.size == 0:
            return math.nan, math.nan, 0
        m, s = metrics.mean_sem(v)
        return m, s, int(v.size)

    def count(self, holds: Callable[[SolutionProfile], bool | None]) -> tuple[int, int]:
        """(k, n): solutions where ``holds(profile)`` is true, out of those where it is defined (not None)."""
        judged = [holds(p) for p in self.profiles]
        judged = [bool(j) for j in judged if j is not None]
        return sum(judged), len(judged)

    def per_solution(self, holds: Callable[[SolutionProfile], bool | None]) -> tuple[bool, ...]:
        """``holds(profile)`` for every solution where it is defined (empty blocks can leave some out)."""
        return tuple(bool(j) for j in (holds(p) for p in self.profiles) if j is not None)

    def fraction(self, holds: Callable[[SolutionProfile], bool | None]) -> float:
        """Fraction of the solutions where ``holds(profile)`` is defined for which it is true (NaN if none is)."""
        k, n = self.count(holds)
        return k / n if n else math.nan

    def n_empty(self, key: str) -> int:
        """Solutions in which the ablation ``key`` removes nothing (an empty block)."""
        return sum(key in p.empty for p in self.profiles)

    def min_threshold_gap(self) -> float:
        """Smallest | |λ|/ρ − α | over every block of every solution."""
        return float(min(p.min_gap for p in self.profiles))

    def table(self, digits: int = 3, caption: str | None = None) -> Table:
        """One row per subset: mean ± SEM over the seeds of FVU, ΔFVU, removed mass and S_ΔT, and the seed count."""
        rows = []
        for subset in schur.all_subsets():
            key = subset_key(subset)
            cells = [mean_sem_text(*self.mean_sem(kind, key), digits) for kind in ("fvu", "dfvu", "mass", "sens")]
            n_empty = self.n_empty(key) if key else 0
            rows.append((schur.label(subset), *cells, len(self.profiles) - n_empty, n_empty))
        headers = ("ablation", "FVU", "ΔFVU", "removed mass", "S_ΔT", "n", "empty")
        return Table(headers, tuple(rows), caption=caption)

    def per_seed_table(self, blocks: Sequence[str] = SINGLE_BLOCKS, caption: str | None = None) -> Table:
        """One row per solution: n_R, signed gap to the threshold, full FVU, ΔFVU and S_ΔT of each block."""
        head = ("seed", "n_R", "gap", "FVU", *(f"ΔFVU −{b}" for b in blocks), *(f"S_ΔT −{b}" for b in blocks))
        rows = [
            (p.seed, p.n_R, f"{p.signed_gap:+.4f}", f"{p.fvu_full:.4f}")
            + tuple("empty" if b in p.empty else f"{p.dfvu[b]:.3g}" for b in blocks)
            + tuple("empty" if b in p.empty else f"{p.sens[b]:.3g}" for b in blocks)
            for p in self.profiles
        ]
        return Table(head, tuple(rows), caption=caption)


def analyse_task(
    task: str,
    seeds: int | Sequence[int] = 10,
    *,
    alpha: float = PAPER_ALPHA,
    task_params: dict[str, Any] | None = None,
    n_heldout: int = N_HELDOUT,
    progress: bool = True,
    workers: int | None = None,
    **overrides,
) -> TaskAnalysis:
    """Train/load one solution per seed with the paper's §4 settings and profile every ablation subset at ``alpha``."""
    get_task(task)
    _seed_list(seeds)  # refused here, before any training
    task_params = task_params_for(task, task_params)
    alpha = params.real("alpha", alpha, min=0.0, max=1.0, min_open=True)
    n_heldout = params.integer("n_heldout", n_heldout, min=1)
    solutions = train_solutions(task, seeds, task_params, progress=progress, workers=workers, **overrides)
    batch = heldout_batch(task, task_params, n_heldout)
    profiles = [profile_solution(s.weights, batch, alpha=alpha, seed=s.config.seed) for s in solutions]
    return TaskAnalysis(task, task_params, alpha, profiles, solutions, batch)


# ------------------------------------------------------------------------------------------------- α-scan


@dataclass(frozen=True)
class AlphaScan:
    """n_R and single-block ΔFVU of every solution over a grid of α.

    ``n_R``: (n_seeds, n_alpha) int; ``dfvu``: block → (n_seeds, n_alpha); ``seeds``, ``alphas`` label the axes.
    """

    task: str
    alphas: np.ndarray
    seeds: list[int]
    n_R: np.ndarray
    dfvu: dict[str, np.ndarray]

    def n_R_changes(self) -> np.ndarray:
        """(n_seeds,) bool: whether n_R takes more than one value over the scanned α."""
        return np.array([len(np.unique(row)) > 1 for row in self.n_R])

    def ordering_flips(self, a: str, b: str) -> np.ndarray:
        """(n_seeds,) bool: whether the sign of ΔFVU(−a) − ΔFVU(−b) changes over the scanned α."""
        s = np.sign(self.dfvu[a] - self.dfvu[b])  # NaN where either block is empty: left out
        return np.array([len(np.unique(row[np.isfinite(row) & (row != 0)])) > 1 for row in s])


def alpha_scan(analysis: TaskAnalysis, alphas: Sequence[float], blocks: Sequence[str] = SINGLE_BLOCKS) -> AlphaScan:
    """Re-split and re-ablate every solution of ``analysis`` at each α (the Schur form is computed once)."""
    alphas = np.asarray([params.real("alpha", float(a), min=0.0, max=1.0, min_open=True) for a in alphas])
    params.subset("blocks", blocks, schur.ABLATION_BLOCKS)
    n_R = np.zeros((len(analysis.solutions), len(alphas)), dtype=int)
    dfvu = {b: np.zeros((len(analysis.solutions), len(alphas))) for b in blocks}
    for i, sol in enumerate(analysis.solutions):
        form = schur.ordered_real_schur(sol.weights["W_hh"])
        for j, a in enumerate(alphas):
            prof = profile_solution(
                sol.weights, analysis.batch, alpha=float(a), subsets=[(), *[(b,) for b in blocks]], form=form
            )
            n_R[i, j] = prof.n_R
            for b in blocks:
                dfvu[b][i, j] = prof.dfvu[b]
    return AlphaScan(analysis.task, alphas, [s.config.seed for s in analysis.solutions], n_R, dfvu)


# ------------------------------------------------------------------------------------------------- the paper's claims

#: An ordering is a list of comparisons (kind, a, b) that must all hold: value(kind, a) > value(kind, b), where kind is
#: "dfvu" or "sens" and a, b are single blocks. A comparison with an empty b is dropped; an empty a (or no comparison
#: left) makes the ordering undefined (None) for that solution.
Ordering = tuple[tuple[str, str, str], ...]

#: The orderings behind the paper's §4 claims, as generic names evaluated for every task.
ORDERINGS: dict[str, Ordering] = {
    "CR_largest": (("dfvu", "CR", "CC"), ("dfvu", "CR", "RR")),
    "CC_largest": (("dfvu", "CC", "CR"), ("dfvu", "CC", "RR")),
    "CC_gt_CR": (("dfvu", "CC", "CR"),),
    "sens_CR_gt_CC": (("sens", "CR", "CC"),),
}

#: The orderings the paper reports for each of its tasks (keys of ORDERINGS; lib.papers.schur_ablation).
PAPER_CLAIMS: dict[str, tuple[str, ...]] = dict(paper_a.TASK_ORDERINGS)


def _judge(ordering: Ordering | str, value: Callable[[str, str], float]) -> bool | None:
    """Evaluate an ordering on ``value(kind, block)`` (NaN: the block is empty); None when undefined."""
    ordering = ORDERINGS[ordering] if isinstance(ordering, str) else ordering
    kept = []
    for k, a, b in ordering:
        va, vb = value(k, a), value(k, b)
        if not math.isfinite(va):
            return None
        if math.isfinite(vb):
            kept.append(va > vb)
    return all(kept) if kept else None


def holds(ordering: Ordering | str, profile: SolutionProfile) -> bool | None:
    """Whether one solution satisfies an ordering (a name in ORDERINGS or the comparisons); None if undefined."""

    def value(kind: str, block: str) -> float:
        v = getattr(profile, kind)[block]
        return math.nan if block in profile.empty else v

    return _judge(ordering, value)


def holds_in_means(ordering: Ordering | str, analysis: TaskAnalysis) -> bool:
    """Whether the seed means of ``analysis`` (over the solutions where each block is not empty) satisfy an ordering
    (how the paper reports its claims); False when undefined."""
    return bool(_judge(ordering, lambda k, b: analysis.mean_sem(k, b)[0]))


def paper_orderings(task: str) -> dict[str, Callable[[SolutionProfile], bool]]:
    """Per-solution tests of the orderings the paper reports for ``task`` (empty for a task not in the paper)."""
    return {name: (lambda p, name=name: holds(name, p)) for name in PAPER_CLAIMS.get(task, ())}


#: Per-solution tests of every ordering in ORDERINGS (for comparing tasks).
GENERIC_ORDERINGS: dict[str, Callable[[SolutionProfile], bool]] = {
    name: (lambda p, name=name: holds(name, p)) for name in ORDERINGS
}


def subset_fraction(analysis: TaskAnalysis, ordering: Ordering | str, k: int = 3) -> float:
    """Over every choice of ``k`` of the solutions, the fraction whose seed means satisfy ``ordering``.

    This is how often a paper-sized study (three seeds) drawn from our solutions would report the ordering.
    """
    k = params.integer("k", k, min=1, max=len(analysis.profiles))
    picks = list(itertools.combinations(analysis.profiles, k))
    sub = lambda ps: TaskAnalysis(analysis.task, analysis.task_params, analysis.alpha, list(ps))  # noqa: E731
    return float(np.mean([holds_in_means(ordering, sub(ps)) for ps in picks]))


def safe_fraction(analyses: Sequence[TaskAnalysis], key: str, tolerance: float) -> float:
    """Fraction of the solutions (over every analysis) where the ablation ``key`` removes mass (is not empty) whose
    ΔFVU is at most ``tolerance``; NaN when it is empty in every solution."""
    v = np.concatenate([a.dfvu(key) for a in analyses])
    v = v[np.isfinite(v)]
    return float(np.mean(v <= tolerance)) if v.size else math.nan


def _seed_list(seeds: int | Sequence[int]) -> list[int]:
    if isinstance(seeds, Integral) and not isinstance(seeds, bool):
        return list(range(params.integer("seeds", seeds, min=1)))
    if isinstance(seeds, str | bytes | bool) or not isinstance(seeds, Iterable):
        raise TypeError(f"seeds={seeds!r} must be a count (an integer ≥ 1) or a sequence of seeds (integers ≥ 0)")
    seed_list = [params.integer(f"seeds[{i}]", s, min=0) for i, s in enumerate(seeds)]
    if not seed_list:
        raise ValueError("seeds=[] must name at least one seed")
    return seed_list


# ------------------------------------------------------------------------------------------------- tables for the book


def spec_table(task: str, task_params: dict[str, Any] | None = None) -> Table:
    """The task's specification (sizes, parameters, epochs, noise, target, source, choices) as a two-column table."""
    spec = get_task(task)
    values = {**spec.defaults, **task_params_for(task, task_params)}
    meta = spec.metadata
    rows = [
        ("inputs / outputs", f"{spec.n_inputs} / {spec.n_outputs}"),
        ("parameters", ", ".join(f"{k} = {v}" for k, v in values.items())),
        *[(label, str(meta[k])) for k, label in _META_ROWS if k in meta],
    ]
    return Table(("", task), tuple(rows))


_META_ROWS = (
    ("epochs", "epochs"),
    ("noise", "noise"),
    ("target", "target"),
    ("source", "source"),
    ("anchor", "anchor code"),
    ("paper_states", "the paper states"),
    ("we_choose", "we choose"),
)


def comparison_table(analysis: TaskAnalysis, first: int = 3) -> Table:
    """Single-block ΔFVU and S_ΔT: ours over all solutions, ours over the first ``first`` seeds, the paper's."""
    head = analysis.profiles[:first]
    sub = TaskAnalysis(analysis.task, analysis.task_params, analysis.alpha, head)
    rows = []
    for kind, name in (("dfvu", "ΔFVU"), ("sens", "S_ΔT")):
        for b in SINGLE_BLOCKS:
            ref = paper_value(analysis.task, kind, b)
            rows.append(
                (
                    f"{name}(−{schur.BLOCK_NAMES[b]})",
                    mean_sem_text(*analysis.mean_sem(kind, b)),
                    mean_sem_text(*sub.mean_sem(kind, b)),
                    "—" if ref is None else f"{ref[0]:.3g} ± {ref[1]:.2g}",
                )
            )
    n = len(analysis.profiles)
    headers = ("", f"ours ({n} seeds)", f"ours (seeds 0–{len(head) - 1})", "paper (3 seeds)")
    return Table(headers, tuple(rows), caption="Single-block ΔFVU and S_ΔT, mean ± SEM")


#: Robustness variants of the choices the paper leaves open (label → task_params), a few seeds each.
TASK_VARIANTS: dict[str, dict[str, dict[str, Any]]] = {
    "flipflop": {
        "pulse rate 0.5 (Golub)": {"pulse_prob": 0.5},
        "input noise σ = 0.1": {"input_noise": 0.1},
    },
    "sine": {"continuous ω ~ U(0.1, 0.6)": {"frequencies": "continuous"}},
    "context": {"dt = 1/48 (T = 1, noise ×1.39 per step)": {"dt": 1 / 48}},
}


# ------------------------------------------------------------------------------------------------- the copy task

#: Replay lags scored in the copy task (paper A §3.2: the first 128 generated steps).
COPY_LAGS = 128


def copy_chapter_configs(seeds: int, settings: dict[str, Any]) -> list[TrainConfig]:
    """The copy chapter's dense orthogonal solutions at its width, seeds 0..seeds−1, configured exactly as it does.

    ``settings``: the copy chapter's parameters (``bookrun.chapter_settings("copy_task")`` in a chapter).
    """
    from lib.paper_a.train import copy_config

    st = settings
    overrides = dict(
        lr=st["lr"],
        batch_size=st["batch_size"],
        steps=st["max_steps"],
        stop_accuracy=st["stop_accuracy"],
        stop_every=st["stop_every"],
        task_params={"replay_steps": st["replay_steps"]},
    )
    return [copy_config("dense_orthogonal", st["n_hidden"], s, **overrides) for s in range(seeds)]


def analyse_copy(
    configs: Sequence[TrainConfig],
    *,
    alpha: float = PAPER_ALPHA,
    n_heldout: int = 512,
    progress: bool = False,
    workers: int | None = None,
) -> TaskAnalysis:
    """Profile cached copy-task solutions like the §4 tasks: the score is the FVU of the autonomous replay.

    ``configs`` are the copy-task chapter's training configurations (loaded from the cache, trained if missing). The
    held-out batch replays ``COPY_LAGS`` steps with zero input; its mask selects exactly those lags, so the FVU is
    E‖ŷ − y‖² / E‖y − ȳ‖² over the 128 lags × 8 channels (ȳ ≈ 0 for ±1 symbols).
    """
    configs = list(configs)
    if not configs or any(c.task != "copy" for c in configs):
        raise ValueError(f"configs must be copy-task TrainConfigs; got tasks {[c.task for c in configs]}")
    solutions = load_or_train_many(configs, workers=workers, progress=progress)
    base = {k: v for k, v in configs[0].task_params.items() if k != "replay_steps"}
    batch = heldout_batch("copy", {**base, "replay_steps": COPY_LAGS}, n_heldout)
    profiles = [profile_solution(s.weights, batch, alpha=alpha, seed=s.config.seed) for s in solutions]
    return TaskAnalysis("copy", {**base, "replay_steps": COPY_LAGS}, alpha, profiles, solutions, batch)


# ------------------------------------------------------------------------------------------------- claims (paper A)

#: Our value is "of the paper's kind" when within this factor of the paper's (either way).
KIND_FACTOR = 3.0


def _within_factor(ours: float, paper: float, factor: float = KIND_FACTOR) -> bool:
    return bool(math.isfinite(ours) and paper > 0 and ours > 0 and 1 / factor <= ours / paper <= factor)


def task_claims(analysis: TaskAnalysis, safe_tolerance: float = 0.01, link: str = "") -> list[Claim]:
    """Paper A §4's claims for one of its tasks (none for a task outside the paper), computed from ``analysis``.

    Values (FVU, ΔFVU, S_ΔT): ``matches`` by the printed precision (FVU, against our SEM) or the mean ± SEM rule;
    ``holds`` (in kind) when within a factor ``KIND_FACTOR`` (FVU: at most ten times the paper's). Orderings: per
    solution, and in the seed means. "T_X has (almost) no effect": ΔFVU ≤ ``safe_tolerance`` per non-empty solution.
    """
    t = analysis.task
    if t not in paper_a.TASKS:
        return []
    paper = paper_a.TASKS[t]
    tag = f"A4_{t}"
    out = []
    q = paper["fvu_full"]
    fvu = analysis.fvu_full()
    m, s = metrics.mean_sem(fvu)
    s = s if math.isfinite(s) else 0.0
    out.append(
        Claim(
            f"{tag}_fvu_full", "A", q.section, f"{t}: the full model's held-out FVU", q.text, m,
            "within the printed precision + 2 SEM; in kind: at most 10× the paper's", ours_sem=s,
            ours_values=tuple(fvu), matches=matches_printed(m, q.value, q.half_unit, s), holds=bool(m <= 10 * q.value),
            link=link,
        )
    )  # fmt: skip
    for kind, name in (("dfvu", "ΔFVU"), ("sens", "S_ΔT")):
        for b, q in paper[kind].items():
            m, s, n = analysis.mean_sem(kind, b)
            out.append(
                Claim(
                    f"{tag}_{kind}_{b}", "A", q.section, f"{t}: {name}(−{schur.BLOCK_NAMES[b]})", str(q), m,
                    f"mean ± SEM agree within 2·sqrt(SEM_paper² + SEM_ours²); in kind: within {KIND_FACTOR:g}×",
                    ours_sem=s, ours_values=tuple(analysis.values(kind, b)),
                    matches=matches_mean_sem(m, s, q.value, q.sem), holds=_within_factor(m, q.value), link=link,
                )
            )  # fmt: skip
    for name in paper_a.TASK_ORDERINGS[t]:
        test = paper_orderings(t)[name]
        k, n = analysis.count(test)
        out.append(
            Claim(
                f"{tag}_{name}", "A", "§4, Fig. 2", f"{t}: {ORDERING_TEXT[name]}", paper["claim"], k / n if n else None,
                "holds per solution (≥ 80 % of the solutions where it is defined) and in the seed means",
                per_solution=analysis.per_solution(test), holds=holds_in_means(name, analysis), link=link,
            )
        )  # fmt: skip
    if t in paper_a.TASK_NEGLIGIBLE:
        b, words = paper_a.TASK_NEGLIGIBLE[t]
        m, s, n = analysis.mean_sem("dfvu", b)
        small = lambda p, b=b: None if b in p.empty else bool(p.dfvu[b] <= safe_tolerance)  # noqa: E731
        suffix = "negligible" if t == "flipflop" else "little"
        out.append(
            Claim(
                f"{tag}_{b}_{suffix}", "A", "§4", f"{t}: −{schur.BLOCK_NAMES[b]} has {words}", words,
                m if n else None,
                f"ΔFVU ≤ {safe_tolerance:g} in ≥ 80 % of the solutions where the block is not empty "
                f"(empty in {analysis.n_empty(b)} of {len(analysis.profiles)}), and in the mean",
                ours_sem=s if n else None, per_solution=analysis.per_solution(small),
                holds=bool(m <= safe_tolerance) if n else None, link=link,
            )
        )  # fmt: skip
    return out


#: The orderings in words.
ORDERING_TEXT = {
    "CR_largest": "ΔFVU(−T_C→R) is the largest single-block effect",
    "CC_largest": "ΔFVU(−T_CC) is the largest single-block effect",
    "CC_gt_CR": "ΔFVU(−T_CC) > ΔFVU(−T_C→R)",
    "sens_CR_gt_CC": "S_ΔT(−T_C→R) > S_ΔT(−T_CC)",
}


def copy_claims(
    rep: ablation.AblationResult,
    orth: Sequence[ablation.AblationResult],
    cayley: Sequence[ablation.AblationResult],
    scans: dict[str, Sequence[ablation.AblationResult]],
    n_R_over_alpha: dict[str, Sequence[Sequence[int]]],
    tol: float,
    negligible_mass: float,
    links: dict[str, str],
) -> list[Claim]:
    """Paper A §2.6 and §3's claims on the copy task.

    ``rep``: the representative dense orthogonal controller; ``orth``/``cayley``: every solution of each kind at the
    paper's width (rep among them); ``scans``: the representative controllers' Table-1 α-scans ("orth", "cayley");
    ``n_R_over_alpha``: n_R at the Table-1 thresholds for every solution of each kind; ``tol``: the accuracy change
    that still "preserves" replay (also the cut between functional classes); ``links``: section → link.
    """
    out = []
    sd = lambda v: float(np.std(v, ddof=1)) if len(v) > 1 else 0.0  # noqa: E731
    drops = lambda r: {s: r.score(()) - r.score(s) for s in r.subsets}  # noqa: E731
    for s, q in paper_a.COPY_DENSE_ORTH.items():
        key = "full" if not s else "minus_" + ("all" if len(s) == 3 else "_".join(s))
        values = [r.score(s) for r in orth]
        if not s:
            test = lambda r: r.score(()) >= 1 - tol  # noqa: E731
            words = f"replays (accuracy ≥ {1 - tol:g})"
        elif "RR" in s or "CR" in s:
            test = lambda r, s=s: drops(r)[s] > tol  # noqa: E731
            words = f"leaves the full class (drop > {tol:g})"
        else:
            test = lambda r, s=s: abs(drops(r)[s]) <= tol  # noqa: E731
            words = f"preserves replay (within {tol:g})"
        m, sem = metrics.mean_sem(np.array(values))
        out.append(
            Claim(
                f"A3_fig1_{key}", "A", q.section, f"dense orthogonal N_h = 72, {schur.label(s)}: {words}", q.text,
                rep.score(s), "the representative within the printed precision + 2 SD over solutions; holds: "
                + words, ours_sem=sem if len(values) > 1 else None, ours_values=tuple(values),
                per_solution=tuple(test(r) for r in orth), holds=bool(test(rep)),
                matches=matches_printed(rep.score(s), q.value, q.half_unit, sd(values)), link=links["fig1"],
            )
        )  # fmt: skip
    pairs = lambda r: max(abs(r.score(s) - r.score((*s, "CC"))) for s in schur.all_subsets() if "CC" not in s)  # noqa: E731
    out.append(
        Claim(
            "A3_CC_stabilizer", "A", "§3.4", "zeroing T_CC leaves replay unchanged given the other removed blocks",
            "largest change 0.001", pairs(rep), f"every pair (S, S + T_CC) within {tol:g}",
            per_solution=tuple(pairs(r) <= tol for r in orth), holds=bool(pairs(rep) <= tol), link=links["fig1"],
        )
    )  # fmt: skip
    stab = lambda r: abs(drops(r)[("CC",)]) <= tol and r.removed_mass(("CC",)) >= negligible_mass  # noqa: E731
    out.append(
        Claim(
            "A26_eps_stabilizer", "A", "§2.6", "T_CC is a candidate approximate functional invariance: small "
            "discrepancy while removing non-negligible Schur mass", None, rep.removed_mass(("CC",)),
            f"accuracy within {tol:g} and removed mass ‖ΔT‖/‖T‖ ≥ {negligible_mass:g}",
            per_solution=tuple(stab(r) for r in orth), holds=bool(stab(rep)), link=links["fig1"],
        )
    )  # fmt: skip
    order = lambda r: r.score(()) > r.score(("RR",)) > r.score(("CR",)) > r.score(("RR", "CR"))  # noqa: E731
    n_cls = lambda r: len(r.classes(tol))  # noqa: E731
    levels = [c[0] for c in rep.classes(tol)]
    lv_match = len(levels) == 4 and all(
        matches_printed(a, q.value, q.half_unit) for a, q in zip(levels, paper_a.CLASSES, strict=True)
    )
    out.append(
        Claim(
            "A3_classes", "A", "§3.4", "four functional classes: full ≈ −T_CC above −T_RR above −T_C→R above both",
            tuple(q.text for q in paper_a.CLASSES), n_cls(rep), "four classes in the paper's order (levels within "
            "the printed precision to match)", per_solution=tuple(n_cls(r) == 4 and order(r) for r in orth),
            holds=bool(n_cls(rep) == 4 and order(rep)), matches=bool(lv_match), ours_values=tuple(levels),
            link=links["classes"],
        )
    )  # fmt: skip
    for model, kind in (("dense orthogonal", "orth"), ("Cayley", "cayley")):
        q, cid = paper_a.TABLE1[model]["n_R"], f"A3_table1_nR_{kind}"
        ours = [r.n_R for r in scans[kind]]
        out.append(
            Claim(
                cid, "A", q.section, f"{model}: n_R = {q.text} at α = 0.85, 0.9, 0.95 (a spectral gap)", q.text,
                tuple(ours), "n_R the same at the three thresholds (per solution); matches: equal to the paper's",
                per_solution=tuple(len(set(v)) == 1 for v in n_R_over_alpha[kind]), holds=len(set(ours)) == 1,
                matches=all(v == q.value for v in ours), link=links["table1"],
            )
        )  # fmt: skip
    q = paper_a.TABLE1["dense orthogonal"]["minus_CR"]
    ours = [r.score(("CR",)) for r in scans["orth"]]
    spread = sd([r.score(("CR",)) for r in orth])
    out.append(
        Claim(
            "A3_table1_minus_CR_orth", "A", q.section, "dense orthogonal: −T_C→R gives 0.634 at all three α", q.text,
            tuple(ours), f"constant within {tol:g} over α and below the full class; matches: each within the "
            "printed precision + 2 SD over solutions", holds=bool(max(ours) - min(ours) <= tol and
            max(ours) < scans["orth"][0].score(()) - tol),
            matches=all(matches_printed(v, q.value, q.half_unit, spread) for v in ours), link=links["table1"],
        )
    )  # fmt: skip
    worst = lambda r: float(max(abs(v) for v in drops(r).values()))  # noqa: E731
    q = paper_a.CAYLEY_ACCURACY
    rep_c = next((r for r in scans["cayley"] if r.alpha == paper_a.ALPHA), scans["cayley"][0])
    out.append(
        Claim(
            "A3_cayley_harmless", "A", q.section, "Cayley: negligible couplings, every ablation leaves replay at 1",
            q.text, worst(rep_c), f"no ablation moves accuracy by more than {tol:g}; matches: every accuracy within "
            "the printed precision of 1.00", per_solution=tuple(worst(r) <= tol for r in cayley),
            holds=bool(worst(rep_c) <= tol),
            matches=all(matches_printed(v, q.value, q.half_unit) for v in rep_c.scores), link=links["cayley"],
        )
    )  # fmt: skip
    return out
