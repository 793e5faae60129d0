"""The annulus MLP as a function of its parameter vector θ (float64), with its Jacobian kept as per-layer factors.

The Jacobian block of layer l is J_l[n, (i, j)] = Δ_l[n, i] a_{l−1}[n, j] (back-propagated signal times input
activation), so

    J Jᵀ = Σ_l (Δ_l Δ_lᵀ) ⊙ (A_l A_lᵀ + 1),   ‖J_{:,(i,j)}‖² = Σ_n Δ_l[n,i]² a_{l−1}[n,j]²,

and J c, Jᵀ W are a few small matrix products: J is never formed (:class:`MLPJacobian`). The readable reference is
``lib.paper_b.sensitivity.jacobian`` (``vmap(jacrev)``) on :func:`lib.paper_b.annulus.model.theta_to_module`; the tests
check the factors against it and against finite differences.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from lib.kernels.cpu_linalg import row_gram_numpy

# Points per block of MLPParams.forward: a 1,024 × 96 float64 activation (768 kB) stays in cache from one layer to
# the next, where the 6,528 points of Π f at once stream 5 MB per layer through memory. Rows are independent, so the
# logits do not depend on the blocking (tested); Π f, the invariance checks and the decision panels run 1.3–2× faster.
FORWARD_CHUNK = 1024

_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


def _gelu_cdf(z: Tensor) -> Tensor:
    """Φ(z) = (1 + erf(z/√2))/2, so that GELU(z) = z Φ(z) and GELU′(z) = Φ(z) + z φ(z).

    The analysis evaluates GELU as ``z * _gelu_cdf(z)`` (in place where it can) rather than through
    ``torch.nn.functional.gelu``, whose float64 CPU kernel takes about 10 ns an element against 5.5 ns for these
    four passes; the two agree to an ulp (tested). ``forward`` and ``forward_factors`` share it, so f is the same
    number whichever of them computes it.
    """
    return torch.mul(z, _SQRT_HALF).erf_().add_(1).mul_(0.5)


class MLPParams:
    """Views of θ (p,) as the layers' (W, b), in ``named_parameters`` order."""

    def __init__(self, theta: Tensor, widths: tuple[int, ...]):
        self.widths = widths
        self.layers: list[tuple[Tensor, Tensor]] = []
        start = 0
        for d_in, d_out in zip(widths[:-1], widths[1:], strict=True):
            W = theta[start : start + d_out * d_in].reshape(d_out, d_in)
            start += d_out * d_in
            b = theta[start : start + d_out]
            start += d_out
            self.layers.append((W, b))
        if start != theta.numel():
            raise ValueError(f"theta has {theta.numel()} entries; widths {widths} need {start}")

    def forward(self, x: Tensor) -> Tensor:
        """Logits f_θ(x), shape (N,), computed :data:`FORWARD_CHUNK` points at a time."""
        if x.shape[0] <= FORWARD_CHUNK:
            return self._forward(x)
        out = x.new_empty(x.shape[0])
        for start in range(0, x.shape[0], FORWARD_CHUNK):
            out[start : start + FORWARD_CHUNK] = self._forward(x[start : start + FORWARD_CHUNK])
        return out

    def _forward(self, x: Tensor) -> Tensor:
        h = x
        for W, b in self.layers[:-1]:
            z = torch.addmm(b, h, W.T)
            h = _gelu_cdf(z).mul_(z)
        W, b = self.layers[-1]
        return (h @ W.T + b)[:, 0]

    def forward_factors(self, x: Tensor, tangent: Tensor | None = None):
        """Logits (N,), the Jacobian factors [(Δ_l, a_{l−1})] and, if ``tangent`` is given, the JVP d f(x)[tangent]."""
        acts, primes = [x], []
        h, dh = x, tangent
        for W, b in self.layers[:-1]:
            z = torch.addmm(b, h, W.T)
            cdf = _gelu_cdf(z)
            gp = z.square().mul_(-0.5).exp_().mul_(_INV_SQRT_2PI).mul_(z).add_(cdf)  # Φ(z) + z φ(z)
            if dh is not None:
                dh = (dh @ W.T) * gp
            h = cdf.mul_(z)
            acts.append(h)
            primes.append(gp)
        W, b = self.layers[-1]
        out = (h @ W.T + b)[:, 0]
        jvp = (dh @ W.T)[:, 0] if dh is not None else None
        deltas = [torch.ones(x.shape[0], 1, dtype=x.dtype)]
        g = deltas[0]
        for (W, _), gp in zip(reversed(self.layers[1:]), reversed(primes), strict=True):
            g = (g @ W) * gp
            deltas.append(g)
        deltas.reverse()
        return out, list(zip(deltas, acts, strict=True)), jvp


