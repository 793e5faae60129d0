"""The basis argument of paper A §2.8: eigencoordinates are ill-conditioned where Schur coordinates are stable.

For a trained W (n, n):

- :func:`eigenvector_condition`: κ(V) = ‖V‖₂‖V⁻¹‖₂ of the unit-norm eigenvector matrix (1 for a normal matrix);
- :func:`henrici_departure`: dep(W) = (‖W‖_F² − Σ|λ_i|²)^½, the Frobenius norm of the strictly upper part of the
  complex Schur form (0 exactly when W is normal);
- :func:`stability`: how the R-subspace of the ordered Schur form and the eigenvector basis move under random
  perturbations of relative size ‖δW‖_F/‖W‖_F: the sine of the largest principal angle between the R-subspaces of W
  and W + δW, against the largest sine between matched eigenvectors;
- :func:`spectrum_similarity`: across solutions, how alike their block-modulus spectra and R-dimensions are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.linalg import subspace_angles
from scipy.optimize import linear_sum_assignment

from lib.core import params
from lib.paper_a import schur


def eigenvector_condition(W) -> float:
    """κ(V) = σ_max(V)/σ_min(V) of the eigenvectors (unit columns) of W (n, n); inf for a defective W."""
    _, V = np.linalg.eig(np.asarray(W, dtype=np.float64))
    s = np.linalg.svd(V, compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0 else float("inf")


def henrici_departure(W, relative: bool = False) -> float:
    """Henrici's departure from normality (‖W‖_F² − Σ|λ_i|²)^½; divided by ‖W‖_F when ``relative``."""
    W = np.asarray(W, dtype=np.float64)
    total = float(np.sum(W * W))
    eig = np.linalg.eigvals(W)
    dep = float(np.sqrt(max(total - float(np.sum(np.abs(eig) ** 2)), 0.0)))
    return dep / np.sqrt(total) if relative and total > 0 else dep


def r_basis(W, alpha: float) -> np.ndarray:
    """(n, n_R): the orthonormal basis of the leading Schur subspace R (the first n_R columns of Q)."""
    form = schur.ordered_real_schur(W)
    return form.Q[:, : schur.split(form, alpha).n_R]


def max_sine(A_nr, B_ns) -> float:
    """Sine of the largest principal angle between span(A) and span(B); 1 when their dimensions differ."""
    if np.shape(A_nr)[1] != np.shape(B_ns)[1]:
        return 1.0
    if np.shape(A_nr)[1] == 0:
        return 0.0
    return float(np.sin(np.max(subspace_angles(A_nr, B_ns))))


def eigenvector_change(W, W2) -> float:
    """Largest sine of the angle between each eigenvector of W and the eigenvector of W2 matched to it.

    Eigenvalues are matched by a minimum-cost assignment on |λ_i − λ'_j|.
    """
    lam, V = np.linalg.eig(np.asarray(W, dtype=np.float64))
    lam2, V2 = np.linalg.eig(np.asarray(W2, dtype=np.float64))
    rows, cols = linear_sum_assignment(np.abs(lam[:, None] - lam2[None, :]))
    cos = np.abs(np.einsum("ij,ij->j", V[:, rows].conj(), V2[:, cols]))
    return float(np.max(np.sqrt(np.clip(1.0 - cos**2, 0.0, 1.0))))


@dataclass(frozen=True)
class Stability:
    """Movement of the two coordinate systems of one W under random perturbations.

    ``scales``: (S,) relative sizes ‖δW‖_F/‖W‖_F; ``r_sine``, ``eig_sine``: (S, draws) sines (R-subspace, matched
    eigenvectors); ``n_R_changed``: (S, draws) bool, the perturbed split has another n_R.
    """

    scales: np.ndarray
    r_sine: np.ndarray
    eig_sine: np.ndarray
    n_R_changed: np.ndarray

    def eig_over_r(self) -> np.ndarray:
        """(S,) median over draws of eigenvector sine / R-subspace sine (how much more the eigenbasis moves)."""
        return np.median(self.eig_sine / np.maximum(self.r_sine, 1e-300), axis=1)


def scale_grid(values: Sequence[float]) -> np.ndarray:
    """Relative perturbation sizes, refused unless each lies in (0, 1]."""
    s = np.asarray(values, dtype=np.float64).ravel()
    bad = s[~((s > 0) & (s <= 1))]
    if s.size == 0 or bad.size:
        raise ValueError(f"scales={s.tolist()} must be non-empty with every value in (0, 1]; bad: {bad.tolist()}")
    return s


def stability(W, alpha: float, scales: Sequence[float], draws: int, rng: np.random.Generator) -> Stability:
    """R-subspace and eigenvector movement of W (n, n) under ``draws`` isotropic δW per relative scale.

    α is validated by :func:`lib.paper_a.schur.split` (through :func:`r_basis`, before any draw).
    """
    W = np.asarray(W, dtype=np.float64)
    scales = scale_grid(scales)
    draws = params.integer("draws", draws, min=1)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator (seeded); got {type(rng).__name__}")
    base = r_basis(W, alpha)
    norm = np.linalg.norm(W)
    r_sine, eig_sine, changed = (np.zeros((scales.size, draws)) for _ in range(3))
    for i, s in enumerate(scales):
        for j in range(draws):
            G = rng.standard_normal(W.shape)
            W2 = W + G * (s * norm / np.linalg.norm(G))
            other = r_basis(W2, alpha)
            changed[i, j] = other.shape[1] != base.shape[1]
            r_sine[i, j] = max_sine(base, other)
            eig_sine[i, j] = eigenvector_change(W, W2)
    return Stability(scales, r_sine, eig_sine, changed.astype(bool))


def spectrum_similarity(forms: Sequence[schur.SchurForm], alpha: float) -> dict[str, float]:
    """Across solutions: the n_R range, and the mean over pairs of max |Δ(|λ|/ρ)| between modulus spectra."""
    if len(forms) < 2:
        raise ValueError(f"forms has {len(forms)} solution(s); comparing spectra needs at least 2")
    spectra = [np.repeat(f.moduli / f.rho, [size for _, size in f.blocks]) for f in forms]
    n_R = [schur.split(f, alpha).n_R for f in forms]
    pairs = [float(np.max(np.abs(a - b))) for i, a in enumerate(spectra) for b in spectra[i + 1 :] if a.size == b.size]
    return {
        "n_R_min": int(min(n_R)),
        "n_R_max": int(max(n_R)),
        "n_R_std": float(np.std(n_R)),
        "spectrum_max_diff": float(np.mean(pairs)) if pairs else float("nan"),
    }
