"""The sketch gated against an exact route during the resolved walks (issue 16 item 7), with the c*/b* snapshots
taken at the same re-solves (items 1–2).

``sketched_svd`` keeps the singular values σ_k ≥ τσ₁ of a randomized range finder. At every ``every``-th re-solve of
a walk (and at its last stop) :class:`SketchGate` computes the exact spectrum of the same J from its Gram matrix JᵀJ
(``lib.kernels.cpu_linalg.tn_gram`` and LAPACK's eigvalsh on the full 20,160 × 2,273 J, no row subsample) and calls a
*flicker* when the two retained ranks differ, or when a singular value within ``band``·τσ₁ of the cutoff lies on the
other side of it in the sketch than in the exact spectrum. A flicker switches that re-solve to the exact Gram route
(``lift(…, method="gram")``) and is counted; otherwise the re-solve is exactly ``MexicanHatProblem.solve``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor

from lib.core import params
from lib.core.lines import line
from lib.kernels.cpu_linalg import tn_gram
from lib.paper_b.lifting import lift, retained_rank
from lib.paper_b.lifting_problem import check_kind
from lib.paper_b.mexican_hat.attribution import Snapshot, snapshot
from lib.paper_b.mexican_hat.lift import Solve, sketched_svd
from lib.paper_b.mexican_hat.probes import defect_field, generator_field
from lib.paper_b.mexican_hat.problem import MexicanHatProblem


def exact_singular_values(J: Tensor) -> Tensor:
    """All singular values of a tall J, descending, from the eigenvalues of JᵀJ (accurate to about 1e-8·σ₁)."""
    w = np.linalg.eigvalsh(tn_gram(J).numpy())
    return torch.from_numpy(np.sqrt(np.clip(w[::-1], 0, None)).copy())


def compare_spectra(sketch: Tensor, exact: Tensor, *, tau: float, band: float) -> dict:
    """Ranks kept by τ in the sketched and the exact spectrum, the flicker verdict, the exact margin of the nearest
    singular value to the cutoff (|σ_k/σ₁ − τ|/τ), and the sketch's largest relative error on the values it keeps."""
    band = params.real("band", band, min=0.0, min_open=True)
    r_s, r_e = retained_rank(sketch, tau), retained_rank(exact, tau)
    k = min(len(sketch), len(exact))
    rel_s, rel_e = (sketch[:k] / sketch[0]).numpy(), (exact[:k] / exact[0]).numpy()
    near = np.abs(rel_e - tau) <= band * tau
    crossed = bool(np.any(near & ((rel_s >= tau) != (rel_e >= tau))))
    kept = max(min(r_s, r_e), 1)
    err = float(((sketch[:kept] - exact[:kept]).abs() / exact[:kept]).max())
    margin = float(np.min(np.abs(rel_e - tau)) / tau)
    return {"rank_sketch": r_s, "rank_exact": r_e, "flicker": bool(r_s != r_e or crossed), "margin": margin,
            "sketch_error": err}  # fmt: skip


