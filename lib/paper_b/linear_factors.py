"""J of a network of linear layers from per-layer factors: never a column of it formed (issue 49).

Where every parameter of a module belongs to an ``nn.Linear`` called once per forward on (B, in) inputs (an MLP, with
any parameter-free activations between), the row of J for probe n and output a splits by layer l into
G_l[(n, a)] ⊗ [A_l[n], 1]: the back-propagated signal ∂f_a(x_n)/∂z_l (z_l the layer's output) times the layer's input
(and 1 for its bias). One forward pass records every A_l, and k backward passes (one per output, over all probes at
once) every G_l, through a zero added to each layer's output. Then, with Ã_l the inputs repeated per output,

    J Jᵀ = Σ_l (G_l G_lᵀ) ⊙ (Ã_l Ã_lᵀ + 1),    ‖J_{:,(o,i)}‖² = Σ_rows G_l[·, o]² Ã_l[·, i]²,
    Jᵀ w = Σ_rows w G_l ⊗ Ã_l,                  (J c)_row = Σ_l G_l[row] · (C_l Ã_l[row] + c_l),

each a few matrix products of M × width factors (``lib.paper_b.annulus.mlp`` does the same for the annulus network's
own parameter vector). The sensitivity gauge's weighted Gram does not factor (D⁻² weighs each (o, i) apart), but the
lift only needs it projected on the retained directions, Bᵀ J D⁻² Jᵀ B for B = U_r Σ_r⁻¹ (M × r): the r-vectors
Z_{o,i} = Σ_rows B[row] G[row, o] Ã[row, i], formed a few output units at a time, give it as Σ E_{o,i} Z Zᵀ, r·M·p
multiply-adds where the generic K costs M²·p. Memory: the factors (M × widths), the Grams, r × (a few units) × in
and p-vectors.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.func import functional_call

#: Output units per step of the projected weighted Gram: Z for this many units of a layer at once (r × units × in).
UNITS = 32


def linear_layers(model: nn.Module) -> dict[str, nn.Linear] | None:
    """The module's ``nn.Linear`` layers by name, when they hold every parameter (weight and bias); else None."""
    layers = {name: m for name, m in model.named_modules() if isinstance(m, nn.Linear)}
    held = {f"{n}.weight" for n in layers} | {f"{n}.bias" for n, m in layers.items() if m.bias is not None}
    return layers if layers and held == {name for name, _ in model.named_parameters()} else None


def factors(model: nn.Module, theta: dict[str, Tensor], probes: Tensor) -> tuple[dict, dict, int] | None:
    """(A_l by layer: inputs repeated per output (M, in); G_l by layer (M, out); k outputs), or None where a layer
    is not called exactly once on (B, in) inputs (the factorisation would not hold)."""
    layers = linear_layers(model)
    if layers is None:
        return None
    n = probes.shape[0]
    eps = {name: torch.zeros(n, m.out_features, dtype=torch.float64, requires_grad=True) for name, m in layers.items()}
    inputs: dict[str, list[Tensor]] = {name: [] for name in layers}

    def hook(name):
        def add(module, args, output):
            inputs[name].append(args[0].detach())
            return output + eps[name] if output.shape == eps[name].shape else output

        return add

    handles = [m.register_forward_hook(hook(name)) for name, m in layers.items()]
    try:
        f = functional_call(model, theta, (probes,)).reshape(n, -1)
    finally:
        for h in handles:
            h.remove()
    if any(len(v) != 1 or v[0].ndim != 2 or v[0].shape[0] != n for v in inputs.values()):
        return None
    k = f.shape[1]
    G = {name: torch.empty(n, k, layers[name].out_features, dtype=torch.float64) for name in layers}
    for a in range(k):
        grads = torch.autograd.grad(f[:, a].sum(), list(eps.values()), retain_graph=a < k - 1, allow_unused=True)
        for name, g in zip(layers, grads, strict=True):
            G[name][:, a] = 0.0 if g is None else g
    A = {name: inputs[name][0].to(torch.float64).repeat_interleave(k, dim=0) for name in layers}
    return A, {name: g.reshape(n * k, -1) for name, g in G.items()}, k


