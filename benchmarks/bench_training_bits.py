"""What the reference's bits cost (issue 19): a seed-batched replica of its arithmetic, against both trainings.

The book trains through :class:`lib.kernels.seed_batch.SeedBatchedMSE` (several seeds in one recurrence, tanh through
the logistic function); :class:`lib.kernels.recurrence.RolloutMSE` is the one-network kernel the readable loop used
before it became the textbook loop (:mod:`lib.paper_a.reference_training`). The two round differently, and over
thousands of Adam steps that moves trained networks, and with them a few of the book's verdicts
(``book/reproducibility.md``). This benchmark asks whether the reference's rounding could be kept at the book's speed:
:class:`ExactSeedBatch` below stacks S networks but performs the reference's operations op for op (``baddbmm_`` per time
step, torch's float32 ``tanh_``, the readout and weight gradients per seed). For each task model it prints

- whether the replica's losses and gradients equal the reference's **bit for bit** on the same weights and batch;
- milliseconds per model-step of the loss and gradients: replica, book kernel, reference;
- the per-call cost, at the recurrence's shape (64, 64), of ``tanh_``, ``sigmoid_`` and the step's ``addmm_``.

The finding it keeps (AMD EPYC, torch 2.13, one thread, 2026-12-01): the replica is bitwise the reference in all four
models and no faster than it (1.0–1.2× its time), because float32 ``tanh_`` costs more per step than the step's
product (9.1 µs against 6.0 µs; ``sigmoid_`` 1.5 µs). Keeping the reference's bits keeps its speed; the book's
speed comes from arithmetic that rounds differently.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_training_bits.py [--seeds 5] [--repeats 50]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_training import configs  # noqa: E402

from lib.kernels import recurrence, seed_batch  # noqa: E402
from lib.paper_a import batched_training, rnn  # noqa: E402
from lib.paper_a.tasks import get_task  # noqa: E402


class ExactSeedBatch:
    """``losses, grads = ExactSeedBatch()(W_xh, W_hh, W_hy, inputs, targets, mask)``, the signature of
    :class:`lib.kernels.seed_batch.SeedBatchedMSE`, with :func:`lib.kernels.recurrence._loss_and_grads`'s arithmetic
    for every seed (a batched product per time step is bitwise the per-seed product here; the thin products are
    taken per seed, where a batched one may round differently)."""

    def __call__(self, W_xh, W_hh, W_hy, inputs_sbtx, targets_sbty, mask_sbty=None):
        seeds, batch, steps, _ = inputs_sbtx.shape
        n = W_hh.shape[-1]
        inputs_stbx = inputs_sbtx.transpose(1, 2).contiguous()
        x_flat = inputs_stbx.view(seeds, steps * batch, -1)
        states = inputs_sbtx.new_zeros(seeds, steps + 1, batch, n)
        states[:, 1:] = _per_seed(seeds, lambda s: x_flat[s].mm(W_xh[s].T)).view(seeds, steps, batch, n)
        W_hh_T = W_hh.transpose(1, 2)
        for t in range(steps):
            states[:, t + 1].baddbmm_(states[:, t], W_hh_T).tanh_()
        S = states[:, 1:].transpose(1, 2).reshape(seeds, batch * steps, n)
        diff = _per_seed(seeds, lambda s: S[s].mm(W_hy[s].T)).view(seeds, batch, steps, -1) - targets_sbty
        sq = diff**2
        one = torch.ones((), dtype=sq.dtype)
        if mask_sbty is None:
            losses = _per_seed(seeds, lambda s: torch.mean(sq[s]))
            grad_sq = one.expand(sq.shape) / sq[0].numel()
        else:
            masked = sq * mask_sbty
            totals = _per_seed(seeds, lambda s: torch.sum(mask_sbty[s]))
            losses = _per_seed(seeds, lambda s: torch.sum(masked[s])) / totals
            grad_sq = (one / totals).view(seeds, 1, 1, 1).expand(sq.shape) * mask_sbty
        grad_out = (grad_sq * (2.0 * diff.pow(1.0))).view(seeds, batch * steps, -1)
        grad_W_hy = _per_seed(seeds, lambda s: grad_out[s].t().mm(S[s]))
        grad_S = _per_seed(seeds, lambda s: grad_out[s].mm(W_hy[s]))
        dz = grad_S.view(seeds, batch, steps, n).transpose(1, 2).contiguous()
        dtanh = states[:, 1:].square().neg_().add_(1.0)
        dz[:, -1].mul_(dtanh[:, -1])
        for t in range(steps - 2, -1, -1):
            dz[:, t].baddbmm_(dz[:, t + 1], W_hh).mul_(dtanh[:, t])
        dz_flat = dz.view(seeds, steps * batch, n)
        h_prev = states[:, :-1].reshape(seeds, steps * batch, n)
        grad_W_hh = _per_seed(seeds, lambda s: dz_flat[s].T @ h_prev[s])
        grad_W_xh = _per_seed(seeds, lambda s: dz_flat[s].T @ x_flat[s])
        return losses, (grad_W_xh, grad_W_hh, grad_W_hy)


def _per_seed(seeds: int, compute) -> torch.Tensor:
    return torch.stack([compute(s) for s in range(seeds)])


def problem(model: str, seeds: int):
    """Initial float32 weights of ``seeds`` solutions of ``model`` and each one's first training batch."""
    cs = configs(model, seeds, steps=1)
    weights, batches = [], []
    for c in cs:
        probe = get_task(c.task).generate(1, seed=0, **c.task_params)
        shape = (probe.inputs_btx.shape[-1], probe.targets_bty.shape[-1])
        params = rnn.init_params(c.construction, c.n_hidden, *shape, seed=c.seed)
        weights.append({k: v.float() for k, v in rnn.weights_from_params(params).items()})
        batches.append(batched_training.DataStream(c, torch.float32, 0).next())
    return weights, batches


