"""Beyond the papers: the hypotheses the chapter ``two_lenses`` tests, and their verdicts.

Neither paper states these, so they are not paper claims (``lib.core.claims`` and the scorecard hold A's and B's);
each is decided by a computed verdict ("holds" or "fails") that the chapter glues as ``verdict_<id>``, and
``EXPECTED`` records the verdict the book expects, with its reason, for ``tests/results/test_two_lenses.py``.
"""

from __future__ import annotations

HYPOTHESES: dict[str, str] = {
    "L2_gn_ranks": (
        "the Gauss–Newton ΔFVU from one Jacobian ranks every task's ablations (Spearman ρ ≥ the line "
        "ranks_ablations of lib.core.lines)"
    ),
    "L3_null_predicts_safe": (
        "the fraction of an ablation's ‖δ_S‖² in J's near-null space (σ < τσ₁) predicts a safe ablation (ROC AUC) "
        "better than which blocks it removes and better than how much mass it removes"
    ),
    "L5_flow_sheds_more": (
        "following the near-null space of J (re-solved each step) sheds more Schur mass within ε = the safe tolerance "
        "than the best safe block ablation, in the first solution of every task"
    ),
}

#: The verdict the book expects for each hypothesis, with its reason.
EXPECTED: dict[str, tuple[str, str]] = {
    "L2_gn_ranks": (
        "fails",
        "ρ is about 0.5–0.6 in sine generation, context-dependent integration and the copy task and just short of the "
        "threshold in the flip-flop: whole-block removals leave the linear regime (the prediction is off by more than "
        "a factor two for most damaging ablations)",
    ),
    "L3_null_predicts_safe": (
        "fails",
        "the near-null fraction is larger for unsafe ablations (AUC below one half); an untested reading: σ₁ is set "
        "by the most sensitive couplings, and whole blocks of weaker ones fall below τσ₁ yet do damage when removed "
        "at once",
    ),
    "L5_flow_sheds_more": ("holds", ""),
}
