"""From ablation to symmetry flow: shed Schur mass along the near-null space of J, re-solved at every step.

Paper B follows a symmetry by re-solving its lift at every step of the flow. Here the wanted change is "shrink the
couplings": the step is the part of −θ (θ the coupling entries of T) that lies in the near-null space of the probe
Jacobian at the current point, ``c = −P_null θ`` (the closest change to −θ that J_τ leaves unchanged, i.e. the lift
of a zero change of the function), scaled by ``rate``. Q and the diagonal blocks of T stay fixed, so the eigenvalues
and the R/C split do not move. After each step the held-out ΔFVU is measured; a step that takes it above ε is halved
(up to ``halvings`` times) and the flow stops when even the smallest step leaves ε.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from lib.core import params
from lib.kernels.cpu_linalg import symmetric_eigh
from lib.lenses import jacobian as lj
from lib.paper_a import metrics, rnn
from lib.paper_a.task_analysis.profiles import fvu_of
from lib.paper_b.lifting import check_tau, retained_rank


@dataclass(frozen=True)
class FlowResult:
    """``mass``/``dfvu`` after each accepted step (step 0 = the trained network), all within ε; ``shed``: the mass
    removed at the last one (‖ΔT‖_F / ‖T‖_F, paper A's measure); ``steps_within``: how many steps were accepted."""

    mass: np.ndarray
    dfvu: np.ndarray
    shed: float
    steps_within: int


def null_step(J: torch.Tensor, theta: np.ndarray, tau: float) -> np.ndarray:
    """−P_null θ: the component of −θ orthogonal to J's retained right singular vectors (σ ≥ τσ₁), via the Gram
    matrix of the smaller side (as paper B's ``truncated_svd(..., method="gram")``)."""
    tau = check_tau(tau)
    m, p = J.shape
    if m <= p:
        w, U = symmetric_eigh(J @ J.T)
        s = w.flip(0).clamp_min(0).sqrt()
        r = retained_rank(s, tau)
        V = (J.T @ (U.flip(1)[:, :r] / s[:r])).numpy()
    else:
        w, V = symmetric_eigh(J.T @ J)
        s = w.flip(0).clamp_min(0).sqrt()
        V = V.flip(1)[:, : retained_rank(s, tau)].numpy()
    return -(theta - V @ (V.T @ theta))


def shed_mass(
    weights, coords: lj.Coordinates, batch, *, eps: float, tau: float, steps: int = 6, rate: float = 0.5,
    probe_rows: int = 2048, halvings: int = 4,
) -> FlowResult:  # fmt: skip
    """Follow the re-solved near-null shrinking flow for ``steps`` steps of ``rate`` × the null step (halved up to
    ``halvings`` times while a step would leave ε)."""
    eps = params.real("eps", eps, min=0.0)
    steps = params.integer("steps", steps, min=1)
    rate = params.real("rate", rate, min=0.0, max=1.0, min_open=True)
    halvings = params.integer("halvings", halvings, min=0)
    w = rnn.as_float64(weights)
    x, _, mask = batch
    rows_per_trial = int((torch.ones_like(batch[1]) if mask is None else mask)[0].gt(0).sum())
    trials = max(1, math.ceil(params.integer("probe_rows", probe_rows, min=1) / rows_per_trial))
    Q, T0 = coords.Q, coords.sectors.form.T
    full = fvu_of(w, batch)
    theta = coords.values.copy()
    norm_T = float(np.linalg.norm(T0))
    masses, dfvus = [0.0], [0.0]
    for _ in range(steps):
        current = {**w, "W_hh": torch.tensor(Q @ (T0 + coords.matrix(theta - coords.values)) @ Q.T)}
        J = lj.coupling_jacobian(current, coords, x[:trials], None if mask is None else mask[:trials])
        step, accepted = null_step(J, theta, tau), False
        for k in range(halvings + 1):  # a step that leaves ε is halved (same direction), at most `halvings` times
            trial = theta + rate * 0.5**k * step
            W = Q @ (T0 + coords.matrix(trial - coords.values)) @ Q.T
            d = metrics.delta_fvu(fvu_of({**w, "W_hh": torch.tensor(W)}, batch), full)
            if d <= eps:
                accepted = True
                break
        if not accepted:
            break
        theta = trial
        masses.append(float(np.linalg.norm(theta - coords.values) / norm_T))
        dfvus.append(d)
    return FlowResult(np.array(masses), np.array(dfvus), masses[-1], len(masses) - 1)
