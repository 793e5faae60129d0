"""How c* and b* relate, and where they sit among the parameters (paper B contribution 3, App. A.5).

Paper B finds "orthogonal directions: one along the symmetry orbit and one towards the equivariant subspace". Two
cosines (``lib.paper_b.symmetry.cosine``) make that precise: between c* and b* in parameter space, and between the
function-space moves they realise, J c* and J b* (eq. 22 makes η and δ orthogonal, so the realised moves are
orthogonal up to what the lift leaves out).
:func:`block_shares` splits a per-parameter quantity (‖c‖², S_i², |c_i|·S_i …) over named layer blocks.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor

from lib.paper_b.lifting import _as_operator, _check_matrix
from lib.paper_b.symmetry import cosine


def direction_relation(J, c: Tensor, b: Tensor) -> dict[str, float]:
    """cos(c, b) in parameter space and cos(J c, J b) in function space, for a dense J (M, p) or a Jacobian
    operator (``lib.paper_b.lifting.DenseJacobian`` interface). Keys ``cos_param`` and ``cos_function``."""
    _check_matrix(J)
    op = _as_operator(J)
    p = op.shape[1]
    for name, vec in (("c", c), ("b", b)):
        if not isinstance(vec, Tensor) or vec.ndim != 1 or vec.numel() != p:
            raise ValueError(f"{name} must be a vector of length {p} (J's columns); got {getattr(vec, 'shape', vec)}")
    c64, b64 = c.detach().to(torch.float64), b.detach().to(torch.float64)
    return {"cos_param": cosine(c64, b64), "cos_function": cosine(op.matmul(c64), op.matmul(b64))}


def block_shares(values: Tensor | np.ndarray, blocks: Sequence[tuple[str, slice]]) -> dict[str, float]:
    """Each block's share of Σ values over the named slices (values ≥ 0, e.g. c_i² or S_i²); the slices must
    cover the vector exactly once."""
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    if np.any(v < 0) or not np.all(np.isfinite(v)):
        raise ValueError("values must be finite and non-negative (squares or magnitudes per parameter)")
    covered = sum(len(range(*s.indices(v.size))) for _, s in blocks)
    if covered != v.size:
        raise ValueError(f"blocks cover {covered} of {v.size} parameters; they must cover each exactly once")
    total = float(v.sum())
    return {name: (float(v[s].sum()) / total if total > 0 else float("nan")) for name, s in blocks}
