"""The new-task chapter: what the executed task chapter glued for a reader's task, and how bad calls are refused."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from lib.core.tables import Table

#: The task chapter's values the new-task chapter reports (each glued there as ``<key>_<task>``).
KEYS = (
    "fvu_full", "dfvu_RR", "dfvu_CR", "dfvu_CC", "sens_CR", "sens_CC", "frac_CR_largest", "frac_CC_gt_CR",
    "min_threshold_gap", "nR_min", "nR_max",
)  # fmt: skip
BLOCK_NAMES = (("RR", "T_RR"), ("CR", "T_C→R"), ("CC", "T_CC"))


def task_values(values: dict[str, Any], task: str) -> dict[str, Any]:
    """``{key: value}`` of :data:`KEYS` from the task chapter's glued ``values``; NaN for a value it could not define
    (S_ΔT of a block empty in every solution)."""
    return {k: values.get(f"{k}_{task}", float("nan")) for k in KEYS}


def glue_values(found: dict[str, Any]) -> dict[str, Any]:
    """``new_<key>`` for every value, and ``new_dfvu_<block>_text``: "ΔFVU (−T_block)" or why there is none."""
    out = {f"new_{k}": v for k, v in found.items()}
    for block, name in BLOCK_NAMES:
        v = found[f"dfvu_{block}"]
        nan = isinstance(v, float) and math.isnan(v)
        out[f"new_dfvu_{block}_text"] = (
            f"nothing for −{name} (empty in every solution)" if nan else f"{v:.3g} (−{name})"
        )
    return out


def values_table(found: dict[str, Any], task: str) -> Table:
    return Table(
        ("glued by the executed task chapter", task), tuple(found.items()), ".4g",
        caption=f"What the task chapter computed for {task}",
    )  # fmt: skip


def error_of(call: Callable[[], Any]) -> str:
    """The error ``call`` raises, as "Type: message"; ``AssertionError`` if it raises none (it must)."""
    try:
        call()
    except (ValueError, TypeError) as exc:
        return f"{type(exc).__name__}: {exc}"
    raise AssertionError("expected an error")


def refusals(calls: dict[str, Callable[[], Any]]) -> Table:
    """A table of ``{shown call: call}`` and the error each raises before any work."""
    return Table(
        ("call", "error raised"), tuple((c, error_of(f)) for c, f in calls.items()),
        caption="Wrong names and values, refused before any work",
    )  # fmt: skip
