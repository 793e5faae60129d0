"""Paper B's lift without the dense Jacobian: J streamed by column blocks, never held whole (issue 49).

The lift (``lib.paper_b.lifting``) needs of J only: its column norms D, the Gram J Jᵀ (M × M, the τ-truncated
decomposition on the Gram route), the weighted Gram K = J D̃⁻² Jᵀ (the sensitivity gauge; D̃⁻² zero on dead
columns) and the products Jᵀw and J c. With the retained U_r, Σ_r of J Jᵀ = U Σ² Uᵀ, V_r = Jᵀ U_r Σ_r⁻¹ is never formed:

    min-norm:     c = Jᵀ (U_r Σ_r⁻² β)                     (β = U_rᵀ η)
    sensitivity:  A Aᵀ = (U_r Σ_r⁻¹)ᵀ K (U_r Σ_r⁻¹),   y = (A Aᵀ)⁻¹ α,   c = D̃⁻² Jᵀ (U_r Σ_r⁻¹ y)   (α = Σ_r⁻¹β)

the same c as the dense route's c = D̃⁻¹ Aᵀ y with Aᵀ = D̃⁻¹ V_r. :class:`StreamedJacobian` computes a column block
J_S (all M rows; S consecutive parameter entries, small tensors packed together and a tensor larger than the block
budget cut into runs) by ``vmap(jacrev)`` with respect to that block alone, and adds its share to what a pass
accumulates:

- pass 1 (once per θ): D, J Jᵀ and K, each block's share J_S J_Sᵀ and J_S D_S⁻² J_Sᵀ (D_S is the block's own);
  a second pass recomputes K only where a column is dead (0 < ‖J_i‖ ≤ dead_tol · max, known at the end of pass 1);
- one pass per lifted direction: c_S = s_S ∘ (J_Sᵀ w) and J c = Σ_S J_S c_S, so that the realised residual costs
  no further pass.

Memory: the M × M Grams and eigenvectors, the block (M·|S|), and p-vectors. Time: (2 + directions) passes over J,
each a backward pass per probe restricted to the block, plus the Grams' M²·p multiply-adds. A parameter tensor split
into s runs is back-propagated s times (its per-probe gradient is formed whole before it is cut), so the block budget
trades memory for passes. Blocks are independent: with a Dask scheduler (``scheduler`` or ``$BOOK_SCHEDULER``) each
runs as a job (``lib.core.engine``) and the shares are added here in block order; ``device="cuda"`` computes them on
a GPU. The route needs M ≤ p (on a tall J the dense route is the smaller one).
"""

from __future__ import annotations

import copy
import time

import torch
from torch import Tensor, nn
from torch.func import functional_call, jacrev, vmap

from lib.core import devices, engine, params
from lib.core.budget import available_memory
from lib.kernels.cpu_linalg import gram_solve, tn_gram

ROUTES = ("auto", "dense", "streaming", "factors")
#: The default memory budget of the dense route: this fraction of the memory the machine has available.
BUDGET_FRACTION = 0.5
#: The dense route holds J, the SVD's factors (as large as J on a wide J) and a work copy: about this many J's.
DENSE_COPIES = 3
#: A block's default size: this fraction of the memory budget.
BLOCK_FRACTION = 0.125
#: Probes per ``vmap`` step: as many as keep their per-probe gradients of the largest tensor within these bytes (on
#: the 1,053,697-parameter annulus network, 256 probes: 1.2 s for half its 1,024² weight one probe at a time, 1.4–2 s
#: four or eight at a time, 5–26 s all at once).
CHUNK_BYTES = 8 * 2**20


def gib(n: float) -> str:
    """Bytes as GiB (or MiB below one GiB), for a sentence."""
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


