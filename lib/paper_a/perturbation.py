"""Raw distance versus function (paper A §5): random perturbations of an ablation's size, and the ablation path.

Paper A §5 says raw parameter distance misses both large structured changes that keep the function and small directed
changes that alter it. To measure it, each ablation ΔW = Q T_S Qᵀ is set against random perturbations δW of the same
Frobenius norm, drawn three ways (:data:`KINDS`):

- ``isotropic``: Gaussian entries in raw W;
- ``schur_pattern``: Gaussian entries on the same Schur block pattern as T_S, Q G_S Qᵀ;
- ``subspace``: Gaussian directions inside a subspace U (N, r) (the readout/PC subspace), U G Uᵀ.

The perturbed network has W − δW, as the ablation has W − ΔW. :func:`ablation_path` gives W(λ) = Q (T − λ T_S) Qᵀ for
λ ∈ [0, 1] (λ = 1 is the ablation, λ = 0 the trained W). Every draw comes from an explicit ``numpy`` Generator.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from lib.core import params
from lib.paper_a import schur

KINDS = ("isotropic", "schur_pattern", "subspace")


def random_directions(
    kind: str,
    norm: float,
    draws: int,
    rng: np.random.Generator,
    *,
    n: int,
    form: schur.SchurForm | None = None,
    mask_nn: np.ndarray | None = None,
    basis_nr: np.ndarray | None = None,
) -> np.ndarray:
    """(draws, n, n) random perturbations of one kind in :data:`KINDS`, each of Frobenius norm ``norm``.

    ``schur_pattern`` needs the ordered ``form`` and the block ``mask_nn`` (n, n) of T_S; ``subspace`` needs the
    orthonormal ``basis_nr`` (n, r).
    """
    params.choice("kind", kind, KINDS)
    norm = params.real("norm", norm, min=0.0)
    draws = params.integer("draws", draws, min=1)
    n = params.integer("n", n, min=1)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator (seeded); got {type(rng).__name__}")
    G = rng.standard_normal((draws, n, n))
    if kind == "schur_pattern":
        if form is None or mask_nn is None:
            raise ValueError("kind='schur_pattern' needs form= (the ordered Schur form) and mask_nn= (the block mask)")
        mask = np.asarray(mask_nn, dtype=bool)
        if not mask.any():
            raise ValueError("mask_nn is empty: a block without entries has no random pattern to draw")
        G = form.Q @ np.where(mask, G, 0.0) @ form.Q.T
    elif kind == "subspace":
        if basis_nr is None or np.shape(basis_nr)[1] == 0:
            raise ValueError("kind='subspace' needs basis_nr= (n, r) with r ≥ 1")
        U = np.asarray(basis_nr, dtype=np.float64)
        G = U @ rng.standard_normal((draws, U.shape[1], U.shape[1])) @ U.T
    scale = np.linalg.norm(G, axis=(1, 2), keepdims=True)
    return G * (norm / scale)


def lambda_grid(values: Sequence[float]) -> np.ndarray:
    """The λ values as a float64 array, refused unless every one lies in [0, 1]."""
    lam = np.asarray(values, dtype=np.float64).ravel()
    if lam.size == 0:
        raise ValueError("the λ grid is empty; give values in [0, 1]")
    bad = lam[~((lam >= 0.0) & (lam <= 1.0))]
    if bad.size:
        raise ValueError(f"λ grid has {bad.tolist()} outside [0, 1]; W(λ) = Q(T − λT_S)Qᵀ is defined for λ in [0, 1]")
    return lam


def ablation_path(form: schur.SchurForm, T_S, lambdas: Sequence[float]) -> np.ndarray:
    """(L, n, n): W(λ) = Q (T − λ T_S) Qᵀ for each λ of the grid (λ = 1: bitwise :func:`~lib.paper_a.schur.ablate`)."""
    lam = lambda_grid(lambdas)
    T_S = np.asarray(T_S, dtype=np.float64)
    return np.stack([(form.Q @ (form.T - x * T_S)) @ form.Q.T for x in lam])


def fraction_more_damage(ablation_dfvu: float, draws_dfvu) -> float:
    """Fraction of random draws whose ΔFVU is at least the ablation's (1: every draw does as much damage or more)."""
    d = np.asarray(draws_dfvu, dtype=np.float64)
    if d.size == 0:
        raise ValueError("draws_dfvu is empty")
    return float(np.mean(d >= ablation_dfvu))


def percentile_of(ablation_dfvu: float, draws_dfvu) -> float:
    """The ablation's percentile in the draws' ΔFVU distribution: 100 × the fraction of draws doing less damage."""
    d = np.asarray(draws_dfvu, dtype=np.float64)
    if d.size == 0:
        raise ValueError("draws_dfvu is empty")
    return float(100.0 * np.mean(d < ablation_dfvu))
