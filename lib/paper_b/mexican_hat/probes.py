"""The learned force on the pooled probe rows (notes §6.4, §9.5): F_θ, its parameter Jacobian, X F, Π F and δ.

Pooled lifting stacks the rows of the 21 α values on the polar 15 × 32 grid into one system (21 × 480 × 2 = 20,160
rows) over the 2,273 parameters of V. Every function takes V's parameter vector θ₂ (float64).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from lib.kernels.silu_mlp import mlp_grad_param_jacobian
from lib.paper_b.mexican_hat.model import learned_force, v_input, v_params_of
from lib.paper_b.mexican_hat.system import POOLED_ALPHAS, alpha_vector, check_potential_alpha, true_force
from lib.paper_b.symmetry import (
    generator_vector,
    polar_grid,
    quadrature_orbits,
    reynolds_vector,
    rotation,
    spread_over_orbits,
)


@dataclass(frozen=True)
class Probes:
    """Pooled probe rows: points q (N, 2) and their α (N,), α-major (all grid points of the first α, …)."""

    q: Tensor
    alpha: Tensor
    alphas: tuple[float, ...]
    n_grid: int

    @property
    def rows(self) -> int:
        """Rows of the force Jacobian, 2N."""
        return 2 * self.q.shape[0]


def pooled_probes(alphas: Sequence[float] = POOLED_ALPHAS, grid: Tensor | None = None) -> Probes:
    """The grid (default: polar 15 × 32 in |q| ≤ 1) repeated for every α: 21 × 480 = 10,080 points by default."""
    alphas = tuple(check_potential_alpha(a) for a in alphas)
    if not alphas:
        raise ValueError("alphas must not be empty")
    grid = polar_grid() if grid is None else grid.to(torch.float64)
    if grid.ndim != 2 or grid.shape[1] != 2:
        raise ValueError(f"grid must have shape (N, 2); got {tuple(grid.shape)}")
    q = grid.repeat(len(alphas), 1)
    a = torch.tensor(alphas, dtype=torch.float64).repeat_interleave(grid.shape[0])
    return Probes(q, a, alphas, grid.shape[0])


FORCE_CHUNK = 4096  # rows per evaluation: keeps the (rows × 32) float64 intermediates in cache


def force_at(theta: Tensor, q: Tensor, alpha: float | Tensor) -> Tensor:
    """F_θ(q; α) = −∇_q V for V's parameter vector θ₂; (B, 2). Evaluated in chunks of ``FORCE_CHUNK`` rows."""
    params = v_params_of(theta)
    a = alpha_vector(alpha, q.shape[0], q.dtype) if q.ndim == 2 else alpha
    if q.ndim != 2 or q.shape[0] <= FORCE_CHUNK:
        return learned_force(params, q, a)
    return torch.cat(
        [learned_force(params, qc, ac) for qc, ac in zip(q.split(FORCE_CHUNK), a.split(FORCE_CHUNK), strict=True)]
    )


def pooled_force(theta: Tensor, probes: Probes) -> Tensor:
    """F_θ at every probe row, (N, 2)."""
    return force_at(theta, probes.q, probes.alpha)


def force_jacobian(theta: Tensor, probes: Probes, *, out: Tensor | None = None) -> Tensor:
    """Parameter Jacobian of F_θ over the probes, rows (n, k) probe-major, columns θ₂; (2N, 2273), float64.

    Explicit: each row is the hand-written reverse sweep through ∇_x V with cotangent −e_k
    (``lib.kernels.silu_mlp.mlp_grad_param_jacobian``).
    ``out``: a (2N, 2273) float64 buffer to overwrite (re-solves reuse one, see ``MexicanHatProblem``).
    """
    params = v_params_of(theta.to(torch.float64))
    x = v_input(probes.q, probes.alpha).repeat_interleave(2, 0)
    n = probes.q.shape[0]
    ubar = torch.zeros(2 * n, 3, dtype=torch.float64)
    ubar[0::2, 0] = -1.0
    ubar[1::2, 1] = -1.0
    return mlp_grad_param_jacobian(params, x, ubar, out=out)


def tiled_force(theta: Tensor, probes: Probes):
    """F_θ as a function of points q (k·N, 2): the probes' α repeated k times (for rotated copies of the grid)."""
    n = probes.q.shape[0]

    def F(q: Tensor) -> Tensor:
        return force_at(theta, q, probes.alpha.repeat(q.shape[0] // n))

    return F


def generator_field(theta: Tensor, probes: Probes) -> Tensor:
    """X F_θ = (∂F/∂q)(Ωq) − ΩF at every probe (the book's sign; the paper's η is −X F); (N, 2)."""
    return generator_vector(tiled_force(theta, probes), probes.q)


def reynolds_field(theta: Tensor, probes: Probes, m: int = 64) -> Tensor:
    """Π F_θ at every probe (m-point Reynolds average, per α); (N, 2).

    When every α shares one grid that a rotation group C_n ⊂ C_m maps onto itself (the polar 15 × 32 grid: n = 32;
    a square lattice: n = 4), the average is formed at one point per orbit and rotated onto the rest
    (``lib.paper_b.symmetry.quadrature_orbits``): 32× fewer force evaluations on the polar grid, equal up to rounding.
    """
    grid = probes.q[: probes.n_grid]
    n_alpha = len(probes.alphas)
    orbits = quadrature_orbits(grid, m) if torch.equal(probes.q, grid.repeat(n_alpha, 1)) else None
    if orbits is None:
        return reynolds_vector(tiled_force(theta, probes), probes.q, m)
    reps = pooled_probes(probes.alphas, grid[orbits[1]])
    PF_reps = reynolds_vector(tiled_force(theta, reps), reps.q, m).reshape(n_alpha, -1, 2)
    return spread_over_orbits(PF_reps, orbits).reshape(-1, 2)


def defect_field(theta: Tensor, probes: Probes, m: int = 64) -> Tensor:
    """Equivariance defect δ = F_θ − Π F_θ (m-point Reynolds average, per α); (N, 2)."""
    return pooled_force(theta, probes) - reynolds_field(theta, probes, m)


def equivariance_error(theta: Tensor, probes: Probes, angle_deg: float = 73.0) -> float:
    """‖F(R q) − R F(q)‖ / ‖F(q)‖ over the probes for the rotation by ``angle_deg`` (notes §6.4: 73°)."""
    R = rotation(math.radians(angle_deg))
    F = tiled_force(theta, probes)
    lhs = F(probes.q @ R.T)
    rhs = F(probes.q) @ R.T
    return float((lhs - rhs).norm() / F(probes.q).norm())


def true_lie_derivative(probes: Probes) -> float:
    """max |(∂F/∂q)(Ωq) − ΩF(q)| for the true force over the probes (App. C.1: exactly zero)."""
    n = probes.q.shape[0]
    return float(generator_vector(lambda q: true_force(q, probes.alpha.repeat(q.shape[0] // n)), probes.q).abs().max())
