"""The annulus classifier: Linear(2, 96) → GELU → (Linear(96, 96) → GELU) × 2 → Linear(96, 1), 19,009 parameters,
PyTorch default initialisation after ``torch.manual_seed(42)``, shared by both datasets; full-batch Adam 3e-3,
200 epochs, ``BCEWithLogitsLoss``, float32 (notes §8.3–8.4). Trained weights come from the book's one cache
(``lib.core.cache.fetch``), keyed by the configuration and a fingerprint of the code that trains them.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch
from torch import Tensor, nn

from lib.core import cache
from lib.paper_b.annulus.data import ARCS, DEFAULT_CONFIG, AnnulusConfig, make_data


class SimpleMLP(nn.Module):
    """``depth`` Linear layers with GELU between: 2 → hidden → … → 1 (a scalar logit)."""

    def __init__(self, hidden: int = 96, depth: int = 4):
        super().__init__()
        layers: list[nn.Module] = [nn.Linear(2, hidden), nn.GELU()]
        for _ in range(depth - 2):
            layers += [nn.Linear(hidden, hidden), nn.GELU()]
        layers.append(nn.Linear(hidden, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)


def init_model(config: AnnulusConfig = DEFAULT_CONFIG) -> SimpleMLP:
    """The shared initialisation: ``torch.manual_seed(init_seed)`` then default PyTorch init (float32)."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float32)  # the draws depend on the dtype: always initialise in float32
    try:
        torch.manual_seed(config.init_seed)
        return SimpleMLP(config.hidden, config.depth)
    finally:
        torch.set_default_dtype(previous)


def train_model(model: nn.Module, x: np.ndarray, y: np.ndarray, config: AnnulusConfig) -> list[float]:
    """Full-batch Adam on BCEWithLogits (labels y > 0 → 1), in place; returns the BCE per epoch.

    The textbook loop, as paper A's readable one (:func:`lib.paper_a.reference_training.train`) and the ASRNN's
    readable step (:mod:`lib.paper_b.mexican_hat.training`): autograd, ``torch.optim.Adam`` with torch's defaults,
    ``zero_grad`` / ``backward`` / ``step``, one model. It differs where the problem does: the whole data set is the
    batch of every epoch (no data stream, no seed for batches); a fixed number of epochs and no early stop (notes
    §8.3–8.4); a classification loss (BCE on the logit) instead of a regression one; an ``nn.Module`` initialised after
    ``torch.manual_seed``. Unlike both other loops it has no fast path beside it: full-batch steps of a small MLP are
    cheap, so the book's classifiers come from this loop itself (so do the widened ones of :mod:`lib.paper_b.at_scale`,
    trained in the chapter), and it is part of their cache key (:func:`training_code`), where paper A's readable loop
    is not.
    """
    x_t = torch.as_tensor(x, dtype=torch.float32)
    y_t = torch.as_tensor((y > 0).astype(np.float32))[:, None]
    opt = torch.optim.Adam(model.parameters(), lr=config.learning_rate)
    loss_fn = nn.BCEWithLogitsLoss()
    history = []
    for _ in range(config.epochs):
        opt.zero_grad()
        loss = loss_fn(model(x_t), y_t)
        loss.backward()
        opt.step()
        history.append(float(loss.detach()))
    return history


def training_code() -> str:
    """Fingerprint of the source files that decide what a configuration trains to (data, model, training)."""
    here = Path(__file__).parent
    return cache.fingerprint([here / "data.py", here / "model.py"])


def trained_models(config: AnnulusConfig = DEFAULT_CONFIG) -> dict:
    """θ_init and, per dataset, θ_trained (float64 vectors), the data and the BCE history; from the book's cache.

    Returns {"theta_init": (p,), "wedge"/"full": {"theta": (p,), "x", "y", "bce": list}, "from_cache": bool}.
    """
    names = [f"{d}_{k}" for d in ARCS for k in ("state", "bce")] + ["init_state"]

    def compute() -> dict:
        payload = {}
        for dataset, arc in ARCS.items():
            model = init_model(config)
            if "init_state" not in payload:
                payload["init_state"] = {k: v.clone() for k, v in model.state_dict().items()}
            x, y = make_data(arc, config)
            bce = train_model(model, x, y, config)
            payload[f"{dataset}_state"] = {k: v.clone() for k, v in model.state_dict().items()}
            payload[f"{dataset}_bce"] = torch.tensor(bce, dtype=torch.float64)
        return payload

    key = {**asdict(config), "arcs": ARCS}
    payload, _, from_cache = cache.fetch(
        "annulus_mlp", key, compute, code=training_code(), required=tuple(names), finite=tuple(names)
    )
    out = {"theta_init": _state_to_theta(payload["init_state"]), "from_cache": from_cache}
    for dataset, arc in ARCS.items():
        x, y = make_data(arc, config)
        out[dataset] = {
            "theta": _state_to_theta(payload[f"{dataset}_state"]),
            "x": x,
            "y": y,
            "bce": payload[f"{dataset}_bce"].tolist(),
        }
    return out


def _state_to_theta(state: dict[str, Tensor]) -> Tensor:
    return torch.cat([v.detach().reshape(-1).to(torch.float64) for v in state.values()])


def theta_to_module(theta: Tensor, config: AnnulusConfig = DEFAULT_CONFIG) -> SimpleMLP:
    """A float64 ``SimpleMLP`` holding the parameter vector θ (for jacrev cross-checks and plots)."""
    model = SimpleMLP(config.hidden, config.depth).double()
    torch.nn.utils.vector_to_parameters(theta.detach().to(torch.float64), model.parameters())
    return model


def layer_blocks(config: AnnulusConfig = DEFAULT_CONFIG) -> list[tuple[str, slice]]:
    """Names and θ slices of the weight and bias blocks, in parameter order (W1, b1, …, W4, b4)."""
    widths = (2,) + (config.hidden,) * (config.depth - 1) + (1,)
    out, start = [], 0
    for k, (d_in, d_out) in enumerate(zip(widths[:-1], widths[1:], strict=True), start=1):
        out.append((f"W{k}", slice(start, start + d_in * d_out)))
        start += d_in * d_out
        out.append((f"b{k}", slice(start, start + d_out)))
        start += d_out
    return out
