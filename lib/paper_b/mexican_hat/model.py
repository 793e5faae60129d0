"""The ASRNN (Thapar & Gupta 2026; paper B eqs. 26–28): H_θ(q, p; α) = K_θ1(p) + V_θ2(q; α), each an MLP with three
hidden SiLU layers of width 32 (Xavier-uniform weights, zero biases), rolled out by a leapfrog with Δt = 0.1.

The input gradients ∇K, ∇V come from the hand-written kernel ``lib.kernels.silu_mlp.mlp_input_grad`` (readable
reference: autograd through :func:`mlp_value`): no autograd inside the rollout, so training is plain first-order
backpropagation. Training's fast path, ``lib.kernels.leapfrog_mlp.leapfrog_loss_grad``, writes the gradient of
:func:`trajectory_loss` by hand end to end (no autograd graph); this module's autograd is its reference. The learned
force F_θ(q; α) = −∇_q V_θ2 is analysed as a function of V's parameter vector θ₂ (:func:`v_vector`,
:func:`v_params_of`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from lib.kernels.silu_mlp import mlp_input_grad
from lib.paper_b.mexican_hat.data import Windows
from lib.paper_b.mexican_hat.system import DT, alpha_vector, check_pairs

HIDDEN = (32, 32, 32)


def init_mlp(d_in: int, *, seed: int, hidden: Sequence[int] = HIDDEN, dtype=torch.float32) -> list[Tensor]:
    """[W1, b1, …, W_L, b_L] with W_l (out, in) Xavier-uniform and zero biases; the last layer maps to one output."""
    gen = torch.Generator().manual_seed(int(seed))
    sizes = [d_in, *hidden, 1]
    params = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        bound = math.sqrt(6.0 / (a + b))
        params.append(((torch.rand(b, a, generator=gen, dtype=torch.float64) * 2 - 1) * bound).to(dtype))
        params.append(torch.zeros(b, dtype=dtype))
    return params


def mlp_value(params: Sequence[Tensor], x: Tensor) -> Tensor:
    """The MLP's scalar output for inputs x (B, d_in); shape (B,)."""
    h = x
    n = len(params) // 2
    for i in range(n - 1):
        h = torch.nn.functional.silu(h @ params[2 * i].T + params[2 * i + 1])
    return (h @ params[-2].T + params[-1])[:, 0]


@dataclass
class ASRNN:
    """Separable learned Hamiltonian H_θ = K_θ1(p) + V_θ2(q; α): two parameter lists (``init_mlp`` layout)."""

    k_params: list[Tensor]
    v_params: list[Tensor]

    @classmethod
    def init(cls, *, seed: int, dtype=torch.float32) -> ASRNN:
        """Xavier-uniform weights, zero biases; K and V from two seeds derived from ``seed``."""
        return cls(init_mlp(2, seed=2 * seed, dtype=dtype), init_mlp(3, seed=2 * seed + 1, dtype=dtype))

    def to(self, dtype: torch.dtype) -> ASRNN:
        """A detached copy in ``dtype``."""
        return ASRNN([t.detach().to(dtype).clone() for t in self.k_params],
                     [t.detach().to(dtype).clone() for t in self.v_params])  # fmt: skip

    def parameters(self) -> list[Tensor]:
        """All tensors, K first."""
        return [*self.k_params, *self.v_params]

    def state_dict(self) -> dict[str, Tensor]:
        """Named tensors for a checkpoint."""
        out = {f"k{i}": t.detach().clone() for i, t in enumerate(self.k_params)}
        out.update({f"v{i}": t.detach().clone() for i, t in enumerate(self.v_params)})
        return out

    @classmethod
    def from_state_dict(cls, sd: dict[str, Tensor]) -> ASRNN:
        """Inverse of ``state_dict``."""
        nk = sum(1 for k in sd if k.startswith("k"))
        nv = sum(1 for k in sd if k.startswith("v"))
        return cls([sd[f"k{i}"] for i in range(nk)], [sd[f"v{i}"] for i in range(nv)])


def v_input(q: Tensor, alpha: float | Tensor) -> Tensor:
    """V's input [q1, q2, α], shape (B, 3); α a float or a (B,) tensor."""
    check_pairs(q, "q")
    if q.ndim != 2:
        raise ValueError(f"q must have shape (B, 2); got {tuple(q.shape)}")
    return torch.cat([q, alpha_vector(alpha, q.shape[0], q.dtype)[:, None]], 1)


def potential(v_params: Sequence[Tensor], q: Tensor, alpha: float | Tensor) -> Tensor:
    """V_θ2(q; α), shape (B,)."""
    return mlp_value(v_params, v_input(q, alpha))


def learned_force(v_params: Sequence[Tensor], q: Tensor, alpha: float | Tensor) -> Tensor:
    """F_θ(q; α) = −∇_q V_θ2(q; α), shape (B, 2)."""
    return -mlp_input_grad(v_params, v_input(q, alpha))[:, :2]


def rollout(model: ASRNN, q0: Tensor, p0: Tensor, alpha: float | Tensor, *, steps: int, dt: float = DT) -> Tensor:
    """Kick–drift–kick leapfrog of the learned H (eqs. 26–28); (B, steps + 1, 4) states in (q, p) order."""
    check_pairs(q0, "q0")
    check_pairs(p0, "p0")
    a = alpha_vector(alpha, q0.shape[0], q0.dtype)
    q, p = q0, p0
    f = learned_force(model.v_params, q, a)
    out = [torch.cat([q, p], -1)]
    for _ in range(steps):
        p = p + 0.5 * dt * f
        q = q + dt * mlp_input_grad(model.k_params, p)
        f = learned_force(model.v_params, q, a)
        p = p + 0.5 * dt * f
        out.append(torch.cat([q, p], -1))
    return torch.stack(out, 1)


def trajectory_loss(model: ASRNN, windows: Windows, *, dt: float = DT) -> Tensor:
    """MSE of (q, p) at the windows' compared instants after a leapfrog rollout from each start (notes §9.3)."""
    steps = int(windows.idx.max())
    traj = rollout(model, windows.start[:, :2], windows.start[:, 2:], windows.alpha, steps=steps, dt=dt)
    pred = torch.gather(traj, 1, windows.idx[:, :, None].expand(-1, -1, 4))
    return ((pred - windows.target) ** 2).mean()


V_SHAPES: tuple[tuple[int, ...], ...] = tuple(
    s for a, b in zip((3, *HIDDEN), (*HIDDEN, 1), strict=True) for s in ((b, a), (b,))
)
N_V_PARAMS = sum(math.prod(s) for s in V_SHAPES)  # 2,273


def v_vector(model_or_params: ASRNN | Sequence[Tensor]) -> Tensor:
    """V's parameters as one float64 vector θ₂ (W1, b1, …, W4, b4, each row-major); shape (2273,)."""
    params = model_or_params.v_params if isinstance(model_or_params, ASRNN) else model_or_params
    return torch.cat([t.detach().reshape(-1) for t in params]).to(torch.float64)


def v_params_of(theta: Tensor) -> list[Tensor]:
    """Inverse of ``v_vector``: the list of V's tensors (views of θ₂)."""
    if not isinstance(theta, Tensor) or theta.shape != (N_V_PARAMS,):
        raise ValueError(f"theta must be a tensor of shape ({N_V_PARAMS},); got {getattr(theta, 'shape', theta)}")
    out, start = [], 0
    for s in V_SHAPES:
        n = math.prod(s)
        out.append(theta[start : start + n].reshape(s))
        start += n
    return out
