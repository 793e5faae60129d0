"""Resolved and fixed Euler flows on problems with known solutions."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lib.paper_b.euler_flows import euler_flow
from lib.paper_b.lifting import lift

pytestmark = pytest.mark.usefixtures("float64_default")


def test_resolved_flow_is_forward_euler():
    theta0 = torch.tensor([1.0, -2.0])
    rec = euler_flow(
        theta0,
        lambda th: -th,
        steps=200,
        dt=0.005,
        diagnostics_fn=lambda th, k, z: {"norm": float(th.norm()), "k": k},
        progress=False,
        snapshot_stops=(0, 100, 200),
    )
    assert rec.times.shape == (201,) and rec.diagnostics["norm"].shape == (201,)
    assert np.array_equal(rec.diagnostics["k"], np.arange(201))
    assert torch.allclose(rec.theta_final, theta0 * (1 - 0.005) ** 200)
    assert torch.allclose(rec.snapshots[100], theta0 * (1 - 0.005) ** 100)
    assert rec.start_end("norm")[0] == pytest.approx(float(theta0.norm()))


def test_fixed_flow_is_a_straight_line():
    theta0 = torch.tensor([1.0, -2.0, 0.5])
    calls = []

    def direction(th):
        calls.append(1)
        return -th

    rec = euler_flow(theta0, direction, steps=50, dt=0.02, mode="fixed", progress=False)
    assert len(calls) == 1
    assert torch.allclose(rec.theta_final, theta0 - 1.0 * theta0, atol=1e-12)
    assert rec.path_length == pytest.approx(float(theta0.norm()))


def test_resolved_calls_direction_at_every_stop():
    calls = []

    def direction(th):
        calls.append(1)
        return torch.ones_like(th), {"n": len(calls)}

    rec = euler_flow(torch.zeros(2), direction, steps=10, dt=0.1, progress=False)
    assert len(calls) == 11
    assert rec.direction_info["n"].tolist() == list(range(1, 12))


def test_normalized_steps_and_liftresult_directions():
    J = torch.eye(3)[:2]
    rec = euler_flow(
        torch.zeros(3),
        lambda th: lift(J, torch.tensor([3.0, 4.0]), gauge="minnorm"),
        steps=5,
        dt=0.1,
        normalize=True,
        progress=False,
    )
    assert np.allclose(rec.step_norms, 0.1)
    assert torch.allclose(rec.theta_final, torch.tensor([0.3, 0.4, 0.0]))
    assert rec.direction_info["rank"].tolist() == [2] * 6


def test_flow_validation():
    with pytest.raises(ValueError, match="mode"):
        euler_flow(torch.zeros(2), lambda t: t, steps=1, dt=0.1, mode="frozen")
    with pytest.raises(ValueError, match="dt"):
        euler_flow(torch.zeros(2), lambda t: t, steps=1, dt=0.0)
    with pytest.raises(ValueError, match="shape"):
        euler_flow(torch.zeros(2), lambda t: torch.zeros(3), steps=1, dt=0.1, progress=False)
    with pytest.raises(ValueError, match="snapshot"):
        euler_flow(torch.zeros(2), lambda t: t, steps=1, dt=0.1, snapshot_stops=(5,))
