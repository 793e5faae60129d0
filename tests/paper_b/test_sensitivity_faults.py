"""Library entry points refuse bad arguments in the reader's terms (issue 35): name, value, what is allowed."""

import numpy as np
import pytest
import torch

from lib.core import params
from lib.paper_b import lifting
from lib.paper_b import sensitivity as sens

pytestmark = pytest.mark.faults


def _J(m=12, p=5, seed=0):
    return torch.randn(m, p, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def _net():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Tanh(), torch.nn.Linear(3, 1)).double()


def _partial_params():
    net = _net()
    p = sens.module_params(net)
    del p["2.bias"]
    return sens.jacobian(net, p, torch.randn(4, 2, dtype=torch.float64))


CASES = {
    "lift complex J": (
        lambda: lifting.lift(_J().to(torch.complex128), _J()[:, 0]),
        TypeError,
        r"J must be real; got complex dtype torch\.complex128",
    ),
    "lift numpy tau out of range": (
        lambda: lifting.lift(_J(), _J()[:, 0], tau=np.int64(1)),
        ValueError,
        r"^tau=1 must be a number in \(0, 1\)$",
    ),
    "sensitivity dim_y 0": (
        lambda: sens.aggregate_sensitivity(_J(), dim_y=0),
        ValueError,
        r"dim_y=0 must be a positive integer",
    ),
    "sensitivity dim_y -1": (
        lambda: sens.aggregate_sensitivity(_J(), dim_y=-1),
        ValueError,
        r"dim_y=-1 must be a positive integer",
    ),
    "pointwise sensitivity dim_y -1": (
        lambda: sens.pointwise_sensitivity(_J(), dim_y=-1),
        ValueError,
        r"dim_y=-1 must be a positive integer",
    ),
    "sensitivity no rows": (
        lambda: sens.aggregate_sensitivity(torch.zeros(0, 3, dtype=torch.float64)),
        ValueError,
        r"J is empty \(shape \(0, 3\)\)",
    ),
    "sensitivity no columns": (
        lambda: sens.aggregate_sensitivity(torch.zeros(4, 0, dtype=torch.float64)),
        ValueError,
        r"J is empty \(shape \(4, 0\)\)",
    ),
    "pointwise sensitivity no rows": (
        lambda: sens.pointwise_sensitivity(torch.zeros(0, 3, dtype=torch.float64)),
        ValueError,
        r"J is empty \(shape \(0, 3\)\)",
    ),
    "jacobian params missing one": (
        _partial_params,
        ValueError,
        r"params lacks the module's parameters \['2\.bias'\]",
    ),
    "params integer numpy scalar": (
        lambda: params.integer("seeds", np.int64(3), max=2),
        ValueError,
        r"^seeds=3 is out of range",
    ),
    "params choice numpy scalar": (
        lambda: params.choice("width", np.int64(3), [16, 32]),
        ValueError,
        r"^width=3 is not allowed; choose one of \[16, 32\]$",
    ),
    "params subset numpy scalars": (
        lambda: params.subset("widths", [np.int64(3)], [16, 32]),
        ValueError,
        r"^widths contains \[3\]; allowed",
    ),
    "params real numpy scalar": (
        lambda: params.real("alpha", np.float64(1.5), min=0.0, max=1.0),
        ValueError,
        r"^alpha=1\.5 is out of range",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_argument_is_refused(case):
    call, error, message = CASES[case]
    with pytest.raises(error, match=message):
        call()


def test_rank_does_not_depend_on_scale():
    g = torch.Generator().manual_seed(1)
    J = torch.randn(30, 4, generator=g, dtype=torch.float64) @ torch.randn(4, 20, generator=g, dtype=torch.float64)
    eta = torch.randn(30, generator=g, dtype=torch.float64)
    for method in ("gram", "svd"):
        for gauge in lifting.GAUGES:
            ref = lifting.lift(J, eta, method=method, gauge=gauge)
            for scale in (1e-200, 1e200):
                res = lifting.lift(J * scale, eta, method=method, gauge=gauge)
                assert res.rank == ref.rank == 4, (method, gauge, scale)
                assert torch.allclose(res.coef * scale, ref.coef, rtol=1e-8, atol=1e-10 * float(ref.coef.abs().max()))
                kept = slice(0, ref.rank)  # the Gram route's discarded tail is rounding noise at any scale
                assert torch.allclose(res.singular_values[kept] / scale, ref.singular_values[kept], rtol=1e-8)
                assert res.rel_residual == pytest.approx(ref.rel_residual, rel=1e-8, abs=1e-12)


@pytest.mark.parametrize("tau", [np.float32(0.1), np.float16(0.25)])
def test_numpy_scalar_tau_is_accepted(tau):
    J, eta = _J(), _J()[:, 0]
    res = lifting.lift(J, eta, tau=tau)
    assert type(res.tau) is float and res.tau == float(tau)
    assert res.rank == lifting.lift(J, eta, tau=float(tau)).rank


def test_numpy_scalar_shown_plainly():
    with pytest.raises(TypeError) as info:
        params.integer("n", np.float64(2.5))
    assert str(info.value) == "n=2.5 must be an integer"
    assert "np." not in str(info.value)
    assert params.value_text(np.int64(3)) == "3" and params.value_text((np.int64(1),)) == "(1,)"
