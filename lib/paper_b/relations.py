"""How c* and b* relate, and where they sit among the parameters (paper B contribution 3, eq. 22, App. A.5).

Paper B finds "orthogonal directions: one along the symmetry orbit and one towards the equivariant subspace". Two
cosines (``lib.paper_b.symmetry.cosine``) make that precise: between c* and b* in parameter space, and between the
function-space moves they realise, J c* and J b* (eq. 22 makes η and δ orthogonal, so the realised moves are
orthogonal up to what the lift leaves out).

At θ both lifts share one truncated SVD J ≈ U_r Σ_r V_rᵀ with P = U_r U_rᵀ, and each realises J z = P g + J_⊥ z
(g the target, J_⊥ = (I − P) J the discarded tail). With r = ‖(I − P) g‖/‖g‖ (the lift's relative residual) and
t = ‖J_⊥ z‖/‖g‖ (its tail), the cosine of the realised moves J c*, J b* and that of the targets X f, −δ obey exactly

    cos(J c*, J b*) = (cos(X f, −δ) − e₁ + e₂) / (n_c n_b),  |e₁| ≤ r_c r_b,  |e₂| ≤ t_c t_b,  n = sqrt(1 − r² + t²)

(:func:`realised_cosine_bound`). Eq. 22 makes the targets orthogonal on a rotation-invariant probe set; the realised
moves are then orthogonal up to (r_c r_b + t_c t_b)/(n_c n_b), "what the residuals allow". Parameter space has no
such statement: cos(c*, b*) is reported as it is. :func:`lift_cosines` measures all of it at one θ of a lifting
problem (``lib.paper_b.lifting_problem``); a resolved annulus flow records it at every stop.

:func:`block_shares` splits a per-parameter quantity (‖c‖², S_i², |c_i|·S_i …) over named layer blocks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor

from lib.paper_b.lifting import _as_operator, _check_matrix
from lib.paper_b.lifting_problem import KINDS
from lib.paper_b.symmetry import cosine

#: what ``lift_cosines`` records at a stop (the keys of a resolved flow's diagnostics)
COSINE_KEYS = ("cos_param", "cos_function", "cos_targets", "rel_res_c", "rel_res_b", "tail_c", "tail_b", "orth_bound")


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


def realised_cosine_bound(r_c: float, r_b: float, t_c: float, t_b: float, cos_targets: float = 0.0) -> float:
    """The largest |cos(J c*, J b*) − cos_targets| the lifts' relative residuals r and tails t allow (module doc).

    With ``cos_targets`` = 0 (eq. 22 holding exactly) it bounds |cos(J c*, J b*)| itself."""
    for name, value, hi in (("r_c", r_c, 1.0), ("r_b", r_b, 1.0), ("t_c", t_c, math.inf), ("t_b", t_b, math.inf)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < hi:
            raise ValueError(f"{name}={value!r} must be a number in [0, {hi:g})")
    if isinstance(cos_targets, bool) or not isinstance(cos_targets, (int, float)) or not abs(cos_targets) <= 1:
        raise ValueError(f"cos_targets={cos_targets!r} must be a cosine, a number in [−1, 1]")
    n = math.sqrt(1 - r_c**2 + t_c**2) * math.sqrt(1 - r_b**2 + t_b**2)
    return abs(cos_targets) * abs(1 / n - 1) + (r_c * r_b + t_c * t_b) / n


def lift_cosines(problem, theta: Tensor) -> dict[str, float]:
    """c* and b* at θ of a lifting ``problem`` (``problem.lift``; on the annulus one decomposition serves both):
    cos(c*, b*), cos(J c*, J b*), cos(X f, −δ), each lift's relative residual and tail, and the orthogonality bound
    (keys :data:`COSINE_KEYS`)."""
    ev = problem.evaluate(theta)
    lifts = {k: problem.lift(theta, k) for k in KINDS}
    images = {k: ev.jac.matmul(lifts[k].coef) if lifts[k].image is None else lifts[k].image for k in KINDS}
    out = {"cos_param": cosine(lifts["c"].coef, lifts["b"].coef), "cos_function": cosine(images["c"], images["b"])}
    targets = {k: problem.target(ev, k) for k in KINDS}
    out["cos_targets"] = cosine(targets["c"], targets["b"])
    for k in KINDS:
        tail = images[k] - lifts[k].projection
        out[f"rel_res_{k}"] = float(lifts[k].rel_residual)
        out[f"tail_{k}"] = float(tail.norm()) / float(targets[k].norm())
    out["orth_bound"] = realised_cosine_bound(out["rel_res_c"], out["rel_res_b"], out["tail_c"], out["tail_b"])
    return out


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
