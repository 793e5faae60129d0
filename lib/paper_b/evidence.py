"""Whether a lift is evidence: judged on probes it was not fitted to, against a null, exact at any size (issue 59).

A lift c of a function-space direction η through the Jacobian J of M rows (probes × outputs) says nothing about the
function when J has full row rank: every target then lifts exactly on the probes, through J's smallest singular
values. What separates a parameter direction that realises η (a symmetry's lift) from an interpolation is what it
does at inputs it was not fitted to. So every lift is judged by three measurements:

- **held out**: c, fitted on the probes x, is applied on a second set x' drawn the same way, and its relative residual
  ‖J'c − η'‖/‖η'‖ there is the evidence (J'c by one forward-mode product per direction: J' is never formed);
- **the lifts judged**: the lift at the paper's τ (the caller's c*, in its gauge); the minimum-norm lift at the cutoff
  where the fit's residual is lowest (the *deepest*); where the decomposition does not resolve round-off (the Gram
  route, τ ≥ 1e-5), that lift refined by conjugate gradients on J Jᵀ y = η, c = Jᵀy, preconditioned by the Gram's
  own eigendecomposition, each product with J and Jᵀ exact (:func:`certify`: it stops when the residual it computes
  with one more product reaches round-off, or stalls); and, for a linear action, the architecture's own lift
  (:func:`architecture_lift`: W₁A on a first linear layer for x ↦ x + εAx, −BW_L, −Bb_L on a last one for y ↦ y + εBy);
- **a null**: :data:`NULL_SIZE` directions that are no symmetry, of the kind of X f: X_v f = (∂f/∂x) v for random
  smooth nonlinear velocity fields v on the input (:class:`NullFields`: sums of random sines with their affine part
  removed over the probes, since an affine field lifts exactly through any first linear layer), lifted by the same
  cutoffs and judged on the same held-out probes. A direction is *below the null* when its held-out residual is below
  every null direction's (quantile 0 of :data:`NULL_SIZE`, a one-sided test at level 1/(K + 1)).

The case, by a rule fixed before any network's numbers (:func:`case_of`):

1. **exact**: a lift judged reaches round-off (``lines.round_off``) on its probes *and* held out, below the null;
2. **undecided at this resolution**: not exact; the decomposition resolves cutoffs only down to τ_min above round-off,
   the fit's residual is still falling at τ_min and the certification did not reach round-off, while the deepest lift
   is below the null held out: the lift may be exact below what the route resolves (never called approximate);
3. **approximate**: the lift at the paper's τ is within sin 10° (the authors' representation threshold) held out,
   below the null;
4. **interpolation**: the fit is exact or approximate on its probes but not held out (or no better than the null):
   the probes do not determine the lift;
5. **none**: the direction does not lift, even on its probes.

A symmetry that does no better than the null is never called a lift. The result also states the rows against J's
numerical rank at the decomposition's resolution: at full row rank every target lifts on the probes, and only the
held-out residual and the null speak.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import torch
from torch import Tensor

from lib.core.lines import line
from lib.core.tables import Table
from lib.paper_b import cutoff_profile
from lib.paper_b.certified_lift import Certification, certify, minnorm_lifts
from lib.paper_b.cutoff_profile import CASE_WORDS as FIT_WORDS
from lib.paper_b.cutoff_profile import EPS, REPRESENTED, REPRESENTED_DEG

F64 = torch.float64
#: An exact lift's relative residual, on its probes and held out: float64 round-off (the book's line for identities).
EXACT = line("round_off")
NULL_SIZE = 20  # K null directions: below all of them is a one-sided test at level 1/(K + 1) ≈ 0.048
NULL_FEATURES = 16  # random sines per null field
NULL_SEED = 59  # the null's draws (torch.Generator): the same directions on every machine
CASES = ("exact", "undecided", "approximate", "interpolation", "none")
CASE_WORDS = {"exact": "lifts exactly, held out", "undecided": "is undecided at this resolution",
              "approximate": "lifts approximately, held out",
              "interpolation": "fits its probes only (not held out, or no better than the null)",
              "none": "does not lift"}  # fmt: skip


# --------------------------------------------------------------------------------------------------------------
# the null: random smooth nonlinear velocity fields on the input


class NullFields:
    """K random smooth nonlinear velocity fields on R^d, v_k(x) = s·(sin(x̃ W_kᵀ + b_k) A_k − [x, 1] L_k), with
    x̃ = (x − μ)/s the probes' centred coordinates (μ their mean, s their root-mean-square spread), W_k, A_k standard
    normal (A_k/√h), b_k uniform on [0, 2π), and L_k the least-squares affine fit of the sines over ``sample`` (numpy's
    SVD-based lstsq), removed so that no null field is an affine map (which a first linear layer always realises).
    Drawn once from ``seed``: the same fields on the fit and the held-out probes, on every machine."""

    def __init__(self, sample: Tensor, k: int = NULL_SIZE, *, features: int = NULL_FEATURES, seed: int = NULL_SEED):
        x = sample.detach().to(F64).reshape(sample.shape[0], -1)
        n, d = x.shape
        g = torch.Generator().manual_seed(seed)
        self.mean = x.mean(0)
        spread = float((x - self.mean).square().sum(1).mean().sqrt()) if n > 1 else 1.0
        self.scale = spread if spread > 0 else 1.0
        self.W = torch.randn(k, features, d, generator=g, dtype=F64)
        self.b = 2 * math.pi * torch.rand(k, features, generator=g, dtype=F64)
        self.A = torch.randn(k, features, d, generator=g, dtype=F64) / math.sqrt(features)
        self.k, self.d = k, d
        X1 = torch.cat([x, torch.ones(n, 1, dtype=F64)], 1).numpy()
        sines = self._sines(x)  # (k, n, d)
        self.L = torch.stack([torch.from_numpy(np.linalg.lstsq(X1, s.numpy(), rcond=None)[0]) for s in sines])

    def _sines(self, x: Tensor) -> Tensor:
        xt = (x - self.mean) / self.scale
        return torch.sin(torch.einsum("nd,khd->knh", xt, self.W) + self.b[:, None, :]) @ self.A

    def __call__(self, x: Tensor) -> Tensor:
        """The K fields at points x (N, d): (K, N, d)."""
        x = x.to(F64)
        X1 = torch.cat([x, torch.ones(x.shape[0], 1, dtype=F64)], 1)
        return self.scale * (self._sines(x) - X1 @ self.L)


# --------------------------------------------------------------------------------------------------------------
# the evidence


@dataclass(frozen=True)
class Evidence:
    """A lift judged held out and against the null (module docstring). Residuals are relative; ``*_held`` on the
    held-out probes, ``*_fit`` on the probes the lift was fitted to; ``null_*`` the K null directions' held-out
    residuals (numpy arrays) at the paper's τ and at the deepest cutoff."""

    case: str
    rows: int  # M = probes × outputs
    rank: int  # J's numerical rank at the decomposition's resolution
    rank_at_tau: int
    resolution: float
    probes_fit: int
    probes_held: int
    held_note: str  # where the held-out probes come from
    tau: float
    fit_at_tau: float
    held_at_tau: float
    deep_tau: float  # the deepest cutoff: where the fit's attainable residual is lowest
    fit_deep: float
    held_deep: float
    null_at_tau: np.ndarray
    null_deep: np.ndarray
    certified: Certification | None = None
    held_certified: float = math.nan
    architecture: str = ""  # which layers the architecture's own lift moves ("" where there is none)
    fit_architecture: float = math.nan
    held_architecture: float = math.nan
    still_falling: bool = False  # the fit's residual is still falling at the resolution's last cutoff
    fit_case: str = ""  # the τ profile's case on the probes the lift was fitted to (``cutoff_profile.CASES``)

    @property
    def full_row_rank(self) -> bool:
        """J's numerical rank equals its rows: every target lifts on these probes."""
        return self.rank >= self.rows

    @property
    def quantile_at_tau(self) -> float:
        """The share of null directions whose held-out residual at τ is at or below this lift's."""
        return quantile(self.held_at_tau, self.null_at_tau)

    @property
    def quantile_deep(self) -> float:
        """The share of null directions whose held-out residual at the deepest cutoff is at or below this lift's."""
        return quantile(self.best_exact_held, self.null_deep)

    @property
    def best_exact_held(self) -> float:
        """The lowest held-out residual among the lifts exact on their probes (else the deepest lift's)."""
        exact = [h for f, h in ((self.fit_deep, self.held_deep),
                                (self.certified.attainable if self.certified else math.nan, self.held_certified),
                                (self.fit_architecture, self.held_architecture)) if f <= EXACT]  # fmt: skip
        return min(exact) if exact else self.held_deep

    def sentence(self) -> str:
        """The case in words, with the numbers that decide it."""
        k = self.null_at_tau.size
        rows = (f"{self.rows} rows against J's numerical rank {self.rank}"
                + (" (full row rank: every target lifts on these probes)" if self.full_row_rank else ""))  # fmt: skip
        held = f"held out on {self.probes_held} probes ({self.held_note}); fitted on {self.probes_fit}, {rows}"
        at_tau = (f"at the paper's τ = {self.tau:g}: {self.held_at_tau:.2g} held out ({self.fit_at_tau:.2g} fitted), "
                  f"null quantile {self.quantile_at_tau:.2f} of {k} "
                  f"(null median {_median(self.null_at_tau):.2g})")  # fmt: skip
        deep = (f"deepest cutoff τ = {self.deep_tau:.2g}: {self.held_deep:.2g} held out ({self.fit_deep:.2g} fitted), "
                f"null median {_median(self.null_deep):.2g}")  # fmt: skip
        extra = []
        if self.architecture:
            extra.append(f"the architecture's own lift ({self.architecture}): {self.held_architecture:.2g} held out "
                         f"({self.fit_architecture:.2g} fitted)")  # fmt: skip
        if self.certified is not None:
            extra.append(f"the certified lift ({self.certified.steps} CG steps, {self.certified.stop}): "
                         f"{self.certified.attainable:.2g} fitted, {self.held_certified:.2g} held out")  # fmt: skip
        return f"{CASE_WORDS[self.case]}: " + "; ".join([at_tau, deep, *extra, held])


