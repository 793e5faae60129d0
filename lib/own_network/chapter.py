"""The chapter *Your own network* (``book/your_network.md``): its settings, the trials it trains and scores on, the
values it glues and its tables.

The chapter trains a ``torch.nn.RNN`` with biases in plain PyTorch (its loop is in the page), saves its state dict,
reads it back with :func:`lib.own_network.load_rnn` and analyses it as paper A does
(:func:`lib.own_network.analyse_network`); then a small ``nn.Sequential`` through paper B's lift
(:func:`lib.paper_b.any_module.lift_symmetry`). A reader's own file replaces the first network (``weights``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from IPython.display import Markdown, display

from lib.core import budget, params
from lib.core.cache import config_hash
from lib.core.lines import line
from lib.core.paths import build_dir
from lib.core.tables import Table
from lib.own_network import gym_trials
from lib.own_network.files import FILE_SUFFIXES, check_size, declared_arrays
from lib.own_network.load import RecurrentNet, load_rnn
from lib.own_network.paper_a import NetworkAnalysis, analyse_network, deciding_split
from lib.paper_a.task_analysis import PAPER_ALPHA
from lib.paper_a.tasks import available_tasks, get_task

#: A neurogym task's held-out trials are drawn with this seed plus the chapter's ``seed`` (its training trials with
#: ``seed`` itself); a task of the book is held out as in its own chapter.
HELDOUT_OFFSET = 1000
#: The trials the example network trains on (drawn once; batches are drawn from them).
N_TRAIN = 4096
#: The nonlinearities the analysis supports (paper A's RNN): a state dict does not record its network's.
NONLINEARITIES = ("tanh",)
#: A network solves its task, and is analysed, when its held-out FVU is at most this (``lines.learned_fvu``).
LEARNED_FVU = line("learned_fvu")


class NetworkDoesNotSolveTask(ValueError):
    """The network, as loaded, does not do the task it is analysed on (held-out FVU above the learned-task line)."""


@dataclass(frozen=True, kw_only=True)
class OwnNetworkStudy:
    """The chapter's parameters, checked once (``ValueError``, ``TypeError`` or ``FileNotFoundError`` naming the
    parameter); a file given as ``weights`` is read here, so that one of the wrong kind or size is refused before
    anything runs."""

    weights: str = ""  # a .pt/.pth/.npz file of the reader's network; "": train the chapter's example network
    task: str = gym_trials.DEFAULT_TASK  # a neurogym task id or a task registered with the book
    leak: float = 1.0  # the leak a of a network whose file does not give it (the example network: 1)
    hidden: int = 64  # units of the example network
    steps: int = 1500  # Adam steps of the example network
    lr: float = 0.003  # its learning rate
    batch_size: int = 64  # its batch
    seed: int = 0  # its initial weights, training trials and batches; neurogym's held-out trials: seed + 1000
    alpha: float = PAPER_ALPHA  # Schur split threshold (paper A)
    alphas: tuple = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95)  # the α-scan
    n_trials: int = 512  # a neurogym task's held-out trials (a task of the book: its chapter's)
    mlp_hidden: int = 16  # units of paper B's small network
    mlp_steps: int = 2000  # its Adam steps
    nonlinearity: str = "tanh"  # the nonlinearity of a file's network (a state dict does not say): tanh only
    analyse_anyway: bool = False  # analyse a network that does not solve the task (the page and results say so)

    def __post_init__(self):
        set_ = object.__setattr__
        if not isinstance(self.weights, str):
            raise TypeError(f"weights={self.weights!r} must be a path (a string), or '' for the example network")
        set_(self, "leak", params.real("leak", self.leak, min=0, max=1, min_open=True))
        for name, lo in (("hidden", 2), ("steps", 1), ("batch_size", 1), ("seed", 0), ("n_trials", 8),
                         ("mlp_hidden", 1), ("mlp_steps", 1)):  # fmt: skip
            set_(self, name, params.integer(name, getattr(self, name), min=lo))
        set_(self, "lr", params.real("lr", self.lr, min=0, min_open=True))
        set_(self, "alpha", params.real("alpha", self.alpha, min=0, max=1, min_open=True))
        set_(self, "alphas", _checked_alphas(self.alphas))
        if self.nonlinearity not in NONLINEARITIES:
            raise ValueError(f"nonlinearity={self.nonlinearity!r} is not supported: paper A's analysis is of tanh RNNs "
                             f"(allowed: {', '.join(map(repr, NONLINEARITIES))}); a state dict does not record its "
                             "network's nonlinearity, so the book cannot read another one as what it is")  # fmt: skip
        params.boolean("analyse_anyway", self.analyse_anyway)
        _check_task(self.task)
        if not self.weights:
            if self.leak != 1.0:
                raise ValueError(f"leak={self.leak} is for a file of your own (weights=...); the example network is a "
                                 "plain nn.RNN (leak 1)")  # fmt: skip
            self.work()
            return
        path = Path(self.weights).expanduser()
        if path.suffix.lower() not in FILE_SUFFIXES:
            raise ValueError(f"weights={self.weights!r}: allowed files end in {', '.join(FILE_SUFFIXES)}")
        if not path.is_file():
            what = "is a folder" if path.is_dir() else "is not a regular file (a pipe or a device)" if (
                path.exists()) else "does not exist"  # fmt: skip
            raise FileNotFoundError(
                f"weights={self.weights!r} {what} (a relative path is read from {Path.cwd()}, where the chapter "
                "runs: give an absolute path, e.g. -p weights $PWD/model.pt)"
            )
        declared = declared_arrays(path)  # headers only: the analysis's size, then the file's, before reading it
        self.work(max((sh[0] for sh, _ in declared.values() if len(sh) == 2 and sh[0] == sh[1]), default=self.hidden))
        check_size(path, declared)
        net = load_rnn(path, leak=self.leak)
        self.check_fits(net)
        check_solves(net, self)

    def work(self, units: int | None = None) -> budget.Work:
        """The chapter's size (:func:`lib.core.budget.bound`): the example network's training (Adam steps × batch ×
        hidden²; none for a file), paper A's analysis of ``units`` units (Schur forms ∝ N³ at each α) and paper B's
        small network; the largest arrays are the analysis's N × N matrices and held-out states."""
        book, n = budget.defaults(OwnNetworkStudy), units or self.hidden
        train = 0 if self.weights else self.steps * self.batch_size * self.hidden**2
        return budget.bound(
            "your_network",
            parts=[
                (0.4, (budget.Term("Adam steps × trials × hidden²", train, book["steps"] * book["batch_size"]
                                   * book["hidden"] ** 2, params=("steps", "batch_size", "hidden")),)),
                (0.4, (budget.Term("units", n, book["hidden"], 3, params=("weights" if self.weights else "hidden",)),
                       budget.Term("α values", len(self.alphas), len(book["alphas"]), params=("alphas",)))),
                (0.2, (budget.Term("paper B's Adam steps × units", self.mlp_steps * self.mlp_hidden,
                                   book["mlp_steps"] * book["mlp_hidden"], params=("mlp_steps", "mlp_hidden")),)),
            ],
            arrays={
                "the recurrent matrix's Schur forms and ablated copies": budget.floats(n, n, copies=10),
                "the held-out trials' states": budget.floats(self.n_trials, 100, n, copies=4),
            },
        )  # fmt: skip

    @property
    def neurogym(self) -> bool:
        """Whether the task is neurogym's (else the book's registry)."""
        return self.task not in available_tasks()

    def check_fits(self, net: RecurrentNet) -> None:
        """``ValueError`` unless ``net`` has the task's numbers of inputs and outputs."""
        if self.neurogym:
            inputs, targets, _, _ = gym_trials.neurogym_trials(self.task, 1, seed=0)
            sizes = inputs.shape[-1], targets.shape[-1]
        else:
            spec = get_task(self.task)
            sizes = spec.n_inputs, spec.n_outputs
        if (net.n_inputs, net.n_outputs) != sizes:
            raise ValueError(
                f"weights={self.weights!r} has {net.n_inputs} inputs and {net.n_outputs} outputs, but task="
                f"{self.task!r} has {sizes[0]} and {sizes[1]}: name the task the network was trained on"
            )

    def model_file(self) -> Path:
        """The reader's file, or where the example network's state dict is saved: the build folder, under a name
        that holds a hash of every setting the training reads (two runs that train differently never share it)."""
        if self.weights:
            return Path(self.weights).expanduser()
        keys = ("task", "hidden", "steps", "lr", "batch_size", "seed")
        digest = config_hash({k: v for k, v in asdict(self).items() if k in keys})[:10]
        return build_dir() / "your_network" / f"example-{self.task}-{digest}.pt"


