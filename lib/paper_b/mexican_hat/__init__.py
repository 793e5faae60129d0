"""The Mexican hat of paper B §3.2 (App. B–C, notes §9): an ASRNN learns a rotation-symmetric Hamiltonian, and its
learned force is walked along c* and b*.

``system`` (H, the true force, the ground-truth leapfrog), ``data`` (windows), ``model`` (the ASRNN), ``training``
(its training and the cached result), ``probes`` (the learned force on the pooled probe rows: J, X F, Π F, δ), ``lift``
(the sketched SVD, the pooled lift), ``problem`` (the lifting problem, profiles, rollout checks), ``gauges`` and
``walks`` (the two gauges of one lift; the walks), ``report`` and ``claims`` (what the chapter cites and judges);
``attribution``, ``attribution_report``, ``gate`` and ``authors`` (per-parameter attribution, the sketch gated against
the exact spectrum, the authors' unit-step walk: issue 16).
The hand-written SiLU gradient it trains and analyses with is ``lib.kernels.silu_mlp``.
"""

from lib.kernels.silu_mlp import mlp_grad_param_jacobian, mlp_input_grad
from lib.paper_b.mexican_hat.data import DataConfig, Windows, make_windows
from lib.paper_b.mexican_hat.lift import Solve, pooled_lift, sketched_svd
from lib.paper_b.mexican_hat.model import (
    ASRNN,
    HIDDEN,
    N_V_PARAMS,
    V_SHAPES,
    init_mlp,
    learned_force,
    mlp_value,
    potential,
    rollout,
    trajectory_loss,
    v_input,
    v_params_of,
    v_vector,
)  # fmt: skip
from lib.paper_b.mexican_hat.probes import (
    FORCE_CHUNK,
    Probes,
    defect_field,
    equivariance_error,
    force_at,
    force_jacobian,
    generator_field,
    pooled_force,
    pooled_probes,
    reynolds_field,
    tiled_force,
    true_lie_derivative,
)  # fmt: skip
from lib.paper_b.mexican_hat.problem import (
    ForceEvaluation,
    MexicanHatProblem,
    potential_deviation,
    profile_radius,
    relative_rollout_error,
    rollout_comparison,
)  # fmt: skip
from lib.paper_b.mexican_hat.system import (
    ANALYSIS_ALPHAS,
    DT,
    FINE_STEPS,
    POOLED_ALPHAS,
    TRAIN_ALPHAS,
    UNSEEN_ALPHAS,
    energy,
    leapfrog_true,
    sample_initial_conditions,
    true_force,
)  # fmt: skip
from lib.paper_b.mexican_hat.training import ASRNNConfig, ASRNNTraining, train_asrnn, train_cached, training_code
from lib.paper_b.mexican_hat.walks import WalkSet, run_walks

__all__ = [
    "ANALYSIS_ALPHAS", "ASRNN", "ASRNNConfig", "ASRNNTraining", "DT", "DataConfig", "FINE_STEPS", "FORCE_CHUNK",
    "ForceEvaluation", "HIDDEN", "MexicanHatProblem", "N_V_PARAMS", "POOLED_ALPHAS", "Probes", "Solve",
    "TRAIN_ALPHAS", "UNSEEN_ALPHAS", "V_SHAPES", "WalkSet", "Windows", "defect_field", "energy", "equivariance_error",
    "force_at", "force_jacobian", "generator_field", "init_mlp", "leapfrog_true", "learned_force", "make_windows",
    "mlp_grad_param_jacobian", "mlp_input_grad", "mlp_value", "pooled_force", "pooled_lift", "pooled_probes",
    "potential", "potential_deviation", "profile_radius", "relative_rollout_error", "reynolds_field", "rollout",
    "rollout_comparison", "run_walks", "sample_initial_conditions", "sketched_svd", "tiled_force", "train_asrnn",
    "train_cached", "training_code", "trajectory_loss", "true_force", "true_lie_derivative", "v_input",
    "v_params_of", "v_vector",
]  # fmt: skip
