"""Jacobians against finite differences and the sensitivities (``lib.paper_b.sensitivity``)."""

from __future__ import annotations

import pytest
import torch

from lib.paper_b import sensitivity as sens

pytestmark = pytest.mark.usefixtures("float64_default")


def _mlp_params(seed=0, d_in=2, width=7, d_out=1):
    g = torch.Generator().manual_seed(seed)
    return {
        "w1": torch.randn(width, d_in, generator=g),
        "b1": torch.randn(width, generator=g),
        "w2": torch.randn(d_out, width, generator=g) / width**0.5,
        "b2": torch.randn(d_out, generator=g),
    }


def _mlp(p, x):
    h = torch.tanh(x @ p["w1"].T + p["b1"])
    return h @ p["w2"].T + p["b2"]


def _fd_jacobian(fn, params, x, eps=1e-6):
    theta = sens.flatten_params(params)
    cols = []
    for i in range(theta.numel()):
        e = torch.zeros_like(theta)
        e[i] = eps
        plus = fn(sens.unflatten_params(theta + e, params), x).reshape(-1)
        minus = fn(sens.unflatten_params(theta - e, params), x).reshape(-1)
        cols.append((plus - minus) / (2 * eps))
    return torch.stack(cols, dim=1)


def test_flatten_roundtrip():
    p = _mlp_params()
    vec = sens.flatten_params(p)
    assert vec.shape == (sum(t.numel() for t in p.values()),)
    back = sens.unflatten_params(vec, p)
    assert all(torch.equal(back[k], p[k]) for k in p)
    with pytest.raises(ValueError, match="expected"):
        sens.unflatten_params(vec[:-1], p)


@pytest.mark.parametrize("d_out", [1, 2])
def test_jacobian_matches_finite_differences(d_out):
    p = _mlp_params(d_out=d_out)
    x = torch.randn(9, 2, generator=torch.Generator().manual_seed(1))
    J = sens.jacobian(_mlp, p, x)
    assert J.shape == (9 * d_out, sum(t.numel() for t in p.values()))
    assert J.dtype == torch.float64
    assert torch.allclose(J, _fd_jacobian(_mlp, p, x), atol=1e-8, rtol=1e-6)
    assert torch.allclose(sens.jacobian(_mlp, p, x, chunk_size=4), J)


def test_jacobian_of_module():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(2, 5), torch.nn.GELU(), torch.nn.Linear(5, 1)).double()
    p = sens.module_params(net)
    x = torch.randn(6, 2)
    J = sens.jacobian(net, p, x)
    Jfd = _fd_jacobian(lambda q, xx: torch.func.functional_call(net, q, (xx,)), p, x)
    assert torch.allclose(J, Jfd, atol=1e-8)


def test_sensitivities():
    J = torch.randn(12, 5)
    S = sens.aggregate_sensitivity(J, dim_y=2)
    assert torch.allclose(S, J.norm(dim=0) / 12**0.5)
    Sp = sens.pointwise_sensitivity(J, dim_y=2)
    assert Sp.shape == (6, 2, 5) and torch.equal(Sp[1, 0], J[2])
    with pytest.raises(ValueError, match="multiple of dim_y"):
        sens.aggregate_sensitivity(J, dim_y=5)
