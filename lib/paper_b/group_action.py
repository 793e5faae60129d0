"""One side of a one-parameter group acting on a module's inputs or outputs (``lib.paper_b.any_module``): a square
generator matrix (acting by ``torch.matrix_exp``) or a velocity field (integrated by RK4 steps ≤ :data:`RK4_STEP`),
checked where it is given; and the checks of the probe points it acts on.

A velocity field receives float64 points (B, dim) and may return any real floating dtype, cast to float64; one that
fails on float64 points (a float32 module) is named, with what to do.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor, nn

from lib.core.params import value_text

RK4_STEP = 1 / 64  # the longest RK4 step of a velocity-field generator (time units)
CLOSURE_TOL = 1e-6  # the group closes when max|g_T y − y| ≤ CLOSURE_TOL·max(1, max|y|)
F64 = torch.float64


class GroupAction:
    """One side of the group: g_t y = exp(tA) y for a square matrix A, or the flow of ẏ = v(y) for a callable v."""

    def __init__(self, generator, dim: int, name: str, what: str, sample: Tensor, period: float | None):
        self.name, self.dim, self.matrix, self.field = name, dim, None, None
        if callable(generator) and not isinstance(generator, (Tensor, np.ndarray)):
            self.field = generator
            self.velocity(sample)  # checks what the field returns
        else:
            self.matrix = _checked_matrix(generator, dim, name, what)
        if period is None:
            return
        y = torch.eye(dim, dtype=F64) if self.matrix is not None else sample  # a matrix: exp(TA) = I
        gap = float((self.apply(y[None], torch.tensor([period], dtype=F64))[0] - y).abs().max())
        if not gap <= CLOSURE_TOL * max(1.0, float(y.abs().max())):
            raise ValueError(f"{name} does not close after period={value_text(period)} (max|g_T y − y| = "
                             f"{gap:.3g}): pass the group's period, or period=None for a non-compact group "
                             "(then no δ and no b*)")  # fmt: skip

    def velocity(self, y: Tensor) -> Tensor:
        """A y (or v(y)) for points y (..., dim)."""
        if self.matrix is not None:
            return y @ self.matrix.T
        flat = y.reshape(-1, self.dim)
        try:
            v = self.field(flat)
        except RuntimeError as exc:  # e.g. a float32 module fed the float64 points
            first = (str(exc).strip().splitlines() or ["failed"])[0][:200]
            raise ValueError(f"{self.name} failed on float64 points {tuple(flat.shape)} ({first}); a velocity "
                             "field receives float64 points: make it accept them (a module: .double())"
                             ) from None  # fmt: skip
        if not isinstance(v, Tensor) or v.shape != flat.shape or v.is_complex() or not v.is_floating_point():
            raise ValueError(f"{self.name} returned {getattr(v, 'shape', type(v).__name__)}; a velocity field must "
                             f"map points {tuple(flat.shape)} to real velocities of the same shape")  # fmt: skip
        return v.to(F64).reshape(y.shape)

    def apply(self, ys: Tensor, times: Tensor) -> Tensor:
        """g_{t_i} ys[i] for points ys (T, N, dim) and times (T,)."""
        if self.matrix is not None:
            return ys @ torch.matrix_exp(times[:, None, None] * self.matrix).transpose(-1, -2)
        n = max(1, math.ceil(float(times.abs().max()) / RK4_STEP))
        h, v = (times / n)[:, None, None], self.velocity
        for _ in range(n):
            k1 = v(ys)
            k2 = v(ys + h / 2 * k1)
            k3 = v(ys + h / 2 * k2)
            ys = ys + h / 6 * (k1 + 2 * k2 + 2 * k3 + v(ys + h * k3))
        return ys


def _checked_matrix(generator, dim: int, name: str, what: str) -> Tensor:
    if not isinstance(generator, (Tensor, np.ndarray, list, tuple)):
        raise TypeError(f"{name}={type(generator).__name__} object must be a square matrix or a callable field")
    A = torch.as_tensor(generator)
    if A.is_complex():
        raise TypeError(f"{name} has complex dtype {A.dtype}; the group must act by a real matrix")
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] != dim:
        raise ValueError(f"{name} has shape {tuple(A.shape)}; it must be a square matrix ({dim}, {dim}), "
                         f"acting on the model's {what} (dimension {dim})")  # fmt: skip
    if not torch.isfinite(A).all():
        raise ValueError(f"{name} contains non-finite entries (nan or inf)")
    return A.to(F64)


def checked_probes(probes) -> Tensor:
    if not isinstance(probes, Tensor) or probes.is_complex() or not probes.is_floating_point():
        got = probes.dtype if isinstance(probes, Tensor) else f"a {type(probes).__name__}"
        raise TypeError(f"probes must be a real floating-point tensor (N, d) of inputs; got {got}")
    if probes.ndim != 2 or 0 in probes.shape:
        raise ValueError(f"probes has shape {tuple(probes.shape)}; it must be a 2-D tensor (N, d), N, d ≥ 1")
    if not torch.isfinite(probes).all():
        raise ValueError("probes contains non-finite entries (nan or inf); every probe must be finite")
    return probes.detach().to(F64)


def input_size_hint(model: nn.Module, probes: Tensor) -> str:
    """Where the model's first layer that states its input size (``in_features``) takes another than the probes'
    columns, a clause saying so (a model may transform its input first, so this is a hint, not a check)."""
    first = next((m for m in model.modules() if isinstance(getattr(m, "in_features", None), int)), None)
    if first is None or first.in_features == probes.shape[1]:
        return ""
    return f"; its first {type(first).__name__} takes {first.in_features} inputs, the probes have {probes.shape[1]}"
