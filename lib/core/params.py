"""Validation of chapter parameters and public arguments.

Every error names the parameter, the value received and what is allowed. Values are shown as the reader wrote them
(:func:`value_text`): a numpy scalar as ``3``, not numpy 2's ``np.int64(3)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from numbers import Integral, Real
from typing import Any

import numpy as np


def value_text(value: Any) -> str:
    """``repr(value)`` with numpy scalars shown as Python ones (``3``, not ``np.int64(3)``), also inside a list,
    tuple or set."""
    if isinstance(value, np.generic):
        return repr(value.item())
    if isinstance(value, (list, tuple, set)) and any(isinstance(v, np.generic) for v in value):
        items = ", ".join(value_text(v) for v in value)
        if isinstance(value, tuple):
            return f"({items}{',' if len(value) == 1 else ''})"
        return f"[{items}]" if isinstance(value, list) else f"{{{items}}}"
    return repr(value)


def choice(name: str, value: Any, allowed: Iterable[Any]) -> Any:
    """Return ``value`` if it is one of ``allowed``, else raise ``ValueError`` listing them."""
    allowed = list(allowed)
    if value not in allowed:
        raise ValueError(f"{name}={value_text(value)} is not allowed; choose one of {value_text(allowed)}")
    return value


def subset(name: str, values: Iterable[Any], allowed: Iterable[Any]) -> list[Any]:
    """Return ``list(values)`` if every element is in ``allowed``, else raise ``ValueError``."""
    if isinstance(values, str):
        raise TypeError(f"{name}={value_text(values)} must be a collection of names, not a single string")
    allowed = list(allowed)
    if not isinstance(values, Iterable):
        raise TypeError(
            f"{name}={value_text(values)} must be a collection (list, tuple or set) "
            f"of elements from {value_text(allowed)}"
        )
    values = list(values)
    bad = [v for v in values if v not in allowed]
    if bad:
        raise ValueError(f"{name} contains {value_text(bad)}; allowed elements are {value_text(allowed)}")
    return values


def integer(name: str, value: Any, *, min: int | None = None, max: int | None = None) -> int:
    """Return ``value`` as ``int`` if it is an integer within [min, max]."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name}={value_text(value)} must be an integer")
    if (min is not None and value < min) or (max is not None and value > max):
        raise ValueError(f"{name}={value_text(value)} is out of range; allowed: {_range_text(min, max, False, False)}")
    return int(value)


def real(
    name: str,
    value: Any,
    *,
    min: float | None = None,
    max: float | None = None,
    min_open: bool = False,
    max_open: bool = False,
) -> float:
    """Return ``value`` as ``float`` if it is a finite real within the (half-)open or closed interval."""
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(float(value)):
        raise TypeError(f"{name}={value_text(value)} must be a finite real number")
    v = float(value)
    too_low = min is not None and (v <= min if min_open else v < min)
    too_high = max is not None and (v >= max if max_open else v > max)
    if too_low or too_high:
        raise ValueError(
            f"{name}={value_text(value)} is out of range; allowed: {_range_text(min, max, min_open, max_open)}"
        )
    return v


def boolean(name: str, value: Any) -> bool:
    """Return ``value`` if it is a bool (papermill passes ``True``/``False``)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name}={value_text(value)} must be True or False")
    return value


def _range_text(lo, hi, lo_open, hi_open) -> str:
    left = "(" if lo_open or lo is None else "["
    right = ")" if hi_open or hi is None else "]"
    return f"{left}{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}{right}"
