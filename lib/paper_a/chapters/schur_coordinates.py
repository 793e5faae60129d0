"""The Schur-coordinates chapter (chapter ``schur_coordinates``): its two example matrices and their glue values."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg as sl
import torch

from lib.core import budget, params
from lib.core.tables import Table
from lib.paper_a import rnn
from lib.paper_a import schur as S
from lib.papers import schur_ablation

#: The α grid of the split curve (n_R against α) and, every tenth point, of the check against scipy's ``sdim``.
ALPHA_GRID = np.linspace(0.5, 1.0, 501)
#: The thresholds of the paper's Table 1, marked on the split curve.
TABLE1_ALPHAS = (0.85, 0.9, 0.95)


@dataclass(frozen=True, kw_only=True)
class SchurExample:
    """The chapter's settings, validated once: matrix size ``n`` (even, 4 to 400), split threshold, matrices' seed."""

    n: int = 72
    alpha: float = S.PAPER_ALPHA
    seed: int = 0

    def __post_init__(self):
        n = rnn.check_width("n", self.n, min=4, max=400)  # n = 2 can be one 2×2 block: no couplings to show
        object.__setattr__(self, "n", n)
        object.__setattr__(self, "alpha", S.check_alpha(self.alpha))
        object.__setattr__(self, "seed", params.integer("seed", self.seed, min=0))
        budget.bound(
            "schur_coordinates",
            budget.Term("n", n, budget.defaults(SchurExample)["n"], 3, params=("n",)),
            arrays={"the example matrices and their Schur forms": budget.floats(n, n, copies=12)},
        )

    def glue_values(self) -> dict[str, Any]:
        """The settings and the paper's Table 1 sizes, as glued by the chapter's first cell."""
        return {
            "n": self.n,
            "alpha": self.alpha,
            "paper_nR_orth": schur_ablation.TABLE1["dense orthogonal"]["n_R"].text,
            "paper_nR_cayley": schur_ablation.TABLE1["Cayley"]["n_R"].text,
            "paper_width": schur_ablation.COPY["representative_width"],
        }

    def nonnormal_matrix(self) -> np.ndarray:
        """(n, n) float64: PyTorch's default ``nn.RNN`` initialisation, W_ij ~ U[−n^(−1/2), n^(−1/2)] (nonnormal)."""
        return rnn.init_params("dense_default", self.n, 1, 1, seed=self.seed)["W_hh"].numpy()

    def normal_matrix(self) -> np.ndarray:
        """(n, n) float64: the paper's Cayley construction W = O D Oᵀ (normal)."""
        return rnn.weights_from_params(rnn.init_params("cayley", self.n, 1, 1, seed=self.seed))["W_hh"].numpy()


def construction_values(W: np.ndarray, form: S.SchurForm) -> dict[str, Any]:
    """The ordered form's accuracy, blocks and ordering, beside how often scipy's unordered form rises in modulus."""
    T_unordered, _ = sl.schur(W, output="real")
    _, eig_unordered = S.block_structure(T_unordered)
    facts = {
        "rec_err": form.reconstruction_error(),
        "orth_err": form.orthogonality_error(),
        "rho": form.rho,
        "n_blocks": len(form.blocks),
        "n_pairs": sum(size == 2 for _, size in form.blocks),
        "coupling_mass": S.coupling_mass(form),
        "max_rise": float(np.max(np.diff(form.moduli))),  # > 0 would mean a modulus rises along the diagonal
    }
    values = {f"{key}_nonnormal": value for key, value in facts.items()}
    values["unordered_rises"] = int(np.sum(np.diff(np.abs(eig_unordered)) > 0))  # where scipy's order rises
    values["min_modulus_step"] = float(np.min(-np.diff(form.moduli)))
    values["unordered_gaps"] = len(eig_unordered) - 1
    return values


def split_values(sp: S.SchurSplit) -> dict[str, Any]:
    """The nonnormal matrix's split: n_R, n_C, the threshold, the nearest block's gap and the blocks' masses."""
    values = {
        "n_R_nonnormal": sp.n_R,
        "n_C_nonnormal": sp.n_C,
        "threshold_nonnormal": sp.threshold,
        "min_gap_nonnormal": sp.min_gap,
    }
    return values | {f"mass_{name}_nonnormal": value for name, value in sp.masses().items()}


