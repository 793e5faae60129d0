"""The Mexican hat's lifts judged on probes they were not fitted to and against the null (``lib.paper_b.evidence``).

The held-out probes are the pooled grid moved half a step in radius and angle (``symmetry.held_out_polar_grid``) at
the same α values; the null directions are X_v F = (∂F/∂q) v(q) for the random nonlinear velocity fields v of the
plane (``evidence.NullFields``); and the architecture's own lift of the rotation: V's first layer takes [q, α], so
W₁ ↦ W₁(I + εΩ̃) with Ω̃ = Ω ⊕ 0 is V(R_ε q) to first order, and the force −∇_q V then becomes R_ε⁻¹F(R_ε q), whose
derivative is X F = (∂F/∂q)(Ωq) − ΩF: the direction dW₁ = W₁Ω̃ (every other parameter still) realises X F.
"""

from __future__ import annotations

import torch
from torch import Tensor
from torch.func import jvp

from lib.paper_b import evidence, lifting
from lib.paper_b.mexican_hat.model import v_params_of
from lib.paper_b.mexican_hat.probes import (
    Probes,
    defect_field,
    force_jacobian,
    generator_field,
    pooled_probes,
    tiled_force,
)
from lib.paper_b.symmetry import OMEGA, held_out_polar_grid


def held_out_pooled(probes: Probes) -> Probes:
    """The pooled probes' grid (polar 15 × 32 in |q| ≤ 1) moved half a step in radius and angle, at the same α."""
    return pooled_probes(probes.alphas, held_out_polar_grid())


def first_layer_rotation(theta: Tensor) -> Tensor:
    """dθ₂ with dW₁ = W₁(Ω ⊕ 0) and every other parameter 0 (module docstring)."""
    W1 = v_params_of(theta)[0]
    generator = torch.zeros(W1.shape[1], W1.shape[1], dtype=torch.float64)
    generator[:2, :2] = OMEGA
    direction = torch.zeros_like(theta)
    direction[: W1.numel()] = (W1 @ generator).reshape(-1)
    return direction


def _null(theta: Tensor, probes: Probes, fields: evidence.NullFields) -> Tensor:
    F = tiled_force(theta, probes)
    return torch.stack([jvp(F, (probes.q,), (v,))[1].reshape(-1) for v in fields(probes.q)], 1)


def pooled_evidence(theta0: Tensor, probes: Probes, *, tau: float, m: int = 64) -> dict[str, evidence.Evidence]:
    """c*'s and b*'s minimum-norm lifts at θ₀ (the pooled J's Gram route, as the τ profiles) judged held out and
    against the null: {"c", "b"} → Evidence."""
    held = held_out_pooled(probes)
    J = force_jacobian(theta0, probes)
    svd = lifting.truncated_svd(J, tau=tau, method="gram")
    J_held = force_jacobian(theta0, held)
    fields = evidence.NullFields(probes.q)
    null_fit, null_held = _null(theta0, probes, fields), _null(theta0, held, fields)
    targets = {"c": (generator_field(theta0, probes), generator_field(theta0, held)),
               "b": (-defect_field(theta0, probes, m), -defect_field(theta0, held, m))}  # fmt: skip
    out = {}
    for kind, (eta, eta_held) in targets.items():
        eta = eta.reshape(-1)
        lift = lifting.lift(J, eta, tau=tau, gauge="minnorm", svd=svd)
        out[kind] = evidence.judge(
            svd=svd, op=lifting.DenseJacobian(J), eta=eta, coef_at_tau=lift.coef, image=lambda C: J_held @ C,
            held_eta=eta_held.reshape(-1), null_fit=null_fit, null_held=null_held, fit_case=lift.profile.case,
            tau=tau, probes_fit=probes.q.shape[0], probes_held=held.q.shape[0],
            held_note="the pooled grid moved half a step in radius and angle, at the same α",
            architecture=("V's first layer W₁(Ω ⊕ 0)", first_layer_rotation(theta0)) if kind == "c" else None,
        )  # fmt: skip
    return out


def pooled_values(judged: dict[str, evidence.Evidence]) -> dict:
    """The chapter's glued values of :func:`pooled_evidence` (``mh_evidence_*``)."""
    out = {}
    for kind, ev in judged.items():
        out.update({f"mh_evidence_{kind}_words": evidence.CASE_WORDS[ev.case], f"mh_evidence_{kind}_case": ev.case,
                    f"mh_evidence_{kind}_held": ev.held_at_tau, f"mh_evidence_{kind}_null": float(ev.null_at_tau.min()),
                    f"mh_evidence_{kind}_deep": ev.held_deep,
                    f"mh_evidence_{kind}_null_deep": float(ev.null_deep.min())})  # fmt: skip
    out.update(mh_evidence_arch=judged["c"].held_architecture, mh_evidence_null_size=int(judged["c"].null_at_tau.size))
    return out


def pooled_evidence_table(judged: dict[str, evidence.Evidence]):
    """The two lifts judged held out and against the null, as a table."""
    return evidence.evidence_table({"XF (c*)": judged["c"], "−δ (b*)": judged["b"]})
