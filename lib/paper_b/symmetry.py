"""SO(2) acting on R²: rotations, generator directions, the Reynolds projector and probe grids (paper B §2, App. A).

**Sign convention (used throughout the book).** Ω = [[0, −1], [1, 0]] and R_φ = exp(φΩ) (counter-clockwise). The
generator direction of an invariant scalar function is

    X f(x) = ∇f(x)·(Ω x) = d/dφ f(R_φ x)|_{φ=0},

and of a vector field with ρ = rotation, X F(q) = (∂F/∂q)(Ω q) − Ω F(q). Flowing along it, ḟ_t = X f_t, gives
f_t = f_0∘R_t (a rotation of the function by angle t, clockwise in the plane of level sets). The paper's
η_ξ = dΠ(ξ)f, from [Π(g)f](x) = ρ(g) f(R_g⁻¹x), is the **negative**: η = −X f. This only reverses the direction of
rotation. All functions take callables on batched float tensors (N, 2) and work in the callables' dtype.

The Reynolds projector by m-point quadrature of the Haar average (eq. 21, notes §6.4, §8.5) is
Π f(x) = 1/m Σ_k f(R_k x) and Π F(q) = 1/m Σ_k R_k⁻¹ F(R_k q) with φ_k = 2πk/m; the equivariance defect is
δ = f − Π f.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor
from torch.func import jvp

OMEGA = torch.tensor([[0.0, -1.0], [1.0, 0.0]], dtype=torch.float64)


def rotation(phi: float | Tensor, dtype: torch.dtype = torch.float64) -> Tensor:
    """Rotation matrix R_φ = exp(φΩ), shape (2, 2), or (m, 2, 2) for a 1-D tensor of angles."""
    phi_t = torch.as_tensor(phi, dtype=dtype)
    c, s = torch.cos(phi_t), torch.sin(phi_t)
    return torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)


def rotate_points(x: Tensor, phi: float | Tensor) -> Tensor:
    """R_φ x for points x (N, 2); with m angles the result is (m, N, 2)."""
    R = rotation(phi, dtype=x.dtype)
    return x @ R.transpose(-1, -2)


def quadrature_angles(m: int = 64, dtype: torch.dtype = torch.float64) -> Tensor:
    """The m equally spaced angles φ_k = 2πk/m, k = 0..m−1 (C_m quadrature of SO(2))."""
    if isinstance(m, bool) or not isinstance(m, int) or m < 1:
        raise ValueError(f"m={m!r} must be a positive integer")
    return torch.arange(m, dtype=dtype) * (2 * math.pi / m)


def _omega_x(x: Tensor) -> Tensor:
    return torch.stack([-x[..., 1], x[..., 0]], dim=-1)  # Ω x


def _check_points(x, name="x"):
    if not isinstance(x, Tensor) or x.ndim != 2 or x.shape[1] != 2:
        raise ValueError(f"{name} must be a tensor of points with shape (N, 2); got {getattr(x, 'shape', type(x))}")


def generator_scalar(f: Callable[[Tensor], Tensor], x: Tensor) -> Tensor:
    """X f(x) = ∇f(x)·(Ωx) for an invariant scalar output, shape (N,) (notes §8.5; paper's η is −X f)."""
    _check_points(x)
    _, tangent = jvp(f, (x,), (_omega_x(x),))
    return tangent.reshape(x.shape[0])


def generator_vector(F: Callable[[Tensor], Tensor], q: Tensor) -> Tensor:
    """X F(q) = (∂F/∂q)(Ωq) − Ω F(q) for an equivariant vector field (ρ = rotation), shape (N, 2) (App. C.1)."""
    _check_points(q, "q")
    value, tangent = jvp(F, (q,), (_omega_x(q),))
    return tangent - _omega_x(value)


def reynolds_scalar(f: Callable[[Tensor], Tensor], x: Tensor, m: int = 64) -> Tensor:
    """Π f(x) = 1/m Σ_k f(R_k x), shape (N,) (eq. 21 with trivial ρ)."""
    _check_points(x)
    xs = rotate_points(x, quadrature_angles(m, x.dtype))  # (m, N, 2)
    return f(xs.reshape(-1, 2)).reshape(m, x.shape[0]).mean(0)


def reynolds_vector(F: Callable[[Tensor], Tensor], q: Tensor, m: int = 64) -> Tensor:
    """Π F(q) = 1/m Σ_k R_k⁻¹ F(R_k q), shape (N, 2) (eq. 21, notes §6.4)."""
    _check_points(q, "q")
    phis = quadrature_angles(m, q.dtype)
    R = rotation(phis, dtype=q.dtype)  # (m, 2, 2)
    qs = q @ R.transpose(-1, -2)  # (m, N, 2): R_k q
    Fq = F(qs.reshape(-1, 2)).reshape(m, q.shape[0], 2)
    return (Fq @ R).mean(0)  # row vectors: (R_kᵀ F)ᵀ = Fᵀ R_k


def cyclic_orbits(x: Tensor, n: int, tol: float = 1e-9) -> tuple[Tensor, Tensor, Tensor] | None:
    """Orbits of the points x (N, 2) under the rotation by 2π/n, or None if the set is not invariant under it.

    Returns ``(reps, orbit, turns)``: the representatives' row indices (K,), each point's orbit index into ``reps``
    (N,) and its turn count s (N,) with x_i = R_{2πs/n} x_{reps[orbit_i]} (to ``tol``·max|x|).
    """
    _check_points(x)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n={n!r} must be a positive integer")
    nxt = torch.cdist(rotate_points(x, 2 * math.pi / n), x, compute_mode="donot_use_mm_for_euclid_dist").min(dim=1)
    if float(nxt.values.max()) > tol * max(float(x.abs().max()), 1.0):
        return None
    succ = nxt.indices.tolist()
    orbit, turns, reps = [-1] * len(succ), [0] * len(succ), []
    for start in range(len(succ)):
        if orbit[start] >= 0:
            continue
        i, s = start, 0
        while orbit[i] < 0:
            orbit[i], turns[i] = len(reps), s
            i, s = succ[i], s + 1
        reps.append(start)
    return torch.tensor(reps), torch.tensor(orbit), torch.tensor(turns)


def quadrature_orbits(q: Tensor, m: int = 64) -> tuple[int, Tensor, Tensor, Tensor] | None:
    """The largest C_n ⊂ C_m (n divides m, n ≥ 2) that maps the points q onto themselves, with its orbits.

    Returns ``(n, reps, orbit, turns)`` as in :func:`cyclic_orbits`, or None if no such rotation group exists.
    """
    quadrature_angles(m)  # validates m
    for n in sorted((d for d in range(2, m + 1) if m % d == 0), reverse=True):
        orbits = cyclic_orbits(q, n)
        if orbits is not None:
            return (n, *orbits)
    return None


def spread_over_orbits(
    values_reps: Tensor, orbits: tuple[int, Tensor, Tensor, Tensor], *, vector: bool = True
) -> Tensor:
    """Π-averaged values given at the orbit representatives, carried onto every point of the probe set.

    The one Reynolds average by orbits of both paper-B systems: average at the representatives (``reynolds_scalar`` or
    ``reynolds_vector`` on ``x[orbits[1]]``), then spread. An invariant scalar Π f (``vector=False``; values (..., K))
    is equal on a whole orbit: (..., N). An equivariant field G = Π F (``vector=True``; values (..., K, 2)) with n | m
    satisfies G(x_i) = R_{2πs_i/n} G(x_rep): (..., N, 2). So Π on a C_n-invariant grid needs f only at the
    representatives' m rotations (the annulus's quarter-turn orbits, ``lib.paper_b.mexican_hat.probes``' polar grid).
    """
    n, _, orbit, turns = orbits
    if not vector:
        return values_reps[..., orbit]
    R = rotation(turns.to(values_reps.dtype) * (2 * math.pi / n), dtype=values_reps.dtype)  # (N, 2, 2)
    return torch.einsum("nij,...nj->...ni", R, values_reps[..., orbit, :])


def defect_scalar(f: Callable[[Tensor], Tensor], x: Tensor, m: int = 64) -> Tensor:
    """Equivariance defect δ = f − Π f at x, shape (N,)."""
    return f(x).reshape(x.shape[0]) - reynolds_scalar(f, x, m)


def defect_vector(F: Callable[[Tensor], Tensor], q: Tensor, m: int = 64) -> Tensor:
    """Equivariance defect δ = F − Π F at q, shape (N, 2)."""
    return F(q) - reynolds_vector(F, q, m)


def square_grid(n: int = 24, extent: float = 3.5, dtype: torch.dtype = torch.float64) -> Tensor:
    """The annulus probe set: n × n lattice on [−extent, extent]², points with radius ≤ extent; (408, 2) by default."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise ValueError(f"n={n!r} must be an integer ≥ 2")
    if not extent > 0:
        raise ValueError(f"extent={extent!r} must be positive")
    ticks = torch.linspace(-extent, extent, n, dtype=dtype)
    gx, gy = torch.meshgrid(ticks, ticks, indexing="xy")
    pts = torch.stack([gx.reshape(-1), gy.reshape(-1)], dim=1)
    keep = pts.norm(dim=1) <= extent * (1 + 1e-12)
    return pts[keep]


def polar_grid(n_r: int = 15, n_theta: int = 32, extent: float = 1.0, dtype: torch.dtype = torch.float64) -> Tensor:
    """Rotation-invariant polar grid, (n_r·n_theta, 2): radii linspace(extent/n_r, extent, n_r) × n_theta angles.

    Angles are equally spaced on [0, 2π). Radius-major order (all angles of the first radius, then the next).
    Invariant under rotation by 2π/n_theta.
    """
    for name, v in (("n_r", n_r), ("n_theta", n_theta)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name}={v!r} must be a positive integer")
    if not extent > 0:
        raise ValueError(f"extent={extent!r} must be positive")
    radii = torch.linspace(extent / n_r, extent, n_r, dtype=dtype)
    angles = torch.arange(n_theta, dtype=dtype) * (2 * math.pi / n_theta)
    r, a = torch.meshgrid(radii, angles, indexing="ij")
    return torch.stack([(r * torch.cos(a)).reshape(-1), (r * torch.sin(a)).reshape(-1)], dim=1)


def held_out_polar_grid(n_r: int = 15, n_theta: int = 32, extent: float = 1.0) -> Tensor:
    """The held-out set of :func:`polar_grid` (``lib.paper_b.evidence``): as many points, drawn the same way, half a
    step away in radius and in angle (radii extent·(k − ½)/n_r, angles 2π(j + ½)/n_theta); disjoint from it and
    invariant under the same rotations."""
    grid = polar_grid(n_r, n_theta, extent)
    return grid * (1 - 0.5 / grid.norm(dim=1, keepdim=True) * (extent / n_r)) @ rotation(math.pi / n_theta).T


def held_out_square_grid(n: int = 24, extent: float = 3.5) -> Tensor:
    """The held-out set of :func:`square_grid` (``lib.paper_b.evidence``): the lattice of the same spacing moved half
    a step in both coordinates (ticks (i − n/2)·step, i = 0…n, against the grid's (j − (n − 1)/2)·step), points with
    radius ≤ extent: disjoint from it, invariant under quarter turns, about as many points (421 against 408 by
    default)."""
    step = 2 * extent / (n - 1)
    ticks = (torch.arange(n + 1, dtype=torch.float64) - n / 2) * step
    gx, gy = torch.meshgrid(ticks, ticks, indexing="xy")
    pts = torch.stack([gx.reshape(-1), gy.reshape(-1)], dim=1)
    return pts[pts.norm(dim=1) <= extent * (1 + 1e-12)]


def circle(radius: float = 1.0, n: int = 360, dtype: torch.dtype = torch.float64) -> tuple[Tensor, Tensor]:
    """n angles on [0, 2π) (endpoint excluded) and the points at that radius: (n,), (n, 2)."""
    angles = torch.arange(n, dtype=dtype) * (2 * math.pi / n)
    return angles, radius * torch.stack([torch.cos(angles), torch.sin(angles)], dim=1)


def cosine(a, b) -> float:
    """Cosine of the angle between two flattened vectors (tensors or arrays) of equal length (empirical L² inner
    product, float64); nan if either is zero."""
    a = torch.as_tensor(a).detach().reshape(-1).to(torch.float64)
    b = torch.as_tensor(b).detach().reshape(-1).to(torch.float64)
    if a.numel() != b.numel():
        raise ValueError(f"cosine of vectors of lengths {a.numel()} and {b.numel()}: they must be equal")
    na, nb = float(a.norm()), float(b.norm())
    return float(a @ b) / (na * nb) if na > 0 and nb > 0 else float("nan")
