"""Lifts of several targets at a cutoff below the lift's own, and the certified minimum-norm lift: the two lifts
beside c* that ``lib.paper_b.evidence`` judges held out.

- :func:`minnorm_lifts`: the minimum-norm lifts of several targets at any rank r the decomposition resolves, from its
  whole basis (the exact SVD keeps every right singular vector; the Gram route one side and a product with J);
- :func:`certify`: the minimum-norm lift refined beyond the Gram route's resolution by preconditioned conjugate
  gradients on J Jᵀ y = η, c = Jᵀy, every product with J and Jᵀ exact (never through the rounded Gram), the
  preconditioner the Gram's own eigendecomposition. Its stopping rule: the recurrence's residual at EXACT/4 of ‖η‖,
  or no halving over three steps, or :data:`CG_MAX_STEPS`; what it certifies is the residual recomputed by one more
  product, max(‖Jc − η‖, ε·σ₁‖c‖)/‖η‖ (float64's error in J c, as the τ profile's ``attainable``).
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor

from lib.core.lines import line
from lib.paper_b.cutoff_profile import EPS

EXACT = line("round_off")
CG_MAX_STEPS = 30  # the certification's conjugate-gradient steps at most


def _bases(svd, op, r: int) -> tuple[Tensor | None, Tensor | None, Tensor]:
    """(U_r or None, V_r or None, σ_r) at rank r from the decomposition's whole basis."""
    S = svd.singular_values[:r]
    V = svd.right_vectors[:, :r] if getattr(svd, "right_vectors", None) is not None else None
    if svd.left_basis is not None:
        return svd.left_basis[:, :r], V, S
    if svd.right_basis is not None:
        return None, svd.right_basis[:, :r], S
    return None, None, S


def minnorm_lifts(svd, op, targets: Tensor, r: int) -> Tensor | None:
    """The minimum-norm lifts c = V_r Σ_r⁻¹ U_rᵀ η of the targets (M, K) at rank r, (p, K); where V_r is not kept,
    c = Jᵀ(U_r Σ_r⁻² U_rᵀ η) by one product with Jᵀ; on a tall Gram route c = V_r Σ_r⁻² V_rᵀ Jᵀη. None at r = 0 or
    without a basis."""
    if r == 0:
        return None
    U, V, S = _bases(svd, op, r)
    if U is not None and V is not None:
        return V @ ((U.T @ targets) / S[:, None])
    if U is not None:
        return op.rmatmul(U @ ((U.T @ targets) / S[:, None] ** 2))
    if V is not None:
        return V @ ((V.T @ op.rmatmul(targets)) / S[:, None] ** 2)
    return None


@dataclass(frozen=True)
class Certification:
    """The refined minimum-norm lift c = Jᵀy (p,), its relative residual ‖Jc − η‖/‖η‖ by one product with J after
    the last step (``residual``), what float64 can certify of it (max(residual, ε·σ₁‖c‖/‖η‖), ``attainable``), the
    conjugate-gradient steps taken after the preconditioned start (0 when that start is at round-off already) and why
    it stopped ("round-off", "steps", "stalled" or "breakdown")."""

    coef: Tensor
    residual: float
    attainable: float
    steps: int
    stop: str


def _gram_apply(op, Y: Tensor) -> tuple[Tensor, Tensor]:
    """(JᵀY, J JᵀY) for Y (M,) by the operator's exact products (one pass where it offers ``lift_products``)."""
    if hasattr(op, "lift_products"):
        C, JC = op.lift_products(Y[:, None])
        return C[:, 0], JC[:, 0]
    C = op.rmatmul(Y)
    return C, op.matmul(C)


def certify(svd, op, eta: Tensor, *, max_steps: int = CG_MAX_STEPS) -> Certification | None:
    """The minimum-norm lift of η refined beyond the Gram route's resolution: preconditioned conjugate gradients on
    J Jᵀ y = η with the preconditioner Q Λ⁺ Qᵀ from the Gram's eigendecomposition (eigenvalues under M·ε·λ₁ floored
    there), every product with J and Jᵀ exact, so that the residual is not limited by the Gram's rounding. Stops when
    ‖η − Jc‖ ≤ EXACT/4·‖η‖ (the recurrence's residual), when a step no longer halves it over three steps, or after
    ``max_steps``; the returned residual is recomputed by one more product. None for a J with more rows than columns
    or without the Gram's left basis."""
    M, p = op.shape
    Q = svd.left_basis
    if Q is None or M > p or float(eta.norm()) == 0:
        return None
    lam = svd.singular_values.square()
    floor = float(lam[0]) * M * EPS
    inv = 1.0 / lam.clamp_min(floor)

    def precondition(r: Tensor) -> Tensor:
        return Q @ (inv * (Q.T @ r))

    eta_norm = float(eta.norm())
    y = precondition(eta)
    c, Jc = _gram_apply(op, y)
    r = eta - Jc
    z = precondition(r)
    d = z.clone()
    rz = float(r @ z)
    history, steps = [float(r.norm())], 0  # steps: conjugate-gradient steps taken after the preconditioned start
    while True:
        if history[-1] <= EXACT / 4 * eta_norm:
            stop = "round-off"
            break
        if steps >= max_steps:
            stop = "steps"
            break
        Cd, Gd = _gram_apply(op, d)
        curvature = float(d @ Gd)
        if not curvature > 0:
            stop = "breakdown"
            break
        steps += 1
        a = rz / curvature
        y, c, Jc = y + a * d, c + a * Cd, Jc + a * Gd
        r = eta - Jc
        history.append(float(r.norm()))
        if len(history) > 3 and history[-1] > 0.5 * history[-4]:
            stop = "stalled"
            break
        z = precondition(r)
        rz_new = float(r @ z)
        d, rz = z + (rz_new / rz) * d, rz_new
    residual = float((op.matmul(c) - eta).norm()) / eta_norm
    attainable = max(residual, EPS * float(svd.singular_values[0]) * float(c.norm()) / eta_norm)
    return Certification(c, residual, attainable, steps, stop)
