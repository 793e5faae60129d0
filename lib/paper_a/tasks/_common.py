"""Helpers shared by the neuroscience-style task generators: the seeded RNG and the returned batch."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch


class Batch(NamedTuple):
    """A task batch: ``inputs_btx`` (B, T, N_x) and ``targets_bty`` (B, T, N_y), float32 tensors."""

    inputs_btx: torch.Tensor
    targets_bty: torch.Tensor


def rng_for(seed: int | np.random.Generator) -> np.random.Generator:
    """A ``numpy`` Generator from an integer seed (or the Generator itself); no global state is touched."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise TypeError(f"seed={seed!r} must be a non-negative integer or a numpy Generator")
    return np.random.default_rng(int(seed))


def as_batch(inputs: np.ndarray, targets: np.ndarray) -> Batch:
    """Wrap float64 arrays as a float32 ``Batch``."""
    return Batch(torch.as_tensor(inputs, dtype=torch.float32), torch.as_tensor(targets, dtype=torch.float32))
