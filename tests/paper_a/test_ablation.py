"""lib.paper_a.ablation: the generic Schur-ablation runner on tiny networks with known answers."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lib.paper_a import ablation, rnn, schur


def _upper_triangular_net():
    # W_hh = T already in ordered real Schur form (Q = I): moduli 1.0, 0.95 | 0.5, 0.2 (n_R = 2 at α = 0.9)
    T = np.array(
        [
            [1.0, 0.3, 0.2, 0.1],
            [0.0, 0.95, 0.4, 0.0],
            [0.0, 0.0, 0.5, 0.6],
            [0.0, 0.0, 0.0, 0.2],
        ]
    )
    return {"W_xh": torch.ones(4, 1, dtype=torch.float64), "W_hh": torch.tensor(T), "W_hy": torch.ones(1, 4)}, T


def test_profile_zeroes_the_right_blocks_and_keeps_io_fixed():
    w, T = _upper_triangular_net()
    seen = {}

    def score(weights):
        assert weights["W_xh"] is not None and torch.equal(weights["W_xh"], w["W_xh"].double())
        assert torch.equal(weights["W_hy"], w["W_hy"].double()) and weights["W_hy"].dtype == torch.float64
        W = weights["W_hh"].numpy()
        seen[len(seen)] = W
        return float(np.abs(W).sum())

    res = ablation.ablation_profile(w, score, alpha=0.9)
    assert res.n_R == 2 and len(res.records) == 8
    assert [r["label"] for r in res.records][:3] == ["full", "−T_CC", "−T_RR"]
    assert res.score(()) == pytest.approx(np.abs(T).sum())
    norm_T = np.linalg.norm(T)
    assert res.removed_mass(["CC"]) == pytest.approx(0.6 / norm_T)
    assert res.removed_mass(["RR"]) == pytest.approx(0.3 / norm_T)
    assert res.removed_mass(["CR"]) == pytest.approx(np.linalg.norm([0.2, 0.1, 0.4]) / norm_T)
    assert res.score(["RR", "CR", "CC"]) == pytest.approx(1.0 + 0.95 + 0.5 + 0.2)
    assert res.coupling_mass == pytest.approx(np.linalg.norm([0.3, 0.2, 0.1, 0.4, 0.6]) / norm_T)
    assert res.scores.shape == res.removed_masses.shape == (8,)
    text = repr(res.table(score_name="sum|W|", reference={"full": 1.0}))
    assert "−T_C→R" in text and "sum|W|" in text and "paper" in text
    assert "<table" in res.table()._repr_html_() and "<th>ablation</th>" in res.table()._repr_html_()


def test_normal_network_is_unchanged_by_every_ablation():
    w = rnn.weights_from_params(rnn.init_params("cayley", 12, 2, 2, seed=0))
    x = torch.randn(3, 10, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    res = ablation.ablation_profile(w, lambda ww: float(rnn.rollout(ww, x)[0].abs().sum()), alpha=0.9)
    assert res.coupling_mass < 1e-12
    assert np.allclose(res.scores, res.scores[0], rtol=1e-10)
    assert np.all(res.removed_masses < 1e-12)


def test_profiles_over_alpha_and_subsets():
    w, _ = _upper_triangular_net()
    out = ablation.profiles_over_alpha(w, lambda ww: 0.0, alphas=(0.6, 0.9), subsets=[(), ("CC",)])
    assert [r.alpha for r in out] == [0.6, 0.9] and [r.n_R for r in out] == [2, 2]
    assert len(out[0].records) == 2
    out = ablation.profiles_over_alpha(w, lambda ww: 0.0, alphas=(0.4,))
    assert out[0].n_R == 3


def test_bad_subset_and_alpha():
    w, _ = _upper_triangular_net()
    with pytest.raises(ValueError, match="RC"):
        ablation.ablation_profile(w, lambda ww: 0.0, subsets=[("RC",)])
    with pytest.raises(ValueError, match="alpha"):
        ablation.ablation_profile(w, lambda ww: 0.0, alpha=1.5)
    res = ablation.ablation_profile(w, lambda ww: 0.0, subsets=[()])
    with pytest.raises(KeyError, match="not ablated"):
        res.score(["CC"])


def test_uses_lib_schur_ablate():
    w = rnn.weights_from_params(rnn.init_params("dense_default", 10, 2, 2, seed=1))
    res = ablation.ablation_profile(w, lambda ww: float(ww["W_hh"].sum()), subsets=[("CR",)])
    expected = schur.ablate(w["W_hh"].numpy(), ["CR"], 0.9).W.sum()
    assert res.score(["CR"]) == pytest.approx(expected, abs=1e-12)


def test_classes_and_preserved():
    recs = tuple(
        {"subset": s, "label": schur.label(s), "removed_mass": 0.1, "score": v}
        for s, v in zip(schur.all_subsets(), [1.0, 0.998, 0.876, 0.875, 0.639, 0.639, 0.624, 0.624], strict=True)
    )
    res = ablation.AblationResult(alpha=0.9, records=recs, n_R=64, rho=1.0, min_gap=0.1, coupling_mass=0.2)
    classes = res.classes(tol=0.01)
    assert [c[1] for c in classes] == [
        ["full", "−T_CC"],
        ["−T_RR", "−T_RR, −T_CC"],
        ["−T_C→R", "−T_C→R, −T_CC"],
        ["−T_RR, −T_C→R", "−T_RR, −T_C→R, −T_CC"],
    ]
    assert classes[1][0] == pytest.approx(0.8755)
    keep = res.preserved(0.01)
    assert keep["−T_CC"] and not keep["−T_RR"] and len(keep) == 7
