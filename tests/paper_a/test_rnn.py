"""paper_a.rnn: the rollout is eqs. 1–2, autonomous continuation, the four constructions of paper A §3.

The fast rollout (lib.kernels.recurrence) is tested against rnn.rollout in tests/kernels/test_recurrence.py.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lib.paper_a import rnn


def _weights(construction="dense_orthogonal", n=8, dtype=torch.float64, seed=0):
    return rnn.weights_from_params(rnn.init_params(construction, n, 3, 2, seed=seed, dtype=dtype))


def test_rollout_is_eqs_1_2_with_zero_initial_state():
    w = _weights(n=6)
    x = torch.randn(2, 4, 3, dtype=torch.float64)
    out, h = rnn.rollout(w, x)
    h_prev = torch.zeros(2, 6, dtype=torch.float64)
    for t in range(4):
        h_prev = torch.tanh(x[:, t] @ w["W_xh"].T + h_prev @ w["W_hh"].T)
        assert torch.equal(h[:, t], h_prev)
        assert torch.allclose(out[:, t], h_prev @ w["W_hy"].T, atol=1e-15)


def test_autonomous_continues_a_driven_rollout_with_zero_input():
    w = _weights(n=10)
    x = torch.randn(3, 5, 3, dtype=torch.float64)
    x_full = torch.cat([x, torch.zeros(3, 7, 3, dtype=torch.float64)], dim=1)
    out_full, h_full = rnn.rollout(w, x_full)
    out_auto, h_auto = rnn.autonomous(w, h_full[:, 4], 7)
    assert torch.allclose(out_auto, out_full[:, 5:], atol=1e-14)
    assert torch.allclose(h_auto, h_full[:, 5:], atol=1e-14)


def test_rollout_is_differentiable_with_torch_func():
    w = _weights(n=6)
    x = torch.randn(2, 4, 3, dtype=torch.float64)
    grad = torch.func.grad(lambda ww: rnn.rollout(ww, x)[0].pow(2).sum())(w)
    assert set(grad) == set(rnn.WEIGHT_NAMES) and grad["W_hh"].shape == (6, 6)
    # finite-difference check on one entry
    eps, e = 1e-6, torch.zeros(6, 6, dtype=torch.float64)
    e[1, 2] = eps
    f = lambda W: rnn.rollout({**w, "W_hh": W}, x)[0].pow(2).sum().item()  # noqa: E731
    fd = (f(w["W_hh"] + e) - f(w["W_hh"] - e)) / (2 * eps)
    assert abs(fd - grad["W_hh"][1, 2].item()) < 1e-7


def test_dense_default_is_uniform_within_m():
    p = rnn.init_params("dense_default", 64, 8, 8, seed=3)
    m = 64**-0.5
    for k in ("W_xh", "W_hh", "W_hy"):
        assert p[k].abs().max() <= m and p[k].abs().max() > 0.9 * m


def test_dense_orthogonal_is_orthogonal():
    W = rnn.init_params("dense_orthogonal", 72, 8, 8, seed=0)["W_hh"]
    assert torch.allclose(W.T @ W, torch.eye(72, dtype=torch.float64), atol=1e-12)


@pytest.mark.parametrize("construction", ["dense_normal", "cayley"])
def test_dense_normal_and_cayley_are_normal(construction):
    W = rnn.weights_from_params(rnn.init_params(construction, 56, 8, 8, seed=2))["W_hh"]
    assert torch.allclose(W @ W.T, W.T @ W, atol=1e-12)


def test_dense_normal_block_entries_have_variance_one_sixth():
    # Q D Qᵀ has the eigenvalues a ± ib of D: their real and imaginary parts have variance 1/6
    lam = np.concatenate(
        [np.linalg.eigvals(rnn.init_params("dense_normal", 72, 8, 8, seed=s)["W_hh"].numpy()) for s in range(30)]
    )
    assert abs(lam.real.var() - 1 / 6) < 0.02 and abs(lam.imag.var() - 1 / 6) < 0.02


def test_cayley_map_follows_the_paper_not_torch():
    P = torch.randn(9, 9, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    A = P - P.T
    eye = torch.eye(9, dtype=torch.float64)
    O = rnn.cayley(A)
    assert torch.allclose(O, (eye - A) @ torch.linalg.inv(eye + A), atol=1e-12)
    assert torch.allclose(O.T @ O, eye, atol=1e-12)
    assert abs(torch.linalg.det(O).item() - 1) < 1e-10
    # PyTorch's parametrization uses (I + A/2)(I − A/2)⁻¹ = O(−A/2): a different map
    torch_map = (eye + A / 2) @ torch.linalg.inv(eye - A / 2)
    assert torch.allclose(torch_map, rnn.cayley(-A / 2), atol=1e-12)
    assert not torch.allclose(torch_map, O, atol=1e-3)


def test_cayley_init_uses_realblock_of_eig_and_half_skew_U():
    p = rnn.init_params("cayley", 8, 2, 2, seed=5)
    W = rnn.weights_from_params(p)["W_hh"]
    D = rnn.block_diagonal(p["D_a"], p["D_b"], p["D_d"])
    lam_D = np.sort_complex(np.linalg.eigvals(D.numpy()))
    lam_W = np.sort_complex(np.linalg.eigvals(W.numpy()))
    assert np.allclose(lam_D, lam_W, atol=1e-10)
    assert torch.all(p["D_b"] > 0)
    assert torch.all((p["P"] - p["P"].T).abs() <= 8**-0.5)  # A = (U − Uᵀ)/2 with |U| ≤ m


def test_same_seed_same_init_and_different_seed_differs():
    for c in rnn.CONSTRUCTIONS:
        a, b = rnn.init_params(c, 8, 2, 2, seed=4), rnn.init_params(c, 8, 2, 2, seed=4)
        assert all(torch.equal(a[k], b[k]) for k in a)
        d = rnn.init_params(c, 8, 2, 2, seed=5)
        assert not torch.equal(a["W_xh"], d["W_xh"])


@pytest.mark.parametrize("n", [56, 64, 72])
def test_paper_widths(n):
    for c in rnn.CONSTRUCTIONS:
        assert rnn.weights_from_params(rnn.init_params(c, n, 8, 8, seed=0))["W_hh"].shape == (n, n)


def test_bad_inputs_name_the_parameter():
    with pytest.raises(ValueError, match="construction='dense_banana'"):
        rnn.init_params("dense_banana", 8, 2, 2, seed=0)
    with pytest.raises(ValueError, match="n_hidden=7"):
        rnn.init_params("dense_orthogonal", 7, 2, 2, seed=0)
    with pytest.raises(TypeError, match="n_hidden"):
        rnn.init_params("dense_orthogonal", 8.0, 2, 2, seed=0)
    with pytest.raises(ValueError, match="seed"):
        rnn.init_params("dense_orthogonal", 8, 2, 2, seed=-1)
