"""Shared fixtures: ``results`` gives the numbers glued by the executed book (``_build/results.json``). The executor
is the package ``bookrun``, imported like ``lib``."""

from __future__ import annotations

import json
import os
import sys
import warnings

import pytest

from lib.core import arithmetic, mkl_vendor

# The book's arithmetic, for a plain `pytest` too (make runs it through `python -m bookrun.arithmetic`): the pins are
# read when numpy and torch load, which has not happened yet unless a plugin loaded them.
if arithmetic.unset_pins() and arithmetic.mode() == "pinned":
    if {"numpy", "torch", "scipy"} & set(sys.modules):
        warnings.warn(f"numpy or torch loaded before the pins could be set: {arithmetic.unset_pins()} are not as the "
                      "book sets them; run `make unit` (or `python -m bookrun.arithmetic pytest ...`)",
                      arithmetic.ArithmeticWarning, stacklevel=1)  # fmt: skip
    else:
        os.environ.update(arithmetic.pinned_environment(dict(os.environ)))
        mkl_vendor.load_vendor_answer()  # the start-up hook ran before the pins were set; torch is not loaded yet

from lib.core.paths import build_dir  # noqa: E402


class Results(dict):
    """``{"<chapter>::<name>": value}`` with a helpful error for a missing key."""

    def __missing__(self, key):
        chapter = key.split("::")[0]
        names = sorted(k for k in self if k.startswith(chapter + "::"))
        raise KeyError(f"{key!r} was not glued by the executed book; {chapter!r} glued {names}")


@pytest.fixture(scope="session")
def results() -> Results:
    path = build_dir() / "results.json"
    if not path.is_file():
        pytest.fail(f"{path} is missing: execute the book first (`make execute`, or `make test` which does it)")
    return Results(json.loads(path.read_text()))


@pytest.fixture
def float64_default():
    """Float64 as torch's default dtype for one test only (a module-level switch would leak into other tests)."""
    import torch

    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(previous)


#: The jupytext front matter and title of a throw-away test chapter (braces doubled for ``str.format``).
MYST_FRONT = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
    jupytext_version: 1.19.6
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# Template title

"""
