"""The R/C split of an ordered Schur form and the coupling masks of eq. (5) (paper A §2.3–2.4).

``R = {blocks with |λ| ≥ α·ρ(W)}`` (the leading blocks), ``C`` the rest::

    B = [[B_R, 0], [0, B_C]],    N = [[T_RR, T_C→R], [0, T_CC]]

:func:`split` is where α is validated (every caller passes α on, or passes the :class:`SchurSplit` itself).
:func:`partitioned_schur` is scipy's two-set partition at one α, a reference for the split.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.linalg import schur

from lib.core import params
from lib.paper_a.schur.diagonal_blocks import SchurOrderingError, _as_square_matrix, _block_eigen, _rel, _scan
from lib.paper_a.schur.ordered_form import SchurForm, _binary_exponent, _finish, _scaled_back
from lib.paper_a.schur.subsets import ABLATION_BLOCKS
from lib.papers.schur_ablation import ALPHA as PAPER_ALPHA

#: Tie rule of the split: a block with |λ| ≥ α·ρ − SPLIT_RTOL·ρ belongs to R, so a block exactly on the threshold
#: (up to rounding) deterministically goes to R.
SPLIT_RTOL = 1e-12


def check_alpha(alpha: Any) -> float:
    """α as a float if it is a finite real in (0, 1]; ``TypeError``/``ValueError`` naming ``alpha`` otherwise."""
    return params.real("alpha", alpha, min=0.0, max=1.0, min_open=True)


def partitioned_schur(W: Any, alpha: float = PAPER_ALPHA) -> SchurForm:
    """scipy's partition: ``schur(W, sort=callable)`` puts the R blocks (|λ| ≥ α·ρ, same tie rule as ``split``) first.

    Within R and within C the blocks are *not* ordered, so the form has ``fully_ordered=False``; it is a reference
    for the R/C partition (``split(form, alpha)`` works at this ``alpha`` only) and for what depends on the
    within-sector order (T_RR, T_CC) and what does not (T_C→R). Use :func:`ordered_real_schur` for the paper's form.
    """
    W = _as_square_matrix(W, "W")
    alpha = check_alpha(alpha)
    e = _binary_exponent(W)
    if e:
        return _scaled_back(_partitioned(np.ldexp(W, -e), alpha), W, e)
    return _partitioned(W, alpha)


def _partitioned(W: np.ndarray, alpha: float) -> SchurForm:
    """:func:`partitioned_schur` of a validated matrix whose entries are of ordinary size."""
    T0 = schur(W, output="real", check_finite=False)[0]
    rho = float(np.max(np.hypot(*_block_eigen(T0, *_scan(T0, 0)))))
    thr = alpha * rho - SPLIT_RTOL * rho
    try:
        T, Q, _ = schur(W, output="real", sort=lambda re, im: np.hypot(re, im) >= thr, check_finite=False)
    except np.linalg.LinAlgError as exc:
        raise SchurOrderingError(f"scipy could not partition the spectrum at alpha={alpha}: {exc}") from exc
    T = np.asfortranarray(T)
    return _finish(W, T, np.asfortranarray(Q), None)


@dataclass(frozen=True, eq=False)
class SchurSplit:
    """The R/C partition of an ordered form at ``threshold = alpha·rho`` and the masks of eq. (5).

    ``n_R``: coordinates in R (a 2×2 block counts 2); ``in_R``: (n_blocks,) bool per block; ``masks``: (n, n) bool
    for ``"RR"`` (strictly block-upper within R×R), ``"CR"`` (T_C→R: rows R × columns C) and ``"CC"`` (strictly
    block-upper within C×C); ``block_gaps``: |λ|/ρ − α per block; ``min_gap``: min |block_gaps| (how close the
    nearest block sits to the threshold, relative to ρ).
    """

    form: SchurForm = field(repr=False)
    alpha: float
    threshold: float
    n_R: int
    in_R: np.ndarray = field(repr=False)
    masks: dict[str, np.ndarray] = field(repr=False)
    block_gaps: np.ndarray = field(repr=False)
    min_gap: float

    @property
    def n_C(self) -> int:
        """Coordinates in C."""
        return self.form.n - self.n_R

    @property
    def N(self) -> np.ndarray:
        """(n, n): the coupling part T − B (the union of the three masks)."""
        return self.form.N

    def block(self, name: str) -> np.ndarray:
        """(n, n): T restricted to one coupling block (``"RR"``, ``"CR"`` or ``"CC"``), zeros elsewhere."""
        params.choice("name", name, ABLATION_BLOCKS)
        return np.where(self.masks[name], self.form.T, 0.0)

    def masses(self) -> dict[str, float]:
        """‖T_X‖_F / ‖T‖_F for each coupling block X."""
        return {k: _rel(self.block(k), self.form.T) for k in ABLATION_BLOCKS}


def split(form: SchurForm, alpha: float = PAPER_ALPHA) -> SchurSplit:
    """R = blocks with |λ| ≥ α·ρ(W) (the leading blocks), C = the rest; the masks of eq. (5) (paper A §2.3–2.4).

    Blocks are atomic, so a conjugate pair is never split. Tie rule: |λ| ≥ α·ρ − SPLIT_RTOL·ρ goes to R. For ρ = 0
    (W = 0) every block is in R. Raises SchurOrderingError if the R blocks are not the leading ones (only possible
    when a numerically unresolved cluster of eigenvalues straddles the threshold).
    """
    if not isinstance(form, SchurForm):
        raise TypeError(f"form must be a SchurForm from ordered_real_schur(W); got {type(form).__name__}")
    alpha = check_alpha(alpha)
    rho = form.rho
    threshold = alpha * rho
    in_R = form.moduli >= threshold - SPLIT_RTOL * rho
    n_blocks_R = int(in_R.sum())
    if not in_R[:n_blocks_R].all():
        if not form.fully_ordered:
            raise SchurOrderingError(
                f"this form is only partitioned (fully_ordered=False) and its leading blocks are not the R blocks "
                f"at alpha={alpha}; use ordered_real_schur(W) to split at any alpha"
            )
        raise SchurOrderingError(
            f"the R blocks at alpha={alpha} are not the leading blocks: eigenvalues within the ordering tolerance "
            f"{form.order_tolerance:.3g} straddle the threshold {threshold:.17g}"
        )
    n_R = sum(size for _, size in form.blocks[:n_blocks_R])
    b = form.block_of
    upper = b[:, None] < b[None, :]
    r = np.arange(form.n) < n_R
    masks = {
        "RR": upper & r[:, None] & r[None, :],
        "CR": r[:, None] & ~r[None, :],
        "CC": upper & ~r[:, None] & ~r[None, :],
    }
    for m in masks.values():
        m.flags.writeable = False
    gaps = form.moduli / rho - alpha if rho > 0 else np.full(len(form.blocks), 1.0 - alpha)
    gaps.flags.writeable = False
    in_R.flags.writeable = False
    return SchurSplit(
        form=form,
        alpha=alpha,
        threshold=float(threshold),
        n_R=int(n_R),
        in_R=in_R,
        masks=masks,
        block_gaps=gaps,
        min_gap=float(np.min(np.abs(gaps))),
    )
