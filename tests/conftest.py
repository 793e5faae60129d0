"""Shared fixtures: ``results`` gives the numbers glued by the executed book (``_build/results.json``);
``execute_book`` is the executor script as a module."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from lib.core.paths import build_dir


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


def load_execute_book():
    """``scripts/execute_book.py`` as the module ``execute_book`` (scripts/ is not a package)."""
    if "execute_book" not in sys.modules:
        path = Path(__file__).resolve().parent.parent / "scripts" / "execute_book.py"
        spec = importlib.util.spec_from_file_location("execute_book", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["execute_book"] = module
        spec.loader.exec_module(module)
    return sys.modules["execute_book"]


@pytest.fixture(scope="session")
def execute_book():
    """The executor script as a module."""
    return load_execute_book()
