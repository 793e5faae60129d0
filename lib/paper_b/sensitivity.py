"""Parameter Jacobians and functional sensitivities (paper B §1, App. A.5).

The Jacobian over a probe set is ``J[(n, a), i] = ∂f_θ,a(x_n)/∂θ_i`` with rows ordered probe-major
(``J.reshape(N, dim_y, p)`` gives the pointwise sensitivities S*_i(x_n)) and columns ordered as
``flatten_params(params)`` (dict insertion order, each tensor flattened row-major). The lift of a function-space
direction through J is ``lib.paper_b.lifting``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from numbers import Integral

import torch
from torch import Tensor
from torch.func import functional_call, jacrev, vmap

from lib.core.params import value_text
from lib.paper_b.lifting import _as_operator, _check_matrix

# --------------------------------------------------------------------------------------------------------------
# parameters as one vector


def flatten_params(params: dict[str, Tensor]) -> Tensor:
    """Concatenate a dict of tensors into one vector (dict order, each tensor row-major); shape (p,)."""
    if not isinstance(params, dict) or not params:
        raise TypeError(f"params must be a non-empty dict of tensors, got {type(params).__name__}")
    return torch.cat([t.reshape(-1) for t in params.values()])


def unflatten_params(vec: Tensor, like: dict[str, Tensor]) -> dict[str, Tensor]:
    """Split ``vec`` (p,) back into tensors shaped like ``like`` (inverse of ``flatten_params``); keeps vec's dtype."""
    total = sum(t.numel() for t in like.values())
    if vec.ndim != 1 or vec.numel() != total:
        raise ValueError(f"vec has shape {tuple(vec.shape)}; expected ({total},) to match the parameter dict")
    out, start = {}, 0
    for name, t in like.items():
        out[name] = vec[start : start + t.numel()].reshape(t.shape)
        start += t.numel()
    return out


def module_params(module: torch.nn.Module, dtype: torch.dtype = torch.float64) -> dict[str, Tensor]:
    """Detached copies of a module's named parameters, cast to ``dtype``."""
    return {k: v.detach().to(dtype).clone() for k, v in module.named_parameters()}


# --------------------------------------------------------------------------------------------------------------
# Jacobian and sensitivities


def jacobian(
    fn: Callable[[dict[str, Tensor], Tensor], Tensor] | torch.nn.Module,
    params: dict[str, Tensor],
    probes: Tensor,
    *,
    chunk_size: int | None = None,
) -> Tensor:
    """Parameter Jacobian over probes, float64, shape (N·dim_y, p), via ``vmap(jacrev)`` (eq. 8, App. A.5).

    ``fn(params, x_bd)`` maps a batch of probes (B, d) to outputs (B,) or (B, dim_y) and must treat probes
    independently; an ``nn.Module`` is accepted and called through ``functional_call``, and then ``params`` must name
    every one of its parameters (``module_params(module)``): a missing one is refused, not taken from the module.
    Rows are probe-major, columns follow ``flatten_params(params)``. ``chunk_size`` bounds the vmap batch (memory).
    """
    if not isinstance(params, Mapping) or not params:
        raise TypeError(f"params must be a non-empty dict of tensors, got {type(params).__name__}")
    if isinstance(fn, torch.nn.Module):
        module = fn
        missing = [name for name, _ in module.named_parameters() if name not in params]
        if missing:
            raise ValueError(
                f"params lacks the module's parameters {missing}; pass all of them, e.g. module_params(module) "
                "(the Jacobian would otherwise silently hold those at the module's own values and omit their columns)"
            )

        def fn(p, x):  # noqa: F811 - deliberate rebinding to a functional wrapper
            return functional_call(module, p, (x,))

    if not callable(fn):
        raise TypeError(f"fn must be callable or an nn.Module, got {type(fn).__name__}")
    if not isinstance(probes, Tensor) or probes.ndim != 2:
        raise ValueError(f"probes must be a 2-D tensor (N, d); got {getattr(probes, 'shape', type(probes))}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"chunk_size={chunk_size!r} must be a positive integer or None")
    p64 = {k: v.detach().to(torch.float64) for k, v in params.items()}
    x64 = probes.detach().to(torch.float64)

    def single(p, x_d):
        return fn(p, x_d[None])[0].reshape(-1)  # (dim_y,)

    jac = vmap(jacrev(single), in_dims=(None, 0), chunk_size=chunk_size)(p64, x64)  # name -> (N, dim_y, *shape)
    n = x64.shape[0]
    blocks = [jac[k].reshape(n, jac[k].shape[1], -1) for k in p64]
    return torch.cat(blocks, dim=2).reshape(n * blocks[0].shape[1], -1)


def _check_rows(J, dim_y) -> None:
    """dim_y a positive integer, J non-empty with rows a multiple of dim_y."""
    if isinstance(dim_y, bool) or not isinstance(dim_y, Integral):
        raise TypeError(f"dim_y={value_text(dim_y)} must be a positive integer (outputs per probe)")
    if dim_y < 1:
        raise ValueError(f"dim_y={value_text(dim_y)} must be a positive integer (outputs per probe), at least 1")
    if J.shape[0] == 0 or J.shape[1] == 0:
        raise ValueError(f"J is empty (shape {tuple(J.shape)}); it needs at least one row and one column")
    if J.shape[0] % dim_y:
        raise ValueError(f"J has {J.shape[0]} rows, not a multiple of dim_y={value_text(dim_y)}")


def aggregate_sensitivity(J: Tensor, dim_y: int = 1) -> Tensor:
    """Aggregate (RMS) functional sensitivities S_i = ‖J_{:,i}‖₂ / sqrt(N·dim_y), shape (p,) (App. A.5)."""
    _check_matrix(J)
    _check_rows(J, dim_y)
    return _as_operator(J).col_norms() / math.sqrt(J.shape[0])


def pointwise_sensitivity(J: Tensor, dim_y: int = 1) -> Tensor:
    """Pointwise sensitivities S*_i(x_n) ∈ R^{dim_y}: J viewed as (N, dim_y, p) (eq. in §1)."""
    if not isinstance(J, Tensor) or J.ndim != 2:
        raise ValueError(f"J must be a dense 2-D tensor; got {getattr(J, 'shape', type(J))}")
    _check_rows(J, dim_y)
    return J.reshape(J.shape[0] // dim_y, dim_y, J.shape[1])