def choose_route(route: str, rows: int, cols: int, budget: float | None = None,
                 factored: bool = False) -> tuple[str, str]:  # fmt: skip
    """(the route, a sentence saying why): "dense" when the dense J with its decomposition (:data:`DENSE_COPIES` ×
    8·M·p bytes) fits the ``budget`` (default :data:`BUDGET_FRACTION` of :func:`available_memory`), else "factors"
    where the module is ``factored`` (``lib.paper_b.linear_factors``: its parameters all in linear layers) and
    "streaming" (column blocks) otherwise; a ``route`` other than "auto" is taken as named, with the same estimate."""
    route = params.choice("route", route, ROUTES)
    budget = BUDGET_FRACTION * available_memory() if budget is None else params.real("memory_budget", budget, min=0,
                                                                                    min_open=True)  # fmt: skip
    need = DENSE_COPIES * 8.0 * rows * cols
    estimate = f"the dense J ({rows:,} × {cols:,}) and its decomposition need about {gib(need)}"
    if route == "factors" and not factored:
        raise ValueError("route='factors' needs a module whose parameters are all in nn.Linear layers, each "
                         "called once on (batch, features) inputs; route='streaming' takes any module")  # fmt: skip
    if route != "auto":
        return route, f"{route} route, as asked ({estimate}; budget {gib(budget)})"
    if need <= budget:
        return "dense", f"dense route, chosen: {estimate}, within the budget of {gib(budget)}"
    how = ("factors", "J kept as per-layer factors, every parameter being in a linear layer") if factored else (
        "streaming", "J streamed by column blocks")  # fmt: skip
    return how[0], f"{how[0]} route, chosen: {estimate}, over the budget of {gib(budget)}; {how[1]}"


