"""The truncated, gauged least-squares lift of a function-space direction through a parameter Jacobian (paper B
eqs. 2, 3, 19–24; notes §6.3).

``lift`` implements the notes' §6.3 procedure exactly: a τ-truncated SVD of the *raw* J, then the
sensitivity-normalised gauge applied inside the retained subspace,

    J ≈ U_r Σ_r V_rᵀ (σ_k ≥ τ σ_1),  α = Σ_r⁻¹ U_rᵀ η,  A = V_rᵀ D⁻¹ (dead columns zeroed),
    c̃ = Aᵀ (A Aᵀ)⁻¹ α,  c = D⁻¹ c̃,  projection P η = U_r U_rᵀ η,

with D = diag(‖J_{:,i}‖₂). ``gauge="minnorm"`` gives the plain c = V_r Σ_r⁻¹ U_rᵀ η. Both satisfy V_rᵀ c = α, so the
projection, the residual ‖(I − P)η‖ of the truncated system and the rank do not depend on the gauge; only the split
of c across parameters does.

The cutoff τ has one default, :data:`TAU` (the paper's 1e-3), and one check, :func:`check_tau`, applied where a
problem stores it and where ``lift`` receives it. Its answer depends on τ: every lift carries its τ profile
(``LiftResult.profile``, :mod:`lib.paper_b.cutoff_profile`), the residual, rank and size at every cutoff J's spectrum
allows, from the same decomposition, and which case holds (lifts exactly, approximately at the paper's τ, only below
it, or not at any cutoff), on the probes it was fitted to; ``lib.paper_b.evidence`` judges it on others. The exact
SVD (``method="svd"``) resolves the profile down to round-off, the Gram route only to :data:`GRAM_MIN_TAU`. How the
dense products are routed on one CPU (which BLAS, which orientation) is ``lib.kernels.cpu_linalg``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from numbers import Real

import torch
from torch import Tensor

from lib.core.params import value_text
from lib.kernels.cpu_linalg import gram, gram_solve, symmetric_eigh, thin_svd
from lib.paper_b import cutoff_profile, streaming
from lib.paper_b.jacobian_operator import DenseJacobian

TAU = 1e-3  # the paper's relative singular-value cutoff (eq. 23): the one default of every τ in paper B
GAUGES = ("sensitivity", "minnorm")
METHODS = ("auto", "svd", "gram")
GRAM_MIN_TAU = 1e-5  # "auto" uses the Gram route only for cutoffs at or above this
GRAM_SOLVE_MAX_COND = 1e6  # the gauge is solved through the r × r Gram AAᵀ up to this condition number, else by QR
EPS = torch.finfo(torch.float64).eps
UNIT_EXPONENT = 200  # a dense J (or D) whose largest entry lies outside about [2⁻²⁰⁰, 2²⁰⁰] is rescaled by 2ᵏ


# --------------------------------------------------------------------------------------------------------------
# the lift


@dataclass
class LiftResult:
    """A least-squares lift c of a function-space direction η through J (paper eqs. 2, 3, 20, 23, 24).

    ``residual`` = ‖J_τ c − η‖ = ‖(I − P)η‖ for the τ-truncated J (gauge-independent, eq. 19);
    ``realised_residual`` = ‖J c − η‖ with the full J (differs from it by the discarded tail J_⊥ c, which is
    zero for the min-norm gauge and at most τσ₁‖c‖ otherwise).
    """

    coef: Tensor  # (p,) parameter direction c
    projection: Tensor  # (M,) P η = U_r U_rᵀ η
    residual: float
    rel_residual: float
    realised_residual: float
    principal_angle_deg: float  # angle between η and P η (nan when η = 0)
    rank: int
    singular_values: Tensor  # all singular values of J, descending (length min(M, p))
    gauge: str
    tau: float
    method: str
    n_dead: int = 0
    extra: dict = field(default_factory=dict)
    profile: cutoff_profile.CutoffProfile | None = None  # the lift at every cutoff (None: a decomposition without
    # the singular bases, e.g. a caller's own TruncatedSVD)
    image: Tensor | None = None  # J c where the route computed it anyway (a streamed J: it saves a pass)

    def summary(self) -> str:
        """The case the τ profile finds, then one line at τ: rank, relative residual, principal angle, gauge."""
        at_tau = (
            f"rank {self.rank} (τ={self.tau:g}), ‖(I−P)η‖/‖η‖ = {self.rel_residual:.3e}, "
            f"angle {self.principal_angle_deg:.3f}°, gauge {self.gauge}, ‖c‖ = {float(self.coef.norm()):.4g}"
        )
        return at_tau if self.profile is None else f"η {self.profile.sentence()}\n{at_tau}"

    def __repr__(self) -> str:
        return f"LiftResult({self.summary().splitlines()[-1]})"


@dataclass
class TruncatedSVD:
    """The retained part of J's SVD: U_r (M, r), σ_r (r,), V_r (p, r), all singular values, column norms; and the
    whole basis the decomposition computed, for the τ profile: the left singular vectors (M, n) of an SVD or of the
    Gram route on a wide J, or the right ones (p, p) of the Gram route on a tall J (None where not available)."""

    U: Tensor
    S: Tensor
    V: Tensor | None  # None on a streamed J (lib.paper_b.streaming), which never forms V_r
    singular_values: Tensor
    col_norms: Tensor
    method: str
    left_basis: Tensor | None = None
    right_basis: Tensor | None = None
    right_vectors: Tensor | None = None  # every right singular vector of an exact SVD (V_r is a view of it)

    def __repr__(self) -> str:
        return (f"TruncatedSVD(rank {self.S.shape[0]} of {self.singular_values.shape[0]} singular values, "
                f"method {self.method!r})")  # fmt: skip

    def resolution(self, shape: tuple[int, int]) -> float:
        """The smallest σ_k/σ₁ this decomposition resolves: max(M, p)·ε for an exact SVD, :data:`GRAM_MIN_TAU` for
        the Gram route (it squares the condition number), the last sketched value for a sketch."""
        S = self.singular_values
        sketch = float(S[-1] / S[0]) if S.numel() and S[0] > 0 else 1.0
        return {"svd": max(shape) * EPS, "gram": GRAM_MIN_TAU}.get(self.method, sketch)


def _check_matrix(J):
    if isinstance(J, Tensor):
        if J.ndim != 2:
            raise ValueError(f"J must be a 2-D tensor (rows, params); got shape {tuple(J.shape)}")
        if J.is_complex():
            raise TypeError(f"J must be real; got complex dtype {J.dtype}")
        return
    if not all(hasattr(J, a) for a in ("shape", "col_norms", "gram", "matmul", "rmatmul")):
        raise ValueError(f"J must be a 2-D tensor or a Jacobian operator; got {type(J).__name__}")


def _as_operator(J):
    return DenseJacobian(J) if isinstance(J, Tensor) else J


def check_tau(tau: float) -> float:
    """τ as a float, or ValueError: the cutoff must be a real number in (0, 1) (a numpy scalar such as
    ``np.float32(0.1)`` is accepted)."""
    if isinstance(tau, bool) or not isinstance(tau, Real) or not 0 < tau < 1:
        raise ValueError(f"tau={value_text(tau)} must be a number in (0, 1)")
    return float(tau)


def _far_from_unit(v: float) -> bool:
    return v == 0 or not math.isfinite(v) or abs(math.frexp(v)[1]) > UNIT_EXPONENT


def _power_of_two_scale(x: Tensor) -> float:
    """1.0, or the power of two 2ᵏ taking max|x| into [1/2, 1) when it lies outside about [2⁻²⁰⁰, 2²⁰⁰]: an exact
    rescaling of a matrix so far from unit scale that its squares (column norms, Gram matrix) would under- or overflow
    (a J·1e-200 would otherwise come out rank 0). 1.0 also for a zero or non-finite x."""
    amax = float(torch.linalg.vector_norm(x, ord=math.inf)) if x.numel() else 0.0
    if amax == 0 or not math.isfinite(amax) or not _far_from_unit(amax):
        return 1.0
    return math.ldexp(1.0, min(-math.frexp(amax)[1], 1023))


def retained_rank(S: Tensor, tau: float) -> int:
    """How many singular values (descending ``S``) the τ-cutoff keeps: σ_k ≥ τσ₁ (eq. 23); 0 for a zero matrix."""
    return int((S >= tau * S[0]).sum()) if S.numel() and S[0] > 0 else 0


def truncated_svd(J, *, tau: float = TAU, method: str = "auto") -> TruncatedSVD:
    """τ-truncated SVD of J (keep σ_k ≥ τσ₁, eq. 23), exactly ("svd") or via the smaller Gram matrix ("gram").

    J is a float64 tensor (M, p) or a Jacobian operator (see ``DenseJacobian``). The Gram route diagonalises J Jᵀ
    (M ≤ p) or Jᵀ J with LAPACK's symmetric eigendecomposition (numpy's, ``cpu_linalg.symmetric_eigh``) and
    recovers the other factor by one product with J. It squares the condition number: singular values below about
    sqrt(machine eps)·σ₁ ≈ 1.5e-8·σ₁ are lost in rounding, so it is accurate for τ = 1e-3 but must not be used for
    τ ≲ 1e-6 ("auto" switches to the exact SVD below τ = 1e-5).
    """
    if method not in METHODS:
        raise ValueError(f"method={method!r} is not allowed; choose one of {list(METHODS)}")
    if method == "auto":
        method = "gram" if tau >= GRAM_MIN_TAU else "svd"
    op = _as_operator(J)
    col_norms = op.col_norms()
    if isinstance(op, DenseJacobian) and _far_from_unit(float(col_norms.max()) if col_norms.numel() else 1.0):
        scale = _power_of_two_scale(op.J)  # the ratios σ_k/σ₁, hence the rank, do not depend on the scale of J
        if scale != 1.0:
            out = truncated_svd(op.J * scale, tau=tau, method=method)
            S, cols = out.singular_values / scale, out.col_norms / scale
            return TruncatedSVD(out.U, out.S / scale, out.V, S, cols, out.method, out.left_basis, out.right_basis,
                                out.right_vectors)  # fmt: skip
    m, p = op.shape
    if method == "svd":
        if not hasattr(op, "dense"):
            raise ValueError(f"method='svd' needs a dense J; {type(op).__name__} has no dense()")
        U, S, V = thin_svd(op.dense())
        r = retained_rank(S, tau)
        return TruncatedSVD(U[:, :r], S[:r], V[:, :r], S, col_norms, "svd", left_basis=U, right_vectors=V)
    small_rows = m <= p
    w, Q = symmetric_eigh(op.gram())  # ascending
    w, Q = w.flip(0), Q.flip(1)
    S = w.clamp_min(0).sqrt()
    r = retained_rank(S, tau)
    Sr = S[:r]
    if small_rows:
        U = Q[:, :r]
        V = None if getattr(op, "streamed", False) else op.rmatmul(U / Sr)  # Jᵀ(U_r Σ_r⁻¹), not on a streamed J
    else:
        V = Q[:, :r]
        U = op.matmul(V / Sr)
    basis = {"left_basis": Q} if small_rows else {"right_basis": Q}
    return TruncatedSVD(U, Sr, V, S, col_norms, "gram", **basis)


def _min_norm_solution(At: Tensor, alpha: Tensor) -> Tensor:
    """c̃ = Aᵀ(AAᵀ)⁻¹α, the minimum-norm solution of A c̃ = α, for Aᵀ (p, r) with r ≤ p; shape (p,).

    When the r × r Gram AAᵀ has condition number κ ≤ :data:`GRAM_SOLVE_MAX_COND` it is solved through its
    eigendecomposition (``cpu_linalg.gram_solve``: kernels the probe showed equal on Intel and AMD): one p·r²
    product and r × r work, relative error about ε·κ ≤ 2e-10. Otherwise (κ(AAᵀ) = κ(A)², so this is
    where forming AAᵀ starts to cost digits) through a Householder QR of Aᵀ, Q kept implicit (geqrf/ormqr): error
    about ε·κ(A), at four times the cost on the annulus (p = 19,009, r ≈ 30–100). ValueError if A is rank-deficient.
    """
    p, r = At.shape
    y, w = gram_solve(gram(At), alpha)  # w ascending
    if w[0] > 0 and w[-1] <= GRAM_SOLVE_MAX_COND * w[0]:
        return At @ y
    packed, hh = torch.geqrf(At)
    R = packed[:r].triu()
    diag = R.diagonal().abs()
    if diag.min() <= 1e-12 * diag.max():
        raise ValueError(
            "the gauged system A = V_rᵀD⁻¹ is rank-deficient (dead columns span a retained direction); "
            "lower dead_tol or use gauge='minnorm'"
        )
    y = torch.linalg.solve_triangular(R.T, alpha[:, None], upper=False)
    y_full = torch.cat([y, torch.zeros(p - r, 1, dtype=y.dtype)]) if p > r else y
    return torch.ormqr(packed, hh, y_full, left=True, transpose=False)[:, 0]


def lift(
    J: Tensor,
    target: Tensor,
    *,
    tau: float = TAU,
    gauge: str = "sensitivity",
    dead_tol: float = 1e-8,
    method: str = "auto",
    svd: TruncatedSVD | None = None,
) -> LiftResult:
    """Truncated, gauged least-squares lift c with J c ≈ target (notes §6.3; paper eqs. 20, 23, 24).

    J (M, p) and target (M,) are used in float64. ``gauge="sensitivity"`` minimises Σ_i ‖J_{:,i}‖²c_i² inside the
    retained subspace (dead columns, ‖J_{:,i}‖ ≤ dead_tol·max, get c_i = 0); ``"minnorm"`` gives c = V_r Σ_r⁻¹ U_rᵀ η.
    ``method``: "svd" (exact), "gram" (eigendecomposition of the smaller Gram matrix; only for τ ≳ 1e-5, see
    ``truncated_svd``), "auto". Pass ``svd`` to reuse one decomposition for several targets. The result's
    ``profile`` is the lift at every cutoff the decomposition resolves (:mod:`lib.paper_b.cutoff_profile`).
    """
    _check_matrix(J)
    if isinstance(target, Tensor) and target.is_complex():
        raise TypeError(f"target must be real; got complex dtype {target.dtype}")
    if not isinstance(target, Tensor) or target.ndim != 1 or target.shape[0] != J.shape[0]:
        raise ValueError(
            f"target must be a 1-D tensor with {J.shape[0]} entries (one per row of J); "
            f"got {getattr(target, 'shape', type(target))}"
        )
    tau = check_tau(tau)
    if gauge not in GAUGES:
        raise ValueError(f"gauge={gauge!r} is not allowed; choose one of {list(GAUGES)}")
    if method not in METHODS:
        raise ValueError(f"method={method!r} is not allowed; choose one of {list(METHODS)}")
    if not 0 <= dead_tol < 1:
        raise ValueError(f"dead_tol={value_text(dead_tol)} must be in [0, 1)")
    if isinstance(J, Tensor):
        J = J.detach().to(torch.float64)
        # a finite sum proves every entry finite (one pass, no (M, p) mask); only an overflowing sum needs the mask
        if not torch.isfinite(J.sum()) and not torch.isfinite(J).all():
            raise ValueError("J contains non-finite entries (nan or inf)")
    op = _as_operator(J)
    eta = target.detach().to(torch.float64)
    if not torch.isfinite(eta).all():
        raise ValueError("target contains non-finite entries (nan or inf)")
    if svd is None:
        svd = truncated_svd(op, tau=tau, method=method)
    U, S, d = svd.U, svd.S, svd.col_norms
    r, p, n_dead, Jc = S.shape[0], op.shape[1], 0, None
    if r == 0:
        coef, proj = torch.zeros(p, dtype=torch.float64), torch.zeros_like(eta)
    else:
        beta = U.T @ eta
        alpha, proj = beta / S, U @ beta
        if getattr(op, "streamed", False):  # V_r is never formed: lib.paper_b.streaming
            coef, Jc, n_dead = streaming.streamed_coefficients(op, U, S, eta, gauge, dead_tol)
        elif gauge == "minnorm":
            coef = svd.V @ alpha
        else:
            scale = _power_of_two_scale(d)  # the gauge does not depend on the scale of D; keep D⁻¹ and AAᵀ in range
            d = d * scale if scale != 1.0 else d
            dead = d <= dead_tol * d.max()
            n_dead = int(dead.sum())
            dinv = torch.where(dead, torch.zeros_like(d), 1.0 / torch.where(dead, torch.ones_like(d), d))
            At = svd.V * dinv[:, None]  # Aᵀ = D⁻¹ V_r, (p, r)
            coef = dinv * _min_norm_solution(At, alpha)
    resid_vec = proj - eta
    residual = float(resid_vec.norm())
    eta_norm = float(eta.norm())
    proj_norm = float(proj.norm())
    rel = residual / eta_norm if eta_norm > 0 else 0.0
    if eta_norm > 0:
        # η − Pη ⟂ Pη, so the principal angle is atan2(‖(I−P)η‖, ‖Pη‖) (accurate also near 0°)
        angle = math.degrees(math.atan2(residual, proj_norm))
    else:
        angle = float("nan")
    realised = float(((op.matmul(coef) if Jc is None else Jc) - eta).norm())
    profile = cutoff_profile.from_decomposition(svd, op, eta, tau)
    return LiftResult(
        coef=coef,
        projection=proj,
        residual=residual,
        rel_residual=rel,
        realised_residual=realised,
        principal_angle_deg=angle,
        rank=r,
        singular_values=svd.singular_values,
        gauge=gauge,
        tau=float(tau),
        method=svd.method,
        n_dead=n_dead,
        profile=profile,
        image=Jc,
    )
