"""Ordered real Schur coordinates, the R/C split, the coupling blocks of eq. (5), the ablation operator (paper A §2).

``W = Q T Qᵀ`` (eq. 3) with ``Q`` orthogonal and ``T`` real quasi-upper-triangular; ``T = B + N`` where ``B`` holds the
1×1/2×2 diagonal blocks and ``N`` the strictly block-upper couplings. The blocks are ordered by non-increasing
eigenvalue modulus with LAPACK ``dtrexc`` moves (scipy's ``schur(sort=...)`` only partitions the spectrum in two). The
split ``R = {blocks with |λ| ≥ α·ρ(W)}`` gives eq. (5)::

    B = [[B_R, 0], [0, B_C]],    N = [[T_RR, T_C→R], [0, T_CC]]

and ``ablate`` zeroes a chosen subset of {T_RR, T_C→R, T_CC} and rebuilds ``W̃ = Q T̃ Qᵀ``.

Everything is float64. Typical use::

    form = ordered_real_schur(W)            # T, Q, blocks, moduli, eigenvalues, rho
    sp = split(form, alpha=0.9)              # n_R, masks["RR" | "CR" | "CC"], block_gaps, min_gap
    ab = ablate(form, ["CC"], alpha=0.9)     # ab.W (ablated matrix), ab.removed_mass = ‖ΔT‖_F / ‖T‖_F

``ablate`` accepts either the matrix ``W`` or a precomputed :class:`SchurForm` (which avoids recomputing the
decomposition when several subsets are ablated).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from scipy.linalg import lapack, schur

from lib.core import params

__all__ = [
    "ABLATION_BLOCKS",
    "Ablation",
    "SchurForm",
    "SchurOrderingError",
    "SchurSplit",
    "SPLIT_RTOL",
    "ablate",
    "all_subsets",
    "block_coordinates",
    "block_structure",
    "canonical",
    "coupling_mass",
    "label",
    "ordered_real_schur",
    "partitioned_schur",
    "split",
]

#: The coupling blocks of eq. (5) that can be ablated, in canonical order.
ABLATION_BLOCKS: tuple[str, ...] = ("RR", "CR", "CC")

#: Paper notation of each ablation block (``CR`` is the paper's T_C→R: rows R, columns C).
BLOCK_NAMES: dict[str, str] = {"RR": "T_RR", "CR": "T_C→R", "CC": "T_CC"}

#: Ties in the ordering: a block is not moved ahead of the current one unless its modulus is larger by more than
#: ``ORDER_RTOL · ‖T‖_F`` (rounding noise in the moduli of, e.g., an orthogonal matrix is ~1e-16 · ‖T‖_F).
ORDER_RTOL = 1e-13

#: Tie rule of the split: a block with |λ| ≥ α·ρ − SPLIT_RTOL·ρ belongs to R, so a block exactly on the threshold
#: (up to rounding) deterministically goes to R.
SPLIT_RTOL = 1e-12

#: Post-conditions checked after every decomposition (relative to ‖W‖_F; the observed values are ~1e-15).
POST_RTOL = 1e-10

#: A matrix whose largest |entry| lies outside [2^−SAFE_EXPONENT, 2^SAFE_EXPONENT] is decomposed as W·2^−e (e its
#: binary exponent, so the largest entry is in [½, 1)) and T, the moduli and the eigenvalues are scaled back by 2^e;
#: both scalings are exact in floating point. Ordinary matrices are never scaled (their results are unchanged).
SAFE_EXPONENT = 200


class SchurOrderingError(RuntimeError):
    """The ordered Schur form could not be computed or failed a post-condition (never returned mis-ordered)."""


# --------------------------------------------------------------------------------------------------------------------
# the ordered form


@dataclass(frozen=True, eq=False)
class SchurForm:
    """Ordered real Schur form ``W = Q T Qᵀ`` (eq. 3), blocks by non-increasing eigenvalue modulus.

    ``T``, ``Q``: (n, n) float64; ``blocks``: ((start, size), ...) of each 1×1/2×2 diagonal block; ``moduli``: |λ| per
    block (non-increasing up to ``order_tolerance``); ``eigenvalues``: per block, complex, the one with Im ≥ 0;
    ``rho``: spectral radius ρ(W) = max |λ|; ``W``: the input matrix (float64 copy). All arrays are read-only.
    ``order_tolerance`` is the slack of the ordering: max(ORDER_RTOL·‖T‖_F, how far the swaps moved any modulus),
    which is ~1e-15·‖T‖_F for well-conditioned spectra and larger only for (nearly) defective eigenvalues.
    ``fully_ordered`` is False only for :func:`partitioned_schur` (scipy's two-set partition, ``order_tolerance=inf``).
    """

    T: np.ndarray
    Q: np.ndarray
    blocks: tuple[tuple[int, int], ...]
    moduli: np.ndarray
    eigenvalues: np.ndarray
    rho: float
    W: np.ndarray = field(repr=False)
    order_tolerance: float = 0.0
    fully_ordered: bool = True

    @property
    def n(self) -> int:
        """Matrix size."""
        return self.T.shape[0]

    @cached_property
    def block_of(self) -> np.ndarray:
        """(n,) int: index of the diagonal block holding each coordinate."""
        return block_coordinates(self.blocks, self.n)

    @cached_property
    def N(self) -> np.ndarray:
        """(n, n): the nonnormal couplings, T minus its diagonal blocks (strictly block-upper part)."""
        b = self.block_of
        out = np.where(b[:, None] < b[None, :], self.T, 0.0)
        out.flags.writeable = False
        return out

    @cached_property
    def B(self) -> np.ndarray:
        """(n, n): the block-diagonal part of T (the 1×1 and 2×2 eigenvalue blocks)."""
        b = self.block_of
        out = np.where(b[:, None] == b[None, :], self.T, 0.0)
        out.flags.writeable = False
        return out

    def reconstruction_error(self) -> float:
        """‖Q T Qᵀ − W‖_F / ‖W‖_F (absolute if W = 0)."""
        return _rel(self.Q @ self.T @ self.Q.T - self.W, self.W)

    def orthogonality_error(self) -> float:
        """‖QᵀQ − I‖_F."""
        return float(np.linalg.norm(self.Q.T @ self.Q - np.eye(self.n)))

    def __repr__(self) -> str:
        n_pairs = sum(s == 2 for _, s in self.blocks)
        return (
            f"SchurForm(n={self.n}, blocks={len(self.blocks)} ({n_pairs} 2×2), rho={self.rho:.6g}, "
            f"coupling_mass={coupling_mass(self):.4g})"
        )


def ordered_real_schur(W: Any) -> SchurForm:
    """Real Schur form of ``W`` (n, n) with diagonal blocks ordered by non-increasing |λ| (paper A, eq. 3, §2.3).

    ``scipy.linalg.schur`` gives an unordered form; a selection sort of the blocks then moves, at each position, the
    remaining block of largest modulus there with one LAPACK ``dtrexc`` call (T and Q updated together). The block
    structure is re-scanned after every move, since 2×2 blocks can split or merge. A failed swap (``info ≠ 0``: two
    neighbouring blocks too close to swap) raises :class:`SchurOrderingError`, as does any failed post-condition
    (reconstruction, orthogonality, quasi-triangular standard form, non-increasing moduli).
    """
    W = _as_square_matrix(W, "W")
    e = _binary_exponent(W)
    if e:
        return _scaled_back(_ordered(np.ldexp(W, -e)), W, e)
    return _ordered(W)


def _ordered(W: np.ndarray) -> SchurForm:
    """:func:`ordered_real_schur` of a validated matrix whose entries are of ordinary size."""
    T, Q = schur(W, output="real", check_finite=False)
    T = np.asfortranarray(T, dtype=np.float64)
    Q = np.asfortranarray(Q, dtype=np.float64)
    _check_standard_form(T)
    scale = float(np.linalg.norm(T))
    tie = ORDER_RTOL * scale
    coord_moduli_before = _coordinate_moduli(T)

    # the tail of blocks not yet placed, as Python lists (cheap to permute); re-read from T after every move
    pos = 0
    sizes, mods = _tail(T, pos)
    while len(sizes) > 1:
        k = max(range(len(mods)), key=mods.__getitem__)
        if mods[k] - mods[0] > tie:
            start = pos + sum(sizes[:k])
            _, _, info = lapack.dtrexc(T, Q, start + 1, pos + 1, overwrite_a=1, overwrite_q=1)
            if info != 0:
                raise SchurOrderingError(
                    f"LAPACK dtrexc could not move the block at row {start} (|λ|={mods[k]:.6g}) to row {pos} "
                    f"(info={info}): two neighbouring blocks are too close to swap (ill-conditioned eigenvalues)"
                )
            expected = [sizes[k], *sizes[:k]]
            if _sizes_in(T, pos, start + sizes[k]) == expected:  # the usual case: the block moved, nothing split
                sizes = expected + sizes[k + 1 :]
                mods = [mods[k], *mods[:k], *mods[k + 1 :]]
            else:  # a 2×2 block split or two 1×1 blocks merged during the swaps: re-scan the tail
                sizes, mods = _tail(T, pos)
        pos += sizes.pop(0)
        mods.pop(0)

    return _finish(W, T, Q, coord_moduli_before)


def partitioned_schur(W: Any, alpha: float = 0.9) -> SchurForm:
    """scipy's partition: ``schur(W, sort=callable)`` puts the R blocks (|λ| ≥ α·ρ, same tie rule as ``split``) first.

    Within R and within C the blocks are *not* ordered, so the form has ``fully_ordered=False``; it is a reference
    for the R/C partition (``split(form, alpha)`` works at this ``alpha`` only) and for what depends on the
    within-sector order (T_RR, T_CC) and what does not (T_C→R). Use :func:`ordered_real_schur` for the paper's form.
    """
    W = _as_square_matrix(W, "W")
    alpha = params.real("alpha", alpha, min=0.0, max=1.0, min_open=True)
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


def _finish(W: np.ndarray, T: np.ndarray, Q: np.ndarray, coord_moduli_before: np.ndarray | None) -> SchurForm:
    """Read off blocks/moduli/eigenvalues and check every post-condition; raise SchurOrderingError if one fails.

    ``coord_moduli_before=None`` marks a form that is only partitioned (no modulus-order check).
    """
    n = W.shape[0]
    _check_standard_form(T)
    starts, sizes = _scan(T, 0)
    re, im = _block_eigen(T, starts, sizes)
    moduli = np.hypot(re, im)
    ordered = coord_moduli_before is not None
    tol = ORDER_RTOL * float(np.linalg.norm(T))
    if ordered:
        # how far rounding in the swaps moved the moduli (as a multiset): the resolution at which the order is defined
        drift = float(np.max(np.abs(np.sort(coord_moduli_before) - np.sort(_coordinate_moduli(T)))))
        tol = max(tol, 2.0 * drift)
    rise = np.diff(moduli)
    if ordered and np.any(rise > tol):
        i = int(np.argmax(rise))
        raise SchurOrderingError(
            f"moduli are not non-increasing: block {i + 1} (|λ|={moduli[i + 1]:.17g}) follows block {i} "
            f"(|λ|={moduli[i]:.17g}), beyond the ordering tolerance {tol:.3g}"
        )
    rec = _rel(Q @ T @ Q.T - W, W)
    orth = float(np.linalg.norm(Q.T @ Q - np.eye(n)))
    if not (rec <= POST_RTOL and orth <= POST_RTOL):
        raise SchurOrderingError(
            f"post-condition failed: ‖QTQᵀ − W‖/‖W‖ = {rec:.3g}, ‖QᵀQ − I‖ = {orth:.3g} (allowed {POST_RTOL:g})"
        )
    T = np.ascontiguousarray(T)
    Q = np.ascontiguousarray(Q)
    eig = re + 1j * im
    for a in (T, Q, moduli, eig, W):
        a.flags.writeable = False
    return SchurForm(
        T=T,
        Q=Q,
        blocks=tuple((int(s), int(z)) for s, z in zip(starts, sizes, strict=True)),
        moduli=moduli,
        eigenvalues=eig,
        rho=float(moduli.max()),
        W=W,
        order_tolerance=tol if ordered else float("inf"),
        fully_ordered=ordered,
    )


def _binary_exponent(W: np.ndarray) -> int:
    """0 for a matrix of ordinary size, else the binary exponent e of its largest |entry| (= f·2^e, ½ ≤ f < 1)."""
    top = float(np.max(np.abs(W)))
    if top == 0.0 or 2.0**-SAFE_EXPONENT <= top <= 2.0**SAFE_EXPONENT:
        return 0
    return int(np.frexp(top)[1])


def _scaled_back(form: SchurForm, W: np.ndarray, e: int) -> SchurForm:
    """The form of ``W`` from the form of W·2^−e: T, moduli, eigenvalues and ρ times 2^e (Q is the same).

    Raises ``ValueError`` when T·2^e is not representable (an entry overflows, or a 2×2 block's coupling underflows
    to zero and the block would fall apart): then W's entries span more than double precision can hold in its Schur
    form.
    """
    with np.errstate(over="ignore", under="ignore"):
        T = np.ldexp(form.T, e)
        moduli = np.ldexp(form.moduli, e)
        eig = np.ldexp(form.eigenvalues.real, e) + 1j * np.ldexp(form.eigenvalues.imag, e)
    sizes = [size for _, size in form.blocks]
    broken = not (np.all(np.isfinite(T)) and np.all(np.isfinite(moduli))) or _sizes_in(T, 0, form.n) != sizes
    if not broken:
        try:
            _check_standard_form(T)
        except SchurOrderingError:
            broken = True
    if broken:
        nonzero = np.abs(W[W != 0])
        raise ValueError(
            f"W's entries span {nonzero.min():.3g} … {nonzero.max():.3g}, beyond what double precision represents in "
            f"its Schur form (T = QᵀWQ would {'overflow' if e > 0 else 'underflow'}; doubles hold about "
            f"2.2e-308 … 1.8e308); decompose W·2^{-e} instead and scale T and the eigenvalues back by 2^{e} in a "
            "wider type"
        )
    for a in (T, moduli, eig):
        a.flags.writeable = False
    return SchurForm(
        T=T,
        Q=form.Q,
        blocks=form.blocks,
        moduli=moduli,
        eigenvalues=eig,
        rho=float(np.max(moduli)),
        W=W,
        order_tolerance=float(np.ldexp(form.order_tolerance, e)),
        fully_ordered=form.fully_ordered,
    )


# --------------------------------------------------------------------------------------------------------------------
# the R/C split


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


def split(form: SchurForm, alpha: float = 0.9) -> SchurSplit:
    """R = blocks with |λ| ≥ α·ρ(W) (the leading blocks), C = the rest; the masks of eq. (5) (paper A §2.3–2.4).

    Blocks are atomic, so a conjugate pair is never split. Tie rule: |λ| ≥ α·ρ − SPLIT_RTOL·ρ goes to R. For ρ = 0
    (W = 0) every block is in R. Raises SchurOrderingError if the R blocks are not the leading ones (only possible
    when a numerically unresolved cluster of eigenvalues straddles the threshold).
    """
    if not isinstance(form, SchurForm):
        raise TypeError(f"form must be a SchurForm from ordered_real_schur(W); got {type(form).__name__}")
    alpha = params.real("alpha", alpha, min=0.0, max=1.0, min_open=True)
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


def coupling_mass(form: SchurForm) -> float:
    """‖N‖_F / ‖T‖_F: the nonnormal share of the Schur mass (0 for a normal matrix; 0 for W = 0)."""
    return _rel(form.N, form.T)


# --------------------------------------------------------------------------------------------------------------------
# the ablation operator


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


def ablate(W: Any, remove: Iterable[str], alpha: float = 0.9) -> Ablation:
    """Zero the coupling blocks ``remove`` ⊆ {"RR", "CR", "CC"} of T and rebuild W̃ = Q T̃ Qᵀ (paper A §2.5).

    ``W`` is the (n, n) matrix or a precomputed :class:`SchurForm` (then the decomposition is reused; for an empty
    ``remove`` the form's own input matrix is returned). An empty ``remove`` returns W itself, exactly.
    """
    remove = _canonical(remove)
    alpha = params.real("alpha", alpha, min=0.0, max=1.0, min_open=True)
    form = W if isinstance(W, SchurForm) else ordered_real_schur(W)
    sp = split(form, alpha)
    if not remove:
        return Ablation(W=form.W, T=form.T, removed_mass=0.0, remove=(), form=form, split=sp)
    mask = np.zeros((form.n, form.n), dtype=bool)
    for name in remove:
        mask |= sp.masks[name]
    T_ablated = np.where(mask, 0.0, form.T)
    removed = _rel(np.where(mask, form.T, 0.0), form.T)
    W_ablated = (form.Q @ T_ablated) @ form.Q.T
    return Ablation(W=W_ablated, T=T_ablated, removed_mass=removed, remove=remove, form=form, split=sp)


def all_subsets() -> tuple[tuple[str, ...], ...]:
    """The 8 subsets of ABLATION_BLOCKS in a readable order: ∅, CC, RR, RR+CC, CR, CR+CC, RR+CR, all."""
    return ((), ("CC",), ("RR",), ("RR", "CC"), ("CR",), ("CR", "CC"), ("RR", "CR"), ("RR", "CR", "CC"))


def label(subset: Iterable[str]) -> str:
    """Paper notation of an ablation: ``("RR", "CC")`` → ``"−T_RR, −T_CC"``; ``()`` → ``"full"``."""
    names = _canonical(subset, "subset")
    return ", ".join("−" + BLOCK_NAMES[k] for k in names) if names else "full"


def canonical(subset: Iterable[str], name: str = "subset") -> tuple[str, ...]:
    """A subset of ABLATION_BLOCKS as a tuple in canonical order (``["CC", "RR"]`` → ``("RR", "CC")``); validates."""
    return _canonical(subset, name)


def block_structure(T: Any) -> tuple[tuple[tuple[int, int], ...], np.ndarray]:
    """The diagonal blocks ((start, size), ...) of a real Schur form T and each block's eigenvalue (Im ≥ 0)."""
    T = np.asarray(T, dtype=np.float64)
    starts, sizes = _scan(T, 0)
    re, im = _block_eigen(T, starts, sizes)
    return tuple((int(a), int(b)) for a, b in zip(starts, sizes, strict=True)), re + 1j * im


def block_coordinates(blocks: Iterable[tuple[int, int]], n: int) -> np.ndarray:
    """(n,) int: the index of the block holding each coordinate, for blocks given as (start, size)."""
    out = np.empty(n, dtype=np.int64)
    for i, (start, size) in enumerate(blocks):
        out[start : start + size] = i
    return out


# --------------------------------------------------------------------------------------------------------------------
# helpers


def _canonical(remove: Iterable[str], name: str = "remove") -> tuple[str, ...]:
    names = params.subset(name, remove, ABLATION_BLOCKS)
    return tuple(k for k in ABLATION_BLOCKS if k in names)


def _as_square_matrix(W: Any, name: str) -> np.ndarray:
    """A float64 copy of a real, finite, non-empty square matrix; clear errors otherwise."""
    if hasattr(W, "detach"):  # torch tensor
        W = W.detach().cpu().numpy()
    arr = np.asarray(W)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"{name} must be a real numeric matrix; got dtype {arr.dtype}")
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real (the real Schur form); got dtype {arr.dtype}")
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise ValueError(f"{name} must be a square 2-D matrix; got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} must be non-empty; got shape {arr.shape}")
    arr = np.array(arr, dtype=np.float64, order="C")
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(
            f"{name} must be finite; it has {int(bad.sum())} NaN/inf entries, e.g. at {tuple(np.argwhere(bad)[0])}"
        )
    return arr


def _rel(x: np.ndarray, ref: np.ndarray) -> float:
    """‖x‖_F / ‖ref‖_F, or ‖x‖_F if ref = 0."""
    den = _norm(ref)
    num = _norm(x)
    if den > 0 and not (math.isfinite(num) and math.isfinite(den)):  # both beyond the doubles: scale them together
        top = max(float(np.max(np.abs(x))), float(np.max(np.abs(ref))))
        e = int(np.frexp(top)[1])
        return float(np.linalg.norm(np.ldexp(x, -e))) / float(np.linalg.norm(np.ldexp(ref, -e)))
    return num / den if den > 0 else num


def _norm(a: np.ndarray) -> float:
    """‖a‖_F; numpy's sum of squares when it neither overflows nor underflows (ordinary matrices), else scaled."""
    with np.errstate(over="ignore", under="ignore"):
        value = float(np.linalg.norm(a))
    if 2.0**-450 <= value <= 2.0**450:
        return value
    top = float(np.max(np.abs(a))) if a.size else 0.0
    if top == 0.0:
        return 0.0
    e = int(np.frexp(top)[1])
    return float(np.linalg.norm(np.ldexp(a, -e))) * 2.0**e


def _scan(T: np.ndarray, lo: int) -> tuple[np.ndarray, np.ndarray]:
    """Absolute starts and sizes of the diagonal blocks of T at rows >= lo (lo must be a block start)."""
    n = T.shape[0]
    sub = np.diagonal(T, -1)[lo:] != 0.0  # (n - 1 - lo,)
    second = np.zeros(n - lo, dtype=bool)
    second[1:] = sub
    starts = np.flatnonzero(~second)
    two = np.zeros(n - lo, dtype=bool)
    two[:-1] = sub
    return starts + lo, 1 + two[starts].astype(np.int64)


def _tail(T: np.ndarray, lo: int) -> tuple[list[int], list[float]]:
    """Sizes and moduli of the blocks at rows >= lo, as lists."""
    starts, sizes = _scan(T, lo)
    return sizes.tolist(), np.hypot(*_block_eigen(T, starts, sizes)).tolist()


def _sizes_in(T: np.ndarray, lo: int, hi: int) -> list[int]:
    """Block sizes of T[lo:hi, lo:hi] read from the subdiagonal (lo and hi are block boundaries)."""
    sub = np.diagonal(T, -1)[lo : hi - 1].tolist()
    out, i, m = [], 0, hi - lo
    while i < m:
        size = 2 if i < m - 1 and sub[i] != 0.0 else 1
        out.append(size)
        i += size
    return out


def _block_eigen(T: np.ndarray, starts: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Real and (non-negative) imaginary part of the eigenvalue of each block."""
    re = T[starts, starts].copy()
    im = np.zeros_like(re)
    two = sizes == 2
    if two.any():
        j = starts[two]
        p, q, r, s = T[j, j], T[j, j + 1], T[j + 1, j], T[j + 1, j + 1]
        half = 0.5 * (p - s)
        disc = half * half + q * r
        re[two] = 0.5 * (p + s)
        im[two] = np.sqrt(np.maximum(-disc, 0.0))
    return re, im


def _coordinate_moduli(T: np.ndarray) -> np.ndarray:
    """(n,): the modulus of the block holding each coordinate."""
    starts, sizes = _scan(T, 0)
    return np.repeat(np.hypot(*_block_eigen(T, starts, sizes)), sizes)


def _check_standard_form(T: np.ndarray) -> None:
    """T must be quasi-upper-triangular in Schur canonical form (what dtrexc requires)."""
    n = T.shape[0]
    if n > 2 and np.any(np.tril(T, -2) != 0.0):
        raise SchurOrderingError("T has nonzero entries below its first subdiagonal: not quasi-triangular")
    sub = np.diagonal(T, -1) != 0.0
    if np.any(sub[1:] & sub[:-1]):
        raise SchurOrderingError("T has two consecutive nonzero subdiagonal entries: not a real Schur form")
    j = np.flatnonzero(sub)
    opposite = ((T[j, j + 1] > 0) & (T[j + 1, j] < 0)) | ((T[j, j + 1] < 0) & (T[j + 1, j] > 0))  # no product: it
    if j.size and not (np.all(T[j, j] == T[j + 1, j + 1]) and np.all(opposite)):  # could under- or overflow
        raise SchurOrderingError(
            "a 2×2 block of T is not in standard form (equal diagonal, off-diagonals of opposite sign)"
        )
