"""The files :func:`lib.own_network.load_rnn` reads: a ``.npz`` of named arrays (``np.load`` with
``allow_pickle=False``) or a ``.pt``/``.pth`` state dict (``torch.load`` with ``weights_only=True``, through
:func:`lib.core.cache.load_checkpoint`); anything else, or a file that cannot be read, is refused in one sentence
naming the file."""

from __future__ import annotations

import math
import re
import zipfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from lib.core import budget, cache

#: The files :func:`lib.own_network.load_rnn` reads, by suffix.
FILE_SUFFIXES = (".npz", ".pt", ".pth")


def declared_arrays(path: Path) -> dict[str, tuple[tuple[int, ...], int]]:
    """``{name: (shape, bytes)}`` of the arrays a .npz or .pt file declares, read from its headers without reading
    (or decompressing) any array: a .npz member's ``.npy`` header; a .pt file's tensors mapped, not loaded
    (:func:`lib.core.cache.checkpoint_arrays`). ``{}`` when the file has no such headers (it is then refused by
    the reading itself). What :func:`read_file` checks against the machine's memory first."""
    found: dict[str, tuple[tuple[int, ...], int]] = {}
    suffix = path.suffix.lower()
    try:
        if suffix == ".npz":
            with zipfile.ZipFile(path) as archive:
                for info in archive.infolist():
                    with archive.open(info) as member:
                        version = np.lib.format.read_magic(member)
                        read = np.lib.format.read_array_header_1_0 if version == (1, 0) else (
                            np.lib.format.read_array_header_2_0)  # fmt: skip
                        shape, _, dtype = read(member, max_header_size=100_000)
                    found[info.filename.removesuffix(".npy")] = (tuple(shape), math.prod(shape) * dtype.itemsize)
        elif suffix in (".pt", ".pth"):
            found.update(cache.checkpoint_arrays(path))
    except Exception:  # not a zip, a header that is not .npy, a legacy .pt: read_file says why
        return {}
    return found


def check_size(path: Path, arrays: Mapping[str, tuple[tuple[int, ...], int]] | None = None) -> None:
    """``ValueError`` naming the file, its largest array and the machine's figure when its arrays, as declared by
    their headers, would not fit in this machine's available memory (twice: the file's copy and the book's)."""
    arrays = declared_arrays(path) if arrays is None else arrays
    total = sum(size for _, size in arrays.values())
    have = budget.available_memory()
    if arrays and 2 * total > have:
        name = max(arrays, key=lambda k: arrays[k][1])
        raise ValueError(f"source={str(path)!r} declares {budget.size_text(total)} of arrays "
                         f"(the largest, {name!r}, of shape {arrays[name][0]}), more than this machine's "
                         f"{budget.size_text(have)} of available memory holds twice; nothing was read")  # fmt: skip


def read_file(path: Path) -> Mapping:
    """The dict a .npz or .pt file holds, once its headers show it fits in memory (:func:`check_size`);
    ``ValueError`` naming the file when it cannot be read."""
    if not path.is_file():
        what = "is not a regular file (a pipe, a device or a folder)" if path.exists() else "is not a file"
        raise FileNotFoundError(f"source={str(path)!r} {what} (from {Path.cwd()})")
    suffix = path.suffix.lower()
    check_size(path)
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
