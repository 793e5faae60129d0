"""Your own network (issue 33): reading an RNN trained elsewhere, and paper A's ablations on it equal the book's."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from torch import nn

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

N, N_IN, N_OUT = 6, 3, 2


def _module(bias=True, batch_first=True, seed=0):
    """A float64 nn.RNN and nn.Linear readout, as another codebase would hold them."""
    torch.manual_seed(seed)
    return nn.RNN(N_IN, N, bias=bias, batch_first=batch_first).double(), nn.Linear(N, N_OUT, bias=bias).double()


class Model(nn.Module):
    def __init__(self, readout_name="readout"):
        super().__init__()
        self.rnn, linear = _module()
        setattr(self, readout_name, linear)


def _arrays(seed=0, **extra):
    rng = np.random.default_rng(seed)
    return {"W_hh": rng.normal(0, 0.4, (N, N)), "W_xh": rng.normal(size=(N, N_IN)),
            "W_hy": rng.normal(size=(N_OUT, N)), **extra}  # fmt: skip


def _inputs(batch=4, steps=7, seed=1):
    return torch.randn(batch, steps, N_IN, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))


# ------------------------------------------------------------------------------------------------ reading a network


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batch_first", [True, False])
def test_outputs_equal_torch_forward_and_readout(bias, batch_first):
    cell, readout = _module(bias, batch_first)
    net = load_rnn(cell, readout, batch_first=batch_first)
    x = _inputs()
    states, _ = cell(x if batch_first else x.transpose(0, 1))
    states = states if batch_first else states.transpose(0, 1)
    outputs, got_states = net.run(x)
    assert (net.b_h is not None, net.b_y is not None) == (bias, bias)
    torch.testing.assert_close(got_states, states, rtol=0, atol=1e-12)
    torch.testing.assert_close(outputs, readout(states), rtol=0, atol=1e-12)
    if bias:  # b_h folds both of nn.RNN's biases
        assert torch.equal(net.b_h, (cell.bias_ih_l0 + cell.bias_hh_l0).detach())


def test_round_trips_give_identical_nets_and_outputs(tmp_path):
    model = Model()
    reference = load_rnn(model.rnn, model.readout)
    arrays = {"W_hh": reference.W_hh.numpy(), "W_xh": reference.W_xh.numpy(), "W_hy": reference.W_hy.numpy(),
              "b_h": reference.b_h.numpy(), "b_y": reference.b_y.numpy()}  # fmt: skip
    state = model.state_dict()
    np.savez(tmp_path / "arrays.npz", **arrays)
    np.savez(tmp_path / "state.npz", **{k: v.numpy() for k, v in state.items()})
    torch.save(state, tmp_path / "state.pt")
    torch.save({k: torch.as_tensor(v) for k, v in arrays.items()}, tmp_path / "arrays.pth")
    fc = Model("fc")
    fc.load_state_dict({k.replace("readout.", "fc."): v for k, v in state.items()})
    loaded = [
        load_rnn(model),
        load_rnn(state),
        load_rnn(model.rnn.state_dict(), model.readout),
        load_rnn(model.rnn, (model.readout.weight, model.readout.bias)),
        load_rnn(fc.state_dict()),
        load_rnn(arrays),
        *(load_rnn(tmp_path / name) for name in ("arrays.npz", "state.npz", "state.pt", "arrays.pth")),
        load_rnn(str(tmp_path / "state.pt")),
    ]
    x = _inputs()
    out, states = reference.run(x)
    for net in loaded:
        assert net == reference
        got_out, got_states = net.run(x)
        assert torch.equal(got_out, out) and torch.equal(got_states, states)
    assert load_rnn(model.rnn, model.readout.weight) == RecurrentNet(**{**arrays, "b_y": None})


def test_leak_and_biases_follow_the_update_rule():
    a = 0.3
    d = _arrays(b_h=np.full(N, 0.1), b_y=np.full(N_OUT, -0.2))
    net = load_rnn(d, leak=a)
    assert net.a == a and load_rnn({**d, "a": np.array(a)}) == net
    x = _inputs(steps=2)
    W_hh, W_xh, W_hy, b_h, b_y = (torch.as_tensor(d[k]) for k in ("W_hh", "W_xh", "W_hy", "b_h", "b_y"))
    h1 = a * torch.tanh(x[:, 0] @ W_xh.T + b_h)
    h2 = (1 - a) * h1 + a * torch.tanh(x[:, 1] @ W_xh.T + h1 @ W_hh.T + b_h)
    out, states = net.run(x)
    torch.testing.assert_close(states, torch.stack([h1, h2], 1), rtol=0, atol=1e-15)
    torch.testing.assert_close(out, states @ W_hy.T + b_y, rtol=0, atol=1e-15)
    # the explicit loop (zero biases) agrees with the book's rollout (no biases), the plain network's path
    plain = load_rnn(_arrays())
    zero_bias = RecurrentNet(**_arrays(), b_h=np.zeros(N))
    assert plain.plain and not zero_bias.plain
    torch.testing.assert_close(zero_bias.run(x)[0], rnn.rollout(plain.weights(), x)[0], rtol=0, atol=1e-12)
    assert torch.equal(plain.run(x)[0], rnn.rollout_fast(plain.weights(), x)[0])


def _gru_state():
    return nn.GRU(N_IN, N).state_dict()


REFUSALS = [  # (source, readout, keywords, error, fragment)
    (lambda: nn.RNN(N_IN, N, num_layers=2), nn.Linear(N, 2), {}, ValueError, "num_layers=2"),
    (lambda: nn.RNN(N_IN, N, num_layers=2).state_dict(), nn.Linear(N, 2), {}, ValueError, "'weight_hh_l1'"),
    (lambda: nn.GRU(N_IN, N), nn.Linear(N, 2), {}, ValueError, "nn.GRU"),
    (_gru_state, nn.Linear(N, 2), {}, ValueError, "(18, 6), 3×6 rows: a GRU's"),
    (lambda: nn.LSTM(N_IN, N), nn.Linear(N, 2), {}, ValueError, "nn.LSTM"),
    (lambda: nn.LSTM(N_IN, N).state_dict(), nn.Linear(N, 2), {}, ValueError, "an LSTM's"),
    (lambda: nn.RNN(N_IN, N, nonlinearity="relu"), nn.Linear(N, 2), {}, ValueError, "nonlinearity='relu'"),
    (lambda: nn.RNN(N_IN, N, bidirectional=True), nn.Linear(N, 2), {}, ValueError, "bidirectional=True"),
    (lambda: nn.RNN(N_IN, N, bidirectional=True).state_dict(), nn.Linear(N, 2), {}, ValueError, "_reverse"),
    (lambda: nn.RNN(N_IN, N), nn.Linear(N, 2), {"batch_first": True}, ValueError, "batch_first=True but"),
    (lambda: _arrays(W_xh=np.ones((N + 1, N_IN))), None, {}, ValueError, "W_xh has shape (7, 3)"),
    (lambda: _arrays(W_hy=np.ones((N_OUT, N + 1))), None, {}, ValueError, "W_hy has shape (2, 7)"),
    (lambda: _arrays(b_h=np.ones(N + 1)), None, {}, ValueError, "b_h has shape (7,)"),
    (lambda: _arrays(b_y=np.ones(N_OUT + 1)), None, {}, ValueError, "b_y has shape (3,)"),
    (lambda: nn.RNN(N_IN, N), nn.Linear(N + 1, 2), {}, ValueError, "W_hy has shape (2, 7)"),
    (lambda: _arrays(W_hh=np.ones((N, N + 1))), None, {}, ValueError, "W_hh has shape (6, 7); it must be square"),
    (lambda: {"weight_hh_l0": np.ones((N, N + 1))}, None, {}, ValueError, "(6, 7); it must be square"),
    (lambda: _arrays(W_hh=np.full((N, N), np.nan)), None, {}, ValueError, "W_hh has 36 non-finite"),
    (
        lambda: {**nn.RNN(N_IN, N).state_dict(), "weight_ih_l0": torch.full((N, N_IN), math.inf)},
        nn.Linear(N, 2),
        {},
        ValueError,
        "weight_ih_l0 has 18 non-finite",
    ),  # fmt: skip
    (_arrays, None, {"leak": 0}, ValueError, "leak=0 is out of range; allowed: (0.0, 1.0]"),
    (_arrays, None, {"leak": 1.5}, ValueError, "leak=1.5 is out of range"),
    (lambda: _arrays(a=2.0), None, {}, ValueError, "a=2.0 is out of range"),
    (lambda: _arrays(a=0.5), None, {"leak": 0.2}, ValueError, "leak=0.2 differs from the source's own a=0.5"),
    (lambda: {k: v for k, v in _arrays().items() if k != "W_hy"}, None, {}, ValueError, "no ['W_hy']"),
    (lambda: _arrays(W_ih=np.ones(3)), None, {}, ValueError, "unknown keys ['W_ih']"),
    (lambda: nn.RNN(N_IN, N).state_dict(), None, {}, ValueError, "no readout"),
    (
        lambda: {"weight_hh_l0": torch.eye(N)},
        nn.Linear(N, 2),
        {},
        ValueError,
        "lacks ['bias_hh_l0', 'bias_ih_l0', 'weight_ih_l0']",
    ),  # fmt: skip
    (
        lambda: {**nn.RNN(N_IN, N, bias=False).state_dict(), "bias_ih_l0": torch.zeros(N)},
        nn.Linear(N, 2),
        {},
        ValueError,
        "lacks ['bias_hh_l0']",
    ),  # fmt: skip
    (lambda: {"W_XH": 1}, None, {}, ValueError, "no 'weight_hh_l0' or 'W_hh'"),
    (lambda: Model().state_dict(), nn.Linear(N, 2), {}, ValueError, "give the readout once"),
    (lambda: {**Model().state_dict(), "fc.weight": torch.ones(2, N)}, None, {}, ValueError, "2 candidate readout"),
    (lambda: {**Model().state_dict(), "norm.running_mean": torch.ones(N)}, None, {}, ValueError, "neither the nn.RNN"),
    (lambda: _arrays(), nn.Linear(N, 2), {}, ValueError, "not used with a dict of arrays"),
    (lambda: nn.RNN(N_IN, N), nn.ReLU(), {}, TypeError, "readout=ReLU is not supported"),
    (lambda: 42, None, {}, TypeError, "source=int is not supported"),
    (lambda: _arrays(W_hh=np.full((N, N), "x")), None, {}, TypeError, "W_hh must be a real numeric array"),
]


@pytest.mark.parametrize(("make", "readout", "keywords", "error", "fragment"), REFUSALS)
def test_refusals_name_the_parameter_value_and_what_is_supported(make, readout, keywords, error, fragment):
    with pytest.raises(error) as caught:
        load_rnn(make(), readout, **keywords)
    assert fragment in str(caught.value)


def test_unreadable_files_are_refused_naming_the_file(tmp_path):
    (tmp_path / "junk.pt").write_bytes(b"not a torch file")
    (tmp_path / "junk.npz").write_bytes(b"PK\x03\x04 truncated")
    np.savez(tmp_path / "objects.npz", W_hh=np.array([None, 1], dtype=object))
    torch.save(nn.Linear(2, 2), tmp_path / "module.pt")  # a pickled module, not a state dict
    np.savez(tmp_path / "partial.npz", W_hh=np.eye(N))
    (tmp_path / "weights.txt").write_text("1 2 3")
    for name in ("junk.pt", "junk.npz", "objects.npz", "module.pt", "partial.npz"):
        with pytest.raises(ValueError, match=name):
            load_rnn(tmp_path / name)
    with pytest.raises(ValueError, match=r"weights.txt.*suffix '.txt'; supported files: \['.npz', '.pt', '.pth'\]"):
        load_rnn(tmp_path / "weights.txt")
    with pytest.raises(FileNotFoundError, match="missing.npz"):
        load_rnn(tmp_path / "missing.npz")


# ---------------------------------------------------------------------------------------- paper A's analysis


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
