"""The per-task analysis pipeline: configuration, profiles of every ablation subset, orderings, α-scan, tables."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from lib.paper_a import rnn, schur, train
from lib.paper_a import task_analysis as ta


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """Two flip-flop solutions trained for a few steps into a private cache."""
    mp = pytest.MonkeyPatch()
    mp.setenv("BOOK_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    analysis = ta.analyse_task("flipflop", 2, steps=40, n_heldout=64, progress=False)
    yield analysis
    mp.undo()


def test_train_config_is_the_papers():
    c = ta.train_config("sine", 4)
    assert (c.n_hidden, c.construction, c.lr, c.batch_size, c.steps, c.seed) == (
        64,
        "dense_orthogonal",
        1e-3,
        64,
        3840,
        4,
    )
    assert train.cache_path(ta.train_config("sine", 4, {"frequencies": "continuous"})) != train.cache_path(c)


def test_unknown_task_and_task_params_list_allowed():
    with pytest.raises(ValueError, match="available tasks"):
        ta.train_config("flip_flop", 0)
    with pytest.raises(ValueError, match=r"allowed elements are \[.*'pulse_prob'"):
        ta.task_params_for("flipflop", {"pulse_rate": 0.5})


def test_heldout_batch_is_fixed_and_not_a_training_stream():
    a, b = ta.heldout_batch("context", n_trials=8), ta.heldout_batch("context", n_trials=8)
    assert torch.equal(a[0], b[0]) and a[0].dtype == torch.float64
    train_first = ta.get_task("context").generate(8, seed=np.random.default_rng([0, 0]))
    assert not torch.equal(a[0].float(), train_first.inputs_btx)


def test_profile_matches_direct_ablation():
    """ΔFVU and removed mass of one subset agree with ablating W_hh by hand."""
    w = {k: v.to(torch.float64) for k, v in rnn.init_params("dense_default", 16, 3, 3, seed=1).items()}
    batch = ta.heldout_batch("flipflop", n_trials=32)
    prof = ta.profile_solution(w, batch, alpha=0.9)
    assert set(prof.dfvu) == {ta.subset_key(s) for s in schur.all_subsets()}
    ab = schur.ablate(w["W_hh"].numpy(), ("CR",), 0.9)
    w2 = {**w, "W_hh": torch.as_tensor(ab.W)}
    with torch.no_grad():
        out, _ = rnn.rollout(w2, batch[0])
    direct = float(((out - batch[1]) ** 2).sum() / ((batch[1] - batch[1].mean(dim=(0, 1))) ** 2).sum())
    assert prof.fvu["CR"] == pytest.approx(direct, rel=1e-10)
    assert prof.mass["CR"] == pytest.approx(ab.removed_mass, rel=1e-12)
    assert prof.dfvu[""] == 0.0
    assert prof.min_gap == pytest.approx(np.min(np.abs(prof.moduli_over_rho - 0.9)))


def test_empty_block_is_empty_not_safe():
    """An orthogonal W_hh has every block in R at any α: T_CR and T_CC are empty; their FVU, ΔFVU and S_ΔT are
    undefined (not 0, which would count as safe), and they are left out of orderings and safe fractions."""
    w = {k: v.to(torch.float64) for k, v in rnn.init_params("dense_orthogonal", 8, 1, 1, seed=0).items()}
    prof = ta.profile_solution(w, ta.heldout_batch("sine", n_trials=8), alpha=0.9)
    assert prof.n_R == 8 and prof.mass["CC"] == 0.0 and set(prof.empty) >= {"CR", "CC", "CR+CC"}
    assert all(math.isnan(getattr(prof, k)["CC"]) for k in ("fvu", "dfvu", "sens"))
    assert ta.holds("sens_CR_gt_CC", prof) is None and ta.holds("CC_gt_CR", prof) is None
    a = ta.TaskAnalysis("sine", {}, 0.9, [prof])
    assert a.n_empty("CC") == 1 and a.count(ta.GENERIC_ORDERINGS["CC_gt_CR"]) == (0, 0)
    assert math.isnan(ta.safe_fraction([a], "CC", 0.01)) and math.isnan(a.mean_sem("dfvu", "CC")[0])


def test_ordering_drops_comparisons_with_an_empty_block():
    base = dict(seed=0, alpha=0.9, n_R=2, fvu_full=0.0, fvu={}, mass={}, moduli_over_rho=np.ones(1), gaps=np.ones(1))
    nan = math.nan
    p = ta.SolutionProfile(**base, dfvu={"RR": nan, "CR": 0.5, "CC": 0.2}, sens={}, empty=("RR",))
    assert ta.holds("CR_largest", p) is True  # CR > CC; the comparison with the empty T_RR is dropped
    q = ta.SolutionProfile(**base, dfvu={"RR": 0.1, "CR": nan, "CC": 0.2}, sens={}, empty=("CR",))
    assert ta.holds("CR_largest", q) is None  # the claimed block is empty: undefined for this solution


def test_analysis_shapes_and_tables(tiny):
    assert tiny.seeds == [0, 1]
    assert tiny.dfvu("CR").shape == (2,)
    assert all(isinstance(p.fvu_full, float) for p in tiny.profiles)
    table = repr(tiny.table())
    assert "−T_C→R" in table and table.count("\n") == 9
    assert "seed" in repr(tiny.per_seed_table())
    cells = [c for row in ta.comparison_table(tiny).cells() for c in row]
    assert "9.45e-02 ± 0.0094" in cells or "0.0945 ± 0.0094" in cells
    assert 0.0 <= tiny.fraction(ta.paper_orderings("flipflop")["CR_largest"]) <= 1.0
    assert tiny.min_threshold_gap() >= 0.0


def test_cache_is_reused(tiny):
    again = ta.train_solutions("flipflop", seeds=[0], steps=40, progress=False)[0]
    assert again.from_cache
    assert torch.equal(again.weights["W_hh"], tiny.solutions[0].weights["W_hh"])


def test_orderings_on_means_and_subsets(tiny):
    means = {b: tiny.mean_sem("dfvu", b)[0] for b in ta.SINGLE_BLOCKS}
    assert ta.holds_in_means("CC_gt_CR", tiny) == (means["CC"] > means["CR"])
    frac = ta.subset_fraction(tiny, "CC_gt_CR", k=1)
    assert frac == tiny.fraction(ta.GENERIC_ORDERINGS["CC_gt_CR"])
    with pytest.raises(ValueError, match="k=3"):
        ta.subset_fraction(tiny, "CC_gt_CR", k=3)


def test_alpha_scan(tiny):
    scan = ta.alpha_scan(tiny, [0.8, 0.9, 0.95])
    assert scan.n_R.shape == (2, 3) and scan.dfvu["CR"].shape == (2, 3)
    assert np.all(np.diff(scan.n_R, axis=1) <= 0)  # a higher threshold never adds blocks to R
    at_09 = scan.dfvu["CR"][:, 1]
    assert np.allclose(at_09, tiny.dfvu("CR"), equal_nan=True)
    with pytest.raises(ValueError, match="alpha"):
        ta.alpha_scan(tiny, [1.2])


def test_alpha_scan_shares_a_profile_between_the_alphas_of_one_split(tiny, monkeypatch):
    """α's with the same n_R are profiled once, and the scan equals a profile of each α on its own, bit for bit."""
    alphas = [0.8, 0.8001, 0.9, 0.9001, 0.95]  # neighbours that split alike
    direct = {b: np.zeros((len(tiny.solutions), len(alphas))) for b in ta.SINGLE_BLOCKS}
    for i, sol in enumerate(tiny.solutions):
        for j, a in enumerate(alphas):
            prof = ta.profile_solution(
                sol.weights, tiny.batch, alpha=a, subsets=[(), *[(b,) for b in ta.SINGLE_BLOCKS]]
            )
            for b in ta.SINGLE_BLOCKS:
                direct[b][i, j] = prof.dfvu[b]
    calls = []
    real = ta.alpha_scans.profile_solution
    monkeypatch.setattr(ta.alpha_scans, "profile_solution", lambda *a, **k: calls.append(1) or real(*a, **k))
    scan = ta.alpha_scan(tiny, alphas)
    for b in ta.SINGLE_BLOCKS:
        np.testing.assert_array_equal(scan.dfvu[b], direct[b])
    assert len(calls) == sum(len(set(row)) for row in scan.n_R.tolist()) < scan.n_R.size


