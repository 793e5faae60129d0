"""SO(2) generators, the Reynolds projector and the probe grids (paper B App. A, notes §6.4, §8.5)."""

from __future__ import annotations

import math

import pytest
import torch

from lib.paper_b import symmetry as sym

pytestmark = pytest.mark.usefixtures("float64_default")


def _net(seed=0, d_out=1):
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(2, 16), torch.nn.Tanh(), torch.nn.Linear(16, 16), torch.nn.Tanh(), torch.nn.Linear(16, d_out)
    ).double()


def test_rotation():
    R = sym.rotation(0.3)
    assert torch.allclose(R @ R.T, torch.eye(2))
    assert torch.allclose(sym.rotation(0.3) @ sym.rotation(0.4), sym.rotation(0.7))
    assert torch.allclose(sym.rotation(math.pi / 2), sym.OMEGA, atol=1e-15)
    assert sym.rotation(torch.linspace(0, 1, 5)).shape == (5, 2, 2)


def test_grids():
    sq = sym.square_grid()
    assert sq.shape == (408, 2)
    assert float(sq.norm(dim=1).max()) <= 3.5 + 1e-12
    pg = sym.polar_grid()
    assert pg.shape == (480, 2)
    radii = pg.norm(dim=1).reshape(15, 32)
    assert torch.allclose(radii[:, 0], torch.linspace(1 / 15, 1.0, 15))
    # the polar grid is invariant under rotation by 2π/32 (as a set)
    rot = sym.rotate_points(pg, 2 * math.pi / 32)
    dists = torch.cdist(rot, pg, compute_mode="donot_use_mm_for_euclid_dist").min(dim=1).values
    assert float(dists.max()) < 1e-12


def test_generator_sign_convention():
    x = torch.randn(20, 2)
    f = lambda z: z[:, 0]  # noqa: E731
    assert torch.allclose(sym.generator_scalar(f, x), -x[:, 1])  # ∇f·Ωx = (1, 0)·(−x₂, x₁)
    # X f = d/dφ f(R_φ x) at φ = 0 (so ḟ = X f gives f_t = f₀∘R_t)
    net = _net()
    f = lambda z: net(z)[:, 0]  # noqa: E731
    h = 1e-6
    fd = (f(sym.rotate_points(x, h)) - f(sym.rotate_points(x, -h))) / (2 * h)
    assert torch.allclose(sym.generator_scalar(f, x), fd, atol=1e-7)


def test_generator_vanishes_on_invariant_and_equivariant():
    x = torch.randn(30, 2)
    assert sym.generator_scalar(lambda z: torch.sin(z.pow(2).sum(1)), x).abs().max() < 1e-13
    alpha = -0.7
    force = lambda q: -(alpha + q.pow(2).sum(1, keepdim=True)) * q  # noqa: E731 (Mexican-hat force)
    assert sym.generator_vector(force, x).abs().max() < 1e-13
    shear = lambda q: torch.stack([q[:, 1], torch.zeros_like(q[:, 0])], 1)  # noqa: E731
    assert sym.generator_vector(shear, x).abs().max() > 0.1


def test_generator_vector_matches_finite_rotation():
    net = _net(d_out=2)
    x = torch.randn(15, 2)
    h = 1e-6

    def conj(phi):  # R_φ⁻¹ F(R_φ x): its φ-derivative at 0 is (∂F/∂q)Ωq − ΩF
        return sym.rotate_points(net(sym.rotate_points(x, phi)), -phi)

    fd = (conj(h) - conj(-h)) / (2 * h)
    assert torch.allclose(sym.generator_vector(net, x), fd, atol=1e-7)


def test_reynolds_projector():
    net = _net()
    f = lambda z: net(z)[:, 0]  # noqa: E731
    x = sym.square_grid()
    Pf = sym.reynolds_scalar(f, x)
    # idempotent: Π(Πf) = Πf (exact for the C_64 quadrature)
    PPf = sym.reynolds_scalar(lambda z: sym.reynolds_scalar(f, z), x)
    assert torch.allclose(PPf, Pf, atol=1e-13)
    inv = lambda z: torch.cos(z.norm(dim=1))  # noqa: E731
    assert torch.allclose(sym.reynolds_scalar(inv, x), inv(x), atol=1e-14)
    assert torch.allclose(sym.defect_scalar(f, x), f(x) - Pf)


def test_reynolds_vector_is_equivariant_projection():
    net = _net(d_out=2)
    q = torch.randn(10, 2)
    PF = lambda z: sym.reynolds_vector(net, z)  # noqa: E731
    phi = 2 * math.pi * 5 / 64  # an element of C_64
    assert torch.allclose(PF(sym.rotate_points(q, phi)), sym.rotate_points(PF(q), phi), atol=1e-13)
    assert torch.allclose(sym.reynolds_vector(PF, q), PF(q), atol=1e-13)


def test_cyclic_orbits_of_the_probe_grids():
    n, reps, orbit, turns = sym.quadrature_orbits(sym.polar_grid(15, 32), 64)
    assert n == 32 and len(reps) == 15  # one representative per ring
    grid = sym.polar_grid(15, 32)
    R = sym.rotation(turns.to(grid.dtype) * (2 * math.pi / 32))  # (N, 2, 2)
    assert torch.allclose((R @ grid[reps][orbit][:, :, None])[:, :, 0], grid, atol=1e-12)
    assert sym.quadrature_orbits(sym.square_grid(), 64)[0] == 4  # the clipped lattice: quarter turns only
    assert sym.quadrature_orbits(torch.tensor([[1.0, 0.0], [0.3, 0.2]]), 64) is None
    assert sym.cyclic_orbits(sym.polar_grid(2, 6), 4) is None  # 6 angles are not invariant under a quarter turn


@pytest.mark.parametrize("grid", [sym.polar_grid(4, 16), sym.square_grid(10, 1.0)])
def test_reynolds_spread_over_orbits_equals_the_direct_average(grid):
    net = _net(seed=2, d_out=2)
    direct = sym.reynolds_vector(net, grid, 64)
    orbits = sym.quadrature_orbits(grid, 64)
    spread = sym.spread_over_orbits(sym.reynolds_vector(net, grid[orbits[1]], 64), orbits)
    assert torch.allclose(spread, direct, atol=1e-14, rtol=0)


def test_defect_orthogonal_to_generator_on_polar_grid_only():
    ticks = torch.linspace(-1, 1, 7)
    gx, gy = torch.meshgrid(ticks, ticks, indexing="xy")
    square = torch.stack([gx.reshape(-1), gy.reshape(-1)], 1)  # the 7 × 7 lattice, not rotation-invariant
    polar = sym.polar_grid()
    c_square = []
    for seed in range(4):
        net = _net(seed=seed)
        f = lambda z, net=net: net(z)[:, 0]  # noqa: E731
        c_polar = sym.cosine(sym.defect_scalar(f, polar), sym.generator_scalar(f, polar))
        assert abs(c_polar) < 1e-12
        c_square.append(abs(sym.cosine(sym.defect_scalar(f, square), sym.generator_scalar(f, square))))
    assert min(c_square) > 1e-4 and max(c_square) > 1e-2


def test_errors():
    with pytest.raises(ValueError, match="shape"):
        sym.generator_scalar(lambda z: z[:, 0], torch.randn(5, 3))
    with pytest.raises(ValueError, match="m="):
        sym.quadrature_angles(0)
    with pytest.raises(ValueError, match="n_r"):
        sym.polar_grid(n_r=0)
