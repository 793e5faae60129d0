"""The ablation operator (paper A §2.5): zero a subset of the coupling blocks of T and rebuild W̃ = Q T̃ Qᵀ."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lib.paper_a.schur.diagonal_blocks import _rel
from lib.paper_a.schur.ordered_form import SchurForm, ordered_real_schur
from lib.paper_a.schur.sectors import PAPER_ALPHA, SchurSplit, split
from lib.paper_a.schur.subsets import _canonical, label


@dataclass(frozen=True, eq=False)
class Ablation:
    """W̃(S) = Q T̃(S) Qᵀ with the coupling blocks in ``remove`` zeroed (paper A §2.5).

    ``W``: (n, n) the ablated matrix (the input itself when ``remove`` is empty); ``T``: T̃(S);
    ``removed_mass``: ‖ΔT‖_F / ‖T‖_F with ΔT = T − T̃(S); ``remove``: the zeroed blocks in canonical order.
    """

    W: np.ndarray
    T: np.ndarray = field(repr=False)
    removed_mass: float
    remove: tuple[str, ...]
    form: SchurForm = field(repr=False)
    split: SchurSplit = field(repr=False)

    @property
    def label(self) -> str:
        """Paper notation, e.g. ``"−T_RR, −T_CC"`` or ``"full"``."""
        return label(self.remove)


def ablate(W: Any, remove: Iterable[str], alpha: float | None = None) -> Ablation:
    """Zero the coupling blocks ``remove`` ⊆ {"RR", "CR", "CC"} of T and rebuild W̃ = Q T̃ Qᵀ (paper A §2.5).

    ``W`` is the (n, n) matrix, a precomputed :class:`SchurForm` (the decomposition is reused) or a precomputed
    :class:`SchurSplit` (the split is reused: the way to ablate several subsets of one solution). ``alpha`` (default:
    the paper's) applies to a matrix or a form; a split carries its own. An empty ``remove`` returns the form's own
    input matrix, exactly.
    """
    remove = _canonical(remove)
    if isinstance(W, SchurSplit):
        if alpha is not None and alpha != W.alpha:
            raise ValueError(f"alpha={alpha!r} differs from the split's alpha={W.alpha}; pass one or the other")
        sp = W
    else:
        form = W if isinstance(W, SchurForm) else ordered_real_schur(W)
        sp = split(form, PAPER_ALPHA if alpha is None else alpha)
    form = sp.form
    if not remove:
        return Ablation(W=form.W, T=form.T, removed_mass=0.0, remove=(), form=form, split=sp)
    mask = np.zeros((form.n, form.n), dtype=bool)
    for name in remove:
        mask |= sp.masks[name]
    T_ablated = np.where(mask, 0.0, form.T)
    removed = _rel(np.where(mask, form.T, 0.0), form.T)
    W_ablated = (form.Q @ T_ablated) @ form.Q.T
    return Ablation(W=W_ablated, T=T_ablated, removed_mass=removed, remove=remove, form=form, split=sp)
