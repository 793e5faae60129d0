"""The Mexican-hat Hamiltonian and the ASRNN that learns it (paper B §3.2, App. B.1, C.1; notes §9).

System: H(q, p) = ½|p|² + ½α|q|² + ¼|q|⁴ with q, p ∈ R², so q̇ = p and ṗ = F(q) = −(α + |q|²) q. States are
always stored in (q, p) order. Ground truth comes from a fine kick–drift–kick leapfrog (dτ = 0.001, float64)
sampled every Δt = 0.1.

Model (ASRNN, Thapar & Gupta 2026): H_θ(q, p; α) = K_θ1(p) + V_θ2(q; α), each an MLP with three hidden SiLU layers
of width 32 (Xavier-uniform weights, zero biases), rolled out by the same leapfrog with Δt = 0.1 (eqs. 26–28). The
input gradients ∇K, ∇V are written by hand (``mlp_input_grad``): no autograd inside the rollout, so training is
plain first-order backpropagation through explicit tensor code, and the learned force F_θ(q; α) = −∇_q V_θ2 has an
explicit parameter Jacobian (``force_jacobian``), tested against ``torch.func`` and finite differences.

Pooled lifting (notes §6.4): rows for the 21 α values on the polar 15 × 32 grid are stacked into one system
(21 × 480 × 2 = 20,160 rows) over the 2,273 parameters of V. ``sketched_svd`` gives the τ-truncated SVD of that
tall J by a seeded randomized range finder with power iterations; it is handed to ``lib.paper_b.sensitivity.lift``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
from torch import Tensor

from lib.core import cache
from lib.core.paths import cache_dir
from lib.core.progress import bar as progress_bar
from lib.paper_b.sensitivity import TruncatedSVD, column_norms, retained_rank

TRAIN_ALPHAS: tuple[float, ...] = (-1.1, -0.8, -0.6, -0.2, 0.2, 0.6, 0.8, 1.1)
ANALYSIS_ALPHAS: tuple[float, ...] = (-1.0, -0.8, -0.7, -0.5, -0.4, -0.3, -0.2, -0.1, 0.0, 0.1, 0.2, 0.3, 0.4,
                                      0.5, 0.6, 0.7, 0.8, 1.0)  # fmt: skip
POOLED_ALPHAS: tuple[float, ...] = tuple(sorted(set(TRAIN_ALPHAS) | set(ANALYSIS_ALPHAS)))  # the 21 values
UNSEEN_ALPHAS: tuple[float, ...] = (-1.0, -0.5, 0.0, 0.5, 1.0)  # plotting alphas, not in TRAIN_ALPHAS
DT = 0.1  # model and sampling step
FINE_STEPS = 100  # ground-truth leapfrog substeps per Δt (dτ = 0.001)
HIDDEN = (32, 32, 32)
CACHE_VERSION = 1  # bump when the training code changes what a configuration produces


# ------------------------------------------------------------------------------------------------------------------
# the true system


def _check_alpha(alpha) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating, np.integer)):
        raise TypeError(f"alpha={alpha!r} must be a real number (float), got {type(alpha).__name__}")
    if not math.isfinite(float(alpha)):
        raise ValueError(f"alpha={alpha!r} must be finite")
    return float(alpha)


def _check_pairs(x: Tensor, name: str) -> None:
    if not isinstance(x, Tensor) or x.ndim < 1 or x.shape[-1] != 2:
        raise ValueError(f"{name} must be a tensor of shape (..., 2); got {getattr(x, 'shape', type(x))}")


def energy(q: Tensor, p: Tensor, alpha: float | Tensor) -> Tensor:
    """H(q, p) = ½|p|² + ½α|q|² + ¼|q|⁴ for q, p of shape (..., 2); shape (...) (notes §9.1)."""
    _check_pairs(q, "q")
    _check_pairs(p, "p")
    r2 = (q * q).sum(-1)
    return 0.5 * (p * p).sum(-1) + 0.5 * alpha * r2 + 0.25 * r2 * r2


def true_force(q: Tensor, alpha: float | Tensor) -> Tensor:
    """F(q) = −∇_q V = −(α + |q|²) q, shape like q (..., 2); α a float or a tensor broadcasting against q[..., 0]."""
    _check_pairs(q, "q")
    a = torch.as_tensor(alpha, dtype=q.dtype)
    return -(a[..., None] + (q * q).sum(-1, keepdim=True)) * q


def leapfrog_true(
    q0: Tensor, p0: Tensor, alpha: float | Tensor, *, steps: int, dt: float = DT, fine: int = FINE_STEPS
) -> Tensor:
    """Ground truth: kick–drift–kick leapfrog of the true system with step dt/fine, sampled every dt.

    q0, p0: (B, 2); alpha a float or a (B,) tensor. Returns (B, steps + 1, 4) states in (q, p) order, float64.
    """
    _check_pairs(q0, "q0")
    _check_pairs(p0, "p0")
    if q0.shape != p0.shape or q0.ndim != 2:
        raise ValueError(f"q0 and p0 must both have shape (B, 2); got {tuple(q0.shape)} and {tuple(p0.shape)}")
    a = _alpha_vector(alpha, q0.shape[0], torch.float64)
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


def _alpha_vector(alpha, n: int, dtype) -> Tensor:
    """α as a (n,) tensor; a float is checked and broadcast."""
    if isinstance(alpha, Tensor):
        if alpha.ndim == 0:
            alpha = alpha.expand(n)
        if alpha.shape != (n,):
            raise ValueError(f"alpha must be a float or a tensor of shape ({n},); got {tuple(alpha.shape)}")
        return alpha.to(dtype)
    return torch.full((n,), _check_alpha(alpha), dtype=dtype)


def sample_initial_conditions(n: int, alpha: float, *, seed: int, box: float = 2.0, e_max: float = 3.0):
    """n initial conditions (q, p) uniform in [−box, box]⁴, rejection-sampled to true energy ≤ e_max (notes §9.3).

    Seeded by ``seed`` (a fresh ``torch.Generator``); returns q (n, 2), p (n, 2) float64.
    """
    alpha = _check_alpha(alpha)
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


@dataclass(frozen=True)
class DataConfig:
    """Windowed trajectory data (notes §9.3, ``mexican_hat_config.json``)."""

    alphas: tuple[float, ...] = TRAIN_ALPHAS
    ics_per_alpha: int = 10
    window: int = 20  # states per window; the model integrates window − 1 steps
    splits: int = 100  # windows per trajectory (every start 0..splits−1)
    instants: int = 10  # compared instants per window: index 0 plus instants − 1 random sorted ones
    val_fraction: float = 0.25
    seed: int = 42
    e_max: float = 3.0


@dataclass
class Windows:
    """A set of windows: start states (B, 4), α (B,), compared indices (B, K) and the true states there (B, K, 4)."""

    start: Tensor
    alpha: Tensor
    idx: Tensor
    target: Tensor

    def __len__(self) -> int:
        return self.start.shape[0]

    def to(self, dtype: torch.dtype) -> Windows:
        """A copy with float tensors cast to ``dtype``."""
        return Windows(self.start.to(dtype), self.alpha.to(dtype), self.idx, self.target.to(dtype))

    def subset(self, rows: Tensor) -> Windows:
        """The windows at ``rows``."""
        return Windows(self.start[rows], self.alpha[rows], self.idx[rows], self.target[rows])


def make_windows(cfg: DataConfig = DataConfig()) -> tuple[Windows, Windows]:
    """Seeded ground-truth windows at the training α, split into (train, validation) by a seeded permutation."""
    if not isinstance(cfg, DataConfig):
        raise TypeError(f"cfg must be a DataConfig, got {type(cfg).__name__}")
    for a in cfg.alphas:
        _check_alpha(a)
    if cfg.window < 2 or cfg.instants < 1 or cfg.instants > cfg.window or cfg.splits < 1:
        raise ValueError(f"need 2 ≤ window, 1 ≤ instants ≤ window and splits ≥ 1; got {cfg}")
    length = cfg.splits + cfg.window - 1
    gen = torch.Generator().manual_seed(cfg.seed)
    qs, ps = zip(
        *(sample_initial_conditions(cfg.ics_per_alpha, a, seed=cfg.seed * 1000 + j, e_max=cfg.e_max)
          for j, a in enumerate(cfg.alphas)), strict=True
    )  # fmt: skip
    a_ic = torch.tensor(cfg.alphas, dtype=torch.float64).repeat_interleave(cfg.ics_per_alpha)
    traj = leapfrog_true(torch.cat(qs), torch.cat(ps), a_ic, steps=length - 1)  # (n_ic, length, 4), α-major
    win = traj.unfold(1, cfg.window, 1)[:, : cfg.splits].permute(0, 1, 3, 2)  # (n_ic, splits, window, 4)
    win = win.reshape(-1, cfg.window, 4)
    n = win.shape[0]
    rnd = torch.rand(n, cfg.window - 1, generator=gen).argsort(1)[:, : cfg.instants - 1] + 1
    idx = torch.cat([torch.zeros(n, 1, dtype=torch.long), rnd.sort(1).values], 1)
    target = torch.gather(win, 1, idx[:, :, None].expand(-1, -1, 4))
    allw = Windows(win[:, 0].contiguous(), a_ic.repeat_interleave(cfg.splits), idx, target)
    perm = torch.randperm(len(allw), generator=gen)
    n_val = int(round(cfg.val_fraction * len(allw)))
    return allw.subset(perm[n_val:]), allw.subset(perm[:n_val])


# ------------------------------------------------------------------------------------------------------------------
# MLPs with hand-written input gradients


def _silu_parts(z: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """SiLU h = z·s(z) with s the sigmoid, its derivative σ' = s + z·s(1 − s), and s' = s(1 − s) (four tensor ops)."""
    s = torch.sigmoid(z)
    sp = torch.addcmul(s, s, s, value=-1.0)
    return z * s, torch.addcmul(s, z, sp), sp


def _silu_second(z: Tensor, h: Tensor, sp: Tensor) -> Tensor:
    """σ''(z) = s(1 − s)(2 + z(1 − 2s)) = s'·(2 + z − 2h), from z, h = σ(z) and s' = s(1 − s)."""
    return torch.add(z, h, alpha=-2.0).add_(2.0).mul_(sp)


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


def _grad_forward(params: Sequence[Tensor], x: Tensor):
    """∇_x of the MLP output and the cache the VJP needs: (u (B, d_in), cache)."""
    n = len(params) // 2
    hs, zs, ds, ss = [x], [], [], []
    h = x
    for i in range(n - 1):
        z = torch.addmm(params[2 * i + 1], h, params[2 * i].T)
        h, d, sp = _silu_parts(z)
        hs.append(h)
        zs.append(z)
        ds.append(d)
        ss.append(sp)
    a = params[-2].expand(x.shape[0], -1)  # dV/dh_{L-1}, (B, width)
    As = [None] * (n - 1)  # a_l = dV/dh_l
    gs = [None] * (n - 1)  # g_l = a_l ⊙ σ'(z_l) = dV/dz_l
    for i in range(n - 2, -1, -1):
        As[i] = a
        gs[i] = a * ds[i]
        a = gs[i] @ params[2 * i]
    return a, (hs, zs, ds, ss, As, gs)


def _grad_vjp(params: Sequence[Tensor], cache, ubar: Tensor, *, per_sample: bool):
    """Reverse sweep through ``_grad_forward``: cotangents of (x, params) for the output cotangent ū (B, d_in).

    With ``per_sample`` the parameter cotangents keep the batch axis (B, *shape): the rows of the parameter
    Jacobian of ū·∇_x V. Otherwise they are summed over the batch (a VJP for training).
    """
    hs, zs, ds, ss, As, gs = cache
    n = len(params) // 2
    outer = (lambda u, v: u[:, :, None] * v[:, None, :]) if per_sample else (lambda u, v: u.T @ v)
    total = (lambda u: u) if per_sample else (lambda u: u.sum(0))
    grads: list[Tensor | None] = [None] * len(params)
    zbar_b = [None] * (n - 1)  # z̄_l from the backward sweep
    abar = ubar  # ā_{l-1}
    for i in range(n - 1):  # a_{i} = g_{i+1} W_{i+1}: layer i+1 in 1-based notation
        grads[2 * i] = outer(gs[i], abar)  # W̄ from the backward sweep
        gbar = abar @ params[2 * i].T
        zbar_b[i] = _silu_second(zs[i], hs[i + 1], ss[i]).mul_(As[i]).mul_(gbar)
        abar = gbar * ds[i]
    grads[-2] = abar[:, None, :] if per_sample else abar.sum(0, keepdim=True)  # w̄_L
    grads[-1] = torch.zeros((ubar.shape[0], 1) if per_sample else (1,), dtype=ubar.dtype)
    hbar = None
    for i in range(n - 2, -1, -1):  # forward sweep reversed
        zbar = zbar_b[i] if hbar is None else torch.addcmul(zbar_b[i], hbar, ds[i])
        if per_sample:
            grads[2 * i] = grads[2 * i] + outer(zbar, hs[i])
        else:
            grads[2 * i] = torch.addmm(grads[2 * i], zbar.T, hs[i])
        grads[2 * i + 1] = total(zbar)
        hbar = zbar @ params[2 * i]
    return hbar, grads


class _InputGrad(torch.autograd.Function):
    """u = ∇_x MLP(x) with a hand-written backward (the VJP of ``_grad_vjp``); first-order differentiable."""

    @staticmethod
    def forward(ctx, x, *params):
        u, cache = _grad_forward(params, x)
        ctx.params, ctx.cache = params, cache
        return u

    @staticmethod
    def backward(ctx, ubar):
        xbar, grads = _grad_vjp(ctx.params, ctx.cache, ubar, per_sample=False)
        return (xbar, *grads)


def mlp_input_grad(params: Sequence[Tensor], x: Tensor) -> Tensor:
    """∇_x of the MLP's scalar output, by hand (SiLU derivative, reverse sweep); shape (B, d_in).

    Differentiable (first order) in x and in the parameters through a hand-written backward, so training needs
    no double backpropagation.
    """
    if torch.is_grad_enabled() and (x.requires_grad or any(t.requires_grad for t in params)):
        return _InputGrad.apply(x, *params)
    return _grad_forward(params, x)[0]


def mlp_grad_param_jacobian(params: Sequence[Tensor], x: Tensor, ubar: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Per-sample parameter Jacobian of ū_b·∇_x MLP(x_b): rows b, columns = flattened params; shape (B, p).

    The same reverse sweep as ``_grad_vjp(per_sample=True)``, written straight into one preallocated matrix
    (``out``, if given: every entry is overwritten).
    """
    _, (hs, zs, ds, ss, As, gs) = _grad_forward(params, x)
    n = len(params) // 2
    B = x.shape[0]
    sizes = [t.numel() for t in params]
    shape = (B, sum(sizes))
    if out is not None and (tuple(out.shape) != shape or out.dtype != x.dtype or not out.is_contiguous()):
        raise ValueError(f"out must be a contiguous {x.dtype} tensor of shape {shape}; got {tuple(out.shape)}")
    J = torch.empty(shape, dtype=x.dtype) if out is None else out
    views, start = [], 0
    for t, size in zip(params, sizes, strict=True):
        views.append(J[:, start : start + size].view(B, *t.shape))
        start += size
    zbar_b = []
    abar = ubar
    for i in range(n - 1):
        torch.mul(gs[i][:, :, None], abar[:, None, :], out=views[2 * i])
        gbar = abar @ params[2 * i].T
        zbar_b.append(gbar * As[i] * _silu_second(zs[i], hs[i + 1], ss[i]))
        abar = gbar * ds[i]
    views[-2].copy_(abar[:, None, :])
    views[-1].zero_()
    hbar = None
    for i in range(n - 2, -1, -1):
        zbar = zbar_b[i] if hbar is None else zbar_b[i] + hbar * ds[i]
        views[2 * i].addcmul_(zbar[:, :, None], hs[i][:, None, :])
        views[2 * i + 1].copy_(zbar)
        hbar = zbar @ params[2 * i]
    return J


