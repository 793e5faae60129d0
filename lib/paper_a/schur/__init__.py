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
    ab = ablate(sp, ["CC"])                  # ab.W (ablated matrix), ab.removed_mass = ‖ΔT‖_F / ‖T‖_F

``ablate`` accepts the matrix ``W``, a precomputed :class:`SchurForm` or a precomputed :class:`SchurSplit` (which
avoids recomputing the decomposition and the split when several subsets are ablated). α is validated in one place,
:func:`split`.

The modules: :mod:`.diagonal_blocks` (reading the blocks of T), :mod:`.ordered_form` (the ordered form),
:mod:`.sectors` (the R/C split and the masks), :mod:`.subsets` (block names, subsets, labels),
:mod:`.ablation_operator` (W̃(S)).
"""

from lib.paper_a.schur.ablation_operator import Ablation, ablate
from lib.paper_a.schur.diagonal_blocks import SchurOrderingError, block_coordinates, block_structure
from lib.paper_a.schur.ordered_form import (
    ORDER_RTOL,
    POST_RTOL,
    SAFE_EXPONENT,
    SchurForm,
    coupling_mass,
    ordered_real_schur,
)
from lib.paper_a.schur.sectors import PAPER_ALPHA, SPLIT_RTOL, SchurSplit, check_alpha, partitioned_schur, split
from lib.paper_a.schur.subsets import ABLATION_BLOCKS, BLOCK_NAMES, all_subsets, canonical, label

__all__ = [
    "ABLATION_BLOCKS",
    "BLOCK_NAMES",
    "ORDER_RTOL",
    "PAPER_ALPHA",
    "POST_RTOL",
    "SAFE_EXPONENT",
    "SPLIT_RTOL",
    "Ablation",
    "SchurForm",
    "SchurOrderingError",
    "SchurSplit",
    "ablate",
    "all_subsets",
    "block_coordinates",
    "block_structure",
    "canonical",
    "check_alpha",
    "coupling_mass",
    "label",
    "ordered_real_schur",
    "partitioned_schur",
    "split",
]