def _checked_alphas(alphas: Any) -> tuple[float, ...]:
    if not isinstance(alphas, Sequence) or isinstance(alphas, str):
        raise TypeError(f"alphas={alphas!r} must be a list of at least two increasing values in (0, 1]")
    values = tuple(params.real("alphas", a, min=0, max=1, min_open=True) for a in alphas)
    if len(values) < 2 or list(values) != sorted(set(values)):
        raise ValueError(f"alphas={list(alphas)} must be a list of at least two increasing values in (0, 1]")
    return values


def _check_task(task: str) -> None:
    """``ValueError`` unless ``task`` is the book's or a neurogym task with discrete actions."""
    if task in available_tasks():
        return
    try:
        known = gym_trials.is_neurogym_task(task)
    except ModuleNotFoundError as exc:
        raise ValueError(f"task={task!r} is not a task of the book, and {exc}") from None
    if not known:
        raise ValueError(
            f"task={task!r} is neither a task registered with the book ({', '.join(available_tasks())}) "
            f"nor a neurogym task (e.g. {gym_trials.DEFAULT_TASK}, ContextDecisionMaking-v0, GoNogo-v0)"
        )
    gym_trials.check_discrete(task)


def study_trials(study: OwnNetworkStudy, *, heldout: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The study's training trials (:data:`N_TRAIN`, drawn with ``seed``) or a neurogym task's held-out trials
    (``n_trials``, seed + :data:`HELDOUT_OFFSET`): inputs (B, T, n_in), targets (B, T, n_out) and a mask
    (B, T, n_out), float64. A neurogym task's targets are the one-hot of its ground truth, fixation included."""
    if study.neurogym:
        seed = study.seed + HELDOUT_OFFSET * heldout
        inputs, targets, mask, _ = gym_trials.neurogym_trials(study.task, study.n_trials if heldout else N_TRAIN,
                                                              seed=seed)  # fmt: skip
    elif heldout:
        raise ValueError(f"task={study.task!r} is held out as in its chapter: analyse_network(net, task=...)")
    else:
        batch = get_task(study.task).generate(N_TRAIN, seed=study.seed)
        inputs, targets, mask = batch.inputs_btx, batch.targets_bty, getattr(batch, "mask_bty", None)
    inputs, targets = np.asarray(inputs, dtype=np.float64), np.asarray(targets, dtype=np.float64)
    mask = np.ones(targets.shape) if mask is None else np.asarray(mask, dtype=np.float64)
    return inputs, targets, np.broadcast_to(mask if mask.ndim == 3 else mask[..., None], targets.shape).copy()


def analyse_study(net: RecurrentNet, study: OwnNetworkStudy) -> tuple[NetworkAnalysis, float]:
    """Paper A's analysis of ``net`` on the study's held-out trials (a task of the book: its chapter's own), and a
    neurogym task's step accuracy on them (nan for a task of the book)."""
    if not study.neurogym:
        return analyse_network(net, task=study.task, alpha=study.alpha, alphas=study.alphas), math.nan
    heldout = study_trials(study, heldout=True)
    result = analyse_network(net, *heldout, alpha=study.alpha, alphas=study.alphas, name=study.task)
    return result, step_accuracy(net, heldout)


def held_out_fvu(net: RecurrentNet, study: OwnNetworkStudy) -> float:
    """The network's FVU on the study's held-out trials with nothing ablated (what :func:`analyse_study` reports as
    ``profile.fvu_full``), without the ablations."""
    from lib.own_network.paper_a import checked_trials, network_batch
    from lib.paper_a import metrics

    if study.neurogym:
        inputs, targets, mask = checked_trials(net, study_trials(study, heldout=True))
    else:
        inputs, targets, mask = network_batch(net, study.task)
    outputs, _ = net.run(inputs)
    return float(metrics.fvu(outputs, targets, mask))


def check_solves(net: RecurrentNet, study: OwnNetworkStudy) -> float:
    """The held-out FVU of ``net`` as loaded; :class:`NetworkDoesNotSolveTask` when it is above the learned-task line
    (:data:`LEARNED_FVU`) and the study does not say ``analyse_anyway``: Schur ablations of a network that does not do
    its task say nothing about how it does it."""
    fvu = held_out_fvu(net, study)
    if not fvu <= LEARNED_FVU and not study.analyse_anyway:
        raise NetworkDoesNotSolveTask(
            f"weights={study.weights or 'the example network'!r} does not solve task={study.task!r} as loaded: its "
            f"held-out FVU is {fvu:.3g}, above the book's learned-task line {LEARNED_FVU:g}. Check what a state dict "
            "cannot say: the nonlinearity (the book reads tanh; a relu network reads as a tanh one that fails), the "
            "task it was trained on (-p task) and the scaling of its inputs; or analyse it anyway with "
            "-p analyse_anyway True (the page and results.json of that run then say so)"
        )
    return fvu


def solves_values(fvu: float, study: OwnNetworkStudy) -> dict[str, Any]:
    """The glued record of the check: the FVU, whether the network solves the task, and the sentence the page shows
    (empty when it does)."""
    solves = fvu <= LEARNED_FVU
    sentence = "" if solves else (
        f"**This network does not solve {study.task} as loaded** (held-out FVU {fvu:.3g}, above the learned-task "
        f"line {LEARNED_FVU:g}); it is analysed only because `analyse_anyway` was set, and nothing below says how a "
        "network does the task.")  # fmt: skip
    return {"own_check_fvu": fvu, "own_solves_task": solves, "own_analysed_anyway": bool(study.analyse_anyway),
            "own_solves_warning": sentence}  # fmt: skip


def show_solves_warning(fvu: float, study: OwnNetworkStudy) -> None:
    """Display, in the page, the warning of :func:`solves_values` for a network analysed anyway (nothing otherwise)."""
    sentence = solves_values(fvu, study)["own_solves_warning"]
    if sentence:
        display(Markdown(sentence))


def step_accuracy(net: RecurrentNet, trials) -> float:
    """The share of the trials' steps (mask on) where the largest output is the ground truth's action.

    ``trials`` = (inputs (B, T, n_in), one-hot targets (B, T, n_out), mask (B, T, n_out)), as :func:`study_trials`
    gives them: the mask is read from its first channel, so a (B, T) mask must be widened first. An ablation is scored
    the same way on ``net.with_recurrent(W̃_hh)``."""
    inputs, targets, mask = trials
    out, _ = net.run(torch.as_tensor(inputs))
    on = mask[..., 0] > 0
    return float((out.numpy().argmax(-1) == targets.argmax(-1))[on].mean())


def _change_text(value: float) -> str:
    return "not at all (the block is empty)" if math.isnan(value) else f"by {value:.3g}"


def network_values(net: RecurrentNet, result: NetworkAnalysis, study: OwnNetworkStudy, accuracy: float) -> dict:
    """The glued description of the network, its split and its single-block ablations."""
    decides = deciding_split(net, result.alpha, split_on=result.split_on)
    values = {
        "own_n_hidden": net.n_hidden, "own_n_inputs": net.n_inputs, "own_n_outputs": net.n_outputs,
        "own_leak": float(net.a), "own_rho": float(decides.form.rho), "own_n_R": int(decides.n_R),
        "own_alpha": float(decides.alpha), "own_fvu_full": float(result.profile.fvu_full), "own_task": study.task,
        "own_biases": {(True, True): "recurrent and readout biases", (True, False): "a recurrent bias only",
                       (False, True): "a readout bias only", (False, False): "no biases"}[
            (net.b_h is not None, net.b_y is not None)],
        "own_source": "a file of the reader's" if study.weights else "the example network trained above",
        "own_accuracy": accuracy,
        "own_accuracy_sentence": "A task of the book is scored by the FVU alone." if math.isnan(accuracy) else
        f"On {accuracy:.1%} of the held-out steps its largest output is the ground truth's action.",
        "own_matrix": "its recurrent matrix" if net.a == 1 or result.split_on == "W_hh" else "(1 − a)·I + a·W_hh",
    }  # fmt: skip
    for key in ("RR", "CR", "CC"):  # the single-block ablations (the table has every subset)
        values[f"own_dfvu_{key}"] = float(result.profile.dfvu[key])
        values[f"own_dfvu_{key}_text"] = _change_text(float(result.profile.dfvu[key]))
        values[f"own_sens_{key}"] = float(result.profile.sens[key])
    return values


def network_table(net: RecurrentNet, result: NetworkAnalysis, study: OwnNetworkStudy) -> Table:
    """What was read: the network's sizes, biases, leak, and the split of paper A at α."""
    decides = deciding_split(net, result.alpha, split_on=result.split_on)
    shifted = net.a != 1 and result.split_on != "W_hh"
    rows = (
        ("network", study.model_file().name if study.weights else "the example network (trained above)"),
        ("units · inputs · outputs", f"{net.n_hidden} · {net.n_inputs} · {net.n_outputs}"),
        ("recurrent bias · readout bias", f"{_yes(net.b_h)} · {_yes(net.b_y)}"),
        ("leak a", f"{float(net.a):g}"),
        ("matrix whose spectrum decides the split", "(1 − a)·I + a·W_hh" if shifted else "W_hh"),
        ("its ρ · α · coordinates in R", f"{float(decides.form.rho):.4g} · {decides.alpha:g} · {int(decides.n_R)}"),
        ("held-out FVU, nothing ablated", f"{float(result.profile.fvu_full):.4g}"),
    )
    return Table(("", "this network"), rows, caption="The network as read back, and its Schur split")


def _yes(bias) -> str:
    return "no" if bias is None else "yes"