# ------------------------------------------------------------------------------------------------------------------
# the ASRNN


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
    _check_pairs(q, "q")
    if q.ndim != 2:
        raise ValueError(f"q must have shape (B, 2); got {tuple(q.shape)}")
    return torch.cat([q, _alpha_vector(alpha, q.shape[0], q.dtype)[:, None]], 1)


def potential(v_params: Sequence[Tensor], q: Tensor, alpha: float | Tensor) -> Tensor:
    """V_θ2(q; α), shape (B,)."""
    return mlp_value(v_params, v_input(q, alpha))


def learned_force(v_params: Sequence[Tensor], q: Tensor, alpha: float | Tensor) -> Tensor:
    """F_θ(q; α) = −∇_q V_θ2(q; α), shape (B, 2)."""
    return -mlp_input_grad(v_params, v_input(q, alpha))[:, :2]


def rollout(model: ASRNN, q0: Tensor, p0: Tensor, alpha: float | Tensor, *, steps: int, dt: float = DT) -> Tensor:
    """Kick–drift–kick leapfrog of the learned H (eqs. 26–28); (B, steps + 1, 4) states in (q, p) order."""
    _check_pairs(q0, "q0")
    _check_pairs(p0, "p0")
    a = _alpha_vector(alpha, q0.shape[0], q0.dtype)
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


