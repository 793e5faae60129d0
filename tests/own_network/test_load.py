"""Your own network (issue 33), reading an RNN trained elsewhere (``lib.own_network.load``): its outputs, round trips,
leak and biases, and what is refused.

Paper A's ablations on it are tested in ``tests/own_network/test_paper_a.py``."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from lib.own_network import (
    RecurrentNet,
    load_rnn,
)
from lib.paper_a import rnn

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
