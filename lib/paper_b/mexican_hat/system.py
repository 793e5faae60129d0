"""The Mexican-hat Hamiltonian of paper B §3.2 (App. B.1, C.1; notes §9.1) and its ground truth.

H(q, p) = ½|p|² + ½α|q|² + ¼|q|⁴ with q, p ∈ R², so q̇ = p and ṗ = F(q) = −(α + |q|²) q. States are always stored in
(q, p) order. Ground truth comes from a fine kick–drift–kick leapfrog (dτ = 0.001, float64) sampled every Δt = 0.1.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

TRAIN_ALPHAS: tuple[float, ...] = (-1.1, -0.8, -0.6, -0.2, 0.2, 0.6, 0.8, 1.1)
ANALYSIS_ALPHAS: tuple[float, ...] = (-1.0, -0.8, -0.7, -0.5, -0.4, -0.3, -0.2, -0.1, 0.0, 0.1, 0.2, 0.3, 0.4,
                                      0.5, 0.6, 0.7, 0.8, 1.0)  # fmt: skip
POOLED_ALPHAS: tuple[float, ...] = tuple(sorted(set(TRAIN_ALPHAS) | set(ANALYSIS_ALPHAS)))  # the 21 values
UNSEEN_ALPHAS: tuple[float, ...] = (-1.0, -0.5, 0.0, 0.5, 1.0)  # plotting alphas, not in TRAIN_ALPHAS
DT = 0.1  # model and sampling step
FINE_STEPS = 100  # ground-truth leapfrog substeps per Δt (dτ = 0.001)


def check_potential_alpha(alpha) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating, np.integer)):
        raise TypeError(f"alpha={alpha!r} must be a real number (float), got {type(alpha).__name__}")
    if not math.isfinite(float(alpha)):
        raise ValueError(f"alpha={alpha!r} must be finite")
    return float(alpha)


def check_pairs(x: Tensor, name: str) -> None:
    if not isinstance(x, Tensor) or x.ndim < 1 or x.shape[-1] != 2:
        raise ValueError(f"{name} must be a tensor of shape (..., 2); got {getattr(x, 'shape', type(x))}")


def energy(q: Tensor, p: Tensor, alpha: float | Tensor) -> Tensor:
    """H(q, p) = ½|p|² + ½α|q|² + ¼|q|⁴ for q, p of shape (..., 2); shape (...) (notes §9.1)."""
    check_pairs(q, "q")
    check_pairs(p, "p")
    r2 = (q * q).sum(-1)
    return 0.5 * (p * p).sum(-1) + 0.5 * alpha * r2 + 0.25 * r2 * r2


def true_force(q: Tensor, alpha: float | Tensor) -> Tensor:
    """F(q) = −∇_q V = −(α + |q|²) q, shape like q (..., 2); α a float or a tensor broadcasting against q[..., 0]."""
    check_pairs(q, "q")
    a = torch.as_tensor(alpha, dtype=q.dtype)
    return -(a[..., None] + (q * q).sum(-1, keepdim=True)) * q


def leapfrog_true(
    q0: Tensor, p0: Tensor, alpha: float | Tensor, *, steps: int, dt: float = DT, fine: int = FINE_STEPS
) -> Tensor:
    """Ground truth: kick–drift–kick leapfrog of the true system with step dt/fine, sampled every dt.

    q0, p0: (B, 2); alpha a float or a (B,) tensor. Returns (B, steps + 1, 4) states in (q, p) order, float64.
    """
    check_pairs(q0, "q0")
    check_pairs(p0, "p0")
    if q0.shape != p0.shape or q0.ndim != 2:
        raise ValueError(f"q0 and p0 must both have shape (B, 2); got {tuple(q0.shape)} and {tuple(p0.shape)}")
    a = alpha_vector(alpha, q0.shape[0], torch.float64)
    q, p = q0.to(torch.float64).clone(), p0.to(torch.float64).clone()
    h = dt / fine
    out = [torch.cat([q, p], -1)]
    f = true_force(q, a)
    for _ in range(steps):
        for _ in range(fine):
            p = p + 0.5 * h * f
            q = q + h * p
            f = true_force(q, a)
            p = p + 0.5 * h * f
        out.append(torch.cat([q, p], -1))
    return torch.stack(out, 1)


def alpha_vector(alpha, n: int, dtype) -> Tensor:
    """α as a (n,) tensor; a float is checked and broadcast."""
    if isinstance(alpha, Tensor):
        if alpha.ndim == 0:
            alpha = alpha.expand(n)
        if alpha.shape != (n,):
            raise ValueError(f"alpha must be a float or a tensor of shape ({n},); got {tuple(alpha.shape)}")
        return alpha.to(dtype)
    return torch.full((n,), check_potential_alpha(alpha), dtype=dtype)


def sample_initial_conditions(n: int, alpha: float, *, seed: int, box: float = 2.0, e_max: float = 3.0):
    """n initial conditions (q, p) uniform in [−box, box]⁴, rejection-sampled to true energy ≤ e_max (notes §9.3).

    Seeded by ``seed`` (a fresh ``torch.Generator``); returns q (n, 2), p (n, 2) float64.
    """
    alpha = check_potential_alpha(alpha)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n={n!r} must be a positive integer")
    gen = torch.Generator().manual_seed(int(seed))
    kept = []
    count = 0
    for _ in range(1000):
        x = (torch.rand(4 * n, 4, generator=gen, dtype=torch.float64) * 2 - 1) * box
        x = x[energy(x[:, :2], x[:, 2:], alpha) <= e_max]
        kept.append(x)
        count += x.shape[0]
        if count >= n:
            break
    else:  # pragma: no cover - only for absurd e_max
        raise RuntimeError(f"rejection sampling found only {count} of {n} states with energy ≤ {e_max}")
    x = torch.cat(kept)[:n]
    return x[:, :2].contiguous(), x[:, 2:].contiguous()
