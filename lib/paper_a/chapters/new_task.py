"""The new-task chapter: what the executed task chapter glued for a reader's task, and how bad calls are refused."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from IPython.display import Markdown

from lib.core import budget
from lib.core.tables import Code, Table, as_myst

#: The task chapter's values the new-task chapter reports (each glued there as ``<key>_<task>``).
KEYS = (
    "fvu_full", "dfvu_RR", "dfvu_CR", "dfvu_CC", "sens_CR", "sens_CC", "frac_CR_largest", "frac_CC_gt_CR",
    "min_threshold_gap", "nR_min", "nR_max",
)  # fmt: skip
BLOCK_NAMES = (("RR", "T_RR"), ("CR", "T_C→R"), ("CC", "T_CC"))
#: Each of :data:`KEYS` in words, as the table shows it (its notation written with subscripts).
LABELS = {
    "fvu_full": "held-out FVU of the full model",
    "dfvu_RR": "ΔFVU(−T_RR)",
    "dfvu_CR": "ΔFVU(−T_C→R)",
    "dfvu_CC": "ΔFVU(−T_CC)",
    "sens_CR": "S_ΔT(−T_C→R)",
    "sens_CC": "S_ΔT(−T_CC)",
    "frac_CR_largest": "solutions where ΔFVU(−T_C→R) is the largest single-block effect (fraction)",
    "frac_CC_gt_CR": "solutions where ΔFVU(−T_CC) > ΔFVU(−T_C→R) (fraction)",
    "min_threshold_gap": "nearest block modulus from the threshold α·ρ (in units of ρ)",
    "nR_min": "smallest n_R",
    "nR_max": "largest n_R",
}


def task_values(values: dict[str, Any], task: str) -> dict[str, Any]:
    """``{key: value}`` of :data:`KEYS` from the task chapter's glued ``values``; NaN for a value it could not define
    (S_ΔT of a block empty in every solution)."""
    return {k: values.get(f"{k}_{task}", float("nan")) for k in KEYS}


def glue_values(found: dict[str, Any]) -> dict[str, Any]:
    """``new_<key>`` for every value, and ``new_dfvu_<block>_text``: "ΔFVU (−T_block)" or why there is none (and
    ``new_dfvu_<block>_md``, the same as MyST Markdown with its notation as maths, for the prose's ``{glue:md}``)."""
    out = {f"new_{k}": v for k, v in found.items()}
    for block, name in BLOCK_NAMES:
        v = found[f"dfvu_{block}"]
        nan = isinstance(v, float) and math.isnan(v)
        out[f"new_dfvu_{block}_text"] = (
            f"nothing for −{name} (empty in every solution)" if nan else f"{v:.3g} (−{name})"
        )
        out[f"new_dfvu_{block}_md"] = Markdown(as_myst(out[f"new_dfvu_{block}_text"]))
    return out


def values_table(found: dict[str, Any], task: str) -> Table:
    return Table(
        ("computed by the executed task chapter", task), tuple((LABELS[k], v) for k, v in found.items()), ".4g",
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
    """A table of ``{shown call: call}`` and the error each raises before any work (both as code)."""
    return Table(
        ("call", "error raised"), tuple((Code(c), Code(error_of(f))) for c, f in calls.items()),
        caption="Wrong names and values, refused before any work",
    )  # fmt: skip


def work(task: str, solutions: int) -> budget.Work:
    """The chapter's size (:func:`lib.core.budget.bound`): it executes the task chapter for ``solutions`` solutions
    of ``task`` (that chapter's own size is checked when it starts)."""
    return budget.bound(
        "new_task",
        budget.Term(f"solutions of {task}", solutions, budget.measured("new_task")["solutions"], params=("solutions",)),
    )
