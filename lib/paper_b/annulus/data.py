"""The annulus data of paper B §3.1 (notes §8.2, Berndt & Stühmer §4.1) and every knob of data, model and training.

``np.random.default_rng(3)`` draws, in this order, inner angles, inner radii, outer angles, outer radii; 100 points of
a unit disc (label +1) and 100 of the band r ∈ [2.3, 3.0] over a 90° wedge or the full 360° (label −1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

ARCS = {"wedge": 90.0, "full": 360.0}
CONDITIONS = ("wedge_init", "wedge_trained", "full_init", "full_trained")  # (dataset)_(stage) of the §8.8 table


@dataclass(frozen=True, kw_only=True)
class AnnulusConfig:
    """Every knob of data, model and training (notes §8.2–8.4); its hash keys the weight cache."""

    data_seed: int = 3
    n_inner: int = 100
    n_outer: int = 100
    r_inner: float = 1.0
    r_outer_min: float = 2.3
    r_outer_max: float = 3.0
    hidden: int = 96
    depth: int = 4
    init_seed: int = 42
    learning_rate: float = 3e-3
    epochs: int = 200


DEFAULT_CONFIG = AnnulusConfig()  # the paper's settings


def make_data(arc_degrees: float, config: AnnulusConfig = DEFAULT_CONFIG) -> tuple[np.ndarray, np.ndarray]:
    """Inner disc (+1) and outer band over ``arc_degrees`` centred on θ = 0 (−1): x (200, 2) float32, y (200,) int64."""
    if not 0 < arc_degrees <= 360:
        raise ValueError(f"arc_degrees={arc_degrees!r} must be in (0, 360]")
    c = config
    rng = np.random.default_rng(c.data_seed)
    theta_in = 2 * np.pi * rng.random(c.n_inner)
    rad_in = c.r_inner * np.sqrt(rng.random(c.n_inner))
    theta_out = math.radians(arc_degrees) * (rng.random(c.n_outer) - 0.5)
    rad_out = rng.uniform(c.r_outer_min, c.r_outer_max, c.n_outer)
    x_in = np.c_[rad_in * np.cos(theta_in), rad_in * np.sin(theta_in)]
    x_out = np.c_[rad_out * np.cos(theta_out), rad_out * np.sin(theta_out)]
    x = np.vstack([x_in, x_out]).astype(np.float32)
    y = np.hstack([np.ones(c.n_inner), -np.ones(c.n_outer)]).astype(np.int64)
    return x, y
