"""lib.core.params: parameter validation that names the parameter, the value and what is allowed."""

from __future__ import annotations

import math

import pytest

from lib.core import params


def test_choice_names_parameter_value_and_allowed():
    assert params.choice("task", "copy", ["copy", "sine"]) == "copy"
    with pytest.raises(ValueError, match=r"task='cpy' is not allowed; choose one of \['copy', 'sine'\]"):
        params.choice("task", "cpy", ["copy", "sine"])


@pytest.mark.parametrize("alpha", [0.0, -0.1, 1.0001, math.nan, math.inf])
def test_alpha_outside_half_open_unit_interval(alpha):
    with pytest.raises((ValueError, TypeError), match="alpha"):
        params.real("alpha", alpha, min=0.0, max=1.0, min_open=True)


def test_real_and_integer_accept_valid_values():
    assert params.real("alpha", 1, min=0.0, max=1.0, min_open=True) == 1.0
    assert params.integer("seeds", 3, min=1) == 3
    with pytest.raises(TypeError, match="seeds=2.5 must be an integer"):
        params.integer("seeds", 2.5)
    with pytest.raises(TypeError, match="must be an integer"):
        params.integer("seeds", True)
    with pytest.raises(ValueError, match=r"seeds=0 is out of range; allowed: \[1, inf\)"):
        params.integer("seeds", 0, min=1)


def test_subset_and_boolean():
    assert params.subset("remove", ("RR",), ["RR", "CR", "CC"]) == ["RR"]
    with pytest.raises(ValueError, match=r"remove contains \['XX'\]"):
        params.subset("remove", ["XX"], ["RR", "CR", "CC"])
    with pytest.raises(TypeError, match="single string"):
        params.subset("remove", "RR", ["RR"])
    with pytest.raises(TypeError, match="quick=1 must be True or False"):
        params.boolean("quick", 1)


@pytest.mark.parametrize("values", [None, 3, object()])
def test_subset_names_a_value_that_is_not_a_collection(values):
    with pytest.raises(TypeError, match=r"blocks=.* must be a collection \(list, tuple or set\) of elements from"):
        params.subset("blocks", values, ["RR", "CC"])
