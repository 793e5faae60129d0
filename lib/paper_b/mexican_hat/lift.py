"""The τ-truncated SVD of the tall pooled force Jacobian by a seeded randomized range finder, and the pooled lift
of c* or b* through it (notes §6.4, §7); handed to ``lib.paper_b.lifting.lift``."""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch
from torch import Tensor

from lib.kernels.cpu_linalg import column_norms, matmul
from lib.paper_b.lifting import TAU, LiftResult, TruncatedSVD, lift, retained_rank
from lib.paper_b.lifting_problem import check_kind
from lib.paper_b.mexican_hat.probes import Probes, defect_field, force_jacobian, generator_field


def sketched_svd(J: Tensor, *, tau: float = TAU, rank: int = 128, power: int = 1, seed: int = 0) -> TruncatedSVD:
    """τ-truncated SVD of a tall J by a seeded randomized range finder with ``power`` subspace iterations.

    Cost 2(power + 1)·M·p·rank flops instead of M·p² for the Gram matrix (Halko, Martinsson & Tropp 2011, alg. 4.4).
    Exact when rank(J) ≤ ``rank``; otherwise the retained σ_k ≥ τσ₁ are accurate when the sketch size is well above
    the retained rank. Raises if the retained rank comes within 25% of ``rank`` (the sketch would be too small).
    Returns a ``lib.paper_b.lifting.TruncatedSVD`` for ``lift(…, svd=…)``; ``singular_values`` holds the ``rank``
    sketched values.
    """
    if J.ndim != 2:
        raise ValueError(f"J must be 2-D; got shape {tuple(J.shape)}")
    k = min(int(rank), *J.shape)
    gen = torch.Generator().manual_seed(int(seed))
    omega = torch.randn(J.shape[1], k, generator=gen, dtype=J.dtype)
    # the four products with J, written A @ B in the reference, go through lib.kernels.cpu_linalg.matmul
    Q = torch.linalg.qr(matmul(J, omega)).Q
    for _ in range(int(power)):
        Z = torch.linalg.qr(matmul(J.T, Q)).Q
        Q = torch.linalg.qr(matmul(J, Z)).Q
    B = matmul(Q.T, J)  # (k, p)
    Ub, S, Vh = torch.linalg.svd(B, full_matrices=False)
    r = retained_rank(S, tau)
    if k < min(J.shape) and r > 0.75 * k:
        raise ValueError(f"retained rank {r} is too close to the sketch size rank={k}; raise rank")
    return TruncatedSVD(Q @ Ub[:, :r], S[:r], Vh[:r].T, S, column_norms(J), f"sketch{k}")


@dataclass
class Solve:
    """One pooled re-solve: the Jacobian's SVD and the lift of a target; ``seconds`` covers both."""

    lift: LiftResult
    seconds: float
    target: Tensor


def pooled_lift(
    theta: Tensor,
    probes: Probes,
    kind: str,
    *,
    tau: float = TAU,
    gauge: str = "minnorm",
    method: str = "sketch",
    sketch_rank: int = 128,
    m: int = 64,
    J: Tensor | None = None,
    target: Tensor | None = None,
) -> Solve:
    """Lift c* (kind "c": J c ≈ X F) or b* (kind "b": J b ≈ −δ) through the pooled force Jacobian (notes §7).

    ``method``: "sketch" (``sketched_svd``) or a ``lifting.lift`` method ("gram", "svd"). ``J`` and ``target``, if
    given, are J and the target at θ (computed otherwise); the seconds cover whatever is computed here. Walking along
    +c rotates F (F_t(q) = R_t⁻¹F₀(R_t q)); walking along +b shrinks the defect (F_t = ΠF₀ + e^{−t}δ₀).
    """
    check_kind(kind)
    t0 = time.perf_counter()
    if J is None:
        J = force_jacobian(theta, probes)
    if target is None:
        target = generator_field(theta, probes) if kind == "c" else -defect_field(theta, probes, m)
        target = target.reshape(-1)
    if method == "sketch":
        res = lift(J, target, tau=tau, gauge=gauge, svd=sketched_svd(J, tau=tau, rank=sketch_rank))
    else:
        res = lift(J, target, tau=tau, gauge=gauge, method=method)
    return Solve(res, time.perf_counter() - t0, target)
