"""Subspaces, energy fractions, the inside/outside split of a coupling and the batched rollouts (paper A §5)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lib.paper_a import metrics, rnn, schur
from lib.paper_a import subspace as sub
from lib.paper_a import task_analysis as ta


@pytest.fixture(scope="module")
def net():
    w = {k: v.to(torch.float64) for k, v in rnn.init_params("dense_default", 12, 3, 3, seed=3).items()}
    w["W_hh"] = 1.3 * w["W_hh"]
    return w


def test_energy_fraction_is_one_for_the_whole_space_and_zero_for_its_complement():
    rng = np.random.default_rng(0)
    V = rng.standard_normal((40, 6))
    comps, _ = sub.pca(V[:, None, :])
    assert sub.energy_fraction(V, sub.pc_basis(comps, 6)) == pytest.approx(1.0, abs=1e-12)
    U = sub.pc_basis(comps, 2)
    rest = comps[:, 2:]
    assert sub.energy_fraction(V, U) + sub.energy_fraction(V, rest) == pytest.approx(1.0, abs=1e-12)
    assert np.isnan(sub.energy_fraction(np.zeros((3, 6)), U))


def test_pca_counts_components_at_a_variance_level():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((500, 1, 5)) * np.array([10.0, 3.0, 1.0, 0.1, 0.01])
    _, cum = sub.pca(X)
    assert cum[-1] == pytest.approx(1.0)
    assert sub.n_components(cum, 0.9) == 1
    assert sub.n_components(cum, 0.995) == 3  # variances 100, 9, 1, …: 109/110 < 0.995
    assert sub.n_components(cum, 1.0) == 5
    with pytest.raises(ValueError, match="level=1.5"):
        sub.n_components(cum, 1.5)
    with pytest.raises(ValueError, match=r"k=0 is out of range; allowed: \[1, 5\]"):
        sub.pc_basis(np.eye(5), 0)
    with pytest.raises(ValueError, match="k=6"):
        sub.pc_basis(np.eye(5), 6)


def test_readout_and_union_bases_are_orthonormal_and_span_the_rows():
    rng = np.random.default_rng(2)
    W_hy = rng.standard_normal((3, 10))
    U = sub.readout_basis(W_hy)
    assert U.shape == (10, 3)
    np.testing.assert_allclose(U.T @ U, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(U @ U.T @ W_hy.T, W_hy.T, atol=1e-12)
    both = sub.union_basis(U, U[:, :1], np.eye(10)[:, :1])
    assert both.shape[1] == 4


def test_inside_and_outside_parts_sum_back_to_the_coupling_and_their_actions_are_orthogonal():
    rng = np.random.default_rng(3)
    W = rng.standard_normal((10, 10)) / 3
    form = schur.ordered_real_schur(W)
    dW, T_S = sub.removed_coupling(schur.split(form, 0.5), ("CR", "CC"))
    np.testing.assert_allclose(W - dW, schur.ablate(form, ("CR", "CC"), 0.5).W, atol=1e-13)
    np.testing.assert_allclose(form.Q.T @ dW @ form.Q, T_S, atol=1e-13)
    U = sub.orthonormal_basis(rng.standard_normal((10, 4)))
    inside, outside = sub.inside_outside(dW, U)
    np.testing.assert_allclose(inside + outside, dW, atol=1e-14)
    H = rng.standard_normal((50, 10))
    e = lambda M: np.sum((H @ M.T) ** 2)  # noqa: E731
    assert e(inside) + e(outside) == pytest.approx(e(dW), rel=1e-12)
    assert sub.energy_fraction(H @ dW.T, U) == pytest.approx(e(inside) / e(dW), rel=1e-12)


def test_unknown_block_and_empty_ablation_are_refused():
    form = schur.ordered_real_schur(np.eye(4) + np.triu(np.ones((4, 4)), 1))
    with pytest.raises(ValueError, match="allowed elements are"):
        sub.removed_coupling(schur.split(form, 0.9), ("XY",))
    with pytest.raises(ValueError, match="removes nothing"):
        sub.removed_coupling(schur.split(form, 0.9), ())
    with pytest.raises(ValueError, match="block='R'"):
        sub.block_set("R")


def test_batched_rollout_matches_the_single_rollout_and_the_fvu(net):
    batch = ta.heldout_batch("flipflop", n_trials=16)
    W2 = net["W_hh"].numpy() * 0.7
    stack = np.stack([net["W_hh"].numpy(), W2])
    states = sub.rollout_many(net, stack, batch[0])
    with torch.no_grad():
        out, h = rnn.rollout(net, batch[0])
    torch.testing.assert_close(states[0], h, atol=1e-13, rtol=0)
    fvu = sub.fvu_many(net, stack, batch, chunk=1)
    assert fvu[0] == pytest.approx(metrics.fvu(out, batch[1]), rel=1e-12)
    assert fvu[1] == pytest.approx(ta.fvu_of({**net, "W_hh": torch.as_tensor(W2)}, batch), rel=1e-12)


def test_condition_labels_and_manifold():
    batch = ta.heldout_batch("context", n_trials=64)
    labels = sub.condition_labels("context", batch[0], batch[1])
    assert set(np.unique(labels)) <= {0, 1, 2, 3} and labels.shape == (64,)
    sine = ta.heldout_batch("sine", n_trials=64)
    lab = sub.condition_labels("sine", sine[0], sine[1])
    assert len(np.unique(lab)) == len(np.unique(sine[0][:, 0, 0].numpy()))
    rng = np.random.default_rng(4)
    H = rng.standard_normal((64, 5, 8))
    M = sub.condition_means(H, labels)
    basis = sub.manifold_basis(H, labels, level=1.0)
    assert sub.energy_fraction(M, basis) == pytest.approx(1.0, abs=1e-12)
    with pytest.raises(ValueError, match="task='mnist'"):
        sub.condition_labels("mnist", batch[0], batch[1])