def reference(weights, batches):
    losses, grads = [], []
    for w, batch in zip(weights, batches, strict=True):
        leaves = {k: v.clone().requires_grad_() for k, v in w.items()}
        loss = recurrence.RolloutMSE()(leaves, *batch)
        loss.backward()
        losses.append(loss.detach())
        grads.append([leaves[k].grad for k in rnn.WEIGHT_NAMES])
    return torch.stack(losses), [torch.stack([g[i] for g in grads]) for i in range(3)]


def per_model_step(compute, repeats: int, models: int) -> float:
    compute()
    start = time.perf_counter()
    for _ in range(repeats):
        compute()
    return (time.perf_counter() - start) / repeats / models


def per_call(op, repeats: int = 20000) -> float:
    for _ in range(100):
        op()
    start = time.perf_counter()
    for _ in range(repeats):
        op()
    return (time.perf_counter() - start) / repeats


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="solutions stacked in the batched kernels")
    parser.add_argument("--repeats", type=int, default=50, help="loss-and-gradient evaluations timed per kernel")
    parser.add_argument("--models", nargs="+", default=["flipflop", "sine", "context", "copy"])
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    for model in args.models:
        weights, batches = problem(model, args.seeds)
        stacked = [torch.stack([w[k] for w in weights]) for k in rnn.WEIGHT_NAMES]
        data = [torch.stack([b[j] for b in batches]) if batches[0][j] is not None else None for j in range(3)]
        exact, book = ExactSeedBatch(), seed_batch.SeedBatchedMSE()
        ref_losses, ref_grads = reference(weights, batches)
        losses, grads = exact(*stacked, *data)
        same = torch.equal(losses, ref_losses) and all(map(torch.equal, grads, ref_grads))
        kernels = {
            "replica": (lambda a=stacked, d=data, k=exact: k(*a, *d), args.seeds),
            "book": (lambda a=stacked, d=data, k=book: k(*a, *d), args.seeds),
            "reference": (lambda w=weights[:1], b=batches[:1]: reference(w, b), 1),
        }
        times = {name: per_model_step(compute, args.repeats, models) for name, (compute, models) in kernels.items()}
        print(
            f"{model:9s} replica bitwise the reference: {same!s:5s} | ms per model-step: "
            + "  ".join(f"{k} {v * 1e3:.2f}" for k, v in times.items())
            + f"  (replica/reference {times['replica'] / times['reference']:.2f})"
        )
    x, a, w = torch.randn(64, 64), torch.randn(64, 64), torch.randn(64, 64) / 8
    calls = {"tanh_": lambda: x.tanh_(), "sigmoid_": lambda: x.sigmoid_(), "addmm_": lambda: x.addmm_(a, w)}
    print("per call at (64, 64): " + "  ".join(f"{k} {per_call(op) * 1e6:.1f} µs" for k, op in calls.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