# ------------------------------------------------------------------------------------------------------------------
# training


@dataclass(frozen=True)
class TrainConfig:
    """Everything that determines a trained ASRNN (the cache key)."""

    data: DataConfig = field(default_factory=DataConfig)
    steps: int = 6000
    batch: int = 1000
    lr: float = 3e-3
    lr_final: float = 1e-4  # cosine decay from lr to lr_final
    l1: float = 0.0  # weight of Σ|θ| added to the loss
    seed: int = 42
    eval_every: int = 100
    snapshot_steps: tuple[int, ...] = ()  # steps at which the weights are also kept


@dataclass
class TrainResult:
    """A trained model with its history: steps (E,), train/val MSE (E,), wall seconds, snapshots, cache info."""

    model: ASRNN
    config: TrainConfig
    steps: np.ndarray
    train_mse: np.ndarray
    val_mse: np.ndarray
    seconds: float
    snapshots: dict[int, ASRNN]
    from_cache: bool = False
    path: str = ""

    @property
    def final_val_mse(self) -> float:
        """Validation MSE at the end of training."""
        return float(self.val_mse[-1])


def _lr_at(cfg: TrainConfig, step: int) -> float:
    return cfg.lr_final + 0.5 * (cfg.lr - cfg.lr_final) * (1 + math.cos(math.pi * step / max(cfg.steps, 1)))


