"""The one-CPU linear algebra routes (``lib.kernels.cpu_linalg``) against their torch references."""

from __future__ import annotations

import pytest
import torch

from lib.kernels import cpu_linalg
from lib.paper_b import lifting

pytestmark = pytest.mark.usefixtures("float64_default")


def test_column_norms_blocked_sum():
    J = torch.randn(1300, 37, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    assert torch.allclose(cpu_linalg.column_norms(J, rows=128), torch.linalg.vector_norm(J, dim=0), rtol=1e-14, atol=0)


@pytest.mark.parametrize("shape", [(40, 300), (300, 40), (30, 30)])
def test_thin_svd_either_orientation(shape):
    """The exact route decomposes a wide J through its transpose; the factors are still J's."""
    J = torch.randn(*shape, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
    U, S, V = cpu_linalg.thin_svd(J)
    k = min(shape)
    assert U.shape == (shape[0], k) and S.shape == (k,) and V.shape == (shape[1], k)
    torch.testing.assert_close(U @ torch.diag(S) @ V.T, J, rtol=0, atol=1e-12)
    torch.testing.assert_close(U.T @ U, torch.eye(k, dtype=J.dtype), rtol=0, atol=1e-12)
    torch.testing.assert_close(V.T @ V, torch.eye(k, dtype=J.dtype), rtol=0, atol=1e-12)
    torch.testing.assert_close(S, torch.linalg.svdvals(J), rtol=1e-12, atol=0)


def test_numpy_routes_match_their_torch_references():
    g = torch.Generator().manual_seed(9)
    A = torch.randn(300, 11, generator=g, dtype=torch.float64)
    G = A.T @ A
    w, Q = cpu_linalg.symmetric_eigh(G)
    w_ref = torch.linalg.eigvalsh(G)
    assert torch.allclose(w, w_ref, rtol=1e-12, atol=0)
    assert torch.allclose(Q @ torch.diag(w) @ Q.T, G, atol=1e-10)
    assert torch.allclose(cpu_linalg.tn_gram(A), A.T @ A, rtol=1e-13, atol=1e-12)
    B = torch.randn(300, 7, generator=g, dtype=torch.float64)
    assert torch.allclose(cpu_linalg.matmul(A.T, B), A.T @ B, rtol=1e-13, atol=1e-12)  # a transposed view too
    assert torch.allclose(cpu_linalg.matmul(B.T, A), B.T @ A, rtol=1e-13, atol=1e-12)
    wide = lifting.DenseJacobian(A.T)  # 11 × 300: J Jᵀ
    assert torch.allclose(wide.gram(), A.T @ A, rtol=1e-13, atol=1e-12)
    assert torch.allclose(lifting.DenseJacobian(A).gram(), A.T @ A, rtol=1e-13, atol=1e-12)
    pairs = [(torch.randn(20, k, generator=g, dtype=torch.float64), torch.randn(20, k + 1, generator=g,
              dtype=torch.float64)) for k in (3, 5)]  # fmt: skip
    reference = sum((d @ d.T) * (a @ a.T + 1) for d, a in pairs)
    assert torch.allclose(cpu_linalg.row_gram_numpy(pairs), reference, rtol=1e-13, atol=1e-12)


@pytest.mark.parametrize("cond", [1.0, 1e2, 1e4, 1e6])
def test_gram_solve_matches_the_cholesky_route_it_replaced_within_its_bound(cond):
    """gram_solve's docstring: ‖y − y_Cholesky‖ ≤ 8·r·ε·κ(G)·‖y‖ up to κ = 10⁶ (the lift's GRAM_SOLVE_MAX_COND)."""
    g = torch.Generator().manual_seed(int(cond))
    r = 60
    Q, _ = torch.linalg.qr(torch.randn(r, r, generator=g, dtype=torch.float64))
    G = (Q * torch.logspace(0, -torch.log10(torch.tensor(cond)).item(), r, dtype=torch.float64)) @ Q.T
    G = (G + G.T) / 2
    b = torch.randn(r, generator=g, dtype=torch.float64)
    y, w = cpu_linalg.gram_solve(G, b)
    reference = torch.cholesky_solve(b[:, None], torch.linalg.cholesky(G))[:, 0]
    kappa = float(w[-1] / w[0])
    assert kappa == pytest.approx(cond, rel=1e-6)
    eps = torch.finfo(torch.float64).eps
    assert float((y - reference).norm()) <= 8 * r * eps * kappa * float(reference.norm())
    assert torch.allclose(w, torch.linalg.eigvalsh(G), rtol=0, atol=8 * r * eps * float(w[-1]))  # λ to ε·λ_max
    assert torch.equal(cpu_linalg.gram(Q), Q.T @ Q)


def test_gram_matches_the_symmetric_rank_k_route_it_replaced_within_its_bound():
    """gram's docstring: |gram(A) − tn_gram(A)|_ij ≤ p·ε·‖A_i‖‖A_j‖ (the gauge's Aᵀ: p × r, columns spread)."""
    g = torch.Generator().manual_seed(3)
    p, r = 5000, 40
    A = torch.randn(p, r, generator=g, dtype=torch.float64) * torch.logspace(0, -3, r, dtype=torch.float64)
    norms = A.norm(dim=0)
    bound = p * torch.finfo(torch.float64).eps * torch.outer(norms, norms)
    assert ((cpu_linalg.gram(A) - cpu_linalg.tn_gram(A)).abs() <= bound).all()
