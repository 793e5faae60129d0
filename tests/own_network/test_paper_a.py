"""Your own network (issue 33), paper A's analysis (``lib.own_network.paper_a``): its ablations on a network read in
equal the book's, plain or leaky, with masks of either shape, and trials that do not fit are refused."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from lib.own_network import (
    RecurrentNet,
    analyse_network,
    checked_trials,
    effective_recurrence,
    load_rnn,
    network_batch,
    network_split,
    profile_network,
    scan_network,
)
from lib.paper_a import metrics, rnn, schur
from lib.paper_a import task_analysis as ta
from tests.own_network.test_load import N_OUT, _arrays, _inputs


def _structured(n=16, seed=3):
    """Book-style weights whose spectrum spreads over |λ| ∈ [0.5, 1] with couplings: n_R changes with α."""
    rng = np.random.default_rng(seed)
    T = np.diag(np.linspace(1.0, 0.5, n) * rng.choice([-1.0, 1.0], n)) + np.triu(rng.normal(0, 0.2, (n, n)), 1)
    Q = np.linalg.qr(rng.normal(size=(n, n)))[0]
    W = {"W_hh": Q @ T @ Q.T, "W_xh": rng.normal(0, 0.5, (n, 3)), "W_hy": rng.normal(0, 0.5, (3, n))}
    return {k: torch.as_tensor(v) for k, v in W.items()}


WEIGHTS = {
    "random": lambda: {k: v.to(torch.float64) for k, v in rnn.init_params("dense_default", 16, 3, 3, seed=1).items()},
    "structured": _structured,
}


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


@pytest.mark.parametrize("kind", sorted(WEIGHTS))
def test_plain_network_gives_the_books_task_analysis_exactly(kind):
    w = WEIGHTS[kind]()
    batch = ta.heldout_batch("flipflop", n_trials=32)
    book = ta.profile_solution(w, batch, alpha=0.9, device="cpu")
    net = load_rnn(dict(w))
    mine = analyse_network(net, task="flipflop", n_trials=32, alpha=0.9).profile
    assert (mine.n_R, mine.empty, mine.alpha, mine.fvu_full) == (book.n_R, book.empty, book.alpha, book.fvu_full)
    for kind_ in ("fvu", "dfvu", "mass", "sens"):
        got, want = getattr(mine, kind_), getattr(book, kind_)
        assert got.keys() == want.keys() and all(_same(got[k], want[k]) for k in want), kind_
    assert np.array_equal(mine.gaps, book.gaps) and np.array_equal(mine.moduli_over_rho, book.moduli_over_rho)
    assert mine.coupling_mass == book.coupling_mass
    assert all(_same(mine.dfvu[k], profile_network(net, batch).dfvu[k]) for k in mine.dfvu)


def test_plain_network_gives_the_books_alpha_scan_and_orderings():
    w = _structured()
    batch = ta.heldout_batch("flipflop", n_trials=32)
    alphas = [0.8, 0.85, 0.9, 0.95]
    solution = SimpleNamespace(weights=w, config=SimpleNamespace(seed=0))
    book_profile = ta.profile_solution(w, batch, alpha=0.9, device="cpu")
    analysis = ta.TaskAnalysis("flipflop", {}, 0.9, [book_profile], [solution], batch)
    book = ta.alpha_scan(analysis, alphas)
    result = analyse_network(load_rnn(dict(w)), *batch, alphas=alphas)
    mine = result.scan
    assert np.array_equal(mine.n_R, book.n_R) and len(set(mine.n_R[0])) > 1
    assert all(np.array_equal(mine.dfvu[b], book.dfvu[b], equal_nan=True) for b in book.dfvu)
    assert result.orderings == {k: ta.holds(k, book_profile) for k in ta.ORDERINGS}
    assert len(result.table().rows) == 8 and len(result.ordering_table().rows) == len(ta.ORDERINGS)


def test_masks_of_either_shape_give_the_books_numbers():
    w = _structured()
    x, y, _ = ta.heldout_batch("flipflop", n_trials=16)
    mask_bt = (torch.arange(y.shape[1]) >= 5).to(torch.float64).expand(y.shape[:2])
    mask_bty = mask_bt[..., None].expand(y.shape).clone()
    book = ta.profile_solution(w, (x, y, mask_bty), alpha=0.9, device="cpu")
    for mask in (mask_bt, mask_bty):
        mine = profile_network(load_rnn(dict(w)), (x, y, mask))
        assert all(_same(mine.dfvu[k], book.dfvu[k]) for k in book.dfvu)


def test_leaky_network_splits_on_the_effective_matrix_and_ablates_W_hh():
    a, w = 0.4, _structured(seed=5)
    net = load_rnn({k: v.numpy() for k, v in w.items()}, leak=a)
    M = effective_recurrence(net)
    sp, sp_M = network_split(net, 0.9), schur.split(schur.ordered_real_schur(M), 0.9)
    assert sp.n_R == sp_M.n_R and np.array_equal(sp.block_gaps, sp_M.block_gaps)
    assert np.linalg.norm(sp.form.Q @ sp.form.T @ sp.form.Q.T - net.W_hh.numpy()) < 1e-12
    for subset in (("RR",), ("CR",), ("CC",), ("RR", "CR", "CC")):
        ab, ab_M = schur.ablate(sp, subset), schur.ablate(sp_M, subset)
        np.testing.assert_allclose((1 - a) * np.eye(16) + a * ab.W, ab_M.W, rtol=0, atol=1e-12)
        removed = np.linalg.norm(ab_M.T - sp_M.form.T) / a / np.linalg.norm(net.W_hh.numpy())
        assert ab.removed_mass == pytest.approx(removed, rel=1e-12)
    own = network_split(net, 0.9, split_on="W_hh")
    assert own.n_R == schur.split(schur.ordered_real_schur(w["W_hh"]), 0.9).n_R != sp.n_R  # here the choice matters
    with pytest.raises(ValueError, match="split_on='M' is not allowed"):
        network_split(net, split_on="M")


def test_ablations_keep_input_readout_biases_and_leak_fixed():
    d = {k: v.numpy() for k, v in _structured().items()}
    net = load_rnn({**d, "b_h": np.full(16, 0.05), "b_y": np.full(3, 0.3), "a": 0.5})
    batch = network_batch(net, "flipflop", n_trials=16)
    prof = profile_network(net, batch)
    W_tilde = schur.ablate(network_split(net), ("CR",)).W
    outputs, _ = RecurrentNet(**{**d, "W_hh": W_tilde}, b_h=net.b_h, b_y=net.b_y, a=0.5).run(batch[0])
    assert prof.fvu["CR"] == metrics.fvu(outputs, batch[1], batch[2])
    assert prof.fvu_full == metrics.fvu(net.run(batch[0])[0], batch[1], batch[2])
    assert np.isfinite(scan_network(net, batch, [0.85, 0.9]).dfvu["CC"]).all()


def test_trials_that_do_not_fit_are_refused():
    net = load_rnn(_arrays())
    x, y = _inputs(), torch.randn(4, 7, N_OUT, dtype=torch.float64)
    checks = [
        ((x[..., :2], y), "inputs_btx has shape (4, 7, 2); it must be (B, T ≥ 1, n_in = 3)"),
        ((x, y[:, :5]), "targets_bty has shape (4, 5, 2); it must be (B, T, n_out) = (4, 7, 2)"),
        ((x, y, torch.ones(4, 6)), "mask_bty has shape (4, 6)"),
        ((x, torch.ones_like(y)), "do not vary"),
    ]
    for batch, fragment in checks:
        with pytest.raises(ValueError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
            checked_trials(net, batch)
    with pytest.raises(ValueError, match="task='flipflop': targets_bty has shape"):
        analyse_network(load_rnn(_arrays()), task="flipflop", n_trials=4)
    with pytest.raises(ValueError, match=r"give a registered task or inputs_btx .* \(both given\)"):
        analyse_network(net, x, y, task="flipflop")
    with pytest.raises(ValueError, match=r"\(neither given\)"):
        analyse_network(net)