def train(cfg: TrainConfig = TrainConfig(), *, progress: bool = True) -> TrainResult:
    """Adam on minibatches of windows (float32), cosine learning-rate decay, optional L1; seeded throughout."""
    if not isinstance(cfg, TrainConfig):
        raise TypeError(f"cfg must be a TrainConfig, got {type(cfg).__name__}")
    train_w, val_w = make_windows(cfg.data)
    train_w, val_w = train_w.to(torch.float32), val_w.to(torch.float32)
    model = ASRNN.init(seed=cfg.seed)
    params = model.parameters()
    for t in params:
        t.requires_grad_(True)
    opt = torch.optim.Adam(params, lr=cfg.lr)
    gen = torch.Generator().manual_seed(cfg.seed + 1)
    n = len(train_w)
    batch = min(cfg.batch, n)
    hist_s, hist_tr, hist_va, snaps = [], [], [], {}
    perm, pos = torch.randperm(n, generator=gen), 0
    t0 = time.perf_counter()
    running = 0.0
    bar = progress_bar(total=cfg.steps, desc="training ASRNN", disable=not progress)
    for step in range(cfg.steps + 1):
        if step in cfg.snapshot_steps:
            snaps[step] = model.to(torch.float32)
        if step % cfg.eval_every == 0 or step == cfg.steps:
            with torch.no_grad():
                val = float(trajectory_loss(model, val_w))
            hist_s.append(step)
            hist_va.append(val)
            hist_tr.append(running / cfg.eval_every if step else float("nan"))
            running = 0.0
            bar.set_postfix(val=f"{val:.2e}", refresh=False)
        if step == cfg.steps:
            break
        if pos + batch > n:
            perm, pos = torch.randperm(n, generator=gen), 0
        rows = perm[pos : pos + batch]
        pos += batch
        for g in opt.param_groups:
            g["lr"] = _lr_at(cfg, step)
        loss = trajectory_loss(model, train_w.subset(rows))
        running += float(loss.detach())
        if cfg.l1 > 0:
            loss = loss + cfg.l1 * sum(t.abs().sum() for t in params)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        bar.update(1)
    bar.close()
    seconds = time.perf_counter() - t0
    return TrainResult(
        model=model.to(torch.float32),
        config=cfg,
        steps=np.asarray(hist_s),
        train_mse=np.asarray(hist_tr),
        val_mse=np.asarray(hist_va),
        seconds=seconds,
        snapshots=snaps,
    )


