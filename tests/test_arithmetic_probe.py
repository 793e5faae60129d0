"""The book's own arithmetic probe (``lib.arithmetic_probe``): under the pins, every operation whose bits the book
depends on gives the hash in ``tests/data/arithmetic_probe.json`` on this machine, or the test names the operations
that round differently here, before any chapter's numbers are compared."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from lib import arithmetic_probe
from lib.core import arithmetic
from lib.core.paths import REPO_ROOT

EXPECTED = REPO_ROOT / "tests" / "data" / "arithmetic_probe.json"


def test_every_operation_the_book_depends_on_gives_the_published_bits_here():
    gone = arithmetic.departures()
    if gone:
        pytest.skip("this process does not compute with the book's arithmetic, so its bits are not expected to be "
                    "the book's: " + "; ".join(gone))  # fmt: skip
    env = arithmetic.pinned_environment(dict(os.environ))
    done = subprocess.run([sys.executable, "-m", "lib.arithmetic_probe", "--check", str(EXPECTED)], env=env,
                          capture_output=True, text=True, cwd=REPO_ROOT, timeout=300)  # fmt: skip
    assert done.returncode == 0, (
        f"operations that round differently on this machine ({arithmetic.cpu()['model']}) than under the book's "
        f"arithmetic:\n{done.stdout}{done.stderr[-2000:]}"
    )


def test_the_probe_covers_the_book_s_own_paths_and_the_shared_probe():
    expected = json.loads(EXPECTED.read_text())["hashes"]
    for op in ("book_seed_batched_training_f32_25_steps", "book_ordered_schur_f64_72", "book_jacobian_f64_96x697",
               "book_lift_sensitivity_gauge_f64", "torch_adam_step_f32", "torch_eigvalsh_f64_300",
               "torch_func_jacrev_f64", "scipy_schur_f64_72", "numpy_exp_f64", "numpy_log1p_f32"):  # fmt: skip
        assert op in expected, op
    assert len(expected) == 28 + 13


def test_the_lift_s_steps_cover_every_routine_of_cpu_linalg_and_end_in_the_lift_itself():
    """A routine added to lib.kernels.cpu_linalg without a step in the probe fails here; the probe's steps are the
    lift's own (its coefficient step has the whole lift's hash)."""
    import inspect

    from lib.kernels import cpu_linalg

    expected = json.loads(EXPECTED.read_text())["hashes"]
    steps = [k for k in expected if k.startswith("book_lift_step_")]
    routines = {
        name for name, f in inspect.getmembers(cpu_linalg, inspect.isfunction) if f.__module__ == cpu_linalg.__name__
    }
    assert routines and all(any(step.endswith(f"_{name}") for step in steps) for name in routines), routines
    assert expected["book_lift_step_8_coef"] == expected["book_lift_sensitivity_gauge_f64"]


def test_a_differing_or_missing_operation_is_named():
    expected = {"a": "1", "b": "2", "c": "3"}
    assert arithmetic_probe.differing({"a": "1", "b": "9", "d": "4"}, expected) == ["b", "c", "d"]
    assert arithmetic_probe.differing(dict(expected), expected) == []
