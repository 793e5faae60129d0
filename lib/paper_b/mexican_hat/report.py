"""What the Mexican-hat chapter cites and shows (notes §9): settings, the L1 comparison, the rollout and equivariance
checks, the two gauges of one lift with the unit-step comparison and the Euler-growth prediction, and the walks.

Every function returns numbers keyed by the chapter's glue names, the arrays a ``lib.plots.hamiltonian`` figure takes,
or a ``lib.core.tables.Table``; the chapter glues and draws them.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor

from lib.kernels.cpu_linalg import column_norms
from lib.paper_b.mexican_hat.data import DataConfig
from lib.paper_b.mexican_hat.model import v_vector
from lib.paper_b.mexican_hat.probes import (
    POOLED_ALPHAS,
    Probes,
    defect_field,
    equivariance_error,
    force_jacobian,
    generator_field,
    pooled_force,
    pooled_probes,
)
from lib.paper_b.mexican_hat.problem import relative_rollout_error, rollout_comparison
from lib.paper_b.mexican_hat.system import TRAIN_ALPHAS, UNSEEN_ALPHAS
from lib.paper_b.symmetry import cosine, square_grid
from lib.papers import symmetry_lifting

PORTRAIT_ALPHAS = (-0.8, -0.5, 0.6, 1.0)  # two training and two unseen values


def settings(probes: Probes, data: DataConfig | None = None) -> dict:
    """The data's sizes, the paper's settings and printed numbers, the pooled system's size, by glue name."""
    data = DataConfig() if data is None else data
    n_states = data.splits + data.window - 1  # states per trajectory (one more than its Δt steps)
    n_windows, n_train = window_counts(data)
    n_val = n_windows - n_train
    mh, notes = symmetry_lifting.MEXICAN_HAT, symmetry_lifting.HAMILTONIAN_NOTES
    return {
        "n_states": n_states, "n_traj_steps": n_states - 1, "n_splits": data.splits, "window": data.window,
        "n_later": data.instants - 1, "n_ics": data.ics_per_alpha, "e_max": data.e_max, "n_windows": n_windows,
        "n_train_windows": n_windows - n_val, "n_val_windows": n_val, "integration_dt": mh["integration_dt"],
        "fine_dt": mh["integration_dt"] / mh["coarsening"], "hidden": mh["hidden"],
        "authors_steps_lo": min(mh["training_steps"]), "authors_steps_hi": max(mh["training_steps"]),
        "authors_l1": mh["l1"],
        "authors_unit_step": mh["unit_step"], "paper_val_mse": notes["val_mse"].text,
        "paper_val_mse_steps": notes["val_mse_steps"], "paper_eq_aug": notes["equivariance_error_augmented"].text,
        "paper_eq_plain": notes["equivariance_error_plain"].text, "paper_rank": notes["rank"].text,
        "paper_cos_square": notes["cos_square"].text, "paper_cos_polar": notes["cos_polar"].text,
        "rotation_degrees": mh["rotation_degrees"], "n_probe_rows": probes.rows, "n_pooled_alphas": len(probes.alphas),
    }  # fmt: skip


def l1_comparison(trained_l0, trained_l1, theta0: Tensor, probes: Probes, *, l1: float, steps: int, train_steps: int):
    """Two short runs with and without the authors' L1 penalty: (glue values, {label: Jacobian column norms}).

    ``weak_columns_text`` says whether the run with the penalty has a larger fraction of near-dead columns (norm below
    1e-3 of the largest) than the run without."""

    def norms_of(theta):
        return column_norms(force_jacobian(theta, probes)).numpy()

    compare = {"no L1": v_vector(trained_l0.model), f"L1 = {l1:g}": v_vector(trained_l1.model)}
    norms = {f"{k}, {steps} steps": norms_of(v) for k, v in compare.items()}
    norms[f"no L1, {train_steps} steps (used below)"] = norms_of(theta0)
    small = {k: float((v.abs() < 1e-3).double().mean()) for k, v in compare.items()}
    l1_term = l1 * float(sum(t.abs().sum() for t in trained_l1.model.parameters()))
    weak = {k: float((v < 1e-3 * v.max()).mean()) for k, v in norms.items()}
    glue = {
        "l1_frac_small_weights": small[f"L1 = {l1:g}"], "l0_frac_small_weights": small["no L1"], "l1_term": l1_term,
        "l1_term_over_val_mse": l1_term / float(trained_l1.final_val_mse), "l1_compare_steps": int(steps),
        "l1_val_mse": float(trained_l1.final_val_mse), "l0_val_mse": float(trained_l0.final_val_mse),
        "l1_frac_weak_columns": list(weak.values())[1], "l0_frac_weak_columns": list(weak.values())[0],
    }  # fmt: skip
    more_weak = glue["l1_frac_weak_columns"] > glue["l0_frac_weak_columns"]  # the penalty added near-dead columns
    glue["weak_columns_text"] = (
        "The penalty has already added near-dead columns to the Jacobian" if more_weak
        else "The penalty has not yet added near-dead columns to the Jacobian"
    )  # fmt: skip
    return glue, norms