def config_key(cfg: TrainConfig) -> str:
    """The cache key of a configuration (includes ``CACHE_VERSION`` and the torch version)."""
    return cache.config_hash({"asrnn": asdict(cfg), "version": CACHE_VERSION, "torch": torch.__version__})


def train_cached(cfg: TrainConfig = TrainConfig(), *, progress: bool = True) -> TrainResult:
    """``train(cfg)``, or its result loaded from ``cache_dir()/asrnn-<hash>.pt`` (atomic save, weights_only load)."""
    path = cache_dir() / f"asrnn-{config_key(cfg)}.pt"
    if path.is_file():
        ck = cache.load_checkpoint(path, required=("model", "steps", "train_mse", "val_mse", "seconds"))
        snaps = {int(k): ASRNN.from_state_dict(v) for k, v in ck.get("snapshots", {}).items()}
        return TrainResult(
            model=ASRNN.from_state_dict(ck["model"]),
            config=cfg,
            steps=ck["steps"].numpy(),
            train_mse=ck["train_mse"].numpy(),
            val_mse=ck["val_mse"].numpy(),
            seconds=float(ck["seconds"]),
            snapshots=snaps,
            from_cache=True,
            path=str(path),
        )
    cache.ensure_writable(path.parent, "model cache")  # before training, not after it
    res = train(cfg, progress=progress)
    cache.save_checkpoint(
        path,
        {
            "model": res.model.state_dict(),
            "steps": torch.as_tensor(res.steps),
            "train_mse": torch.as_tensor(res.train_mse),
            "val_mse": torch.as_tensor(res.val_mse),
            "seconds": res.seconds,
            "snapshots": {str(k): v.state_dict() for k, v in res.snapshots.items()},
            "config": repr(cfg),
        },
    )
    res.path = str(path)
    return res


