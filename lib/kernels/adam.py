"""Adam on one flat parameter vector: the weights of ``torch.optim.Adam`` bit for bit, with less bookkeeping.

Readable reference: ``torch.optim.Adam(params.values(), lr=lr)`` over the separate parameter tensors (its default
single-tensor path). ``tests/kernels/test_adam.py`` trains with both and asserts equal weights, bit for bit.

- :class:`FlatParameters` holds the named trainable tensors. When every tensor's size is a multiple of
  :data:`FLAT_ALIGN` (the §4 task models) they are views of one flat leaf, so Adam updates all of them in one sweep
  of elementwise ops instead of one per tensor; otherwise they are separate leaves.
- :class:`Adam` is ``torch.optim.Adam``'s update op for op, without the optimiser's per-call bookkeeping (about
  0.3 ms of a 4 ms training step here).
- :class:`StackedRows` holds the flat leaves of several networks as the rows of one (S, P) leaf, so one Adam
  updates all of them in one sweep; each row is updated as its own flat leaf would be, bit for bit
  (``tests/paper_a/test_batched_training.py``).
"""

from __future__ import annotations

import torch

# torch's vectorised kernels sweep blocks of up to 32 floats and finish a ragged tail with scalar code that rounds
# differently (no fused multiply-add), so only when every tensor is a whole number of blocks are the weights updated
# on the flat vector bit for bit those updated tensor by tensor.
FLAT_ALIGN = 64


class FlatParameters:
    """Named trainable tensors of ``dtype`` made from ``initial``; one flat leaf when every size is aligned."""

    def __init__(self, initial: dict[str, torch.Tensor], dtype: torch.dtype):
        self._flat = None
        if all(v.numel() % FLAT_ALIGN == 0 for v in initial.values()):
            self._flat = torch.cat([v.reshape(-1) for v in initial.values()]).to(dtype).requires_grad_(True)
            self._layout = [(k, v.shape, v.numel()) for k, v in initial.items()]
            self.leaves = [self._flat]
        else:
            self._tensors = {k: v.to(dtype).requires_grad_(True) for k, v in initial.items()}
            self.leaves = list(self._tensors.values())

    @property
    def is_flat(self) -> bool:
        """Whether the parameters are views of one flat leaf."""
        return self._flat is not None

    def set_grads(self, grads: dict[str, torch.Tensor]) -> None:
        """Set every leaf's ``.grad`` from the named tensors' gradients (what ``backward()`` would accumulate from
        zero), without autograd: the flat leaf gets them concatenated in its layout."""
        if self.is_flat:
            self._flat.grad = torch.cat([grads[name].reshape(-1) for name, _, _ in self._layout])
        else:
            for name, leaf in self._tensors.items():
                leaf.grad = grads[name].clone()

    def assign(self, flat: torch.Tensor) -> None:
        """Overwrite the flat leaf's values with ``flat`` (P,) (a row of :class:`StackedRows`)."""
        with torch.no_grad():
            self._flat.copy_(flat)

    def named(self) -> dict[str, torch.Tensor]:
        """The named tensors (views of the flat leaf: their gradients flow back into it)."""
        if not self.is_flat:
            return self._tensors
        out, start = {}, 0
        for name, shape, n in self._layout:
            out[name] = self._flat[start : start + n].view(shape)
            start += n
        return out


class Adam:
    """Adam with torch's defaults (β = (0.9, 0.999), ε = 1e-8, no weight decay) on a list of leaves."""

    def __init__(self, leaves: list[torch.Tensor], lr: float, betas=(0.9, 0.999), eps: float = 1e-8):
        self.leaves, self.lr, self.betas, self.eps, self.steps = leaves, lr, betas, eps, 0
        self.exp_avg = [torch.zeros_like(x, memory_format=torch.preserve_format) for x in leaves]
        self.exp_avg_sq = [torch.zeros_like(x, memory_format=torch.preserve_format) for x in leaves]

    def zero_grad(self) -> None:
        for x in self.leaves:
            x.grad = None

    @torch.no_grad()
    def step(self) -> None:
        beta1, beta2 = self.betas
        self.steps += 1
        step = float(self.steps)
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        step_size = self.lr / bias_correction1
        bias_correction2_sqrt = bias_correction2**0.5
        for x, m, v in zip(self.leaves, self.exp_avg, self.exp_avg_sq, strict=True):
            if x.grad is None:
                continue
            m.lerp_(x.grad, 1 - beta1)
            v.mul_(beta2).addcmul_(x.grad, x.grad, value=1 - beta2)
            denom = (v.sqrt() / bias_correction2_sqrt).add_(self.eps)
            x.addcdiv_(m, denom, value=-step_size)


class StackedRows:
    """The flat leaves of S networks of one layout (:class:`FlatParameters`, ``is_flat``) as the rows of one (S, P)
    leaf, with one :class:`Adam` over it.

    Adam's ops are elementwise and every row is a whole number of :data:`FLAT_ALIGN` blocks, so a row is updated
    exactly as its network's own flat leaf would be. ``stacked()`` gives the weights as contiguous (S, …) tensors,
    ``step(grads)`` applies Adam to stacked gradients, ``keep(rows)`` drops the networks that stopped and
    ``write_back()`` copies the rows into the networks' own leaves.
    """

    def __init__(self, networks: list[FlatParameters], lr: float):
        if not networks or not all(n.is_flat for n in networks) or len({repr(n._layout) for n in networks}) != 1:
            raise ValueError("StackedRows needs networks whose parameters are one flat leaf each, of one layout")
        self.networks = list(networks)
        self._layout = networks[0]._layout
        self.rows = list(range(len(networks)))  # the network of each row
        self.leaf = torch.stack([n._flat.detach() for n in networks]).requires_grad_(True)
        self.adam = Adam([self.leaf], lr=lr)

    def stacked(self) -> dict[str, torch.Tensor]:
        """Every named tensor as a contiguous (S, *shape) tensor (a copy: the rows' values, detached)."""
        out, start, flat = {}, 0, self.leaf.detach()
        for name, shape, n in self._layout:
            out[name] = flat[:, start : start + n].reshape(len(self.rows), *shape).contiguous()
            start += n
        return out

    def step(self, grads: dict[str, torch.Tensor]) -> None:
        """One Adam step with ``grads`` (name → (S, *shape)), what each network's own leaf would receive."""
        self.leaf.grad = torch.cat([grads[name].reshape(len(self.rows), -1) for name, _, _ in self._layout], dim=1)
        self.adam.step()
        self.leaf.grad = None

    def write_back(self) -> None:
        """Copy every row into its network's own flat leaf."""
        for row, i in enumerate(self.rows):
            self.networks[i].assign(self.leaf[row].detach())

    def keep(self, networks: list[int]) -> None:
        """Keep the rows of ``networks`` (indices into the networks given), in that order, with their Adam state."""
        index = torch.tensor([self.rows.index(i) for i in networks], dtype=torch.long)
        with torch.no_grad():
            self.leaf = self.leaf.detach().index_select(0, index).requires_grad_(True)
            self.adam.exp_avg = [m.index_select(0, index) for m in self.adam.exp_avg]
            self.adam.exp_avg_sq = [v.index_select(0, index) for v in self.adam.exp_avg_sq]
        self.adam.leaves = [self.leaf]
        self.rows = list(networks)
