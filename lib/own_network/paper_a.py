"""Paper A's Schur-coupling ablations (§2.5, §2.7) on a recurrent network of the reader's own (:class:`RecurrentNet`).

The book's machinery, unchanged: the ordered real Schur form and its R/C split (:mod:`lib.paper_a.schur`), the one
subset-ablation routine (:func:`lib.paper_a.ablation.subset_ablations`) with a scorer that rolls out the reader's
network, the book's FVU, ΔFVU and S_ΔT (:mod:`lib.paper_a.metrics`), its per-solution record
(:class:`~lib.paper_a.task_analysis.SolutionProfile`), its α-scan record (:class:`~lib.paper_a.task_analysis.AlphaScan`)
and its orderings (:func:`lib.paper_a.task_analysis.holds`). An ablation replaces W_hh alone: W_xh, W_hy, b_h, b_y and
the leak a stay as trained. For a bias-free network with a = 1 every number equals the book's task analysis
(:func:`lib.paper_a.task_analysis.profile_solution`) of the same weights on the same trials, bit for bit.

**Which spectrum decides the split.** One step of a leaky network, linearised at h = 0 without drive, is
M = (1 − a)·I + a·W_hh = Q((1 − a)·I + a·T)Qᵀ: W_hh's Schur vectors, eigenvalues 1 − a + a·λ. What persists over
time is decided by |1 − a + a·λ|, not |λ| (with a = ½, λ = −0.9 shrinks to 0.05 per step, λ = 0.8 to 0.9), so by
default (``split_on="effective"``) the blocks are ordered and split at α·ρ(M) by M's moduli; ``split_on="W_hh"``
splits by |λ| instead. For a = 1, M = W_hh and both are the book's split. Either way the blocks zeroed are those of
W_hh's own T = (T_M − (1 − a)·I)/a in the same Q ((1 − a)·I adds nothing off the diagonal blocks), so
W̃_hh = Q T̃ Qᵀ and the removed mass is ‖ΔT‖_F/‖T‖_F of W_hh's T, as in the paper. The split's threshold, gaps and
``moduli_over_rho`` are those of the spectrum that decided it. With a bias b_h, h = 0 is no longer a fixed point and
the tanh slope at the network's operating point is not in M: the split is still made on M (paper A's networks have no
biases and the paper gives no other rule), and the biases are held fixed in every ablation.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import torch

from lib.core import params
from lib.core.tables import Table
from lib.own_network.load import RecurrentNet, _tensor
from lib.paper_a import ablation, metrics, schur
from lib.paper_a.task_analysis import (
    N_HELDOUT,
    ORDERING_TEXT,
    ORDERINGS,
    PAPER_ALPHA,
    SINGLE_BLOCKS,
    AlphaScan,
    SolutionProfile,
    heldout_batch,
    holds,
)
from lib.paper_a.task_analysis.profiles import scored_profile

#: The spectra that can decide the R/C split: M = (1 − a)·I + a·W_hh, or W_hh itself (the same for a = 1).
SPLIT_ON = ("effective", "W_hh")

#: (inputs_btx, targets_bty, mask_bty or None), float64.
Trials = tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]


def effective_recurrence(net: RecurrentNet) -> np.ndarray:
    """M = (1 − a)·I + a·W_hh (N, N) float64: one step linearised at h = 0 without drive (W_hh itself for a = 1)."""
    W = net.W_hh.numpy()
    return W.copy() if net.a == 1.0 else (1.0 - net.a) * np.eye(net.n_hidden) + net.a * W


def network_split(net: RecurrentNet, alpha: float = PAPER_ALPHA, *, split_on: str = "effective") -> schur.SchurSplit:
    """The R/C split whose coupling blocks of W_hh's T are ablated (module docstring): ``schur.split`` of the ordered
    Schur form of M (``split_on="effective"``) or of W_hh (``"W_hh"``), carried over to W_hh's T in the same Q."""
    return _split_at(*_deciding_form(net, split_on), net, alpha)


def deciding_split(net: RecurrentNet, alpha: float = PAPER_ALPHA, *, split_on: str = "effective") -> schur.SchurSplit:
    """The split of the matrix that decides it (M for a leaky network, else W_hh) in that matrix's own terms: its
    eigenvalues, ρ and threshold α·ρ (what a figure of the split shows; :func:`network_split` is what is ablated)."""
    return schur.split(_deciding_form(net, split_on)[0], alpha)


def _deciding_form(net: RecurrentNet, split_on: str) -> tuple[schur.SchurForm, bool]:
    """The ordered Schur form that decides the split, and whether it is M's (a < 1) rather than W_hh's own."""
    params.choice("split_on", split_on, SPLIT_ON)
    shifted = split_on == "effective" and net.a != 1.0
    return schur.ordered_real_schur(effective_recurrence(net) if shifted else net.W_hh.numpy()), shifted