# ------------------------------------------------------------------------------------------------------------------
# the learned force as a function of V's parameter vector (float64 analysis)

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


@dataclass(frozen=True)
class Probes:
    """Pooled probe rows: points q (N, 2) and their α (N,), α-major (all grid points of the first α, …)."""

    q: Tensor
    alpha: Tensor
    alphas: tuple[float, ...]
    n_grid: int
    # scratch buffers of the re-solves (the 366 MB Jacobian): allocating it anew costs 0.2 s of page faults a solve
    workspace: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def rows(self) -> int:
        """Rows of the force Jacobian, 2N."""
        return 2 * self.q.shape[0]


def pooled_probes(alphas: Sequence[float] = POOLED_ALPHAS, grid: Tensor | None = None) -> Probes:
    """The grid (default: polar 15 × 32 in |q| ≤ 1) repeated for every α: 21 × 480 = 10,080 points by default."""
    from lib.paper_b.symmetry import polar_grid

    alphas = tuple(_check_alpha(a) for a in alphas)
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
    a = _alpha_vector(alpha, q.shape[0], q.dtype) if q.ndim == 2 else alpha
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

    Explicit: each row is the hand-written reverse sweep through ∇_x V with cotangent −e_k (``_grad_vjp``).
    ``out``: a (2N, 2273) float64 buffer to overwrite (re-solves reuse one, see ``pooled_lift``).
    """
    params = v_params_of(theta.to(torch.float64))
    x = v_input(probes.q, probes.alpha).repeat_interleave(2, 0)
    n = probes.q.shape[0]
    ubar = torch.zeros(2 * n, 3, dtype=torch.float64)
    ubar[0::2, 0] = -1.0
    ubar[1::2, 1] = -1.0
    return mlp_grad_param_jacobian(params, x, ubar, out=out)


def _tiled(theta: Tensor, probes: Probes):
    n = probes.q.shape[0]

    def F(q: Tensor) -> Tensor:
        return force_at(theta, q, probes.alpha.repeat(q.shape[0] // n))

    return F


def generator_field(theta: Tensor, probes: Probes) -> Tensor:
    """X F_θ = (∂F/∂q)(Ωq) − ΩF at every probe (the book's sign; the paper's η is −X F); (N, 2)."""
    from lib.paper_b.symmetry import generator_vector

    return generator_vector(_tiled(theta, probes), probes.q)


def reynolds_field(theta: Tensor, probes: Probes, m: int = 64) -> Tensor:
    """Π F_θ at every probe (m-point Reynolds average, per α); (N, 2).

    When every α shares one grid that a rotation group C_n ⊂ C_m maps onto itself (the polar 15 × 32 grid: n = 32;
    a square lattice: n = 4), the average is formed at one point per orbit and rotated onto the rest
    (``lib.paper_b.symmetry.quadrature_orbits``): 32× fewer force evaluations on the polar grid, equal up to rounding.
    """
    from lib.paper_b.symmetry import quadrature_orbits, reynolds_vector, spread_over_orbits

    grid = probes.q[: probes.n_grid]
    n_alpha = len(probes.alphas)
    orbits = quadrature_orbits(grid, m) if torch.equal(probes.q, grid.repeat(n_alpha, 1)) else None
    if orbits is None:
        return reynolds_vector(_tiled(theta, probes), probes.q, m)
    reps = pooled_probes(probes.alphas, grid[orbits[1]])
    PF_reps = reynolds_vector(_tiled(theta, reps), reps.q, m).reshape(n_alpha, -1, 2)
    return spread_over_orbits(PF_reps, orbits).reshape(-1, 2)


def defect_field(theta: Tensor, probes: Probes, m: int = 64) -> Tensor:
    """Equivariance defect δ = F_θ − Π F_θ (m-point Reynolds average, per α); (N, 2)."""
    return pooled_force(theta, probes) - reynolds_field(theta, probes, m)


def equivariance_error(theta: Tensor, probes: Probes, angle_deg: float = 73.0) -> float:
    """‖F(R q) − R F(q)‖ / ‖F(q)‖ over the probes for the rotation by ``angle_deg`` (notes §6.4: 73°)."""
    from lib.paper_b.symmetry import rotation

    R = rotation(math.radians(angle_deg))
    F = _tiled(theta, probes)
    lhs = F(probes.q @ R.T)
    rhs = F(probes.q) @ R.T
    return float((lhs - rhs).norm() / F(probes.q).norm())


def true_lie_derivative(probes: Probes) -> float:
    """max |(∂F/∂q)(Ωq) − ΩF(q)| for the true force over the probes (App. C.1: exactly zero)."""
    from lib.paper_b.symmetry import generator_vector

    n = probes.q.shape[0]
    return float(generator_vector(lambda q: true_force(q, probes.alpha.repeat(q.shape[0] // n)), probes.q).abs().max())


def sketched_svd(J: Tensor, *, tau: float = 1e-3, rank: int = 128, power: int = 1, seed: int = 0) -> TruncatedSVD:
    """τ-truncated SVD of a tall J by a seeded randomized range finder with ``power`` subspace iterations.

    Cost 2(power + 1)·M·p·rank flops instead of M·p² for the Gram matrix (Halko, Martinsson & Tropp 2011, alg. 4.4).
    Exact when rank(J) ≤ ``rank``; otherwise the retained σ_k ≥ τσ₁ are accurate when the sketch size is well above
    the retained rank. Raises if the retained rank comes within 25% of ``rank`` (the sketch would be too small).
    Returns a ``lib.paper_b.sensitivity.TruncatedSVD`` for ``lift(…, svd=…)``; ``singular_values`` holds the ``rank``
    sketched values.
    """
    if J.ndim != 2:
        raise ValueError(f"J must be 2-D; got shape {tuple(J.shape)}")
    k = min(int(rank), *J.shape)
    gen = torch.Generator().manual_seed(int(seed))
    omega = torch.randn(J.shape[1], k, generator=gen, dtype=J.dtype)
    Q = torch.linalg.qr(J @ omega).Q
    for _ in range(int(power)):
        Z = torch.linalg.qr(J.T @ Q).Q
        Q = torch.linalg.qr(J @ Z).Q
    B = Q.T @ J  # (k, p)
    Ub, S, Vh = torch.linalg.svd(B, full_matrices=False)
    r = retained_rank(S, tau)
    if k < min(J.shape) and r > 0.75 * k:
        raise ValueError(f"retained rank {r} is too close to the sketch size rank={k}; raise rank")
    return TruncatedSVD(Q @ Ub[:, :r], S[:r], Vh[:r].T, S, column_norms(J), f"sketch{k}")


@dataclass
class Solve:
    """One pooled re-solve: the Jacobian's SVD and the lift of a target; ``seconds`` covers both."""

    lift: object  # lib.paper_b.sensitivity.LiftResult
    seconds: float
    target: Tensor


