"""3-bit flip-flop (Sussillo & Barak 2013): hold the sign of each channel's most recent ±1 pulse."""

from __future__ import annotations

import numpy as np

from lib.core import params
from lib.paper_a.tasks import register_task
from lib.paper_a.tasks._common import Batch, as_batch, rng_for

DEFAULTS = {"n_bits": 3, "length": 25, "pulse_prob": 0.1, "input_noise": 0.0}

METADATA = {
    "source": "Sussillo & Barak (2013), Neural Computation 25(3); paper A §4 (3-bit flip-flop, length 25)",
    "anchor": "mattgolub/fixed-point-finder examples/helper/FlipFlopData.py (pulse forced at t=0, seeded RNG); "
    "FedeClaudi/pyrnn tasks/three_bit_memory.py (about one pulse per 10 steps per channel)",
    "paper_states": "3-bit flip-flop, sequence length 25",
    "we_choose": "pulse probability 0.1 per channel per step (pyrnn's rate; Golub uses 0.5), a pulse forced at t=0 on "
    "every channel (Golub), pulses ±1 with equal probability, no input noise",
    "epochs": "one epoch: pulses arrive at random times over all 25 steps",
    "target": "each output holds the sign of its channel's most recent pulse",
    "noise": "optional Gaussian noise of std input_noise on every input channel (0 by default)",
}


@register_task("flipflop", n_inputs=3, n_outputs=3, defaults=DEFAULTS, metadata=METADATA)
def generate(
    batch_size: int,
    *,
    seed: int | np.random.Generator,
    n_bits: int = 3,
    length: int = 25,
    pulse_prob: float = 0.1,
    input_noise: float = 0.0,
) -> Batch:
    """Inputs (B, T, n_bits) of sparse ±1 pulses; targets (B, T, n_bits) = sign of the latest pulse per channel."""
    batch_size = params.integer("batch_size", batch_size, min=1)
    n_bits = params.integer("n_bits", n_bits, min=1)
    length = params.integer("length", length, min=1)
    pulse_prob = params.real("pulse_prob", pulse_prob, min=0.0, max=1.0, min_open=True)
    input_noise = params.real("input_noise", input_noise, min=0.0)
    rng = rng_for(seed)
    shape = (batch_size, length, n_bits)
    pulse = rng.random(shape) < pulse_prob
    pulse[:, 0, :] = True  # forced pulse at t=0: the target is always defined (Golub)
    sign = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
    inputs = np.where(pulse, sign, 0.0)
    # index of the latest pulse at or before t, per (trial, channel): running max of pulse times; the targets are the
    # inputs there (np.take_along_axis(inputs, last, axis=1), read through flat indices: a quarter of the cost)
    t_idx = np.where(pulse, np.arange(length)[None, :, None], 0)
    last = np.maximum.accumulate(t_idx, axis=1)
    flat = last * n_bits + np.arange(n_bits) + (np.arange(batch_size) * (length * n_bits))[:, None, None]
    targets = inputs.ravel()[flat]
    if input_noise > 0:
        inputs = inputs + input_noise * rng.standard_normal(shape)
    return as_batch(inputs, targets)
