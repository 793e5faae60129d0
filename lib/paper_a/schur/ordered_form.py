"""The ordered real Schur form ``W = Q T Qᵀ`` (paper A eq. 3, §2.3): blocks by non-increasing eigenvalue modulus.

``scipy.linalg.schur`` gives an unordered form; LAPACK ``dtrexc`` moves then order it (scipy's ``schur(sort=...)`` only
partitions the spectrum in two, see :func:`lib.paper_a.schur.sectors.partitioned_schur`). Every form is checked
against its post-conditions before it is returned.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from scipy.linalg import lapack, schur

from lib.paper_a.schur.diagonal_blocks import (
    SchurOrderingError,
    _as_square_matrix,
    _block_eigen,
    _check_standard_form,
    _coordinate_moduli,
    _rel,
    _scan,
    _sizes_in,
    _tail,
    block_coordinates,
)

#: Ties in the ordering: a block is not moved ahead of the current one unless its modulus is larger by more than
#: ``ORDER_RTOL · ‖T‖_F`` (rounding noise in the moduli of, e.g., an orthogonal matrix is ~1e-16 · ‖T‖_F).
ORDER_RTOL = 1e-13

#: Post-conditions checked after every decomposition (relative to ‖W‖_F; the observed values are ~1e-15).
POST_RTOL = 1e-10

#: A matrix whose largest |entry| lies outside [2^−SAFE_EXPONENT, 2^SAFE_EXPONENT] is decomposed as W·2^−e (e its
#: binary exponent, so the largest entry is in [½, 1)) and T, the moduli and the eigenvalues are scaled back by 2^e;
#: both scalings are exact in floating point. Ordinary matrices are never scaled (their results are unchanged).
SAFE_EXPONENT = 200


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


def coupling_mass(form: SchurForm) -> float:
    """‖N‖_F / ‖T‖_F: the nonnormal share of the Schur mass (0 for a normal matrix; 0 for W = 0)."""
    return _rel(form.N, form.T)
