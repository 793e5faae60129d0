"""Windowed trajectory data of the Mexican hat (notes §9.3, the authors' ``mexican_hat_config.json``)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from lib.paper_b.mexican_hat.system import TRAIN_ALPHAS, check_potential_alpha, leapfrog_true, sample_initial_conditions


@dataclass(frozen=True, kw_only=True)
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
        check_potential_alpha(a)
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
