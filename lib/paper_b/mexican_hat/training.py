"""Training the ASRNN (notes §9.3): Adam on minibatches of windows (float32), cosine learning-rate decay, optional L1.

A trained model comes from the book's one cache (``lib.core.cache.fetch``): keyed by its :class:`ASRNNConfig` and a
fingerprint of the source files that decide what a configuration trains to (:func:`training_code`).

One loop (:func:`train_asrnn`), two steps: the readable one (:func:`_reference_step`: autograd through
``trajectory_loss`` and ``torch.optim.Adam`` over the separate tensors, the textbook step of paper A's readable loop
:func:`lib.paper_a.reference_training.train` and of the annulus classifier's
:func:`lib.paper_b.annulus.model.train_model`) and the fast one (:func:`_fast_step`: the hand-written loss and gradient
of :mod:`lib.kernels.leapfrog_mlp` and the flat :class:`lib.kernels.adam.Adam`, the optimiser of paper A's seed-batched
training), tested against each other to float32 rounding (``tests/paper_b/mexican_hat/test_training.py``). As in paper
A, a readable reference stands beside the fast path the book's models come from; unlike paper A, the two share the loop
(the minibatch draw, the schedule, the evaluation) and differ only in the step, so this whole file, the readable step
included, is in the cache key. The loop differs from paper A's where the problem does: minibatches of a fixed set of
windows, drawn by a seeded permutation (epochs without replacement), instead of a fresh task batch per step; a cosine
learning-rate decay and an optional L1 term; the validation MSE recorded every ``eval_every`` steps and no early stop (a
fixed budget of steps); one model at a time, not seeds side by side. From the annulus classifier's full-batch loop it
differs by the minibatches, the schedule and the fast step."""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch

from lib.core import cache, params
from lib.core.progress import bar as progress_bar
from lib.kernels import adam, leapfrog_mlp, silu_mlp
from lib.kernels.adam import Adam
from lib.kernels.leapfrog_mlp import leapfrog_loss_grad
from lib.paper_b.mexican_hat.data import DataConfig, Windows, make_windows
from lib.paper_b.mexican_hat.model import ASRNN, trajectory_loss
from lib.paper_b.mexican_hat.system import DT


@dataclass(frozen=True, kw_only=True)
class ASRNNConfig:
    """Everything that determines a trained ASRNN (the cache key)."""

    data: DataConfig = field(default_factory=DataConfig)
    steps: int = 6000
    batch: int = 1000
    lr: float = 3e-3
    lr_final: float = 1e-4  # cosine decay from lr to lr_final
    l1: float = 0.0  # weight of Σ|θ| added to the loss
    seed: int = 42
    eval_every: int = 100
    snapshot_steps: tuple[int, ...] = ()  # steps at which the weights are also kept

    def __post_init__(self):
        """Every knob checked where it is stored (errors name the knob, the value and what is allowed)."""
        if not isinstance(self.data, DataConfig):
            raise TypeError(f"data must be a DataConfig, got {type(self.data).__name__}")
        params.integer("steps", self.steps, min=1)
        params.integer("batch", self.batch, min=1)
        params.real("lr", self.lr, min=0.0, min_open=True)
        params.real("lr_final", self.lr_final, min=0.0, max=self.lr)
        params.real("l1", self.l1, min=0.0)
        params.integer("seed", self.seed, min=0)
        params.integer("eval_every", self.eval_every, min=1)


@dataclass
class ASRNNTraining:
    """A trained model with its history: steps (E,), train/val MSE (E,), wall seconds, snapshots, cache info."""

    model: ASRNN
    config: ASRNNConfig
    steps: np.ndarray
    train_mse: np.ndarray
    val_mse: np.ndarray
    seconds: float
    snapshots: dict[int, ASRNN]
    from_cache: bool = False
    path: str = ""

    @property
    def final_val_mse(self) -> float:
        """Validation MSE at the end of training."""
        return float(self.val_mse[-1])


def _lr_at(cfg: ASRNNConfig, step: int) -> float:
    return cfg.lr_final + 0.5 * (cfg.lr - cfg.lr_final) * (1 + math.cos(math.pi * step / max(cfg.steps, 1)))


def _reference_step(model: ASRNN, cfg: ASRNNConfig):
    """The readable step: autograd through ``trajectory_loss`` and ``torch.optim.Adam`` over the separate tensors."""
    params = model.parameters()
    for t in params:
        t.requires_grad_(True)
    opt = torch.optim.Adam(params, lr=cfg.lr)

    def step(windows: Windows, lr: float) -> float:
        for g in opt.param_groups:
            g["lr"] = lr
        loss = trajectory_loss(model, windows)
        value = float(loss.detach())
        if cfg.l1 > 0:
            loss = loss + cfg.l1 * sum(t.abs().sum() for t in params)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return value

    return model, step


