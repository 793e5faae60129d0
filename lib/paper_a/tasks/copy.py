"""Paper A's fixed-length binary copy task (§3): read 8 symbols in {−1, +1}^8, then replay them autonomously."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from lib.core import params
from lib.paper_a.tasks import register_task
from lib.paper_a.tasks._common import rng_for

DEFAULTS = {"n_symbols": 8, "dim": 8, "replay_steps": 32}

METADATA = {
    "source": "paper A §3 (Dräger 2026, arXiv:2606.18457): fixed-delay copy of s = 8 symbols in {−1,+1}^8, "
    "accuracy Acc_rc = sign agreement over the first 128 generated steps × 8 channels",
    "differs_from": "Arjovsky et al. (2016)/Hochreiter & Schmidhuber (1997) copying memory: there the symbols are "
    "categorical (one-hot, cross-entropy), a long blank delay and a recall marker precede the recall; here each "
    "symbol is a ±1 vector, replay starts right after the 8th symbol with zero input and no cue",
    "we_choose": "no delay and no cue; symbols i.i.d. uniform ±1; target for replay step ℓ = 1, 2, … is symbol "
    "((ℓ − 1) mod 8) + 1 (cyclic repetition, the 'explicit temporal symmetry'; 8 symbols × 8 channels = 64 = n_R); "
    "loss only on the replay steps (mask); training on a shorter horizon (replay_steps) than the 128 evaluated",
    "epochs": "input: steps 1..n_symbols (one symbol per step); replay: steps n_symbols+1 .. n_symbols+replay_steps",
}


class CopyBatch(NamedTuple):
    """A copy-task batch: inputs_btx (B, s+L, d), targets_bty (B, s+L, d), mask_bty (B, s+L, d) = 1 on replay steps."""

    inputs_btx: torch.Tensor
    targets_bty: torch.Tensor
    mask_bty: torch.Tensor


@register_task("copy", n_inputs=8, n_outputs=8, defaults=DEFAULTS, metadata=METADATA, batched=True)
def generate_many(
    n_batches: int, batch_size: int, *, seed: int | np.random.Generator, n_symbols: int, dim: int, replay_steps: int
) -> CopyBatch:
    """Symbols s (B, n_symbols, dim) ~ U{±1}; inputs: s, then zeros; target at replay step ℓ: s[(ℓ−1) mod n_symbols].

    Each array (n_batches, B, s+L, d): the batches of ``n_batches`` successive single-batch draws on one Generator.
    """
    n_batches = params.integer("n_batches", n_batches, min=1)
    batch_size = params.integer("batch_size", batch_size, min=1)
    n_symbols = params.integer("n_symbols", n_symbols, min=1)
    dim = params.integer("dim", dim, min=1)
    replay_steps = params.integer("replay_steps", replay_steps, min=1)
    rng = rng_for(seed)
    # one double per draw: the batches' symbol draws in one call, in the same order
    symbols = np.where(rng.random((n_batches, batch_size, n_symbols, dim)) < 0.5, -1.0, 1.0).astype(np.float32)
    steps = n_symbols + replay_steps
    inputs = np.zeros((n_batches, batch_size, steps, dim), np.float32)
    inputs[:, :, :n_symbols] = symbols
    targets = np.zeros_like(inputs)
    targets[:, :, n_symbols:] = symbols[:, :, np.arange(replay_steps) % n_symbols]
    mask = np.zeros_like(inputs)
    mask[:, :, n_symbols:] = 1.0
    return CopyBatch(torch.from_numpy(inputs), torch.from_numpy(targets), torch.from_numpy(mask))
