"""One-CPU routes for the dense linear algebra of paper B's lift (``lib.paper_b.lifting``): same results to rounding.

Measured on this book's AMD EPYC CPUs, one thread each (``OMP_NUM_THREADS=1``, which the book's executor sets; numpy's
OpenBLAS, like torch's MKL, then computes on one thread):

* symmetric eigendecomposition (:func:`symmetric_eigh`) and the tall Gram matrix AᵀA (:func:`tn_gram`) go through
  numpy's OpenBLAS, because torch's MKL takes slower code paths for them here;
* a wide J is decomposed as its transpose (:func:`thin_svd`): MKL's gesdd is 4–5× faster on the tall orientation;
* column norms are summed over blocks of rows (:func:`column_norms`): a column-wise norm strides down a row-major J;
* the tall-times-thin products of the Mexican hat's range finder (:func:`matmul`) go through numpy's OpenBLAS, about
  12 % faster than MKL's there;
* the sensitivity gauge's small symmetric system (:func:`gram_solve`) is solved through numpy's eigendecomposition,
  not MKL's Cholesky factor: the one step of the lift whose bits depended on the CPU's vendor (below).

**The same bits on Intel and AMD.** Under the book's pins (``lib.core.arithmetic``) with MKL's vendor check answered,
the book built on an AMD EPYC (Zen 3) gave paper A's values bit for bit as published from an Intel Xeon; 323 of paper
B's moved (``../shared/notes/amd-build-3982efa-moved.json``). In the Mexican hat all 24 that moved were
sensitivity-gauged values and none of the minimum-norm ones, which singles out the gauge's r × r solve (MKL's
``eigvalsh``, ``cholesky`` and ``cholesky_solve`` on the Gram AAᵀ, then a one-column product). So that solve takes
kernels whose bits the probe showed equal on both vendors: the Gram by MKL's general product (the probe's
``torch_gram_f64_408x300``, a BLAS-3 call under MKL's strict reproducibility mode), its eigendecomposition by numpy's
LAPACK (``numpy_eigh_f64_300``), the solve by small numpy products, the last product by MKL's matrix–vector product
(as the minimum-norm lift's). What this route gives on Intel is not yet measured: ``lib.arithmetic_probe`` hashes
each step (``book_lift_step_*``), so an Intel build's ``make test`` names any step that rounds otherwise. Ten values
moved on AMD through other steps, which this route leaves as they were (the annulus's frozen minimum-norm directions
on the trained wedge, the own network's exact-SVD lift, one flow of *Two lenses*).

The readable reference of each is the one-line torch call named in its docstring; ``tests/kernels/test_cpu_linalg.py``
checks the routes against it.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor


def column_norms(J: Tensor, rows: int = 512) -> Tensor:
    """‖J_{:,i}‖₂ of a dense (M, p) matrix, shape (p,), summed over blocks of ``rows`` rows.

    Reference: ``torch.linalg.vector_norm(J, dim=0)``, which strides down the columns of a row-major J: on the
    20,160 × 2,273 Mexican-hat Jacobian it takes 0.6 s on one core, the blocked sum 0.08 s.
    """
    out = torch.zeros(J.shape[1], dtype=J.dtype)
    for block in J.split(rows):
        out += block.square().sum(0)
    return out.sqrt()


def symmetric_eigh(G: Tensor) -> tuple[Tensor, Tensor]:
    """Eigenvalues (ascending) and orthonormal eigenvectors of a symmetric float64 matrix, by LAPACK through numpy.

    Reference: ``torch.linalg.eigh``. Both call LAPACK's syevd; numpy's OpenBLAS build takes 30 ms on the 408 × 408
    annulus Gram matrix where torch's MKL takes 36–42 ms (one core, AMD EPYC).
    """
    w, Q = np.linalg.eigh(G.detach().numpy())
    return torch.from_numpy(w), torch.from_numpy(Q)


def tn_gram(A: Tensor) -> Tensor:
    """AᵀA of a float64 (p, r) matrix with p ≫ r (reference ``A.T @ A``; numpy's OpenBLAS: 6.5 ms for 19,009 × 66,
    torch's MKL 13 ms)."""
    a = A.detach().numpy()
    return torch.from_numpy(a.T @ a)


def gram(A: Tensor) -> Tensor:
    """AᵀA of a float64 (p, r) matrix by MKL's general matrix product (the reference itself, ``A.T @ A``).

    The gauge's r × r Gram goes through here rather than :func:`tn_gram` (numpy's symmetric rank-k update, twice as
    fast): a BLAS-3 product is what MKL's strict reproducibility mode covers, and the probe's
    ``torch_gram_f64_408x300`` showed its bits equal on Intel and AMD (module docstring).
    """
    return A.T @ A


def gram_solve(G: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """(y = G⁻¹b, the eigenvalues λ of G ascending) for a symmetric float64 G (r, r) and b (r,): y = Q Λ⁻¹ Qᵀ b
    from numpy's eigendecomposition G = Q Λ Qᵀ (LAPACK syevd in OpenBLAS) and numpy's products.

    The caller decides from λ whether G is positive definite and conditioned enough (y is meaningless otherwise).
    Reference: ``torch.cholesky_solve(b[:, None], torch.linalg.cholesky(G))[:, 0]``, MKL's potrf/potrs, which the
    lift used before version 1.9.0 and whose bits differed between Intel and AMD (module docstring). Both are backward
    stable: for κ(G) = λ_max/λ_min the two agree to ‖Δy‖ ≤ 8·r·ε·κ(G)·‖y‖ (tests/kernels/test_cpu_linalg.py checks
    this bound from κ = 1 to 10⁶, the lift's largest, :data:`lib.paper_b.lifting.GRAM_SOLVE_MAX_COND`).
    """
    w, Q = np.linalg.eigh(G.detach().numpy())
    y = Q @ ((Q.T @ b.detach().numpy()) / w)
    return torch.from_numpy(y), torch.from_numpy(w)


def matmul(A: Tensor, B: Tensor) -> Tensor:
    """A @ B of float64 matrices (transposed views allowed) through numpy's OpenBLAS (reference ``A @ B``).

    On the 20,160 × 2,273 Mexican-hat Jacobian times 96 columns (or its transpose times 20,160 × 96), one core: 0.22 s
    against torch's MKL 0.25 s; the range finder makes four such products per re-solve.
    """
    return torch.from_numpy(A.detach().numpy() @ B.detach().numpy())


def row_gram_numpy(pairs) -> Tensor:
    """Σ (D Dᵀ) ⊙ (A Aᵀ + 1) over float64 factor pairs (D (N, o), A (N, i)), shape (N, N), through numpy's OpenBLAS
    (5 ms against MKL's 9 ms for the annulus's 408 rows). Reference: the same sum in torch."""
    G = None
    for d, a in pairs:
        dn, an = d.detach().numpy(), a.detach().numpy()
        if G is None:
            G = np.zeros((dn.shape[0], dn.shape[0]), dtype=np.float64)
        G += (dn @ dn.T) * (an @ an.T + 1)
    return torch.from_numpy(G)


def thin_svd(J: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """J = U diag(S) Vᵀ, thin (k = min(M, p) columns each), by LAPACK's gesdd on the tall orientation of J.

    Reference: ``torch.linalg.svd(J, full_matrices=False)``. A wide J is decomposed as its transpose, Jᵀ = V S Uᵀ:
    the same exact SVD, but MKL's gesdd takes 4–5 s on the 408 × 19,009 annulus Jacobian and 1 s on its
    19,009 × 408 transpose (one core).
    """
    if J.shape[0] < J.shape[1]:
        V, S, Uh = torch.linalg.svd(J.T, full_matrices=False)
        return Uh.T, S, V
    U, S, Vh = torch.linalg.svd(J, full_matrices=False)
    return U, S, Vh.T
