"""Screening every single-entry ablation of one solution: one Jacobian pass against one rollout per entry.

Zeroing one coupling entry T_i is the step δ = −T_i e_i; its Gauss–Newton ΔFVU needs only two numbers per column of
J over the held-out set, ``g_i = (Jᵀ m r)_i`` and ``c_i = ‖J_{:,i}‖²`` (m the mask, r the full model's residual):
``ΔFVU_i ≈ (−2 T_i g_i + T_i² c_i) / V``. Both are accumulated trial chunk by trial chunk, so J is never held whole.
"""

from __future__ import annotations

import numpy as np
import torch

from lib.lenses import jacobian as lj
from lib.paper_a import metrics, rnn
from lib.paper_a.ablation import fvu_of

#: Trials per chunk of the streamed Jacobian.
CHUNK_TRIALS = 64


def single_entry_predictions(weights, coords: lj.Coordinates, batch, chunk_trials: int = CHUNK_TRIALS) -> np.ndarray:
    """(n_c,) Gauss–Newton ΔFVU of zeroing each coupling entry alone, from the Jacobian over the whole batch."""
    w = rnn.as_float64(weights)
    x, y, mask = batch
    m = torch.ones_like(y) if mask is None else mask
    with torch.no_grad():
        out, _ = rnn.rollout_fast(w, x)
    var = float(metrics.target_variance(y, mask))
    r = ((out - y) * m.sqrt()).reshape(x.shape[0], -1)  # the rows of J carry sqrt(m) already
    g = torch.zeros(coords.size, dtype=torch.float64)
    c = torch.zeros(coords.size, dtype=torch.float64)
    for i in range(0, x.shape[0], chunk_trials):
        sl = slice(i, i + chunk_trials)
        J = lj.coupling_jacobian(w, coords, x[sl], None if mask is None else mask[sl])
        keep = m[sl].reshape(-1) > 0
        g += J.T @ r[sl].reshape(-1)[keep]
        c += J.square().sum(0)
    t = torch.as_tensor(coords.values)
    return ((-2 * t * g + t.square() * c) / var).numpy()


def single_entry_real(weights, coords: lj.Coordinates, batch, entries=None) -> np.ndarray:
    """Real ΔFVU of zeroing each coupling entry alone (one held-out rollout each); ``entries`` an index subset."""
    w = rnn.as_float64(weights)
    full = fvu_of(w, batch)
    Q, T = coords.Q, coords.sectors.form.T
    idx = range(coords.size) if entries is None else entries
    out = []
    for i in idx:
        Ti = T.copy()
        Ti[coords.rows[i], coords.cols[i]] = 0.0
        out.append(metrics.delta_fvu(fvu_of({**w, "W_hh": torch.tensor(Q @ Ti @ Q.T)}, batch), full))
    return np.array(out)


def top_k_overlap(a: np.ndarray, b: np.ndarray, k: int) -> float:
    """|top-k(a) ∩ top-k(b)| / k: how many of the k largest of ``b`` the k largest of ``a`` recover."""
    if not 1 <= k <= len(a):
        raise ValueError(f"k={k} must be in [1, {len(a)}]")
    top = lambda v: set(np.argsort(-np.asarray(v), kind="stable")[:k].tolist())  # noqa: E731
    return len(top(a) & top(b)) / k