def quantile(value: float, null: np.ndarray) -> float:
    """The share of the null at or below ``value`` (0: below every null direction); nan without a null."""
    return float(np.mean(null <= value)) if null.size else math.nan


def _median(a: np.ndarray) -> float:
    return float(np.median(a)) if a.size else math.nan


def below_null(value: float, null: np.ndarray) -> bool:
    """The value is below every null direction's (an empty null never confirms)."""
    return bool(null.size) and bool(value < float(null.min()))


def case_of(ev: Evidence, fit_case: str) -> str:
    """The case (:data:`CASES`) by the module docstring's rule; ``fit_case`` is the τ profile's case on the probes
    (``cutoff_profile.CASES``)."""
    candidates = [(ev.fit_deep, ev.held_deep, ev.null_deep),
                  (ev.fit_architecture, ev.held_architecture, ev.null_deep)]  # fmt: skip
    if ev.certified is not None:
        candidates.append((ev.certified.attainable, ev.held_certified, ev.null_deep))
    if any(f <= EXACT and h <= EXACT and below_null(h, n) for f, h, n in candidates):
        return "exact"
    certified_short = ev.certified is None or ev.certified.attainable > EXACT
    if ev.still_falling and ev.fit_deep > EXACT and certified_short and below_null(ev.held_deep, ev.null_deep):
        return "undecided"
    if ev.held_at_tau <= REPRESENTED and below_null(ev.held_at_tau, ev.null_at_tau):
        return "approximate"
    if fit_case != "none":
        return "interpolation"
    return "none"


