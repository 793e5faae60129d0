"""Where training and rollouts run: ``"cpu"`` (the book's default, and all it needs) or a CUDA device.

A device is named by a string, as in a configuration or a chapter parameter: ``"cpu"``, ``"cuda"`` or
``"cuda:<index>"``. :func:`check` validates the name alone (a configuration naming a GPU can be built, and its cached
model read, on a machine without one); :func:`require` is called before work starts on that device and raises a clear
error where the device is absent. The device is part of what determines a trained model (GPU arithmetic rounds
differently), so it enters the model's cache key; the same seed on another device is another solution.
"""

from __future__ import annotations

import re

import torch

#: The device the book runs on.
DEFAULT = "cpu"
_NAME = re.compile(r"cpu|cuda(:\d+)?")
_ALLOWED = "'cpu', 'cuda' or 'cuda:<index>'"


def check(name: str, value) -> str:
    """``value`` if it names a device (``"cpu"``, ``"cuda"``, ``"cuda:<index>"``), else a ValueError naming ``name``."""
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise ValueError(f"{name}={value!r} is not a device; allowed: {_ALLOWED}")
    return value


def require(name: str, value) -> torch.device:
    """The torch device ``value``, checked to be present here (CUDA asked for on a machine without it: an error)."""
    check(name, value)
    if value == "cpu":
        return torch.device("cpu")
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    index = int(value.partition(":")[2] or 0)
    if index >= count:
        present = f"{count} CUDA device(s)" if count else "no CUDA device (torch.cuda.is_available() is False)"
        raise RuntimeError(f"{name}={value!r} asks for a GPU, but this machine has {present}; use {name}='cpu' here")
    return torch.device(value)
