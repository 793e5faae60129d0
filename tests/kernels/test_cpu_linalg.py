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