def _rel(a: Tensor, b: Tensor) -> float:
    nb = float(b.norm())
    return float((a - b).norm()) / nb if nb > 0 else (0.0 if float(a.norm()) == 0 else math.inf)


def judge(*, svd, op, eta: Tensor, coef_at_tau: Tensor, image: Callable[[Tensor], Tensor], held_eta: Tensor,
          null_fit: Tensor, null_held: Tensor, fit_case: str, tau: float, probes_fit: int, probes_held: int,
          held_note: str, architecture: tuple[str, Tensor] | None = None,
          certify_lift: bool = True) -> Evidence:  # fmt: skip
    """The evidence of one lift (module docstring). ``svd`` and ``op``: the decomposition and the Jacobian operator the
    lift was fitted with; ``eta`` (M,) its target; ``coef_at_tau`` the caller's lift at τ; ``image(C)`` maps
    directions (p, t) to J'C on the held-out probes (M', t); ``held_eta`` (M',) the target there; ``null_fit`` (M, K)
    and ``null_held`` (M', K) the null directions; ``fit_case`` the τ profile's case; ``architecture`` (which layers,
    the direction) the architecture's own lift where there is one; ``certify_lift`` runs :func:`certify` where the
    decomposition does not resolve round-off."""
    eta = eta.to(F64)
    prof = cutoff_profile.from_decomposition(svd, op, eta, tau)
    n = int(prof.tau.size)
    deep_row = int(np.argmin(prof.attainable)) if n else -1
    r_deep = deep_row + 1
    r_tau = int(svd.S.numel())
    resolution = prof.resolution
    exact_svd = resolution <= max(op.shape) * EPS * (1 + 1e-12)
    still_falling = bool(n) and deep_row == n - 1 and not exact_svd
    T = torch.cat([eta[:, None], null_fit.to(F64)], 1)
    deep = minnorm_lifts(svd, op, T, r_deep)
    at_tau = minnorm_lifts(svd, op, null_fit.to(F64), r_tau) if null_fit.shape[1] else None
    K = null_fit.shape[1]
    p = op.shape[1]
    cols = [coef_at_tau.to(F64)[:, None], deep if deep is not None else torch.zeros(p, K + 1, dtype=F64)]
    cols.append(at_tau if at_tau is not None else torch.zeros(p, K, dtype=F64))
    cert = certify(svd, op, eta) if certify_lift and not exact_svd and prof.floor[0] > EXACT else None
    if cert is not None:
        cols.append(cert.coef[:, None])
    if architecture is not None:
        cols.append(architecture[1].to(F64)[:, None])
    C = torch.cat(cols, 1)
    held = image(C)  # (M', columns)
    targets = torch.cat([held_eta.to(F64)[:, None], held_eta.to(F64)[:, None], null_held.to(F64),
                         null_held.to(F64)], 1)  # fmt: skip
    rel = [_rel(held[:, j], targets[:, j]) for j in range(2 + 2 * K)]
    held_at_tau, held_deep = rel[0], rel[1]
    null_deep, null_at_tau = np.array(rel[2 : 2 + K]), np.array(rel[2 + K : 2 + 2 * K])
    j = 2 + 2 * K
    held_cert = math.nan
    if cert is not None:
        held_cert, j = _rel(held[:, j], held_eta), j + 1
    arch_words, fit_arch, held_arch = "", math.nan, math.nan
    if architecture is not None:
        arch_words = architecture[0]
        fit_arch = _rel(op.matmul(architecture[1].to(F64)), eta)
        held_arch = _rel(held[:, j], held_eta)
    fit_at_tau = _rel(op.matmul(coef_at_tau.to(F64)), eta)
    ev = Evidence(
        case="none", rows=op.shape[0], rank=n, rank_at_tau=r_tau, resolution=resolution, probes_fit=probes_fit,
        probes_held=probes_held, held_note=held_note, tau=tau, fit_at_tau=fit_at_tau, held_at_tau=held_at_tau,
        deep_tau=float(prof.tau[deep_row]) if n else math.nan,
        fit_deep=float(prof.attainable[deep_row]) if n else 1.0, held_deep=held_deep, null_at_tau=null_at_tau,
        null_deep=null_deep, certified=cert, held_certified=held_cert, architecture=arch_words,
        fit_architecture=fit_arch, held_architecture=held_arch, still_falling=still_falling, fit_case=fit_case,
    )  # fmt: skip
    return _with_case(ev, case_of(ev, fit_case))