@dataclass
class SketchGate:
    """The gate's settings, its checks (one dict per checked re-solve) and the snapshots taken there."""

    theta0: Tensor
    every: int
    steps: int
    band: float = line("sketch_gate_band")
    snapshot_every: int = 0  # 0: snapshots where the gate checks; k: also at every k-th stop
    known: dict[bytes, Tensor] = field(default_factory=dict)  # θ bytes -> exact spectrum (seed: one computed elsewhere)
    checks: list[dict] = field(default_factory=list)
    snapshots: dict[tuple[str, int], Snapshot] = field(default_factory=dict)  # (walked kind, stop) -> snapshot
    _index: dict[str, int] = field(default_factory=dict)
    _memo: dict[bytes, Snapshot] = field(default_factory=dict)

    def __post_init__(self):
        self.every = params.integer("every", self.every, min=1)
        self.steps = params.integer("steps", self.steps, min=0)
        self.band = params.real("band", self.band, min=0.0, min_open=True)
        self.snapshot_every = params.integer("snapshot_every", self.snapshot_every, min=0)

    def stop(self, theta: Tensor, kind: str) -> tuple[int, bool, bool]:
        """(the stop index of this re-solve in its walk, 0 at θ₀; whether the gate checks it; whether it is
        snapshot)."""
        k = 0 if torch.equal(theta, self.theta0) else self._index.get(kind, 0) + 1
        self._index[kind] = k
        check = k % self.every == 0 or k == self.steps
        return k, check, check or bool(self.snapshot_every and k % self.snapshot_every == 0)

    def distinct(self) -> list[dict]:
        """The checks, each θ once (θ₀ starts several walks)."""
        return list({c["key"]: c for c in self.checks}.values())

    def counts(self) -> dict:
        """Checked re-solves (each θ once), flickers, the smallest margin and the largest sketch error seen."""
        distinct = self.distinct()
        return {"gate_checks": len(distinct), "gate_flickers": sum(c["flicker"] for c in distinct),
                "gate_min_margin": min(c["margin"] for c in distinct),
                "gate_max_sketch_error": max(c["sketch_error"] for c in distinct)}  # fmt: skip


class GatedProblem(MexicanHatProblem):
    """``MexicanHatProblem`` whose re-solves are gated while ``gate`` is set (``start_gate``/``stop_gate``)."""

    gate: SketchGate | None = None

    def start_gate(self, theta0: Tensor, *, every: int, steps: int, exact0: Tensor | None = None, **kw) -> SketchGate:
        """Gate every ``every``-th re-solve (and stop ``steps``) of the walks that start at θ₀ from now on;
        ``exact0``: J₀'s exact spectrum if already computed; ``SketchGate``'s other settings as keywords."""
        known = {} if exact0 is None else {theta0.numpy().tobytes(): exact0}
        self.gate = SketchGate(theta0.clone(), every, steps, known=known, **kw)
        return self.gate

    def stop_gate(self) -> SketchGate:
        """Stop gating; returns the gate with its checks."""
        gate, self.gate = self.gate, None
        return gate

    def targets(self, theta: Tensor) -> dict[str, Tensor]:
        """X F and −δ at θ, flattened to J's rows (as ``pooled_lift`` computes them)."""
        return {"c": generator_field(theta, self.probes).reshape(-1),
                "b": (-defect_field(theta, self.probes, self.m)).reshape(-1)}  # fmt: skip

    def solve(self, theta: Tensor, kind: str, *, gauge: str = "minnorm") -> Solve:
        """``MexicanHatProblem.solve``; at a gated stop also the exact spectrum, the flicker check and a snapshot
        (their time is not counted in ``seconds``)."""
        gate = self.gate
        stop, checked, snapped = (0, False, False) if gate is None else gate.stop(theta, check_kind(kind))
        if not snapped:
            return super().solve(theta, kind, gauge=gauge)
        t0 = time.perf_counter()
        J = self.jacobian(theta)
        targets = self.targets(theta)
        svd = sketched_svd(J, tau=self.tau, rank=self.sketch_rank)
        t_gate = time.perf_counter()
        key = theta.numpy().tobytes()
        if key not in gate._memo:
            gate._memo[key] = snapshot(J, svd, targets, tau=self.tau)
        gate.snapshots[kind, stop] = gate._memo[key]
        check = {"flicker": False}
        if checked:
            if key not in gate.known:
                gate.known[key] = exact_singular_values(J)
            check = compare_spectra(svd.singular_values, gate.known[key], tau=self.tau, band=gate.band)
            k = len(svd.singular_values)
            spectra = {"sketch_sv": svd.singular_values.numpy(), "exact_sv": gate.known[key][:k].numpy()}
            gate.checks.append({**check, **spectra, "key": key, "kind": kind, "stop": stop})
        t_gate = time.perf_counter() - t_gate
        if check["flicker"]:
            res = lift(J, targets[kind], tau=self.tau, gauge=gauge, method="gram")
        else:
            res = lift(J, targets[kind], tau=self.tau, gauge=gauge, svd=svd)
        return Solve(res, time.perf_counter() - t0 - t_gate, targets[kind])
