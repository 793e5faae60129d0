"""The τ profile of a lift (``lib.paper_b.cutoff_profile``, ``LiftResult.profile``, ``SymmetryLift.profile``): the
residual and rank at every cutoff from the one decomposition, and which of the four cases holds, on constructed cases
whose answer is known."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from lib.paper_b import cutoff_profile as cp
from lib.paper_b import lifting
from lib.paper_b.any_module import lift_symmetry

F64 = torch.float64
OMEGA = torch.tensor([[0.0, -1.0], [1.0, 0.0]], dtype=F64)


def _matrix(m: int, p: int, spectrum: np.ndarray, seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """J = U diag(spectrum) Vᵀ (m, p) with random orthonormal U (m, n), V (p, n); returns J, U, V."""
    g = torch.Generator().manual_seed(seed)
    n = spectrum.size
    U, _ = torch.linalg.qr(torch.randn(m, n, generator=g, dtype=F64))
    V, _ = torch.linalg.qr(torch.randn(p, n, generator=g, dtype=F64))
    return U @ torch.diag(torch.as_tensor(spectrum, dtype=F64)) @ V.T, U, V


SPECTRUM = np.logspace(0, -11, 40)  # σ_k/σ₁ from 1 down to 1e-11: the paper's τ keeps 12 of 40


def _outside(J: torch.Tensor, U: torch.Tensor, seed: int) -> torch.Tensor:
    """A unit vector orthogonal to J's column space."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(J.shape[0], generator=g, dtype=F64)
    x = x - U @ (U.T @ x)
    return x / x.norm()


@pytest.mark.parametrize("method", ["svd", "gram"])
def test_the_profile_at_the_lifts_own_cutoff_is_the_lift(method):
    J, U, V = _matrix(60, 150, SPECTRUM, seed=0)
    eta = J @ torch.randn(150, generator=torch.Generator().manual_seed(1), dtype=F64) + 0.1 * _outside(J, U, 2)
    for tau in (1e-1, 1e-3, 1e-5):
        result = lifting.lift(J, eta, tau=tau, method=method)
        rank, rel = result.profile.at(tau)
        assert rank == result.rank and rel == pytest.approx(result.rel_residual, rel=1e-8, abs=1e-14)
        assert result.profile.rank_at_paper_tau == result.rank
    assert np.all(np.diff(result.profile.rel_residual) <= 1e-15)  # more directions never lift worse


def test_an_exact_lift_is_found_with_its_cutoff_and_size():
    """η = J c for a c spread over every direction: the paper's τ leaves a residual, a smaller τ reaches round-off."""
    J, U, V = _matrix(60, 150, SPECTRUM, seed=3)
    c = V @ torch.ones(40, dtype=F64)  # an equal share on every right singular vector, ‖c‖ = √40
    result = lifting.lift(J, J @ c, method="svd")
    prof = result.profile
    assert prof.case == "exact", prof.sentence()
    tau, size, _ = prof.exact_at
    assert tau < 1e-3 and size <= float(c.norm()) * (1 + 1e-9)  # the minimum-norm lift is no longer than c
    assert result.rel_residual > cp.EXACT  # the paper's cutoff alone would not say so
    assert prof.sentence().startswith("lifts exactly")


def test_the_gram_route_cannot_certify_an_exact_lift_and_says_to_what_depth_it_looked():
    J, U, V = _matrix(60, 150, SPECTRUM, seed=3)
    c = V @ torch.ones(40, dtype=F64)
    prof = lifting.lift(J, J @ c, method="gram").profile
    assert prof.resolution == lifting.GRAM_MIN_TAU and prof.tau.min() >= lifting.GRAM_MIN_TAU
    assert prof.case != "exact" and f"{lifting.GRAM_MIN_TAU:.2g}" in prof.sentence()


def test_a_direction_outside_the_column_space_does_not_lift_at_any_cutoff():
    J, U, V = _matrix(200, 20, np.logspace(0, -3, 20), seed=4)
    eta = _outside(J, U, 5) + 0.01 * (U @ torch.ones(20, dtype=F64)) / math.sqrt(20)
    prof = lifting.lift(J, eta, method="svd").profile
    assert prof.case == "none", prof.sentence()
    floor, _ = prof.floor
    assert floor == pytest.approx(1 / math.hypot(1, 0.01), rel=1e-9)
    assert prof.sentence().startswith("does not lift at any cutoff: the residual's floor is 1 ")


def test_between_approximately_at_the_paper_cutoff_and_only_below_it():
    J, U, V = _matrix(60, 150, SPECTRUM, seed=6)
    top = V[:, :5] @ torch.ones(5, dtype=F64)  # directions the paper's τ keeps
    low = V[:, 20:30] @ torch.ones(10, dtype=F64)  # directions only τ < 1e-6 keeps
    off = _outside(J, U, 7)
    near = J @ top
    prof = lifting.lift(J, near + 0.02 * near.norm() * off, method="svd").profile
    assert prof.case == "approximate" and prof.residual_at_paper_tau == pytest.approx(0.02, rel=1e-3)
    far = J @ low
    prof = lifting.lift(J, far + 0.02 * far.norm() * off, method="svd").profile
    assert prof.case == "below_paper_cutoff", prof.sentence()
    assert prof.residual_at_paper_tau > cp.REPRESENTED and prof.floor[0] == pytest.approx(0.02, rel=1e-3)