def test_safe_fraction(tiny):
    assert ta.safe_fraction([tiny], "", 0.0) == 1.0
    assert ta.safe_fraction([tiny], "CC", -1.0) == 0.0
    # an ablation empty in some solutions is judged over the others only
    n_defined = len(tiny.profiles) - tiny.n_empty("CR")
    frac = ta.safe_fraction([tiny], "CR", 1e9)
    assert frac == 1.0 if n_defined else math.isnan(frac)


def test_spec_table_names_choices():
    text = repr(ta.spec_table("sine"))
    assert "we choose" in text and "Sussillo" in text and "`n_grid` = 51" in text  # a parameter name: inline code
    assert "<code>n_grid</code> = 51" in ta.spec_table("sine")._repr_html_()


@pytest.mark.parametrize(
    "given,match",
    [
        ({"seeds": "abc"}, r"seeds='abc' must be a sequence of seeds"),
        ({"seeds": 3}, r"seeds=3 must be a sequence of seeds \(integers ≥ 0\); a count is `solutions`"),
        ({"seeds": [0, "a"]}, r"seeds\[1\]='a'"),
        ({"solutions": "abc"}, r"solutions='abc' must be an integer"),
    ],
)
def test_seeds_and_solutions_of_the_wrong_type_are_named(given, match):
    with pytest.raises(TypeError, match=match):
        ta.analyse_task("flipflop", **given)


def test_a_count_and_seeds_are_not_both_given():
    with pytest.raises(ValueError, match=r"solutions=2 and seeds=\[0\]: give a count or the seeds, not both"):
        ta.TaskStudy(task="flipflop", solutions=2, seeds=[0])
    study = ta.TaskStudy(task="flipflop", seeds=[3, 5])
    assert study.seeds == (3, 5) and study.solutions == 2
    assert ta.TaskStudy(task="flipflop").seeds == tuple(range(10))
