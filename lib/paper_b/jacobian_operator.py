"""A dense parameter Jacobian behind the small operator interface ``lib.paper_b.lifting.lift`` uses: column norms,
the smaller Gram matrix, and products with J and Jᵀ (structured Jacobians, such as ``lib.paper_b.annulus``'s, offer
the same methods without forming J)."""

from __future__ import annotations

from torch import Tensor

from lib.kernels.cpu_linalg import column_norms, tn_gram


class DenseJacobian:
    """A dense Jacobian (M, p) behind the small operator interface ``lift`` uses (structured Jacobians, such as
    ``lib.paper_b.annulus.MLPJacobian``, provide the same methods without forming J)."""

    def __init__(self, J: Tensor):
        self.J = J
        self.shape = tuple(J.shape)

    def col_norms(self) -> Tensor:
        """‖J_{:,i}‖₂, shape (p,)."""
        return column_norms(self.J)

    def gram(self) -> Tensor:
        """The smaller Gram matrix: J Jᵀ (M ≤ p) or Jᵀ J, by numpy's symmetric rank-k update (``tn_gram``; reference
        ``J @ J.T`` or ``J.T @ J``): half the products of a general matrix product, 2.4 s against torch's 5.4 s on
        the 20,160 × 2,273 Mexican-hat Jacobian (one core)."""
        return tn_gram(self.J.T) if self.shape[0] <= self.shape[1] else tn_gram(self.J)

    def matmul(self, C: Tensor) -> Tensor:
        """J C for C (p,) or (p, k)."""
        return self.J @ C

    def rmatmul(self, W: Tensor) -> Tensor:
        """Jᵀ W for W (M,) or (M, k)."""
        return self.J.T @ W

    def dense(self) -> Tensor:
        """J itself."""
        return self.J
