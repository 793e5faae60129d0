"""The statistics and verdict rules of the open-questions chapter."""

from __future__ import annotations

import numpy as np
import pytest

from lib.paper_a import open_questions as oq
from lib.paper_a.ablation import SolutionAblations
from lib.paper_a.confound import AblationRecord


def record(ablation, dfvu, mass=0.2, frac=0.5, inside=0.0, outside=0.0, iso=0.0, seed=0):
    fr = dict.fromkeys(("readout", "pc90", "pc95", "pc99", "manifold", "union"), frac)
    draws = {k: np.full(4, iso) for k in ("isotropic", "schur_pattern", "subspace")}
    ev = SolutionAblations(
        seed=seed, n_R=0, fvu_full=0.0, fvu={ablation: dfvu}, dfvu={ablation: dfvu}, mass={ablation: mass}
    )
    return AblationRecord("t", ablation, ev, dfvu, fr, fr, 8, 64, 1.0, frac**0.5, frac, 1 - frac,
                          1.0, inside, outside, draws)  # fmt: skip


def test_adjusted_r2_of_an_exact_fit_is_one_and_of_noise_is_near_zero():
    x = np.arange(10.0)
    assert oq.adjusted_r2(3 * x + 1, x) == pytest.approx(1.0)
    rng = np.random.default_rng(0)
    assert oq.adjusted_r2(rng.standard_normal(2000), rng.standard_normal(2000)) < 0.01
    X = oq.one_hot(["a", "b", "c", "a"])
    assert X.shape == (4, 2) and X.sum() == 2
    assert np.isnan(oq.adjusted_r2([1.0, 2.0], [0.0, 1.0]))
    assert oq.spearman([1, 2, 3, 4], [2, 4, 8, 16]) == pytest.approx(1.0)


def test_verdict_rules():
    assert oq.confound_verdict(True, True, "none to test") == "explains"
    assert oq.confound_verdict(True, True, "do not avoid") == "partly explains"
    assert oq.confound_verdict(False, False, "do not avoid") == "does not explain"
    # an adjusted R² at or below zero explains nothing, whatever the other criteria say
    assert oq.confound_verdict(False, True, "avoid", r2_projection=-0.05) == "does not explain"
    assert oq.confound_verdict(False, True, "avoid", r2_projection=0.3) == "partly explains"
    assert not oq.regression_better(-0.1, -0.5)  # better than the identity, but explains nothing
    with pytest.raises(ValueError, match="avoid='maybe'"):
        oq.confound_verdict(True, True, "maybe")
    assert oq.distance_verdict(1, 0) == "holds in part"
    assert oq.distance_verdict(2, 3) == "holds"
    assert oq.distance_verdict(0, 0) == "is not shown"  # an existence statement: absence is never shown
    assert oq.basis_verdict(9, 10) == "holds" and oq.basis_verdict(1, 10) == "does not hold"
    assert oq.basis_verdict(6, 10) == "undecided at n = 10"  # 6 of 10: the Wilson interval straddles one half
    assert oq.avoidance(0.5, 0) == "none to test" and oq.avoidance(0.5, 2) == "avoid"
    assert not oq.regression_better(float("nan"), 0.1) and oq.regression_better(0.2, float("nan"))


def test_summaries_count_what_they_say():
    recs = [
        record("RR", 0.001, mass=0.3, frac=0.05, iso=0.5),  # harmless, large mass, avoids U, random draws hurt
        record("CR", 0.8, frac=0.9, inside=0.7, outside=0.001, iso=0.001),  # damaging through U only
        record("CC", 0.5, frac=0.8, inside=0.01, outside=0.4, iso=0.2),  # damaging from outside U
    ]
    c = oq.confound_summary(recs, tolerance=0.01, mass_threshold=0.1)
    assert c["n_damaging"] == 2 and c["frac_outside_harmless"] == 0.5 and c["control_inside"]
    assert c["n_harmless_mass"] == 1 and c["median_enrichment_harmless"] == pytest.approx(0.05 / (8 / 64))
    assert c["harmless_avoid"] == "avoid"
    d = oq.distance_summary(recs, tolerance=0.01)
    assert (d["n_keep"], d["n_alter"], d["verdict"]) == (1, 1, "holds")
    s = oq.stabilizer_summary([*recs, record("RR", 0.0, mass=0.0, seed=1)], 0.01, [0.1, 0.5])
    assert s["eps_star_RR"] == 0.001 and s["n_candidates_0"] == 1 and s["n_candidates_1"] == 0
    assert s["n_empty_RR"] == 1 and s["n_stabilizer_RR"] == 1  # an empty block is not counted as a stabilizer