def _fast_step(model: ASRNN, cfg: ASRNNConfig):
    """The fast step: the hand-written loss and gradient of ``lib.kernels.leapfrog_mlp`` (no autograd graph) and
    ``lib.kernels.adam.Adam`` on one flat parameter vector (one sweep of elementwise ops instead of one per tensor).
    Returns the model whose tensors are views of that vector, and the step."""
    params = model.parameters()
    theta = torch.cat([t.detach().reshape(-1) for t in params])
    views = list(theta.split([t.numel() for t in params]))
    views = [v.view(t.shape) for v, t in zip(views, params, strict=True)]
    nk = len(model.k_params)
    model = ASRNN(views[:nk], views[nk:])
    theta.grad = torch.empty_like(theta)
    opt = Adam([theta], lr=cfg.lr)
    workspace: dict = {}

    def step(w: Windows, lr: float) -> float:
        loss, gk, gv = leapfrog_loss_grad(
            model.k_params, model.v_params, w.start, w.alpha, w.idx, w.target, DT, workspace=workspace
        )
        torch.cat([g.reshape(-1) for g in (*gk, *gv)], out=theta.grad)
        if cfg.l1 > 0:
            theta.grad.add_(theta.sign(), alpha=cfg.l1)  # ∂Σ|θ|/∂θ as autograd has it (0 at 0)
        opt.lr = lr
        opt.step()
        return float(loss)

    return model, step


def train_asrnn(cfg: ASRNNConfig = ASRNNConfig(), *, progress: bool = True, reference: bool = False) -> ASRNNTraining:
    """Adam on minibatches of windows (float32), cosine learning-rate decay, optional L1; seeded throughout.

    The step is the fast one (:func:`_fast_step`) unless ``reference``: then the readable autograd step
    (:func:`_reference_step`). Both train to the same weights up to float32 rounding
    (``tests/paper_b/mexican_hat/test_training.py``)."""
    if not isinstance(cfg, ASRNNConfig):
        raise TypeError(f"cfg must be a ASRNNConfig, got {type(cfg).__name__}")
    train_w, val_w = make_windows(cfg.data)
    train_w, val_w = train_w.to(torch.float32), val_w.to(torch.float32)
    model, train_step = (_reference_step if reference else _fast_step)(ASRNN.init(seed=cfg.seed), cfg)
    gen = torch.Generator().manual_seed(cfg.seed + 1)
    n = len(train_w)
    batch = min(cfg.batch, n)
    hist_s, hist_tr, hist_va, snaps = [], [], [], {}
    perm, pos = torch.randperm(n, generator=gen), 0
    t0 = time.perf_counter()
    running = 0.0
    bar = progress_bar(total=cfg.steps, desc="training ASRNN", disable=not progress)
    for step in range(cfg.steps + 1):
        if step in cfg.snapshot_steps:
            snaps[step] = model.to(torch.float32)
        if step % cfg.eval_every == 0 or step == cfg.steps:
            with torch.no_grad():
                val = float(trajectory_loss(model, val_w))
            hist_s.append(step)
            hist_va.append(val)
            hist_tr.append(running / cfg.eval_every if step else float("nan"))
            running = 0.0
            bar.set_postfix(val=f"{val:.2e}", refresh=False)
        if step == cfg.steps:
            break
        if pos + batch > n:
            perm, pos = torch.randperm(n, generator=gen), 0
        rows = perm[pos : pos + batch]
        pos += batch
        running += train_step(train_w.subset(rows), _lr_at(cfg, step))
        bar.update(1)
    bar.close()
    seconds = time.perf_counter() - t0
    return ASRNNTraining(
        model=model.to(torch.float32),
        config=cfg,
        steps=np.asarray(hist_s),
        train_mse=np.asarray(hist_tr),
        val_mse=np.asarray(hist_va),
        seconds=seconds,
        snapshots=snaps,
    )


def training_code() -> str:
    """Fingerprint of the sources that decide what a configuration trains to: the true system, the windows, the model,
    the hand-written gradient kernels, the optimiser and this training loop."""
    here = Path(__file__).parent
    kernels = [Path(m.__file__) for m in (silu_mlp, leapfrog_mlp, adam)]
    files = [here / "system.py", here / "data.py", here / "model.py", here / "training.py", *kernels]
    return cache.fingerprint(files)


def train_cached(cfg: ASRNNConfig = ASRNNConfig(), *, progress: bool = True) -> ASRNNTraining:
    """``train_asrnn(cfg)``, or its result from the book's cache (``cache_dir()/asrnn-<key>.pt``)."""

    def compute() -> dict:
        res = train_asrnn(cfg, progress=progress)
        return {
            "model": res.model.state_dict(),
            "steps": torch.as_tensor(res.steps),
            "train_mse": torch.as_tensor(res.train_mse),
            "val_mse": torch.as_tensor(res.val_mse),
            "seconds": res.seconds,
            "snapshots": {str(k): v.state_dict() for k, v in res.snapshots.items()},
            "config": repr(cfg),
        }

    required = ("model", "steps", "train_mse", "val_mse", "seconds")
    ck, path, from_cache = cache.fetch(
        "asrnn", asdict(cfg), compute, code=training_code(), required=required, finite=("model", "snapshots")
    )
    return ASRNNTraining(
        model=ASRNN.from_state_dict(ck["model"]),
        config=cfg,
        steps=ck["steps"].numpy(),
        train_mse=ck["train_mse"].numpy(),
        val_mse=ck["val_mse"].numpy(),
        seconds=float(ck["seconds"]),
        snapshots={int(k): ASRNN.from_state_dict(v) for k, v in ck.get("snapshots", {}).items()},
        from_cache=from_cache,
        path=str(path),
    )
