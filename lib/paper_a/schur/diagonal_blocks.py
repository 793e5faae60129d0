"""The diagonal blocks of a real Schur form T and the numerics shared by the package (paper A §2.3).

A real Schur form is quasi-upper-triangular: 1×1 blocks (real eigenvalues) and 2×2 blocks in standard form (equal
diagonal, off-diagonals of opposite sign: a conjugate pair) along its diagonal, read from the subdiagonal. Here: reading
the blocks and their eigenvalues, checking the standard form, validating an input matrix, and Frobenius ratios that
neither overflow nor underflow.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np


class SchurOrderingError(RuntimeError):
    """The ordered Schur form could not be computed or failed a post-condition (never returned mis-ordered)."""


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
