"""The sizes of paper B's chapters, from their parameters (:func:`lib.core.budget.bound`: refused when out of reach).

Each function is the last line of its chapter's validation cell: the terms that drive the chapter's time, against
the sizes its reference time was measured at (the book's values, :func:`lib.core.budget.measured`), and the largest
arrays it holds.
"""

from __future__ import annotations

from lib.core import budget, params
from lib.core.budget import Term, floats


def annulus(*, steps: int, decision_mesh: int) -> budget.Work:
    """The flows (Euler steps, each a lift on the annulus's probes) and the decision-boundary panels (mesh²)."""
    book = budget.measured("annulus")
    return budget.bound(
        "annulus",
        parts=[
            (0.85, (Term("Euler steps", steps, book["steps"], params=("steps",)),)),
            (0.15, (Term("mesh points", decision_mesh, book["decision_mesh"], 2, params=("decision_mesh",)),)),
        ],
        arrays={"the decision-boundary mesh's outputs": floats(decision_mesh, decision_mesh, 64, copies=4)},
    )


def at_scale(*, width: int, epochs: int, rings: int, angles: int, flow_steps: int, block_bytes: int) -> budget.Work:
    """Training (epochs × parameters) and the lifts (probes × parameters: three routes, two judged held out, each flow
    step); the largest array is the dense route's J (probes × parameters, with its factors), which the chapter forms
    to compare the routes."""
    book = budget.measured("at_scale")
    count = lambda w: w * w + 4 * w + 1  # noqa: E731 - 2 → w → w → 1
    p, probes, book_probes = count(width), rings * angles, book["rings"] * book["angles"]
    size = Term("parameters", p, count(book["width"]), params=("width",))
    return budget.bound(
        "at_scale",
        parts=[
            (0.3, (size, Term("epochs", epochs, book["epochs"], params=("epochs",)))),
            (0.7, (size, Term("probes", probes, book_probes, params=("rings", "angles")),
                   Term("lifts", 5 + 2 * flow_steps, 5 + 2 * book["flow_steps"], params=("flow_steps",)))),
        ],
        arrays={
            "the dense route's J (probes × parameters) and its factors": floats(probes, p, copies=3),
            "a block of J's columns": float(block_bytes),
            "the parameters, their gradients and Adam's moments": floats(p, copies=8),
        },
    )  # fmt: skip


def mexican_hat(*, train_steps: int, batch: int, l1_compare_steps: int, walk_steps: int, sketch_rank: int,
                rollout_ics: int, rollout_steps: int) -> budget.Work:  # fmt: skip
    """Training (Adam steps × windows per step, and the two comparison runs), the walks (re-solves × the sketch's
    rank) and the roll-outs (initial conditions × steps); each of these integers is checked here first."""
    train_steps, batch = params.integer("train_steps", train_steps, min=1), params.integer("batch", batch, min=1)
    params.integer("l1_compare_steps", l1_compare_steps, min=1, max=train_steps)
    for name, value, least in (("walk_steps", walk_steps, 1), ("sketch_rank", sketch_rank, 1),
                               ("rollout_ics", rollout_ics, 1), ("rollout_steps", rollout_steps, 19)):  # fmt: skip
        params.integer(name, value, min=least)
    book = budget.measured("mexican_hat")
    windows = Term("windows per step", batch, book["batch"], params=("batch",))
    return budget.bound(
        "mexican_hat",
        parts=[
            (0.45, (Term("Adam steps", train_steps, book["train_steps"], params=("train_steps",)), windows)),
            (0.1, (Term("comparison steps", l1_compare_steps, book["l1_compare_steps"],
                        params=("l1_compare_steps",)), windows)),
            (0.35, (Term("re-solves", walk_steps, book["walk_steps"], params=("walk_steps",)),
                    Term("sketch rank", sketch_rank, book["sketch_rank"], params=("sketch_rank",)))),
            (0.1, (Term("roll-out steps", rollout_ics * rollout_steps, book["rollout_ics"] * book["rollout_steps"],
                        params=("rollout_ics", "rollout_steps")),)),
        ],
        arrays={"the training windows' states (kept for backpropagation)": floats(batch, 64, 64, copies=4)},
    )  # fmt: skip


def lifting_criterion(*, width: int) -> budget.Work:
    """The demonstration MLP's Jacobian and its finite-difference check (∝ width²)."""
    book = budget.measured("lifting_criterion")
    return budget.bound("lifting_criterion", Term("width", width, book["width"], 2, params=("width",)),
                        arrays={"the Jacobian and its check": floats(512, width * width, copies=3)})  # fmt: skip