def _split_at(form: schur.SchurForm, shifted: bool, net: RecurrentNet, alpha: float) -> schur.SchurSplit:
    """``schur.split(form, alpha)``; for M's form, its masks and gaps over W_hh's T = (T_M − (1 − a)·I)/a, same Q."""
    sectors = schur.split(form, alpha)
    if not shifted:
        return sectors
    a = net.a
    T = (form.T - (1.0 - a) * np.eye(form.n)) / a
    lam = (form.eigenvalues - (1.0 - a)) / a
    moduli, W = np.abs(lam), net.W_hh.numpy().copy()
    for array in (T, lam, moduli, W):
        array.flags.writeable = False
    on_W = schur.SchurForm(T=T, Q=form.Q, blocks=form.blocks, moduli=moduli, eigenvalues=lam, rho=float(moduli.max()),
                           W=W, order_tolerance=form.order_tolerance / a, fully_ordered=False)  # fmt: skip
    return replace(sectors, form=on_W)


def network_batch(
    net: RecurrentNet, task: str, *, task_params: dict | None = None, n_trials: int = N_HELDOUT
) -> Trials:
    """A registered task's held-out trials (inputs_btx, targets_bty, mask_bty or None), float64: the task chapters'
    :func:`lib.paper_a.task_analysis.heldout_batch`, checked to fit the network's inputs and outputs."""
    n_trials = params.integer("n_trials", n_trials, min=1)
    try:
        return checked_trials(net, heldout_batch(task, task_params, n_trials))
    except ValueError as exc:
        raise ValueError(f"task={task!r}: {exc}") from None


def checked_trials(net: RecurrentNet, batch: Sequence[Any]) -> Trials:
    """(inputs_btx (B, T, n_in), targets_bty (B, T, n_out), mask or None) as float64 tensors, checked against ``net``;
    a (B, T) mask is widened to (B, T, n_out). ``ValueError`` naming the array and the shape it must have."""
    if not isinstance(batch, tuple | list) or len(batch) not in (2, 3):
        raise TypeError(f"batch={type(batch).__name__} must be (inputs_btx, targets_bty) or (…, mask_bty)")
    inputs, targets, mask = (*batch, None)[:3]
    x, y = _tensor("inputs_btx", inputs), _tensor("targets_bty", targets)
    if x.ndim != 3 or x.shape[1] == 0 or x.shape[2] != net.n_inputs:
        raise ValueError(f"inputs_btx has shape {tuple(x.shape)}; it must be (B, T ≥ 1, n_in = {net.n_inputs})")
    if tuple(y.shape) != (*x.shape[:2], net.n_outputs):
        raise ValueError(f"targets_bty has shape {tuple(y.shape)}; it must be (B, T, n_out) = "
                         f"{(*x.shape[:2], net.n_outputs)}")  # fmt: skip
    m = None if mask is None else _tensor("mask_bty", mask)
    if m is not None and tuple(m.shape) == tuple(x.shape[:2]):
        m = m[..., None].expand(y.shape).clone()
    if m is not None and (m.shape != y.shape or bool((m < 0).any())):
        raise ValueError(f"mask_bty has shape {tuple(m.shape)}; it must be (B, T) or (B, T, n_out) = {tuple(y.shape)}, "
                         "with entries ≥ 0")  # fmt: skip
    if not float(metrics.target_variance(y, m)) > 0:
        raise ValueError("targets_bty do not vary over the (masked) trials and steps: the FVU is undefined")
    return x, y, m


def _scorer(net: RecurrentNet, batch: Trials) -> ablation.Scorer:
    """The :data:`~lib.paper_a.ablation.Scorer` of the reader's network: each ablated W̃_hh rolled out alone with
    W_xh, W_hy, b_h, b_y and a kept, scored by the book's FVU."""

    def score(ablations: Sequence[schur.Ablation]) -> list[float]:
        fvus = []
        for ab in ablations:
            W = net.W_hh if not ab.remove else torch.as_tensor(np.array(ab.W), dtype=torch.float64)
            outputs, _ = net.with_recurrent(W).run(batch[0])
            fvus.append(metrics.fvu(outputs, batch[1], batch[2]))
        return fvus

    return score


def profile_network(
    net: RecurrentNet,
    batch: Sequence[Any],
    *,
    alpha: float = PAPER_ALPHA,
    subsets: Sequence[Iterable[str]] | None = None,
    split_on: str = "effective",
    sectors: schur.SchurSplit | None = None,
) -> SolutionProfile:
    """FVU, ΔFVU, removed mass and S_ΔT of each subset of {T_RR, T_C→R, T_CC} (default: all 8) of ``net`` on ``batch``
    = (inputs_btx, targets_bty[, mask]), as the book's :class:`SolutionProfile` (seed −1). ``sectors``: a split from
    :func:`network_split` (then ``alpha`` and ``split_on`` are not used)."""
    batch = checked_trials(net, batch)
    subsets = schur.all_subsets() if subsets is None else [schur.canonical(s, "subsets") for s in subsets]
    sp = network_split(net, alpha, split_on=split_on) if sectors is None else sectors
    own = sp.form.fully_ordered  # False: the split was decided on M, whose moduli the gaps hold
    return scored_profile(sp, subsets, _scorer(net, batch),
                          moduli_over_rho=None if own else np.asarray(sp.block_gaps) + sp.alpha)  # fmt: skip