def rollout_checks(model, *, seed: int, n_ic: int, steps: int, horizon: int):
    """Learned against true rollouts: (glue values, (truth, learned) phase portraits at ``PORTRAIT_ALPHAS``)."""
    portraits = rollout_comparison(model, PORTRAIT_ALPHAS, n_ic=4, steps=steps, seed=seed + 1)
    t_un, s_un = rollout_comparison(model, UNSEEN_ALPHAS, n_ic=n_ic, steps=steps, seed=seed + 2)
    t_tr, s_tr = rollout_comparison(model, TRAIN_ALPHAS, n_ic=n_ic, steps=horizon, seed=seed + 3)
    glue = {
        "rollout_error_unseen_alpha": float(
            relative_rollout_error([t[:, : horizon + 1] for t in t_un], [s[:, : horizon + 1] for s in s_un])
        ),
        "rollout_error_unseen_alpha_long": float(relative_rollout_error(t_un, s_un)),
        "rollout_error_train_alpha": float(relative_rollout_error(t_tr, s_tr)),
        "rollout_horizon": int(horizon),
        "rollout_steps": int(steps),
    }
    return glue, portraits


def equivariance_checks(theta0: Tensor, probes: Probes) -> dict:
    """The 73° equivariance error, cos(δ, X F) on the polar grid and on a 16 × 16 lattice in the same disc, ‖δ‖/‖F‖."""
    square = pooled_probes(POOLED_ALPHAS, square_grid(16, 1.0))  # 16 × 16 lattice on [−1, 1]², clipped to |q| ≤ 1
    F0 = pooled_force(theta0, probes)
    return {
        "equivariance_error_73deg": float(equivariance_error(theta0, probes, 73.0)),
        "cos_delta_eta_polar": float(cosine(defect_field(theta0, probes), generator_field(theta0, probes))),
        "cos_delta_eta_square": float(cosine(defect_field(theta0, square), generator_field(theta0, square))),
        "rel_defect0": float(defect_field(theta0, probes).norm() / F0.norm()),
        "n_square": int(square.n_grid),
    }


@dataclass
class RankConventions:
    """The lifts' τ profiles at θ₀ (``profiles["c"]``, ``["b"]``) with their table, the rank under each cutoff
    convention with its table, and the glued values (``lib.paper_b.mexican_hat.rank_conventions``)."""

    profiles: dict
    ranks: dict
    table: object
    profile_table: object
    glue: dict


def rank_conventions(theta0: Tensor, probes: Probes, *, tau: float) -> RankConventions:
    """c*'s and b*'s τ profiles through one Gram eigendecomposition of the pooled J at θ₀ (it resolves cutoffs down to
    ``lifting.GRAM_MIN_TAU``), and the retained rank under every cutoff convention against the notes' rank."""
    from lib.paper_b import lifting
    from lib.paper_b.cutoff_profile import CASE_WORDS, profiles_table
    from lib.paper_b.mexican_hat import rank_conventions as conv

    paper_rank = int(symmetry_lifting.HAMILTONIAN_NOTES["rank"].value)
    J = force_jacobian(theta0, probes)
    svd = lifting.truncated_svd(J, tau=tau, method="gram")
    targets = {"c": generator_field(theta0, probes).reshape(-1), "b": -defect_field(theta0, probes).reshape(-1)}
    profiles = {k: lifting.lift(J, t, tau=tau, gauge="minnorm", svd=svd).profile for k, t in targets.items()}
    found = conv.ranks(*conv.spectra(J), tau)
    values = {f"rank_conv_{k}": v for k, v in found.items()}
    values.update(
        rank_conv_finding=conv.finding(found, paper_rank),
        rank_conv_match=", ".join(conv.matching(found, paper_rank)) or "none",
        mh_profile_c=profiles["c"].sentence(), mh_profile_b=profiles["b"].sentence(),
        mh_profile_c_case=profiles["c"].case, mh_profile_b_case=profiles["b"].case,
        mh_profile_c_words=CASE_WORDS[profiles["c"].case], mh_profile_b_words=CASE_WORDS[profiles["b"].case],
        mh_profile_resolution=profiles["c"].resolution,
    )  # fmt: skip
    profile_table = profiles_table({"XF (c*)": profiles["c"], "−δ (b*)": profiles["b"]})
    return RankConventions(profiles, found, conv.conventions_table(found, paper_rank, tau), profile_table, values)


