"""The files :func:`lib.own_network.load_rnn` reads: a ``.npz`` of named arrays (``np.load`` with
``allow_pickle=False``) or a ``.pt``/``.pth`` state dict (``torch.load`` with ``weights_only=True``, through
:func:`lib.core.cache.load_checkpoint`); anything else, or a file that cannot be read, is refused in one sentence
naming the file."""

from __future__ import annotations

import re
import zipfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from lib.core import cache

#: The files :func:`lib.own_network.load_rnn` reads, by suffix.
FILE_SUFFIXES = (".npz", ".pt", ".pth")


def read_file(path: Path) -> Mapping:
    """The dict a .npz or .pt file holds; ``ValueError`` naming the file when it cannot be read."""
    if not path.is_file():
        raise FileNotFoundError(f"source={str(path)!r} is not a file (from {Path.cwd()})")
    suffix = path.suffix.lower()
    if suffix == ".npz":
        try:
            data = np.load(path, allow_pickle=False)
            if not isinstance(data, np.lib.npyio.NpzFile):
                raise ValueError(f"it holds one array of shape {data.shape}, not named arrays")
            with data:
                return {k: np.array(data[k]) for k in data.files}
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
            why = f"{type(exc).__name__}: {(str(exc).strip() or 'unreadable').splitlines()[0][:160]}"
            raise ValueError(f"source={str(path)!r} cannot be read as a .npz file of named arrays ({why})") from None
    if suffix in (".pt", ".pth"):
        try:
            return cache.load_checkpoint(path)
        except cache.CorruptCheckpointError as exc:
            if "Weights only load failed" in str(getattr(exc, "original", "")):
                raise ValueError(
                    f"source={str(path)!r} holds a pickled Python object (a whole module?), which the "
                    "book does not unpickle: save the model's state_dict() and give that file"
                ) from None
            why = getattr(exc, "original", exc)
            plain = re.sub(r"\x1b\[[0-9;]*m", "", str(why)).strip() or "unreadable"  # no terminal colour codes
            why = f"{type(why).__name__}: {plain.splitlines()[0][:160]}"
            raise ValueError(f"source={str(path)!r} cannot be read by torch.load with weights_only=True ({why}); "
                             "save a state dict or a dict of tensors") from None  # fmt: skip
    raise ValueError(f"source={str(path)!r} has the suffix {suffix!r}; supported files: {list(FILE_SUFFIXES)}")
