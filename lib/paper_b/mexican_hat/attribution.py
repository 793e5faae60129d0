"""Per-parameter attribution on the ASRNN's potential V (paper B §1, App. A.4–A.5, contribution 3; issue 16 items 1–3).

At one θ₂: the aggregate sensitivities S_i = ‖J_{:,i}‖/sqrt(rows) (RMS over probes and the two force components), how
the pointwise S*_i(x_n) concentrate over the probes (participation ratio), and c*, b* in both gauges with each
parameter's contribution |c_i|·‖J_{:,i}‖ to the realised move, split over V's four layers; and how c* and b* relate
(``lib.paper_b.relations``). On a rotation-invariant probe set ⟨η, δ⟩ = 0 (eq. 22), so for the min-norm lifts
(J c = P η) ⟨Pη, Pδ⟩ = −⟨(I−P)η, (I−P)δ⟩ and |cos(J c*, J b*)| ≤ tan∠(η, Pη)·tan∠(δ, Pδ):
:func:`orthogonality_bound`, the one criterion the book applies to orthogonality of c* and b* on every network
(``lib.core.questions``: the targets taken as orthogonal, as eq. 22 says). Where the probe set makes cos(η, δ)
non-zero, the snapshot records it (``cos_targets``): it is what the realised moves then inherit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from lib.paper_b.lifting import GAUGES, TruncatedSVD, lift
from lib.paper_b.mexican_hat.model import V_SHAPES
from lib.paper_b.relations import block_shares, cosine, direction_relation, realised_cosine_bound
from lib.paper_b.sensitivity import aggregate_sensitivity

LAYER_NAMES = ("layer 1 (3→32)", "layer 2 (32→32)", "layer 3 (32→32)", "layer 4 (32→1)")


def v_layers() -> list[tuple[str, slice]]:
    """V's four layers (weights and bias together) as slices of θ₂, in parameter order."""
    out, start = [], 0
    for name, (w, b) in zip(LAYER_NAMES, zip(V_SHAPES[::2], V_SHAPES[1::2], strict=True), strict=True):
        n = math.prod(w) + math.prod(b)
        out.append((name, slice(start, start + n)))
        start += n
    return out


def participation(J: Tensor, dim_y: int = 2) -> Tensor:
    """Per parameter, the participation ratio (Σ_n s_n)² / (N Σ_n s_n²) of s_n = |S*_i(x_n)|² over the N probes:
    1 when the parameter moves F equally at every probe, 1/N when at one probe only; NaN for a dead column."""
    if not isinstance(J, Tensor) or J.ndim != 2 or J.shape[0] % dim_y:
        raise ValueError(f"J must be a 2-D tensor with rows a multiple of dim_y={dim_y}; got {getattr(J, 'shape', J)}")
    n = J.shape[0] // dim_y
    first, second = torch.zeros(J.shape[1], dtype=torch.float64), torch.zeros(J.shape[1], dtype=torch.float64)
    for block in J.split(512 * dim_y):  # a (rows, p) block at a time, as lib.kernels.cpu_linalg.column_norms
        s = block.reshape(-1, dim_y, J.shape[1]).square().sum(1)
        first += s.sum(0)
        second += s.square().sum(0)
    return torch.where(second > 0, first.square() / (n * second.clamp_min(1e-300)), torch.nan)


def sensitivity_summary(J: Tensor, *, dim_y: int = 2, pointwise: bool = True) -> dict:
    """S_i by layer: {"S": (p,), "median": {layer: median S_i}, "share_S2": {layer: share of Σ S_i²}} and, with
    ``pointwise``, {"participation": {layer: median participation ratio over live parameters}}."""
    S = aggregate_sensitivity(J, dim_y).numpy()
    blocks = v_layers()
    out = {"S": S, "median": {n: float(np.median(S[s])) for n, s in blocks}, "share_S2": block_shares(S**2, blocks)}
    if pointwise:
        pr = participation(J, dim_y).numpy()
        out["participation"] = {n: float(np.nanmedian(pr[s])) for n, s in blocks}
    return out


def orthogonality_bound(angle_c_deg: float, angle_b_deg: float) -> float:
    """The largest |cos(Pη, Pδ)| for orthogonal targets (eq. 22) at principal angles a_c, a_b from the retained
    range: tan a_c tan a_b, from ⟨Pη, Pδ⟩ = ⟨η, δ⟩ − ⟨(I−P)η, (I−P)δ⟩. It is
    :func:`lib.paper_b.relations.realised_cosine_bound` (the annulus's) with relative residuals r = sin a and no tail
    (a min-norm lift realises P g exactly)."""
    a, b = math.radians(angle_c_deg), math.radians(angle_b_deg)
    return realised_cosine_bound(math.sin(a), math.sin(b), 0.0, 0.0)


@dataclass
class Snapshot:
    """c*, b* at one θ₂ in both gauges: coefficients, layer shares, relations, the orthogonality bound."""

    coefs: dict[tuple[str, str], np.ndarray]  # (kind, gauge) -> c (p,)
    col_norms: np.ndarray  # ‖J_{:,i}‖
    shares: dict[tuple[str, str, str], dict[str, float]]  # (kind, gauge, "coef2" | "contribution") -> layer shares
    relation: dict[str, dict[str, float]]  # gauge -> {"cos_param", "cos_function"}
    bound: float  # orthogonality_bound of the min-norm lifts
    rank: int
    cos_targets: float  # cos(η, δ) on the probe set (eq. 22 makes it zero on a rotation-invariant one)

    def contribution(self, kind: str, gauge: str) -> np.ndarray:
        """|c_i|·‖J_{:,i}‖ per parameter."""
        return np.abs(self.coefs[kind, gauge]) * self.col_norms


def snapshot(J: Tensor, svd: TruncatedSVD, targets: dict[str, Tensor], *, tau: float) -> Snapshot:
    """Lift both targets ("c": X F, "b": −δ) through one truncated SVD of J in both gauges, and attribute them."""
    if set(targets) != {"c", "b"}:
        raise ValueError(f"targets must have the keys 'c' and 'b'; got {sorted(targets)}")
    lifts = {(k, g): lift(J, t, tau=tau, gauge=g, svd=svd) for k, t in targets.items() for g in GAUGES}
    col = svd.col_norms.numpy()
    blocks = v_layers()
    coefs = {key: res.coef.numpy() for key, res in lifts.items()}
    shares = {}
    for (k, g), c in coefs.items():
        shares[k, g, "coef2"] = block_shares(c**2, blocks)
        shares[k, g, "contribution"] = block_shares(np.abs(c) * col, blocks)
    relation = {g: direction_relation(J, lifts["c", g].coef, lifts["b", g].coef) for g in GAUGES}
    c_mn, b_mn = lifts["c", "minnorm"], lifts["b", "minnorm"]
    cos_targets = cosine(targets["c"], targets["b"])
    bound = orthogonality_bound(c_mn.principal_angle_deg, b_mn.principal_angle_deg)
    return Snapshot(coefs, col, shares, relation, bound, int(c_mn.rank), float(cos_targets))


def dominant_layer(shares: dict[str, float]) -> str:
    """The layer with the largest share."""
    return max(shares, key=shares.get)
