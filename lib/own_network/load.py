"""A recurrent network trained elsewhere, read into the book's conventions (issue 33, "Your own network").

:class:`RecurrentNet` is one tanh layer with optional biases and a leak a ∈ (0, 1]::

    h_t = (1 − a)·h_{t−1} + a·tanh(W_hh h_{t−1} + W_xh x_t + b_h),    y_t = W_hy h_t + b_y,    h_0 = 0,

which is the book's RNN (:mod:`lib.paper_a.rnn`, paper A eqs. 1–2) when a = 1 and there are no biases: the same
update, the same h_0 = 0, the readout of the updated state h_t (such a network is rolled out by the book's own
:func:`lib.paper_a.rnn.rollout_fast`). Weights are float64 torch tensors; inputs are batch first, (B, T, n_in).

:func:`load_rnn` reads one from what another codebase leaves behind. Accepted, exactly:

- a ``torch.nn.RNN`` (one layer, ``nonlinearity='tanh'``, not bidirectional, with or without bias: b_h = bias_ih +
  bias_hh) with ``readout``: an ``nn.Linear``, its weight (n_out, N) or a pair (weight, bias);
- an ``nn.Module`` holding exactly one such ``nn.RNN`` and, unless ``readout`` is given, exactly one ``nn.Linear``
  (the readout), and no other parameter or buffer;
- the state dict of either: ``<p>weight_ih_l0``, ``<p>weight_hh_l0``, optionally ``<p>bias_ih_l0`` with
  ``<p>bias_hh_l0`` (one prefix ``<p>``, e.g. ``""`` or ``"rnn."``) and, unless ``readout`` is given, one
  ``<q>weight`` (n_out, N) with optionally ``<q>bias`` (e.g. ``"readout."``, ``"fc."``); no other key;
- a dict of arrays ``W_hh`` (N, N), ``W_xh`` (N, n_in), ``W_hy`` (n_out, N), optionally ``b_h`` (N,), ``b_y``
  (n_out,) and the leak ``a``; no other key (then ``readout`` is not used);
- a path to a ``.npz`` file (``np.load`` with ``allow_pickle=False``) or a ``.pt``/``.pth`` file (``torch.load`` with
  ``weights_only=True``, through :func:`lib.core.cache.load_checkpoint`) holding a state dict or a dict of arrays.

A state dict records neither the nonlinearity nor the layout: tanh is assumed (a relu network's reads as a tanh one
that fails its task: the chapter *Your own network* checks the held-out FVU first). Refused, naming the parameter, the
value and what is supported: GRU, LSTM, several layers, bidirectional, relu, mismatched shapes, non-finite entries,
a non-square W_hh, a leak outside (0, 1], missing or unknown keys, an unreadable file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from lib.core import params
from lib.own_network.files import read_file
from lib.paper_a import rnn

#: The keys of a dict of arrays (the first three required).
ARRAY_KEYS = ("W_hh", "W_xh", "W_hy", "b_h", "b_y", "a")
_GATED = {3: "a GRU's", 4: "an LSTM's"}
_READOUTS = "an nn.Linear, its weight (n_out, N) or a pair (weight, bias)"
_SUPPORTED = (
    "an nn.RNN (one layer, tanh, one direction) with readout=, an nn.Module holding one nn.RNN and one nn.Linear, "
    f"their state dict, a dict of arrays {list(ARRAY_KEYS)}, or a path to a .npz or .pt file holding one of these"
)


def _tensor(name: str, value: Any) -> torch.Tensor:
    """``value`` as a float64 CPU tensor (a copy); ``TypeError``/``ValueError`` naming ``name`` unless real, finite."""
    if isinstance(value, torch.Tensor):
        if value.is_complex() or value.dtype == torch.bool:
            raise TypeError(f"{name} must be a real numeric array; got dtype {value.dtype}")
        out = value.detach().to("cpu", torch.float64).clone()
    else:
        array = np.asarray(value)
        if array.dtype.kind not in "iuf":
            raise TypeError(f"{name} must be a real numeric array; got dtype {array.dtype} ({type(value).__name__})")
        out = torch.tensor(array, dtype=torch.float64)
    bad = int((~torch.isfinite(out)).sum())
    if bad:
        raise ValueError(f"{name} has {bad} non-finite entries (NaN or ±inf) of {out.numel()}; all must be finite")
    return out


def _leak(name: str, value: Any) -> float:
    """The leak as a float in (0, 1] (a 0-d array or tensor is read as its number)."""
    if isinstance(value, np.ndarray | torch.Tensor) and value.ndim == 0:
        value = value.item()
    return params.real(name, value, min=0.0, max=1.0, min_open=True)


@dataclass(frozen=True, eq=False)
class RecurrentNet:
    """h_t = (1 − a)·h_{t−1} + a·tanh(W_hh h_{t−1} + W_xh x_t + b_h), y_t = W_hy h_t + b_y, h_0 = 0.

    ``W_hh`` (N, N), ``W_xh`` (N, n_in), ``W_hy`` (n_out, N), ``b_h`` (N,) or None, ``b_y`` (n_out,) or None: float64
    tensors (copies of what is given, checked: shapes, finite); ``a``: the leak in (0, 1], 1 for a plain RNN.
    Two nets are equal (``==``) when every array is bit for bit equal and the leaks are.
    """

    W_hh: torch.Tensor
    W_xh: torch.Tensor
    W_hy: torch.Tensor
    b_h: torch.Tensor | None = None
    b_y: torch.Tensor | None = None
    a: float = 1.0

    def __post_init__(self):
        for name in ("W_hh", "W_xh", "W_hy", "b_h", "b_y"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, _tensor(name, getattr(self, name)))
        object.__setattr__(self, "a", _leak("a", self.a))
        W_hh, W_xh, W_hy = self.W_hh, self.W_xh, self.W_hy
        if W_hh.ndim != 2 or W_hh.shape[0] != W_hh.shape[1] or W_hh.shape[0] == 0:
            raise ValueError(f"W_hh has shape {tuple(W_hh.shape)}; it must be square, (N, N) with N ≥ 1")
        n = W_hh.shape[0]
        expected = {
            "W_xh": (W_xh, W_xh.ndim == 2 and W_xh.shape[0] == n and W_xh.shape[1] > 0, f"({n}, n_in)"),
            "W_hy": (W_hy, W_hy.ndim == 2 and W_hy.shape[1] == n and W_hy.shape[0] > 0, f"(n_out, {n})"),
            "b_h": (self.b_h, self.b_h is None or tuple(self.b_h.shape) == (n,), f"({n},)"),
            "b_y": (self.b_y, self.b_y is None or tuple(self.b_y.shape) == (W_hy.shape[0],), "(n_out,) of W_hy"),
        }
        for name, (value, fits, shape) in expected.items():
            if not fits:
                raise ValueError(f"{name} has shape {tuple(value.shape)}; it must be {shape}, with N = {n} from W_hh")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RecurrentNet):
            return NotImplemented
        pairs = [(getattr(self, k), getattr(other, k)) for k in ("W_hh", "W_xh", "W_hy", "b_h", "b_y")]
        return self.a == other.a and all(x is y or (None not in (x, y) and torch.equal(x, y)) for x, y in pairs)

    __hash__ = None

    def __repr__(self) -> str:
        biases = [k for k in ("b_h", "b_y") if getattr(self, k) is not None] or ["no biases"]
        sizes = f"N={self.n_hidden}, {self.n_inputs} in, {self.n_outputs} out"
        return f"RecurrentNet({sizes}, {', '.join(biases)}, a={self.a:g})"

    n_hidden = property(lambda self: self.W_hh.shape[0], doc="N.")
    n_inputs = property(lambda self: self.W_xh.shape[1], doc="n_in.")
    n_outputs = property(lambda self: self.W_hy.shape[0], doc="n_out.")

    @property
    def plain(self) -> bool:
        """Whether this is the book's bias-free tanh RNN (a = 1, no b_h, no b_y)."""
        return self.a == 1.0 and self.b_h is None and self.b_y is None

    def weights(self) -> rnn.Weights:
        """The book's weight dict ``{"W_xh", "W_hh", "W_hy"}`` (the biases and the leak are not in it)."""
        return {"W_xh": self.W_xh, "W_hh": self.W_hh, "W_hy": self.W_hy}

    def with_recurrent(self, W_hh: Any) -> RecurrentNet:
        """This network with another W_hh (an ablation's W̃_hh); W_xh, W_hy, the biases and the leak kept."""
        return replace(self, W_hh=W_hh)

    def run(self, inputs_btx: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """Driven rollout from h_0 = 0: ``(outputs_bty, states_bth)``, (B, T, n_out) and (B, T, N), float64.

        ``inputs_btx`` is (batch, time, n_in), batch first (a time-first ``x`` is ``x.transpose(0, 1)``). Without b_h
        and with a = 1 the states come from the book's :func:`lib.paper_a.rnn.rollout_fast`.
        """
        x = _tensor("inputs_btx", inputs_btx)
        if x.ndim != 3 or x.shape[2] != self.n_inputs or x.shape[1] == 0:
            raise ValueError(f"inputs_btx has shape {tuple(x.shape)}; it must be (batch, time ≥ 1, n_in = "
                             f"{self.n_inputs}), batch first (a time-first x is x.transpose(0, 1))")  # fmt: skip
        with torch.no_grad():
            if self.a == 1.0 and self.b_h is None:
                outputs, states = rnn.rollout_fast(self.weights(), x)
            else:
                states = self._states(x)
                outputs = states @ self.W_hy.T
        return (outputs if self.b_y is None else outputs + self.b_y), states

    def _states(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, N) states of the leaky, biased recurrence (explicit loop)."""
        drive = x @ self.W_xh.T if self.b_h is None else x @ self.W_xh.T + self.b_h
        h, states, W_hh_T = x.new_zeros(x.shape[0], self.n_hidden), [], self.W_hh.T
        for t in range(x.shape[1]):
            new = torch.tanh(drive[:, t] + h @ W_hh_T)
            h = new if self.a == 1.0 else (1.0 - self.a) * h + self.a * new
            states.append(h)
        return torch.stack(states, dim=1)


def load_rnn(source: Any, readout: Any = None, *, leak: float = 1.0, batch_first: bool | None = None) -> RecurrentNet:
    """A :class:`RecurrentNet` from a torch module, a state dict, a dict of arrays or a file (module docstring).

    ``readout``: the ``nn.Linear``, its weight or (weight, bias), where ``source`` does not hold one. ``leak``: the
    leak a (a dict's or file's own ``a`` wins; a different ``leak`` besides it is refused). ``batch_first``: if given,
    checked against an ``nn.RNN``'s own (weights do not depend on it; :meth:`RecurrentNet.run` is always batch first).
    """
    leak = _leak("leak", leak)
    if batch_first is not None:
        params.boolean("batch_first", batch_first)
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        data = read_file(path)
        try:
            return _from_mapping(data, readout, leak)
        except (ValueError, TypeError) as exc:
            raise type(exc)(f"source={str(path)!r}: {exc}") from None
    if isinstance(source, nn.Module):
        return _from_module(source, readout, leak, batch_first)
    if isinstance(source, Mapping):
        return _from_mapping(source, readout, leak)
    raise TypeError(f"source={type(source).__name__} is not supported; give {_SUPPORTED}")


def _from_mapping(data: Mapping, readout: Any, leak: float) -> RecurrentNet:
    return _from_arrays(data, readout, leak) if "W_hh" in data else _from_state_dict(data, readout, leak)


def _from_arrays(data: Mapping, readout: Any, leak: float) -> RecurrentNet:
    """A dict of arrays W_hh, W_xh, W_hy (b_h, b_y, a)."""
    if readout is not None:
        raise ValueError(f"readout={type(readout).__name__} is not used with a dict of arrays: put W_hy, b_y in it")
    unknown = sorted(str(k) for k in data if k not in ARRAY_KEYS)
    missing = [k for k in ARRAY_KEYS[:3] if k not in data]
    if unknown or missing:
        what = f"the unknown keys {unknown}" if unknown else f"no {missing}"
        raise ValueError(f"source has {what}; a dict of arrays holds {list(ARRAY_KEYS)}, the first three required")
    a = leak
    if "a" in data:
        a = _leak("a", data["a"])
        if leak not in (1.0, a):
            raise ValueError(f"leak={leak} differs from the source's own a={a}; give one of them")
    return RecurrentNet(**{k: data[k] for k in ARRAY_KEYS[:5] if k in data}, a=a)


def _from_module(module: nn.Module, readout: Any, leak: float, batch_first: bool | None) -> RecurrentNet:
    """An nn.RNN, or a module holding one nn.RNN (and one nn.Linear), checked by its attributes, then its state dict."""
    cells = [m for m in module.modules() if isinstance(m, nn.RNNBase)]
    if len(cells) != 1:
        raise ValueError(f"source ({type(module).__name__}) holds {len(cells)} recurrent modules; {_SUPPORTED}")
    (cell,) = cells
    if isinstance(cell, nn.GRU | nn.LSTM) or cell.mode not in ("RNN_TANH", "RNN_RELU"):
        kind = f"nn.{type(cell).__name__} (mode={cell.mode!r})"
        raise ValueError(f"source holds an {kind}; only nn.RNN with nonlinearity='tanh' is supported (no gates)")
    if cell.mode != "RNN_TANH":
        raise ValueError(f"nonlinearity={cell.nonlinearity!r} is not supported; only 'tanh' (paper A's RNN)")
    if cell.num_layers != 1:
        raise ValueError(f"num_layers={cell.num_layers} is not supported; only a single-layer nn.RNN (num_layers=1)")
    if cell.bidirectional:
        raise ValueError("bidirectional=True is not supported; only a one-directional nn.RNN")
    if batch_first is not None and batch_first != cell.batch_first:
        raise ValueError(f"batch_first={batch_first} but the nn.RNN has batch_first={cell.batch_first}")
    return _from_state_dict(module.state_dict(), readout, leak)


_RNN_KEY = re.compile(r"(weight|bias)_(ih|hh|hr)_l\d+(_reverse)?$")


def _from_state_dict(state: Mapping, readout: Any, leak: float) -> RecurrentNet:
    """nn.RNN's weight_ih_l0, weight_hh_l0 (bias_ih_l0, bias_hh_l0) under one prefix, and one readout."""
    keys = [str(k) for k in state]
    hh = [k for k in keys if k.endswith("weight_hh_l0")]
    if len(hh) != 1:
        found = f"{len(hh)} recurrent weights {hh}" if hh else f"no 'weight_hh_l0' or 'W_hh' among {keys[:8]}"
        raise ValueError(f"source has {found}; supported: {_SUPPORTED}")
    p = hh[0][: -len("weight_hh_l0")]
    own = [k for k in keys if k.startswith(p) and _RNN_KEY.match(k[len(p) :])]
    problems = {"weight_hh_l1": "num_layers > 1", "weight_hh_l0_reverse": "bidirectional", "weight_hr_l0": "LSTM"}
    for key, problem in ((p + k, v) for k, v in problems.items()):
        if key in state:
            raise ValueError(f"source has the key {key!r} ({problem}); only a single-layer, one-directional nn.RNN")
    W_hh = _tensor(f"{p}weight_hh_l0", state[f"{p}weight_hh_l0"])
    rows, n = (tuple(W_hh.shape) + (0, 0))[:2]
    if W_hh.ndim == 2 and n and rows in (3 * n, 4 * n):
        gates = f"{rows // n}×{n} rows: {_GATED[rows // n]} stacked gates"
        raise ValueError(f"{p}weight_hh_l0 has shape {tuple(W_hh.shape)}, {gates}; only nn.RNN (tanh) is supported")
    if W_hh.ndim != 2 or rows != n:
        raise ValueError(f"{p}weight_hh_l0 has shape {tuple(W_hh.shape)}; it must be square, (N, N)")
    present = [k for k in (f"{p}weight_ih_l0", f"{p}bias_ih_l0", f"{p}bias_hh_l0") if k in state]
    if f"{p}weight_ih_l0" not in present or len(present) == 2:
        lacking = sorted({f"{p}weight_ih_l0", f"{p}bias_ih_l0", f"{p}bias_hh_l0"} - set(present))
        raise ValueError(f"source lacks {lacking}; an nn.RNN's state dict holds weight_ih_l0, weight_hh_l0 and both "
                         "or neither of bias_ih_l0, bias_hh_l0")  # fmt: skip
    b_h = _tensor(p + "bias_ih_l0", state[p + "bias_ih_l0"]) + _tensor(p + "bias_hh_l0", state[p + "bias_hh_l0"]) \
        if len(present) == 3 else None  # fmt: skip
    rest = [k for k in keys if k not in own]
    W_hy, b_y = _readout_of(state, rest, readout)
    W_xh = _tensor(p + "weight_ih_l0", state[p + "weight_ih_l0"])
    return RecurrentNet(W_hh=W_hh, W_xh=W_xh, W_hy=W_hy, b_h=b_h, b_y=b_y, a=leak)


def _readout_of(state: Mapping, rest: list[str], readout: Any) -> tuple[Any, Any]:
    """(W_hy, b_y) from ``readout`` or from the one nn.Linear among the state dict's other keys ``rest``."""
    if readout is not None:
        if rest:
            raise ValueError(f"readout= is given but source also holds {rest}; give the readout once")
        if isinstance(readout, nn.Linear):
            return readout.weight, readout.bias
        if isinstance(readout, tuple) and len(readout) == 2:
            return readout
        if isinstance(readout, nn.Module | tuple | Mapping):
            raise TypeError(f"readout={type(readout).__name__} is not supported; {_READOUTS}")
        return readout, None
    weights = [k for k in rest if k.endswith("weight")]
    if len(weights) != 1:
        found = f"{len(weights)} candidate readout weights {weights}" if weights else "no readout"
        raise ValueError(f"source has {found}; give readout= ({_READOUTS}) or one nn.Linear's '<name>.weight'")
    q = weights[0][: -len("weight")]
    extra = [k for k in rest if k not in (f"{q}weight", f"{q}bias")]
    if extra:
        raise ValueError(f"source holds {extra}, neither the nn.RNN's nor the readout's; supported: {_SUPPORTED}")
    return state[f"{q}weight"], state.get(f"{q}bias")