def _with_case(ev: Evidence, case: str) -> Evidence:
    return replace(ev, case=case)


def evidence_table(evidence: dict[str, Evidence], caption: str = "Each lift judged held out and against the null"):
    """One row per lift: its case; what the τ profile said on the probes alone (the case before the evidence); its
    held-out residual at τ against the null's median, with its quantile; the deepest lift held out against the null's
    median there; the architecture's own lift held out (column "the layers' own lift")."""
    rows = []
    for label, ev in evidence.items():
        rows.append((label, CASE_WORDS[ev.case], FIT_WORDS.get(ev.fit_case, "—"),
                     f"{ev.held_at_tau:.2g} vs {_median(ev.null_at_tau):.2g} (q {ev.quantile_at_tau:.2f})",
                     f"{ev.held_deep:.2g} vs {_median(ev.null_deep):.2g}",
                     f"{ev.held_architecture:.2g}" if ev.architecture else "—"))  # fmt: skip
    return Table(("lift", "case", "on its probes only", "held out at τ vs null (quantile)", "deepest cutoff vs null",
                  "the layers' own lift"), tuple(rows), caption=caption)  # fmt: skip


__all__ = ["CASES", "CASE_WORDS", "EXACT", "NULL_SIZE", "REPRESENTED", "REPRESENTED_DEG", "Certification", "Evidence",
           "NullFields", "case_of", "certify", "evidence_table", "judge", "minnorm_lifts", "quantile"]  # fmt: skip
