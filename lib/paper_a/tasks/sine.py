"""Frequency-cued sine generation (Sussillo & Barak 2013): a static level cues ω, the output traces sin(ω t)."""

from __future__ import annotations

import numpy as np

from lib.core import params
from lib.paper_a.tasks import register_task
from lib.paper_a.tasks._common import Batch, as_batch, rng_for

FREQUENCY_SETS = ("grid", "continuous")
DEFAULTS = {"length": 50, "frequencies": "grid", "omega_min": 0.1, "omega_max": 0.6, "n_grid": 51}

METADATA = {
    "source": "Sussillo & Barak (2013), Neural Computation 25(3); paper A §4 (frequency-cued sine, length 50)",
    "anchor": "keith-murray/sine-wave-generator src/task.py (ω ∈ {0.10, 0.11, …, 0.60}, cue 0.25 + j/51)",
    "paper_states": "frequency-cued sine generation, sequence length 50",
    "we_choose": "51 frequencies ω_j = 0.1 + 0.01 (j − 1), j = 1..51, drawn uniformly; cue level j/51 + 0.25 held "
    "for the whole trial; target sin(ω k) at output step k = 0..49 (unit amplitude, zero phase); "
    "time in steps, so ω = 0.1 completes 0.8 of a period in 50 steps",
    "epochs": "one epoch: the cue is on for the whole trial",
    "target": "sin(ω k), k = 0..T−1",
    "noise": "none",
}


def cue_level(omega, omega_min: float, omega_max: float, n_grid: int):
    """Static cue for frequency ω: j/n_grid + 0.25 with j = 1 + (n_grid−1)(ω−ω_min)/(ω_max−ω_min) (S&B encoding)."""
    j = 1.0 + (n_grid - 1) * (np.asarray(omega) - omega_min) / (omega_max - omega_min)
    return j / n_grid + 0.25


@register_task("sine", n_inputs=1, n_outputs=1, defaults=DEFAULTS, metadata=METADATA, batched=True)
def generate_many(
    n_batches: int,
    batch_size: int,
    *,
    seed: int | np.random.Generator,
    length: int,
    frequencies: str,
    omega_min: float,
    omega_max: float,
    n_grid: int,
) -> Batch:
    """Inputs (B, T, 1) = cue level held constant; targets (B, T, 1) = sin(ω k), ω from the grid or uniform.

    Each array with a leading (n_batches,) axis: the batches of ``n_batches`` successive single-batch draws on one
    Generator.
    """
    n_batches = params.integer("n_batches", n_batches, min=1)
    batch_size = params.integer("batch_size", batch_size, min=1)
    length = params.integer("length", length, min=1)
    params.choice("frequencies", frequencies, FREQUENCY_SETS)
    omega_min = params.real("omega_min", omega_min, min=0.0, min_open=True)
    omega_max = params.real("omega_max", omega_max, min=omega_min, min_open=True)
    n_grid = params.integer("n_grid", n_grid, min=2)
    rng = rng_for(seed)
    if frequencies == "grid":  # bounded integers are drawn in buffered pairs: one call per batch, as generate makes
        picks = np.stack([rng.integers(0, n_grid, batch_size) for _ in range(n_batches)])
        omega = np.linspace(omega_min, omega_max, n_grid)[picks]
    else:  # one double per draw: the batches' draws in one call, in the same order
        omega = rng.uniform(omega_min, omega_max, (n_batches, batch_size))
    k = np.arange(length)
    cue = cue_level(omega, omega_min, omega_max, n_grid)
    inputs = np.repeat(cue[:, :, None, None], length, axis=2)
    targets = np.sin(omega[:, :, None] * k)[:, :, :, None]
    return as_batch(inputs, targets)
