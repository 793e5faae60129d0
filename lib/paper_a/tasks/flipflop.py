"""3-bit flip-flop (Sussillo & Barak 2013): hold the sign of each channel's most recent ±1 pulse."""

from __future__ import annotations

import numpy as np
import torch

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


@register_task("flipflop", n_inputs=3, n_outputs=3, defaults=DEFAULTS, metadata=METADATA, batched=True)
def generate_many(
    n_batches: int,
    batch_size: int,
    *,
    seed: int | np.random.Generator,
    n_bits: int,
    length: int,
    pulse_prob: float,
    input_noise: float,
) -> Batch:
    """Inputs (B, T, n_bits) of sparse ±1 pulses; targets (B, T, n_bits) = sign of the latest pulse per channel.

    Each array with a leading (n_batches,) axis: the batches of ``n_batches`` successive single-batch draws on one
    Generator.
    """
    n_batches = params.integer("n_batches", n_batches, min=1)
    batch_size = params.integer("batch_size", batch_size, min=1)
    n_bits = params.integer("n_bits", n_bits, min=1)
    length = params.integer("length", length, min=1)
    pulse_prob = params.real("pulse_prob", pulse_prob, min=0.0, max=1.0, min_open=True)
    input_noise = params.real("input_noise", input_noise, min=0.0)
    rng = rng_for(seed)
    shape = (batch_size, length, n_bits)
    if input_noise > 0:  # each batch draws pulses, signs, then noise: the draws interleave batch by batch
        draws = [(rng.random(shape), rng.random(shape), rng.standard_normal(shape)) for _ in range(n_batches)]
        u_pulse, u_sign, noise = (np.stack(d) for d in zip(*draws, strict=True))
    else:  # one double per draw: the batches' pulse and sign draws in one call, in the same order
        u = rng.random((n_batches, 2, *shape))
        u_pulse, u_sign = u[:, 0], u[:, 1]
    pulse = u_pulse < pulse_prob
    pulse[:, :, 0, :] = True  # forced pulse at t=0: the target is always defined (Golub)
    pulses = np.where(pulse, np.where(u_sign < 0.5, np.int8(-1), np.int8(1)), np.int8(0))  # the ±1 pulses, else 0
    # the target holds the latest pulse's sign, carried forward in time: one vectorised step per time step over
    # every trial, time as the leading axis (contiguous steps), in int8 (the values are exact)
    held = np.moveaxis(pulses, 2, 0).copy()
    for t in range(1, length):
        np.copyto(held[t], held[t - 1], where=held[t] == 0)
    targets = torch.from_numpy(np.ascontiguousarray(np.moveaxis(held, 0, 2))).to(torch.float32)
    if input_noise > 0:
        return as_batch(pulses + input_noise * noise, targets)
    return Batch(torch.from_numpy(pulses).to(torch.float32), targets)
