"""One solution through every measurement of the open-questions chapter, and the verdict rules."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lib.paper_a import confound, rnn, schur
from lib.paper_a import task_analysis as ta


@pytest.fixture(scope="module")
def study():
    w = {k: v.to(torch.float64) for k, v in rnn.init_params("dense_default", 16, 3, 3, seed=2).items()}
    w["W_hh"] = 1.5 * w["W_hh"]
    batch = ta.heldout_batch("flipflop", n_trials=24)
    prof = ta.profile_solution(w, batch, alpha=0.5)
    recs = confound.study_solution(
        "flipflop", 0, w, batch, alpha=0.5, dfvu=prof.dfvu, n_eval=24, draws=3, lambdas=[0.0, 0.5, 1.0]
    )
    return w, batch, prof, recs


def test_every_ablation_is_measured(study):
    _, _, _, recs = study
    assert [r.ablation for r in recs] == ["RR", "CR", "CC", "all"]
    for r in recs:
        assert set(r.frac_dh) == set(confound.SUBSPACES) and all(len(v) == 3 for v in r.draws.values())


def test_path_ends_reproduce_the_ablation_and_the_trained_model(study):
    _, _, prof, recs = study
    for r in recs[:3]:
        assert r.dfvu_path[-1] == pytest.approx(prof.dfvu[r.ablation], rel=1e-9, abs=1e-13)
        assert abs(r.dfvu_path[0]) < 1e-12
    # on all trials the controls' own ablation ΔFVU is the chapters' ΔFVU
    for r in recs:
        assert r.dfvu_eval == pytest.approx(r.dfvu, rel=1e-9, abs=1e-13)


def test_inside_and_outside_direct_action_energies_add_up(study):
    w, batch, _, recs = study
    with torch.no_grad():
        H = rnn.rollout(w, batch[0])[1].numpy().reshape(-1, 16)
    form = schur.ordered_real_schur(w["W_hh"].numpy())
    for r in recs:
        dW, _ = confound.sub.removed_coupling(schur.split(form, 0.5), confound.sub.block_set(r.ablation))
        total = float(np.sum((H @ dW.T) ** 2))
        assert r.energy_in + r.energy_out == pytest.approx(total, rel=1e-10)
        assert r.energy_total == pytest.approx(total, rel=1e-12)
        assert r.action**2 * float(np.sum(H**2)) == pytest.approx(total, rel=1e-10)
        assert r.frac_dw["union"] == pytest.approx(r.energy_in / total, rel=1e-10)
        assert r.action_in**2 == pytest.approx(r.frac_dw["union"] * r.action**2, rel=1e-10)


def test_random_draws_are_seeded(study):
    w, batch, prof, recs = study
    again = confound.study_solution(
        "flipflop", 0, w, batch, alpha=0.5, dfvu=prof.dfvu, n_eval=24, draws=3, lambdas=[1.0]
    )
    for a, b in zip(recs, again, strict=True):
        for k in a.draws:
            np.testing.assert_array_equal(a.draws[k], b.draws[k])


def test_bad_knobs_are_refused(study):
    w, batch, prof, _ = study
    with pytest.raises(ValueError, match=r"n_eval=99 is out of range; allowed: \[2, 24\]"):
        confound.study_solution("flipflop", 0, w, batch, alpha=0.5, dfvu=prof.dfvu, n_eval=99, draws=1, lambdas=[1])
    with pytest.raises(ValueError, match=r"outside \[0, 1\]"):
        confound.study_solution("flipflop", 0, w, batch, alpha=0.5, dfvu=prof.dfvu, n_eval=4, draws=1, lambdas=[-1])