def authors_config(cfg, their: dict):
    """The authors' shortest schedule on our data and seed: ``authors_steps_lo`` full-batch Adam steps at their
    constant learning rate, with their L1 weight (``their``: :func:`settings`)."""
    from dataclasses import replace

    lr = symmetry_lifting.MEXICAN_HAT["lr"]
    batch = window_counts(cfg.data)[1]  # every training window in each step
    return replace(cfg, steps=their["authors_steps_lo"], batch=batch, lr=lr, lr_final=lr, l1=their["authors_l1"])


def under_authors_l1(trained, runs: dict, probes: Probes, *, tau: float, authors_steps: int) -> tuple[dict, object]:
    """The cause of a rank other than the authors' that can be tested here: the same schedule trained again with the
    authors' L1 weight. For both models the rank at ``tau`` (the book's convention, τ on J's singular values, from
    one Gram eigendecomposition), the validation MSE and the relative residuals of c* and b*; and what the authors'
    full-batch schedule of ``authors_steps`` steps would cost, from our measured time per window (a step over all
    training windows is ``windows / batch`` of ours). ``runs``: tag → another training ("l1run": our schedule with
    their L1 weight; "authors": their schedule, :func:`authors_config`). Returns (glue values, a table)."""
    from lib.core.tables import Table
    from lib.paper_b import lifting
    from lib.paper_b.mexican_hat import rank_conventions as conv

    rows, out = [], {}
    for tag, run in {"ours": trained, **runs}.items():
        theta = v_vector(run.model)
        J = force_jacobian(theta, probes)
        svd = lifting.truncated_svd(J, tau=tau, method="gram")
        targets = {"c": generator_field(theta, probes).reshape(-1), "b": -defect_field(theta, probes).reshape(-1)}
        res = {k: lifting.lift(J, t, tau=tau, gauge="minnorm", svd=svd).rel_residual for k, t in targets.items()}
        rank = conv.ranks(*conv.spectra(J), tau)["J_tau"]
        out.update({f"{tag}_rank": int(rank), f"{tag}_val_mse": float(run.final_val_mse),
                    f"{tag}_c_residual": float(res["c"]), f"{tag}_b_residual": float(res["b"]),
                    f"{tag}_l1": float(run.config.l1)})  # fmt: skip
        kind = "full-batch" if run.config.batch >= window_counts(run.config.data)[1] else "minibatch"
        label = f"L1 = {run.config.l1:g}, {run.config.steps} {kind} steps"
        rows.append((label, int(rank), f"{run.final_val_mse:.2e}", f"{res['c']:.2e}", f"{res['b']:.2e}"))
    cfg = trained.config
    train_windows = window_counts(cfg.data)[1]
    work = cfg.steps * min(cfg.batch, train_windows)  # windows our training integrates
    out["authors_full_batch_time_hours"] = trained.seconds / work * train_windows * authors_steps / 3600
    out["authors_full_batch_work"] = train_windows * authors_steps / work  # × ours, deterministic
    out["authors_full_batch_steps"] = int(authors_steps)
    table = Table(("training", "rank at τ", "validation MSE", "c* residual", "b* residual"), tuple(rows),
                  caption="The rank and the lifts under our training and under the authors' L1 weight")  # fmt: skip
    return out, table


def window_counts(data: DataConfig) -> tuple[int, int]:
    """(all windows, training windows) of a data configuration: the split ``make_windows`` makes."""
    windows = len(data.alphas) * data.ics_per_alpha * data.splits
    return windows, windows - round(windows * data.val_fraction)