class MLPJacobian:
    """The Jacobian (N, p) of an MLP's scalar output over N probes, kept as per-layer factors (Δ_l, a_{l−1}).

    Implements the operator interface of ``lib.paper_b.lifting`` (``col_norms``, ``gram``, ``matmul``, ``rmatmul``,
    ``dense``) without forming J.
    """

    def __init__(self, factors: list[tuple[Tensor, Tensor]], workspace: dict | None = None):
        self.factors = factors
        self.workspace = {} if workspace is None else workspace  # scratch reused across Jacobians (``rmatmul``)
        self.n = factors[0][0].shape[0]
        self.sizes = [d.shape[1] * a.shape[1] + d.shape[1] for d, a in factors]
        self.shape = (self.n, sum(self.sizes))

    def col_norms(self) -> Tensor:
        """‖J_{:,i}‖₂ from Σ_n Δ²a², shape (p,)."""
        out = []
        for d, a in self.factors:
            d2 = d * d
            out += [(d2.T @ (a * a)).reshape(-1), d2.sum(0)]
        return torch.cat(out).sqrt()

    def gram(self) -> Tensor:
        """The smaller Gram matrix: J Jᵀ from the factors (N ≤ p), else Jᵀ J from the dense J."""
        if self.shape[0] > self.shape[1]:
            J = self.dense()
            return J.T @ J
        return self.row_gram()

    def row_gram(self) -> Tensor:
        """J Jᵀ = Σ_l (Δ_l Δ_lᵀ) ⊙ (A_l A_lᵀ + 1), (N, N), without forming J (``lib.kernels.cpu_linalg``)."""
        return row_gram_numpy(self.factors)

    def _split(self, c: Tensor):
        start = 0
        for (d, a), size in zip(self.factors, self.sizes, strict=True):
            nw = d.shape[1] * a.shape[1]
            yield d, a, c[start : start + nw], c[start + nw : start + size]
            start += size

    def matmul(self, C: Tensor) -> Tensor:
        """J C for C (p,) or (p, k)."""
        vec = C.ndim == 1
        C2 = C[:, None] if vec else C
        out = torch.zeros(self.n, C2.shape[1], dtype=C2.dtype)
        for d, a, cw, cb in self._split(C2):
            k = C2.shape[1]
            Wc = cw.T.reshape(k, d.shape[1], a.shape[1])  # (k, out, in)
            out += torch.einsum("ni,kij,nj->nk", d, Wc, a) + d @ cb
        return out[:, 0] if vec else out

    def rmatmul(self, Y: Tensor) -> Tensor:
        """Jᵀ Y for Y (N,) or (N, k).

        A weight block is out[(p, q), k] = Σ_n Δ[n, p] a[n, q] Y[n, k]: the narrower factor times Y is expanded into
        a scratch buffer kept in ``workspace`` (a fresh 20 MB array each re-solve costs its page faults), then one
        GEMM writes the block straight into the result.
        """
        vec = Y.ndim == 1
        Y2 = Y[:, None] if vec else Y
        k = Y2.shape[1]
        out = torch.empty(self.shape[1], k, dtype=Y2.dtype)
        start = 0
        for (d, a), size in zip(self.factors, self.sizes, strict=True):
            o, i = d.shape[1], a.shape[1]
            W_out = out[start : start + o * i]
            if i <= o:  # (o, i·k) = Δᵀ (a ⊗ Y): already the row-major layout of the (o·i, k) block
                Z = self._scratch((self.n, i, k), Y2.dtype)
                torch.mul(a[:, :, None], Y2[:, None, :], out=Z)
                torch.mm(d.T, Z.view(self.n, i * k), out=W_out.view(o, i * k))
            else:  # (i, o·k) = aᵀ (Δ ⊗ Y), transposed into place
                Z = self._scratch((self.n, o, k), Y2.dtype)
                torch.mul(d[:, :, None], Y2[:, None, :], out=Z)
                W_out.view(o, i, k).copy_((a.T @ Z.view(self.n, o * k)).view(i, o, k).transpose(0, 1))
            torch.mm(d.T, Y2, out=out[start + o * i : start + size])
            start += size
        return out[:, 0] if vec else out

    def _scratch(self, shape: tuple[int, ...], dtype: torch.dtype) -> Tensor:
        numel = math.prod(shape)
        buf = self.workspace.get(dtype)
        if buf is None or buf.numel() < numel:
            buf = self.workspace[dtype] = torch.empty(numel, dtype=dtype)
        return buf[:numel].view(shape)

    def dense(self) -> Tensor:
        """J formed explicitly, (N, p)."""
        blocks = []
        for d, a in self.factors:
            blocks += [(d[:, :, None] * a[:, None, :]).reshape(self.n, -1), d]
        return torch.cat(blocks, dim=1)
