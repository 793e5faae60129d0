"""Context-dependent integration (Mante et al. 2013): integrate the stream a one-hot context cues, ignore the other."""

from __future__ import annotations

import numpy as np

from lib.core import params
from lib.paper_a.tasks import register_task
from lib.paper_a.tasks._common import Batch, as_batch, rng_for

DEFAULTS = {"length": 48, "bias_max": 0.01, "noise": 0.025, "dt": 0.04}

METADATA = {
    "source": "Mante, Sussillo, Shenoy & Newsome (2013), Nature 503; paper A §4 (four inputs, length 48)",
    "anchor": "google-research/computation-thru-dynamics experimental/contextual_integrator_rnn_tutorial/"
    "integrator.py (2 white-noise streams + 2-d one-hot context; target = cumulative sum of the cued stream)",
    "paper_states": "context-dependent integration with four inputs, sequence length 48",
    "we_choose": "inputs = [stream 1, stream 2, context 1, context 2]; each stream has a per-trial bias "
    "b ~ U(−bias_max, bias_max) (uniform, as in the 1-D tutorial) plus white noise of std noise/√dt per step; "
    "bias_max = 0.01, noise = 0.025, dt = 0.04 (the tutorial's bval, sval and T/ntimesteps = 1/25, so each step "
    "has the tutorial's statistics and 48 steps span 1.92 time units); the context is one-hot, equally likely, "
    "held for the whole trial; one output",
    "epochs": "one epoch: streams and context are on for the whole trial",
    "target": "running sum (no dt factor, as in the tutorial) of the cued stream, one output",
    "noise": "white noise on the two sensory streams only; the context channels are noiseless",
}


@register_task("context", n_inputs=4, n_outputs=1, defaults=DEFAULTS, metadata=METADATA, batched=True)
def generate_many(
    n_batches: int,
    batch_size: int,
    *,
    seed: int | np.random.Generator,
    length: int,
    bias_max: float,
    noise: float,
    dt: float,
) -> Batch:
    """Inputs (B, T, 4) = two noisy streams + one-hot context; targets (B, T, 1) = running sum of the cued stream.

    Each array with a leading (n_batches,) axis: the batches of ``n_batches`` successive single-batch draws on one
    Generator.
    """
    n_batches = params.integer("n_batches", n_batches, min=1)
    batch_size = params.integer("batch_size", batch_size, min=1)
    length = params.integer("length", length, min=1)
    bias_max = params.real("bias_max", bias_max, min=0.0)
    noise = params.real("noise", noise, min=0.0)
    dt = params.real("dt", dt, min=0.0, min_open=True)
    rng = rng_for(seed)
    # each batch draws its biases, its noise, then its contexts: the draws interleave batch by batch
    draws = [
        (rng.uniform(-bias_max, bias_max, (batch_size, 1, 2)), rng.standard_normal((batch_size, length, 2)),
         rng.integers(0, 2, batch_size))
        for _ in range(n_batches)
    ]  # fmt: skip
    bias, white, cued = (np.stack(d) for d in zip(*draws, strict=True))
    streams = bias + noise / np.sqrt(dt) * white  # (n, B, T, 2)
    n_idx, b_idx = np.arange(n_batches)[:, None], np.arange(batch_size)[None, :]
    context = np.zeros((n_batches, batch_size, length, 2))
    context[n_idx, b_idx, :, cued] = 1.0
    inputs = np.concatenate([streams, context], axis=3)
    relevant = streams[n_idx, b_idx, :, cued]  # (n, B, T)
    targets = np.cumsum(relevant, axis=2)[:, :, :, None]
    return as_batch(inputs, targets)