def _blocks(like: dict[str, Tensor], rows: int, block_bytes: float) -> list[tuple[tuple[tuple[str, int, int], ...],
                                                                                   int, int]]:  # fmt: skip
    """(segments, first column, width) of each block: consecutive runs (name, first, stop) of the parameters' flat
    entries, packed in order into blocks of at most ``block_bytes`` of J's float64 columns (at least one column); a
    tensor larger than a block is cut into runs, small ones share a block (each block is one backward pass)."""
    width = max(1, int(block_bytes // (8 * rows)))
    out, segments, start, col = [], [], 0, 0
    for name, t in like.items():
        lo = 0
        while lo < t.numel():
            hi = min(t.numel(), lo + width - (col - start))
            segments.append((name, lo, hi))
            col, lo = col + hi - lo, hi
            if col - start == width:
                out.append((tuple(segments), start, width))
                segments, start = [], col
    if segments:
        out.append((tuple(segments), start, col - start))
    return out


def block_jacobian(model: nn.Module, theta: dict[str, Tensor], probes: Tensor, segments, chunk: int | None = None,
                   out: Tensor | None = None) -> Tensor:  # fmt: skip
    """J's columns for the ``segments`` (runs (name, first, stop) of flat parameter entries), shape (M, their
    length), rows probe-major: ``vmap(jacrev)`` with respect to those entries alone (``lib.paper_b.sensitivity.
    jacobian``'s layout), ``chunk`` probes at a time, written into ``out`` where given (a buffer reused from block to
    block: fresh pages cost more than the products)."""
    flats = {name: theta[name].reshape(-1) for name, _, _ in segments}

    def single(pieces: tuple[Tensor, ...], x: Tensor) -> Tensor:
        new = dict(theta)
        for (name, lo, hi), piece in zip(segments, pieces, strict=True):
            flat = new[name].reshape(-1)
            whole = hi - lo == flat.numel()
            new[name] = (piece if whole else torch.cat([flat[:lo], piece, flat[hi:]])).reshape(theta[name].shape)
        return functional_call(model, new, (x[None],))[0].reshape(-1)

    rows, n = vmap(jacrev(single), in_dims=(None, 0)), probes.shape[0]
    pieces = tuple(flats[name][lo:hi] for name, lo, hi in segments)
    width, step = sum(hi - lo for _, lo, hi in segments), n if chunk is None else chunk
    for a in range(0, n, step):
        parts = rows(pieces, probes[a : a + step])  # per segment (chunk, k, run)
        b, k = parts[0].shape[:2]
        if out is None:
            out = torch.empty(n * k, width, dtype=parts[0].dtype, device=parts[0].device)
        col = 0
        for part in parts:
            out[a * k : (a + b) * k, col : col + part.shape[2]] = part.reshape(b * k, -1)
            col += part.shape[2]
    return out


def _gram(X: Tensor) -> Tensor:
    """X Xᵀ of a float64 (M, n) block."""
    return tn_gram(X.T) if X.device.type == "cpu" else X @ X.T


def block_share(model, theta, probes, segments, chunk, what, W=None, weights=None, C=None, out=None):
    """One block's share of a pass (``what``): "grams" → (its column norms, J_S J_Sᵀ, J_S D_S⁻² J_Sᵀ over its
    non-zero columns); "gauge" → J_S diag(weights_S) J_Sᵀ; "lift" → (c_S = weights_S ∘ J_Sᵀ W, J_S c_S), weights
    None for none; "rmatmul" → J_Sᵀ W; "matmul" → J_S C_S. A top-level function of plain arguments, so that a block
    can run as a Dask job."""
    Jb = block_jacobian(model, theta, probes, segments, chunk, out)
    w = None if weights is None else weights.to(Jb.device)
    if what == "grams":
        d = torch.linalg.vector_norm(Jb, dim=0)
        inv = torch.where(d > 0, 1 / torch.where(d > 0, d, torch.ones_like(d)), torch.zeros_like(d))
        G = _gram(Jb).cpu()
        return d.cpu(), G, _gram(Jb.mul_(inv)).cpu()  # in place: the block is not needed again
    if what == "gauge":
        return _gram(Jb.mul_(w.sqrt())).cpu()
    if what == "matmul":
        return (Jb @ C.to(Jb.device)).cpu()
    c = Jb.T @ W.to(Jb.device)
    if what == "rmatmul":
        return c.cpu()
    c = c if w is None else c * w[:, None]
    return c.cpu(), (Jb @ c).cpu()


class StreamedJacobian:
    """J (M, p) of ``model`` at θ over ``probes``, streamed by column blocks (module docstring): the operator
    interface of ``lifting.DenseJacobian`` (``shape``, ``col_norms``, ``gram``, ``matmul``, ``rmatmul``) and the
    streamed lift's own (``weighted_gram``, ``lift_products``), without ``dense()``. ``passes`` counts the passes
    over J so far, ``seconds`` their time."""

    streamed = True

    def __init__(self, model: nn.Module, theta: dict[str, Tensor], probes: Tensor, *, block_bytes: float,
                 device: str = "cpu", scheduler: str | None = None, scratch: dict | None = None):  # fmt: skip
        self.device = devices.require("device", device)
        self.model = model if self.device.type == "cpu" else copy.deepcopy(model).to(self.device)
        self.theta = {k: v.detach().to(torch.float64).to(self.device) for k, v in theta.items()}
        self.probes = probes.detach().to(torch.float64).to(self.device)
        k = functional_call(self.model, self.theta, (self.probes[:1],)).reshape(1, -1).shape[1]
        p = sum(t.numel() for t in self.theta.values())
        self.shape = (self.probes.shape[0] * k, p)
        if self.shape[0] > p:
            raise ValueError(f"the streaming route needs no more rows than parameters; J is {self.shape[0]:,} × "
                             f"{p:,}: use route='dense' (J Jᵀ would be larger than J)")  # fmt: skip
        self.block_bytes = params.real("block_bytes", block_bytes, min=8.0 * self.shape[0])
        self.blocks = _blocks(self.theta, self.shape[0], self.block_bytes)
        largest = max(t.numel() for t in self.theta.values())
        self.chunk = max(1, int(CHUNK_BYTES // (8 * k * largest)))
        self.scratch = {} if scratch is None else scratch  # "buffer": shared with the caller's next operator
        self.scheduler = engine.choose(scheduler, 1).scheduler
        self.passes, self.seconds = 0, 0.0
        self._grams: tuple[Tensor, Tensor, Tensor] | None = None
        self._gauge: dict[float, Tensor] = {}

    def __repr__(self) -> str:
        blocks = len(getattr(self, "blocks", ()))
        return f"StreamedJacobian({self.shape[0]:,} × {self.shape[1]:,} in {blocks} blocks, {self.passes} passes)"

    def _pass(self, what: str, **extra) -> list:
        """Every block's share of one pass, in block order (here, or as jobs where a scheduler is named)."""
        start = time.perf_counter()
        jobs = [dict(model=self.model, theta=self.theta, probes=self.probes, segments=segments, chunk=self.chunk,
                     what=what, **{k: v[col : col + width] if k in ("weights", "C") and v is not None else v
                                   for k, v in extra.items()})
                for segments, col, width in self.blocks]  # fmt: skip
        if self.scheduler is None:  # here, each block in the one scratch buffer
            out = [
                block_share(**job, out=self._buffer(width))
                for job, (_, _, width) in zip(jobs, self.blocks, strict=True)
            ]
        else:
            out = list(engine.run_jobs(block_share, jobs, scheduler=self.scheduler, desc=f"J's blocks ({what})"))
        self.passes, self.seconds = self.passes + 1, self.seconds + time.perf_counter() - start
        return out

    def _buffer(self, width: int) -> Tensor:
        """The block buffer (M, width): one allocation, reused by every block and pass (and every θ of a flow)."""
        size = self.shape[0] * max(w for _, _, w in self.blocks)
        buf = self.scratch.get("buffer")
        if buf is None or buf.numel() < size or buf.device != self.device:
            buf = self.scratch["buffer"] = torch.empty(size, dtype=torch.float64, device=self.device)
        return buf[: self.shape[0] * width].view(self.shape[0], width)

    def _first_pass(self) -> tuple[Tensor, Tensor, Tensor]:
        if self._grams is None:
            shares = self._pass("grams")
            d = torch.cat([s[0] for s in shares])
            G, K = shares[0][1].clone(), shares[0][2].clone()
            for _, g, k in shares[1:]:
                G += g
                K += k
            self._grams = (d, G, K)
        return self._grams

    def col_norms(self) -> Tensor:
        """‖J_{:,i}‖₂, shape (p,) (pass 1)."""
        return self._first_pass()[0]

    def gram(self) -> Tensor:
        """J Jᵀ (M × M) (pass 1)."""
        return self._first_pass()[1]

    def weighted_gram(self, dead_tol: float) -> tuple[Tensor, Tensor]:
        """(K = J D̃⁻² Jᵀ, D̃⁻¹): D̃⁻¹ is 1/‖J_{:,i}‖, zero on dead columns (‖J_{:,i}‖ ≤ dead_tol · max). From pass 1
        where no column is dead but a zero one; else one more pass."""
        d, _, K = self._first_pass()
        dead = d <= dead_tol * d.max()
        inv = torch.where(dead, torch.zeros_like(d), 1 / torch.where(dead, torch.ones_like(d), d))
        if not bool((dead & (d > 0)).any()):
            return K, inv
        if dead_tol not in self._gauge:
            shares = self._pass("gauge", weights=inv**2)
            self._gauge[dead_tol] = torch.stack(shares).sum(0) if len(shares) > 1 else shares[0]
        return self._gauge[dead_tol], inv

    def projected_weighted_gram(self, B: Tensor, dead_tol: float) -> tuple[Tensor, Tensor]:
        """(Bᵀ K B, D̃⁻¹) for B (M, r): the sensitivity gauge's A Aᵀ with B = U_r Σ_r⁻¹ (``weighted_gram``)."""
        K, inv = self.weighted_gram(dead_tol)
        return B.T @ K @ B, inv

    def lift_products(self, W: Tensor, weights: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """(C = weights ∘ Jᵀ W (p, t), J C (M, t)) for W (M, t), in one pass."""
        shares = self._pass("lift", W=W.to(torch.float64), weights=weights)
        C = torch.cat([s[0] for s in shares])
        JC = shares[0][1].clone()
        for _, jc in shares[1:]:
            JC += jc
        return C, JC

    def rmatmul(self, W: Tensor) -> Tensor:
        """Jᵀ W for W (M,) or (M, t) (one pass)."""
        C = torch.cat(self._pass("rmatmul", W=W.reshape(W.shape[0], -1).to(torch.float64)))
        return C.reshape(-1) if W.ndim == 1 else C

    def matmul(self, C: Tensor) -> Tensor:
        """J C for C (p,) or (p, t) (one pass)."""
        shares = self._pass("matmul", C=C.reshape(C.shape[0], -1).to(torch.float64))
        out = shares[0].clone()
        for share in shares[1:]:
            out += share
        return out.reshape(-1) if C.ndim == 1 else out


def streamed_coefficients(op: StreamedJacobian, U: Tensor, S: Tensor, eta: Tensor, gauge: str,
                          dead_tol: float) -> tuple[Tensor, Tensor, int]:  # fmt: skip
    """(c, J c, dead columns) of the lift of η through the retained U_r, Σ_r (module docstring), in one pass after
    pass 1 (two where a dead column needs K again). ValueError where the gauged system is rank-deficient."""
    US = U / S
    alpha = (U.T @ eta) / S
    if gauge == "minnorm":
        C, JC = op.lift_products((US @ alpha)[:, None])
        return C[:, 0], JC[:, 0], 0
    AAt, inv = op.projected_weighted_gram(US, dead_tol)
    AAt = (AAt + AAt.T) / 2
    # the eigendecomposition (error about ε·κ(AAᵀ)), by kernels the probe showed equal on Intel and AMD
    y, w = gram_solve(AAt, alpha)
    if w[0] <= w[-1] * AAt.shape[0] * torch.finfo(torch.float64).eps:
        raise ValueError("the gauged system A = V_rᵀD⁻¹ is rank-deficient (dead columns span a retained direction); "
                         "lower dead_tol or use gauge='minnorm'")  # fmt: skip
    C, JC = op.lift_products((US @ y)[:, None], inv**2)
    return C[:, 0], JC[:, 0], int((inv == 0).sum())
