"""Paper B's Mexican-hat claims (its §3.2, App. C.1 and the authors' notes §9), judged on the chapter's values."""

from __future__ import annotations

import numpy as np

from lib.core.claims import Claim
from lib.core.lines import line
from lib.core.verdicts import matches_printed
from lib.paper_b.mexican_hat.walks import WalkSet
from lib.papers import symmetry_lifting


def mexican_hat_claims(values: dict, walks: WalkSet, link) -> list[Claim]:
    """Every claim the chapter can judge. ``values`` holds the glued numbers (``lie_derivative_true_force``,
    ``cos_delta_eta_polar``, ``cos_delta_eta_square``, ``val_mse``, ``equivariance_error_73deg``, ``rank0``);
    ``link(title)`` gives the address of the chapter's section titled ``title``."""
    notes = symmetry_lifting.HAMILTONIAN_NOTES
    q_val, q_rank, q_sq = notes["val_mse"], notes["rank"], notes["cos_square"]
    eq_lo, eq_hi = notes["equivariance_error_plain"].value, notes["equivariance_error_augmented"].value
    walks_link = link("Walking along $c^\\star$ and $b^\\star$: resolved and fixed")
    equi_link = link("How equivariant is the learned force?")
    lie, cos_polar, cos_square = values["lie_derivative_true_force"], values["cos_delta_eta_polar"], values[
        "cos_delta_eta_square"]  # fmt: skip
    val_mse, eq73, rank = values["val_mse"], values["equivariance_error_73deg"], values["rank0"]
    ratios, exact = walks.defect_ratios(), walks.exact_distances()
    b_end, t_end = ratios["b", "resolved"], float(walks.times[-1])
    drift_end = float(max(walks.drift("c")[-1], walks.drift("b")[-1]))
    return [
        Claim("B_C1_true_force", "B", "App. C.1", "the true force is rotation-equivariant (zero Lie derivative)", "0",
              lie, f"largest entry ≤ {line('round_off'):g}", holds=bool(lie <= line("round_off")), group="identity",
              link=link("The true force is rotation-equivariant")),
        Claim("B_c3_orthogonal", "B", "§3, eq. 22", "contribution 3: the defect δ and the orbit direction are "
              "orthogonal (on a rotation-invariant probe set)", notes["cos_polar"].text, cos_polar,
              f"|cos(δ, XF)| ≤ {line('orthogonal_cos'):g} on the polar grid",
              holds=bool(abs(cos_polar) <= line("orthogonal_cos")), group="identity", link=equi_link),
        Claim("B_eq22_square", "B", q_sq.section, "on a square lattice δ and the orbit direction are not orthogonal",
              q_sq.text, cos_square, f"matches: within the printed precision; in kind: |cos| ≥ {line('nonzero_cos'):g}",
              matches=matches_printed(cos_square, q_sq.value, q_sq.half_unit),
              holds=bool(abs(cos_square) >= line("nonzero_cos")),
              link=equi_link),
        Claim("B93_val_mse", "B", q_val.section, "validation trajectory MSE of the trained ASRNN", q_val.text, val_mse,
              "matches: within the printed precision; in kind: at most the notes' value",
              matches=matches_printed(val_mse, q_val.value, q_val.half_unit), holds=bool(val_mse <= q_val.value),
              link=link("Data and training")),
        Claim("B93_equivariance", "B", notes["equivariance_error_plain"].section, "the learned force is nearly "
              "equivariant: relative error of a finite rotation", (notes["equivariance_error_plain"].text,
              notes["equivariance_error_augmented"].text), eq73, "matches: inside the notes' range; in kind: within "
              f"a factor {line('value_kind_factor'):g} of it", matches=bool(eq_lo <= eq73 <= eq_hi),
              holds=bool(eq_lo / line("value_kind_factor") <= eq73 <= line("value_kind_factor") * eq_hi),
              link=equi_link),
        Claim("B96_rank", "B", q_rank.section, "the resolved tangent rank at τ = 1e-3", q_rank.text, rank,
              "equal to the notes' rank", matches=bool(rank == q_rank.value),
              link=link("Lifting the rotation: two gauges")),
        Claim("B95_resolved_c_rotates", "B", "§3.2, Fig. 3", "resolved c*: the potential rotates, the defect is kept",
              "shifts", ratios["c", "resolved"], f"defect ratio within {line('defect_kept'):g} of 1 and the "
              "resolved walk closer to the exact rotation than the fixed one",
              holds=bool(abs(ratios["c", "resolved"] - 1) <= line("defect_kept")
              and exact["c", "resolved"][-1] < exact["c", "fixed"][-1]), link=walks_link),
        Claim("B95_resolved_b_reduces", "B", "§3.2, Fig. 3", "resolved b*: the defect shrinks (more equivariant)",
              "reduces", b_end, f"defect ratio below 1 and within {line('flow_follows'):g} of e^(−t)",
              holds=bool(b_end < 1 and abs(b_end - float(np.exp(-t_end))) <= line("flow_follows")), link=walks_link),
        Claim("B95_fixed_drifts", "B", "§3.2, Fig. 4", "fixed walks match the resolved ones for the first steps, "
              "then drift accumulates", "drift accumulates", drift_end, "fixed–resolved gap larger at the end than "
              "after the first steps, and each fixed walk farther from the exact flow at the end than its resolved "
              "twin", holds=bool(walks.drifts_grow() and walks.fixed_farther()), link=walks_link),
    ]  # fmt: skip


def lift_relation_claim(values: dict, link: str) -> Claim:
    """Contribution 3 for the lifted directions (extends ``B_c3_orthogonal``, which is about the targets δ and X F):
    the moves c* and b* realise, J c* and J b*, are orthogonal up to what the truncation leaves out. ``values``
    holds ``cos_cb_function_plain`` (at θ₀), ``cos_cb_bound`` and ``cos_cb_within_bound_walks`` (every snapshot of the
    resolved walks within its own bound)."""
    ours, bound = values["cos_cb_function_plain"], values["cos_cb_bound"]
    return Claim("B_c3_orthogonal_lifts", "B", "§1 (contribution 3), eq. 22", "contribution 3: c* (along the orbit) "
                 "and b* (towards the equivariant subspace) are orthogonal directions: the moves J c*, J b* they "
                 "realise", "orthogonal", ours, "|cos(Jc*, Jb*)| of the min-norm lifts ≤ tan∠(η, Pη)·tan∠(δ, Pδ), what "
                 "the lifts leave out allows with the targets taken as orthogonal (eq. 22), at θ₀ and at every "
                 "snapshot of the resolved walks",
                 holds=bool(abs(ours) <= bound * (1 + 1e-6) and values["cos_cb_within_bound_walks"]),
                 link=link)  # fmt: skip


def claims_table(claims: list[Claim]):
    """Statement, the paper's (or notes') value, ours, verdict."""
    from lib.core.tables import Table

    return Table(
        ("claim", "paper / notes", "ours", "verdict"),
        tuple((c.statement, c.paper_value, c.ours, c.verdict) for c in claims),
        ".2e",
        caption="Paper B's Mexican-hat claims, ours beside the paper's, and the computed verdict",
    )