def scan_network(
    net: RecurrentNet,
    batch: Sequence[Any],
    alphas: Sequence[float],
    *,
    blocks: Sequence[str] = SINGLE_BLOCKS,
    split_on: str = "effective",
    name: str = "own network",
) -> AlphaScan:
    """n_R and single-block ΔFVU over a grid of α, as the book's :class:`AlphaScan` with one row (seed −1): one Schur
    form, re-split at each α; the α's that give the same n_R share one profile (as in the task chapters' α-scan)."""
    batch = checked_trials(net, batch)
    params.subset("blocks", blocks, schur.ABLATION_BLOCKS)
    alphas = np.asarray([float(a) for a in alphas])
    form, shifted = _deciding_form(net, split_on)
    n_R = np.zeros((1, len(alphas)), dtype=int)
    dfvu = {b: np.zeros((1, len(alphas))) for b in blocks}
    by_n_R: dict[int, SolutionProfile] = {}
    for j, a in enumerate(alphas):
        sp = _split_at(form, shifted, net, float(a))
        prof = by_n_R.get(sp.n_R)
        if prof is None:
            prof = by_n_R[sp.n_R] = profile_network(net, batch, subsets=[(), *[(b,) for b in blocks]], sectors=sp)
        n_R[0, j] = prof.n_R
        for b in blocks:
            dfvu[b][0, j] = prof.dfvu[b]
    return AlphaScan(name, alphas, [-1], n_R, dfvu)


@dataclass(frozen=True, eq=False)
class NetworkAnalysis:
    """Paper A's analysis of one network: ``profile`` (every ablation at ``alpha``), ``orderings`` (each of the book's
    generic orderings: True, False, or None where undefined), ``scan`` (the α-scan, or None), ``source`` (the task
    name, or ``"arrays"``), ``split_on`` and the ``split`` that was ablated."""

    net: RecurrentNet = field(repr=False)
    source: str
    alpha: float
    split_on: str
    profile: SolutionProfile = field(repr=False)
    orderings: dict[str, bool | None]
    scan: AlphaScan | None = field(repr=False, default=None)
    split: schur.SchurSplit | None = field(repr=False, default=None)

    def table(self, floatfmt: str = ".4g", caption: str | None = None) -> Table:
        """One row per ablated subset: FVU, ΔFVU, removed mass, S_ΔT ("—" for an ablation that removes nothing)."""
        p = self.profile
        rows = tuple((schur.label(s), p.fvu[k], p.dfvu[k], p.mass[k], p.sens[k])
                     for s in schur.all_subsets() if (k := ablation.subset_key(s)) in p.fvu)  # fmt: skip
        return Table(("ablation", "FVU", "ΔFVU", "removed mass", "S_ΔT"), rows, floatfmt, caption)

    def ordering_table(self, caption: str | None = None) -> Table:
        """One row per ordering of the book (in words) and whether it holds here."""
        text = {True: "holds", False: "does not hold", None: "undefined (an empty block)"}
        return Table(("ordering", "here"), tuple((ORDERING_TEXT[k], text[v]) for k, v in self.orderings.items()),
                     caption=caption)  # fmt: skip


def analyse_network(
    net: RecurrentNet,
    inputs_btx: Any = None,
    targets_bty: Any = None,
    mask_bty: Any = None,
    *,
    task: str | None = None,
    task_params: dict | None = None,
    n_trials: int = N_HELDOUT,
    alpha: float = PAPER_ALPHA,
    alphas: Sequence[float] = (),
    split_on: str = "effective",
    name: str | None = None,
) -> NetworkAnalysis:
    """Profile ``net`` at ``alpha`` on the given trials, or on a registered ``task``'s held-out trials (as the task
    chapters draw them, :func:`network_batch`), judge the book's orderings and scan ``alphas`` (none: no scan).
    ``name``: what the trials are called in the result and the scan's figure (default: the task, or "arrays")."""
    if (task is None) == (inputs_btx is None):
        given = "both" if task is not None else "neither"
        raise ValueError(
            f"task={task!r}: give a registered task or inputs_btx and targets_bty, one of them ({given} given)"
        )
    if task is None:
        batch, source = checked_trials(net, (inputs_btx, targets_bty, mask_bty)), name or "arrays"
    else:
        batch, source = network_batch(net, task, task_params=task_params, n_trials=n_trials), task
    sp = network_split(net, alpha, split_on=split_on)
    prof = profile_network(net, batch, sectors=sp)
    scan = scan_network(net, batch, alphas, split_on=split_on, name=source) if len(alphas) else None
    orderings = {k: holds(k, prof) for k in ORDERINGS}
    return NetworkAnalysis(net=net, source=source, alpha=sp.alpha, split_on=split_on, profile=prof,
                           orderings=orderings, scan=scan, split=sp)  # fmt: skip