def test_the_rule_is_fixed_by_the_lines():
    assert cp.EXACT == 1e-10 and cp.REPRESENTED == pytest.approx(math.sin(math.radians(10)))
    assert cp.classify(np.array([0.5, 1e-11]), np.array([0.5, 1e-11]), 0.5) == "exact"
    assert cp.classify(np.array([0.5, 1e-11]), np.array([0.5, 1e-3]), 0.5) == "below_paper_cutoff"  # not certified
    assert cp.classify(np.array([0.1]), np.array([0.1]), 0.1) == "approximate"
    assert cp.classify(np.array([0.9]), np.array([0.9]), 0.9) == "none"


# ---------------------------------------------------------------------------------- on modules, through lift_symmetry


def _mlp(seed: int = 0, width: int = 32) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(2, width), torch.nn.Tanh(), torch.nn.Linear(width, width),
                               torch.nn.Tanh(), torch.nn.Linear(width, 1)).double()  # fmt: skip


def _probes(n: int = 256, seed: int = 1) -> torch.Tensor:
    return 2 * torch.rand(n, 2, generator=torch.Generator().manual_seed(seed), dtype=F64) - 1


def test_an_input_rotation_lifts_exactly_through_the_first_layer():
    """X f = ∂f/∂(W₁x)·W₁Ωx: c = (W₁Ω on the first weight, 0 elsewhere) lifts it exactly, whatever the network."""
    model = _mlp()
    lifted = lift_symmetry(model, _probes(), OMEGA)
    assert lifted.profile.case == "exact", lifted.profile.sentence()
    by_hand = float((model[0].weight.detach() @ OMEGA).norm())  # ‖W₁Ω‖: one exact lift
    assert lifted.profile.exact_at[1] <= by_hand * (1 + 1e-8)
    assert lifted.summary().startswith("X f lifts exactly")


def test_a_shift_a_bias_free_linear_model_cannot_make_does_not_lift():
    """f(x) = w·x has no constant direction: the output shift's X f = −1 lies outside J's column space on a probe
    set symmetric about 0."""
    model = torch.nn.Linear(2, 1, bias=False).double()
    grid = torch.linspace(-1, 1, 9, dtype=F64)
    probes = torch.cartesian_prod(grid, grid)
    lifted = lift_symmetry(model, probes, generator_out=lambda y: torch.ones_like(y), period=None)
    assert lifted.profile.case == "none" and lifted.profile.floor[0] == pytest.approx(1.0, rel=1e-12)
    assert lifted.case == "none" and lifted.summary().startswith("X f does not lift:")
    assert "on its probes, X f does not lift at any cutoff" in lifted.summary()


# ---------------------------------------------------------------------------------------------------- rough edges


def test_probes_of_the_wrong_width_are_refused_naming_both_sizes():
    with pytest.raises(ValueError, match=r"probes of shape \(256, 3\).*first Linear takes 2 inputs, the probes have 3"):
        lift_symmetry(_mlp(), torch.zeros(256, 3, dtype=F64), OMEGA[:1, :1].expand(3, 3).clone() * 0)


def test_a_velocity_field_may_return_float32_and_one_that_fails_on_float64_is_named():
    model = _mlp()
    as_float32 = lift_symmetry(model, _probes(), lambda x: (x @ OMEGA.T).float())
    exact = lift_symmetry(model, _probes(), OMEGA)
    assert as_float32.profile.floor[0] < 1e-6  # cast to float64: the rotation lifts to float32's precision
    assert float((as_float32.xf - exact.xf).abs().max()) < 1e-6
    field = torch.nn.Linear(2, 2, bias=False)  # float32 parameters: fails on float64 points
    with pytest.raises(ValueError, match=r"generator_in failed on float64 points .*a module: \.double\(\)"):
        lift_symmetry(model, _probes(), field)


def test_the_flow_has_the_papers_defaults_and_the_reprs_are_one_line():
    import inspect

    from lib.paper_b.any_module import symmetry_flow

    sig = inspect.signature(symmetry_flow).parameters
    assert (sig["steps"].default, sig["dt"].default) == (200, 0.005)
    lifted = lift_symmetry(_mlp(), _probes(), OMEGA)
    for text in (repr(lifted), repr(lifted.c), repr(lifted.profile)):
        assert "\n" not in text and len(text) < 400, text


def test_a_zero_direction_says_so_instead_of_failing():
    J, _, _ = _matrix(20, 40, np.logspace(0, -3, 20), seed=8)
    prof = lifting.lift(J, torch.zeros(20, dtype=F64), method="svd").profile
    assert prof.case == "exact" and prof.sentence().startswith("is zero: there is nothing to lift")
    assert "nothing to lift" in repr(prof)