def pooled_lift(
    theta: Tensor,
    probes: Probes,
    kind: str,
    *,
    tau: float = 1e-3,
    gauge: str = "minnorm",
    method: str = "sketch",
    sketch_rank: int = 128,
    m: int = 64,
    J: Tensor | None = None,
) -> Solve:
    """Lift c* (kind "c": J c ≈ X F) or b* (kind "b": J b ≈ −δ) through the pooled force Jacobian (notes §7).

    ``method``: "sketch" (``sketched_svd``) or a ``sensitivity.lift`` method ("gram", "svd"). Walking along
    +c rotates F (F_t(q) = R_t⁻¹F₀(R_t q)); walking along +b shrinks the defect (F_t = ΠF₀ + e^{−t}δ₀).
    """
    from lib.core.params import choice
    from lib.paper_b.sensitivity import lift

    choice("kind", kind, ("c", "b"))
    t0 = time.perf_counter()
    if J is None:  # the probes' scratch Jacobian: overwritten by the next pooled_lift on these probes, never returned
        shape = (probes.rows, sum(t.numel() for t in v_params_of(theta)))
        buffer = probes.workspace.get("J")
        if buffer is None or tuple(buffer.shape) != shape:
            buffer = probes.workspace["J"] = torch.empty(shape, dtype=torch.float64)
        J = force_jacobian(theta, probes, out=buffer)
    target = generator_field(theta, probes) if kind == "c" else -defect_field(theta, probes, m)
    target = target.reshape(-1)
    if method == "sketch":
        res = lift(J, target, tau=tau, gauge=gauge, svd=sketched_svd(J, tau=tau, rank=sketch_rank))
    else:
        res = lift(J, target, tau=tau, gauge=gauge, method=method)
    return Solve(res, time.perf_counter() - t0, target)


# ------------------------------------------------------------------------------------------------------------------
# diagnostics and walks


def profile_radius(alpha: float, extent: float = 1.0) -> float:
    """Radius of the angular profile: 0.85·min(√−α, extent) for α < 0, else 0.7·extent (notes §9.5)."""
    alpha = _check_alpha(alpha)
    return 0.85 * min(math.sqrt(-alpha), extent) if alpha < 0 else 0.7 * extent


