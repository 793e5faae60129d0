"""1-D noisy integrator (not in paper A): report the running sum of one noisy stream; the book's "new task" example.

A task of the reader's own, outside ``lib``: the task chapter registers it with ``load_task_modules("tasks")``.
"""

from __future__ import annotations

import numpy as np

from lib.core import params
from lib.paper_a.tasks import Batch, as_batch, register_task, rng_for

DEFAULTS = {"length": 25, "bias_max": 0.01, "noise": 0.025, "dt": 0.04}

METADATA = {
    "source": "a perfect-integrator task as in Sussillo & Barak (2013) and the computation-thru-dynamics tutorial; "
    "not in paper A",
    "anchor": "google-research/computation-thru-dynamics integrator_rnn_tutorial/integrator.py "
    "(T = 1 over 25 steps, bval = 0.01, sval = 0.025)",
    "paper_states": "(not in paper A)",
    "we_choose": "one stream with per-trial bias b ~ U(−bias_max, bias_max) and white noise of std noise/√dt, "
    "length 25, dt = 0.04, bias_max = 0.01, noise = 0.025 (the tutorial's T = 1 over 25 steps, bval, sval)",
    "epochs": "one epoch: the stream is on for the whole trial",
    "target": "running sum of the stream (no dt factor)",
    "noise": "white noise on the stream",
}


@register_task("integrator", n_inputs=1, n_outputs=1, defaults=DEFAULTS, metadata=METADATA)
def generate(
    batch_size: int,
    *,
    seed: int | np.random.Generator,
    length: int,
    bias_max: float,
    noise: float,
    dt: float,
) -> Batch:
    """Inputs (B, T, 1) = biased white noise; targets (B, T, 1) = its running sum.

    One batch per call (the registry stacks calls where many batches are asked for), every parameter given: the
    registry fills in ``DEFAULTS`` for those a caller leaves out.
    """
    batch_size = params.integer("batch_size", batch_size, min=1)
    length = params.integer("length", length, min=1)
    bias_max = params.real("bias_max", bias_max, min=0.0)
    noise = params.real("noise", noise, min=0.0)
    dt = params.real("dt", dt, min=0.0, min_open=True)
    rng = rng_for(seed)
    bias = rng.uniform(-bias_max, bias_max, (batch_size, 1, 1))
    inputs = bias + noise / np.sqrt(dt) * rng.standard_normal((batch_size, length, 1))
    return as_batch(inputs, np.cumsum(inputs, axis=1))
