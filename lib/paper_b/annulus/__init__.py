"""The annulus classifier of paper B §3.1 (notes §8): a GELU MLP told a disc from a band, and its flows along c*, b*.

``data`` (the draws and every knob), ``model`` (the MLP, its training, the cached weights), ``mlp`` (θ as layers, the
factored Jacobian), ``problem`` (the lifting problem on the probe grid), ``condition_flows`` (every condition's
flows, in processes), ``report`` and ``panels`` (what the chapter cites and draws), ``claims`` (the notes' §8.8 claims).
"""

from lib.paper_b.annulus.claims import flow_claims
from lib.paper_b.annulus.condition_flows import ConditionFlows, FlowSet, flow, run_condition, run_conditions
from lib.paper_b.annulus.data import ARCS, CONDITIONS, AnnulusConfig, make_data
from lib.paper_b.annulus.mlp import FORWARD_CHUNK, MLPJacobian, MLPParams
from lib.paper_b.annulus.model import SimpleMLP, init_model, layer_blocks, theta_to_module, trained_models
from lib.paper_b.annulus.problem import AnnulusProblem, Evaluation, authors_resolve
from lib.paper_b.lifting_problem import KINDS

__all__ = [
    "ARCS", "CONDITIONS", "FORWARD_CHUNK", "KINDS", "AnnulusConfig", "AnnulusProblem", "ConditionFlows", "Evaluation",
    "FlowSet", "MLPJacobian", "MLPParams", "SimpleMLP", "authors_resolve", "flow", "flow_claims", "init_model",
    "layer_blocks", "make_data", "run_condition", "run_conditions", "theta_to_module", "trained_models",
]  # fmt: skip