def angular_profiles(theta: Tensor, alphas: Sequence[float], n: int = 240) -> tuple[Tensor, list[float], Tensor]:
    """δ_V(φ) = V(r, φ) − mean_φ V(r, ·) at ``profile_radius(α)`` for each α: (angles (n,), radii, (n_alpha, n))."""
    angles = torch.arange(n, dtype=torch.float64) * (2 * math.pi / n)
    unit = torch.stack([torch.cos(angles), torch.sin(angles)], 1)
    radii = [profile_radius(a) for a in alphas]
    params = v_params_of(theta)
    out = []
    for a, r in zip(alphas, radii, strict=True):
        v = potential(params, r * unit, float(a))
        out.append(v - v.mean())
    return angles, radii, torch.stack(out)


def rollout_comparison(
    model: ASRNN, alphas: Sequence[float], *, n_ic: int, steps: int, seed: int
) -> tuple[list[Tensor], list[Tensor]]:
    """Ground truth and learned rollouts (float64) from seeded initial conditions at each α.

    Returns two lists (one entry per α) of (n_ic, steps + 1, 4) tensors in (q, p) order.
    """
    m64 = model.to(torch.float64)
    truth, learned = [], []
    for j, a in enumerate(alphas):
        q0, p0 = sample_initial_conditions(n_ic, a, seed=seed + 7919 * j)
        truth.append(leapfrog_true(q0, p0, a, steps=steps))
        with torch.no_grad():
            learned.append(rollout(m64, q0, p0, float(a), steps=steps))
    return truth, learned


def relative_rollout_error(truth: Sequence[Tensor], learned: Sequence[Tensor]) -> float:
    """sqrt(mean |x̂ − x|²) / sqrt(mean |x|²) over all trajectories, times and (q, p) components."""
    t = torch.cat([x.reshape(-1) for x in truth])
    s = torch.cat([x.reshape(-1) for x in learned])
    return float((s - t).norm() / t.norm())


@dataclass
class Walk:
    """A resolved or fixed walk along c* or b*: the ``lib.paper_b.flows.FlowRecord`` plus the solve timings."""

    kind: str
    mode: str
    record: object  # lib.paper_b.flows.FlowRecord
    solve_seconds: list[float]

    @property
    def defect(self) -> np.ndarray:
        """‖δ_t‖ (pooled, plain L2) at every stop."""
        return self.record.diagnostics["defect"]

    @property
    def forces(self) -> np.ndarray:
        """F_t at every stop, (stops, 2N)."""
        return self.record.diagnostics["force"]


def walk(
    theta0: Tensor,
    probes: Probes,
    kind: str,
    mode: str,
    *,
    steps: int,
    dt: float,
    gauge: str = "minnorm",
    tau: float = 1e-3,
    sketch_rank: int = 128,
    profile_alphas: Sequence[float] = UNSEEN_ALPHAS,
    progress: bool = True,
) -> Walk:
    """Euler walk θ_{k+1} = θ_k + dt·z_k along the raw lift (c* or b*), resolved or fixed (``lib.paper_b.flows``).

    Records at each stop: ‖δ_t‖, F_t on the probes, the angular profiles of V at ``profile_alphas`` and the
    distance ‖F_t − F_t^exact‖/‖F₀‖ from the exact function-space flow (c*: F₀ rotated by t; b*: ΠF₀ + e^{−t}δ₀).
    """
    from lib.paper_b.flows import euler_flow
    from lib.paper_b.symmetry import rotation

    timings: list[float] = []

    def direction(theta):
        sol = pooled_lift(theta, probes, kind, tau=tau, gauge=gauge, sketch_rank=sketch_rank)
        timings.append(sol.seconds)
        return sol.lift

    F0 = pooled_force(theta0, probes)
    f0n = float(F0.norm())
    if kind == "b":
        PF0 = reynolds_field(theta0, probes)
        d0 = F0 - PF0

    def exact(t: float) -> Tensor:
        if kind == "c":
            R = rotation(t)
            return _tiled(theta0, probes)(probes.q @ R.T) @ R  # R_t⁻¹ F₀(R_t q), rows
        return PF0 + math.exp(-t) * d0

    def diagnostics(theta, k, z):
        F = pooled_force(theta, probes)
        _, _, prof = angular_profiles(theta, profile_alphas)
        return {
            "defect": float(defect_field(theta, probes).norm()),
            "force": F.reshape(-1),
            "profiles": prof,
            "exact_distance": float((F - exact(k * dt)).norm()) / f0n,
        }

    rec = euler_flow(
        theta0.to(torch.float64), direction, steps=steps, dt=dt, mode=mode, diagnostics_fn=diagnostics,
        progress=progress, desc=f"{mode} walk along {kind}*",
    )  # fmt: skip
    return Walk(kind, mode, rec, timings)
