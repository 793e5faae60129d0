"""The bias-free tanh RNN of paper A (eqs. 1–2), its rollouts and the four recurrent constructions of §3.

Weights are plain dicts ``{"W_xh": (N_h, N_x), "W_hh": (N_h, N_h), "W_hy": (N_y, N_h)}`` so every function here is
functional (``torch.func`` can differentiate through :func:`rollout`). Trainable *parameters* coincide with the
weights for the dense constructions; the Cayley construction trains ``P`` (A = P − Pᵀ) and the block entries of ``D``
and builds ``W_hh = O(A) D O(A)ᵀ`` through :func:`weights_from_params`.
"""

from __future__ import annotations

from numbers import Integral
from typing import Any

import numpy as np
import torch

from lib.core import params as _params
from lib.kernels import recurrence

CONSTRUCTIONS = ("dense_default", "dense_orthogonal", "dense_normal", "cayley")
WEIGHT_NAMES = ("W_xh", "W_hh", "W_hy")

Weights = dict[str, torch.Tensor]


# --------------------------------------------------------------------------------------------------- rollouts


def rollout(weights: Weights, inputs_btx: torch.Tensor, h0_bh: torch.Tensor | None = None):
    """Driven rollout, explicit loop: h_t = tanh(W_xh x_t + W_hh h_{t−1}), ŷ_t = W_hy h_t (eqs. 1–2); h_0 = 0.

    Returns ``(outputs_bty, states_bth)`` with shapes (B, T, N_y) and (B, T, N_h).
    """
    W_xh, W_hh, W_hy = (weights[k] for k in WEIGHT_NAMES)
    batch, steps, _ = inputs_btx.shape
    h = inputs_btx.new_zeros(batch, W_hh.shape[0]) if h0_bh is None else h0_bh
    drive_btx = inputs_btx @ W_xh.T
    states = []
    for t in range(steps):
        h = torch.tanh(drive_btx[:, t] + h @ W_hh.T)
        states.append(h)
    states_bth = torch.stack(states, dim=1)
    return states_bth @ W_hy.T, states_bth


def rollout_fast(weights: Weights, inputs_btx: torch.Tensor, h0_bh: torch.Tensor | None = None):
    """Same as :func:`rollout`, computed by :func:`lib.kernels.recurrence.tanh_states` (hand-written BPTT).

    Returns ``(outputs_bty, states_bth)``; differentiable (first order) in the weights, the inputs and ``h0_bh``, but
    not through ``torch.func`` transforms: use :func:`rollout` there. The ablations' and the evaluations' path.
    """
    W_xh, W_hh, W_hy = (weights[k] for k in WEIGHT_NAMES)
    h0 = inputs_btx.new_zeros(inputs_btx.shape[0], W_hh.shape[0]) if h0_bh is None else h0_bh
    states_bth = recurrence.tanh_states(inputs_btx, W_xh, W_hh, h0)
    return states_bth @ W_hy.T, states_bth


def autonomous(weights: Weights, h0_bh: torch.Tensor, steps: int):
    """Zero-input continuation from h0: h_t = tanh(W_hh h_{t−1}), t = 1..steps; (outputs_bty, states_bth)."""
    steps = _params.integer("steps", steps, min=1)
    W_hh, W_hy = weights["W_hh"], weights["W_hy"]
    h, states = h0_bh, []
    for _ in range(steps):
        h = torch.tanh(h @ W_hh.T)
        states.append(h)
    states_bth = torch.stack(states, dim=1)
    return states_bth @ W_hy.T, states_bth


def as_float64(weights: Weights) -> Weights:
    """Detached float64 copies of ``W_xh, W_hh, W_hy`` (for every analysis)."""
    return {k: weights[k].detach().to(torch.float64).clone() for k in WEIGHT_NAMES}


# --------------------------------------------------------------------------------------------------- constructions


def check_width(name: str, value: Any, *, min: int = 2, max: int | None = None) -> int:
    """``value`` as an ``int`` if it is an even integer ≥ ``min`` (and ≤ ``max``): a hidden width N_h, even because
    the dense-normal and Cayley constructions are built of 2×2 blocks. ``TypeError``/``ValueError`` naming ``name``,
    the value and what is allowed otherwise."""
    allowed = f"an even integer ≥ {min}" if max is None else f"an even integer in [{min}, {max}]"
    why = "(the dense-normal and Cayley constructions are built of 2×2 blocks)"
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name}={value!r} must be {allowed} {why}")
    if value < min or (max is not None and value > max):
        raise ValueError(f"{name}={value!r} is out of range; allowed: {allowed} {why}")
    if value % 2:
        raise ValueError(f"{name}={value!r} is odd; allowed: {allowed} {why}")
    return int(value)


def cayley(A: torch.Tensor) -> torch.Tensor:
    """Paper A's Cayley transform O(A) = (I − A)(I + A)⁻¹ for skew A (N, N); torch's own map is O(−A/2)."""
    eye = torch.eye(A.shape[-1], dtype=A.dtype, device=A.device)
    return torch.linalg.solve(eye + A, eye - A)  # (I+A)⁻¹(I−A) = (I−A)(I+A)⁻¹: the factors commute