class LinearFactorJacobian:
    """J (M, p) of a network of linear layers at θ over probes, as per-layer factors (module docstring): the operator
    interface of ``lifting.DenseJacobian`` and the streamed lift's (``projected_weighted_gram``, ``lift_products``).
    Build it with :meth:`of`, which returns None for a module the factorisation does not hold for."""

    streamed = True

    def __init__(self, model: nn.Module, A: dict, G: dict, k: int):
        self.A, self.G, self.k = A, G, k
        self.names = [name for name, _ in model.named_parameters()]  # columns: this order, each row-major
        self.layer_of = {f"{n}.weight": (n, "weight") for n in A} | {f"{n}.bias": (n, "bias") for n in A}
        self.block_bytes = 0.0  # no block of J is ever formed
        self.shape = (next(iter(G.values())).shape[0], sum(p.numel() for p in model.parameters()))
        self.passes, self._norms = 1, None

    @classmethod
    def of(cls, model: nn.Module, theta: dict[str, Tensor], probes: Tensor) -> LinearFactorJacobian | None:
        """The factored J at θ (float64), or None where ``factors`` does not hold."""
        found = factors(model, {k: v.detach().to(torch.float64) for k, v in theta.items()}, probes.to(torch.float64))
        return None if found is None else cls(model, *found)

    def _by_parameter(self, weight_fn, bias_fn) -> Tensor:
        """A p-vector (or (p, t)) assembled in column order from per-layer weight (out, in[, t]) and bias parts."""
        parts = []
        for name in self.names:
            layer, kind = self.layer_of[name]
            part = weight_fn(layer) if kind == "weight" else bias_fn(layer)
            parts.append(part.reshape(-1, *part.shape[2:]) if kind == "weight" else part)
        return torch.cat(parts)

    def _slices(self, vector: Tensor) -> dict[str, Tensor]:
        out, start = {}, 0
        for name in self.names:
            layer, kind = self.layer_of[name]
            size = self.G[layer].shape[1] * (self.A[layer].shape[1] if kind == "weight" else 1)
            out[name] = vector[start : start + size]
            start += size
        return out

    def col_norms(self) -> Tensor:
        """‖J_{:,i}‖₂, shape (p,)."""
        if self._norms is None:
            sq = {n: self.G[n].square() for n in self.G}
            self._norms = self._by_parameter(lambda n: (sq[n].T @ self.A[n].square()).sqrt(),
                                             lambda n: sq[n].sum(0).sqrt())  # fmt: skip
        return self._norms

    def gram(self) -> Tensor:
        """J Jᵀ (M × M)."""
        out = torch.zeros(self.shape[0], self.shape[0], dtype=torch.float64)
        for n in self.G:
            out += (self.G[n] @ self.G[n].T) * (self.A[n] @ self.A[n].T + (1.0 if f"{n}.bias" in self.names else 0.0))
        return out

    def rmatmul(self, W: Tensor) -> Tensor:
        """Jᵀ W for W (M,) or (M, t)."""
        W2 = W.reshape(W.shape[0], -1).to(torch.float64)
        out = self._by_parameter(
            lambda n: torch.stack([(self.G[n] * w[:, None]).T @ self.A[n] for w in W2.T], dim=-1),
            lambda n: self.G[n].T @ W2,
        )  # fmt: skip
        return out.reshape(-1) if W.ndim == 1 else out

    def matmul(self, C: Tensor) -> Tensor:
        """J C for C (p,) or (p, t)."""
        C2 = C.reshape(C.shape[0], -1).to(torch.float64)
        parts = self._slices(C2)
        out = torch.zeros(self.shape[0], C2.shape[1], dtype=torch.float64)
        for name, part in parts.items():
            layer, kind = self.layer_of[name]
            G, A = self.G[layer], self.A[layer]
            for t in range(C2.shape[1]):
                z = A @ part[:, t].reshape(G.shape[1], -1).T if kind == "weight" else part[:, t].expand(G.shape[0], -1)
                out[:, t] += (z * G).sum(1)
        return out.reshape(-1) if C.ndim == 1 else out

    def lift_products(self, W: Tensor, weights: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """(C = weights ∘ Jᵀ W (p, t), J C (M, t)) for W (M, t)."""
        C = self.rmatmul(W)
        C = C if weights is None else C * weights[:, None]
        return C, self.matmul(C)

    def projected_weighted_gram(self, B: Tensor, dead_tol: float) -> tuple[Tensor, Tensor]:
        """(Bᵀ J D̃⁻² Jᵀ B (r × r), D̃⁻¹ (p,)): D̃⁻¹ = 1/‖J_{:,i}‖, zero on dead columns (‖J_{:,i}‖ ≤ dead_tol · max)."""
        d = self.col_norms()
        dead = d <= dead_tol * d.max()
        inv = torch.where(dead, torch.zeros_like(d), 1 / torch.where(dead, torch.ones_like(d), d))
        E, r = self._slices(inv.square()), B.shape[1]
        out = torch.zeros(r, r, dtype=torch.float64)
        for name, e in E.items():
            layer, kind = self.layer_of[name]
            G, A = self.G[layer], self.A[layer]
            if kind == "bias":
                Z = G.T @ B  # (out, r)
                out += (Z * e[:, None]).T @ Z
                continue
            e = e.reshape(G.shape[1], A.shape[1])
            for lo in range(0, G.shape[1], UNITS):
                g = G[:, lo : lo + UNITS]
                Z = ((B[:, None, :] * g[:, :, None]).reshape(B.shape[0], -1).T @ A).reshape(g.shape[1], r, -1)
                Zw = (Z * e[lo : lo + UNITS, None, :].sqrt()).permute(1, 0, 2).reshape(r, -1)
                out += Zw @ Zw.T
        return out, inv