def normal_values(W_normal: np.ndarray, sp_normal: S.SchurSplit) -> dict[str, Any]:
    """The normal matrix: accuracy of its form, its commutator, coupling mass, n_R, ρ, how far ablating all moves W."""
    form = sp_normal.form
    commutator = W_normal @ W_normal.T - W_normal.T @ W_normal
    ablated = S.ablate(form, S.ABLATION_BLOCKS, sp_normal.alpha).W
    return {
        "rec_err_normal": form.reconstruction_error(),
        "orth_err_normal": form.orthogonality_error(),
        "commutator_normal": float(np.linalg.norm(commutator) / np.linalg.norm(W_normal) ** 2),
        "coupling_mass_normal": S.coupling_mass(form),
        "n_R_normal": sp_normal.n_R,
        "rho_normal": form.rho,
        "ablate_all_normal": float(np.linalg.norm(ablated - W_normal) / np.linalg.norm(W_normal)),
    }


def ablation_table(W: np.ndarray, form: S.SchurForm, alpha: float) -> tuple[dict[str, Any], Table]:
    """The eight ablations of W: removed Schur mass, how far W moves, how far the eigenvalue moduli move."""
    values, rows = {}, []
    for subset in S.all_subsets():
        ab = S.ablate(form, subset, alpha)
        values[f"removed_mass_{'_'.join(subset) or 'none'}"] = ab.removed_mass
        lam_before = np.sort(np.abs(np.linalg.eigvals(W)))
        lam_after = np.sort(np.abs(np.linalg.eigvals(ab.W)))
        moved = float(np.linalg.norm(ab.W - W) / np.linalg.norm(W))
        rows.append((ab.label, ab.removed_mass, moved, float(np.max(np.abs(lam_after - lam_before)))))
    values["max_spectrum_change"] = max(r[3] for r in rows)
    table = Table(
        ("ablation", "‖ΔT‖/‖T‖", "‖ΔW‖/‖W‖", "max Δ|λ|"),
        tuple(rows),
        ("", ".4f", ".4f", ".1e"),
        caption="The eight ablations of the nonnormal example",
    )
    return values, table


def basis_change_error(W: np.ndarray, form: S.SchurForm, alpha: float, seed: int) -> float:
    """max over the subsets S of ‖W̃(PWPᵀ) − P W̃(W) Pᵀ‖_F / ‖W‖_F for a random orthogonal P (seeded)."""
    P = rnn.random_orthogonal(len(W), torch.Generator().manual_seed(seed)).numpy()
    errors = []
    for s in S.all_subsets():
        rotated_then_ablated = S.ablate(P @ W @ P.T, s, alpha).W
        ablated_then_rotated = P @ S.ablate(form, s, alpha).W @ P.T
        errors.append(float(np.linalg.norm(rotated_then_ablated - ablated_then_rotated) / np.linalg.norm(W)))
    return max(errors)


def split_curves(forms: dict[str, S.SchurForm], alphas: Sequence[float] = ALPHA_GRID) -> dict[str, list[int]]:
    """n_R at each α of ``alphas``, per form (name → form)."""
    return {name: [S.split(form, float(a)).n_R for a in alphas] for name, form in forms.items()}


def split_curve_values(form: S.SchurForm, form_normal: S.SchurForm, n_R_curve: Sequence[int]) -> dict[str, Any]:
    """n_R at the chosen thresholds (both matrices), the number of distinct n_R, the moduli in the Table 1 band."""
    values = {f"n_R_at_{round(100 * a)}": S.split(form, a).n_R for a in (0.5, 0.85, 0.9, 0.95, 1.0)}
    values["n_R_steps"] = len(set(n_R_curve))
    for a in (0.85, 0.95):
        values[f"n_R_normal_at_{round(100 * a)}"] = S.split(form_normal, a).n_R
    in_band = (form.moduli >= 0.85 * form.rho) & (form.moduli < 0.95 * form.rho)
    values["blocks_in_band"] = int(in_band.sum())
    return values


def scipy_comparison_values(W: np.ndarray, sp: S.SchurSplit, checked: Sequence[float]) -> dict[str, Any]:
    """Our form against scipy's sort-callable partition: n_R against ``sdim``, the R-subspace, the three ablations."""
    form, alpha = sp.form, sp.alpha
    agree = 0
    for a in checked:
        thr = a * form.rho - S.SPLIT_RTOL * form.rho
        sdim = sl.schur(W, output="real", sort=lambda re, im, thr=thr: np.hypot(re, im) >= thr)[2]
        agree += int(sdim == S.split(form, float(a)).n_R)
    values = {"scipy_agree": agree, "scipy_checked": len(checked)}
    part = S.partitioned_schur(W, alpha)
    n_R = sp.n_R
    values["subspace_angle"] = float(np.max(sl.subspace_angles(form.Q[:, :n_R], part.Q[:, :n_R])))
    for name in S.ABLATION_BLOCKS:
        ours, scipys = S.ablate(form, [name], alpha).W, S.ablate(part, [name], alpha).W
        values[f"partition_diff_{name}"] = float(np.linalg.norm(ours - scipys) / np.linalg.norm(W))
    values["partition_mass_RR"] = S.split(part, alpha).masses()["RR"]
    return values