def block_diagonal(a: torch.Tensor, b: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
    """realblock layout: blockdiag([[a_i, −b_i], [b_i, a_i]] for each pair, then the 1×1 entries d_j); (N, N)."""
    n_pairs, n_real = a.shape[0], d.shape[0]
    n = 2 * n_pairs + n_real
    i = torch.arange(n_pairs, device=a.device) * 2
    j = torch.arange(n_real, device=a.device) + 2 * n_pairs
    rows = torch.cat([i, i, i + 1, i + 1, j])
    cols = torch.cat([i, i + 1, i, i + 1, j])
    values = torch.cat([a, -b, b, a, d])
    return torch.zeros(n, n, dtype=a.dtype, device=a.device).index_put((rows, cols), values)


def realblock_eig(W: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """realblock(eig(W)): conjugate pairs → (a, b) with b > 0, real eigenvalues → d; sorted by modulus, descending."""
    lam = np.linalg.eigvals(W.detach().to(torch.float64).numpy())
    pairs = lam[lam.imag > 0]
    reals = lam[lam.imag == 0].real
    pairs = pairs[np.argsort(-np.abs(pairs), kind="stable")]
    reals = reals[np.argsort(-np.abs(reals), kind="stable")]
    as_t = lambda x: torch.as_tensor(np.ascontiguousarray(x), dtype=W.dtype)  # noqa: E731
    return as_t(pairs.real), as_t(pairs.imag), as_t(reals)


def _uniform(shape, bound: float, gen: torch.Generator, dtype) -> torch.Tensor:
    return (torch.rand(shape, generator=gen, dtype=torch.float64) * 2 - 1).mul_(bound).to(dtype)


def random_orthogonal(n: int, gen: torch.Generator, dtype=torch.float64) -> torch.Tensor:
    """Haar-random orthogonal (N, N): QR of a Gaussian matrix with the sign fix of ``nn.init.orthogonal_``."""
    q, r = torch.linalg.qr(torch.randn(n, n, generator=gen, dtype=torch.float64))
    return (q * torch.sign(torch.diagonal(r))).to(dtype)


def init_params(
    construction: str,
    n_hidden: int,
    n_inputs: int,
    n_outputs: int,
    *,
    seed: int,
    dtype: torch.dtype = torch.float64,
) -> dict[str, torch.Tensor]:
    """Initial trainable parameters for one of :data:`CONSTRUCTIONS` (paper A §3), all drawn from ``seed``.

    W_xh, W_hy ~ U[−m, m] with m = N_h^{−1/2} (PyTorch's ``nn.RNN``/``nn.Linear`` default) for every construction.
    ``dense_default``: W_hh ~ U[−m, m]; ``dense_orthogonal``: W_hh = Q (QᵀQ = I); ``dense_normal``: W_hh = Q D Qᵀ with
    2×2 blocks [[a, −b], [b, a]], a, b ~ N(0, 1/6) (variance); ``cayley``: P = U/2 so A = P − Pᵀ = (U − Uᵀ)/2 with
    U ~ U[−m, m], and D = realblock(eig(W̃)), W̃ ~ U[−m, m], trained as per-block (a, b) and 1×1 entries d.
    """
    _params.choice("construction", construction, CONSTRUCTIONS)
    n_hidden = check_width("n_hidden", n_hidden)
    n_inputs = _params.integer("n_inputs", n_inputs, min=1)
    n_outputs = _params.integer("n_outputs", n_outputs, min=1)
    seed = _params.integer("seed", seed, min=0)
    gen = torch.Generator().manual_seed(seed)
    m = n_hidden**-0.5
    out = {
        "W_xh": _uniform((n_hidden, n_inputs), m, gen, dtype),
        "W_hy": _uniform((n_outputs, n_hidden), m, gen, dtype),
    }
    if construction == "dense_default":
        out["W_hh"] = _uniform((n_hidden, n_hidden), m, gen, dtype)
    elif construction == "dense_orthogonal":
        out["W_hh"] = random_orthogonal(n_hidden, gen, dtype)
    elif construction == "dense_normal":
        q = random_orthogonal(n_hidden, gen)
        ab = torch.randn(2, n_hidden // 2, generator=gen, dtype=torch.float64) * (1 / 6) ** 0.5
        D = block_diagonal(ab[0], ab[1], ab.new_zeros(0))
        out["W_hh"] = (q @ D @ q.T).to(dtype)
    else:  # cayley
        U = _uniform((n_hidden, n_hidden), m, gen, torch.float64)
        W_tilde = _uniform((n_hidden, n_hidden), m, gen, torch.float64)
        a, b, d = realblock_eig(W_tilde)
        out.update(P=(U / 2).to(dtype), D_a=a.to(dtype), D_b=b.to(dtype), D_d=d.to(dtype))
    return out


def cayley_recurrent(P: torch.Tensor, a: torch.Tensor, b: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
    """W_hh = O(A) D O(A)ᵀ with A = P − Pᵀ and D = blockdiag((a, b) pairs, d) (paper A §3, Cayley construction)."""
    O = cayley(P - P.T)
    return O @ block_diagonal(a, b, d) @ O.T


def weights_from_params(p: dict[str, torch.Tensor]) -> Weights:
    """The network weights ``W_xh, W_hh, W_hy`` from trainable parameters (dense: identity; Cayley: built)."""
    if "W_hh" in p:
        return {k: p[k] for k in WEIGHT_NAMES}
    return {"W_xh": p["W_xh"], "W_hh": cayley_recurrent(p["P"], p["D_a"], p["D_b"], p["D_d"]), "W_hy": p["W_hy"]}


def construction_of(p: dict[str, torch.Tensor]) -> str:
    """``"cayley"`` if ``p`` holds Cayley parameters, else ``"dense"``."""
    return "dense" if "W_hh" in p else "cayley"
