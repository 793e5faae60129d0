"""Paper B, Muriithi, Thapar & Berndt (2026), *Parameter-Level Attribution of Symmetry in Trained Networks Through
Parameter-Wise Functional Sensitivity* (arXiv 2608.24700), as data, with its authors' notes and repository.

The extended abstract prints almost no numbers; the annulus numbers come from the draft in the authors' repository
(notes §8.8), the Hamiltonian ones from their internal notes (§9.3, §9.6, §12). Every number is a :class:`Quote`
with the section of ``../shared/papers/symmetry-lifting-paper.md`` it comes from. The verdicts are computed
(``lib.core.claims``) and checked against the published reference (``published/``).
"""

from __future__ import annotations

from lib.papers import Quote

PAPER = "B"
CITATION = "muriithi2026lifting"

# ------------------------------------------------------------------------------------------------- settings
#: App. A.5, eq. 23: relative singular-value cutoff; §6.3: dead columns below this fraction of the largest.
TAU = 1e-3
DEAD_COLUMN = 1e-8
#: §6.4, §8.5: C_m quadrature of the Reynolds average.
GROUP_ORDER = 64
#: §8.2–8.6: the annulus experiment (the authors' repository).
ANNULUS = {
    "data_seed": 3,
    "n_inner": 100,
    "n_outer": 100,
    "hidden": 96,
    "depth": 4,
    "n_params": 19_009,
    "lr": 3e-3,
    "epochs": 200,
    "init_seed": 42,
    "grid_side": 24,
    "grid_extent": 3.5,
    "n_probes": 408,
    "steps": 200,
    "dt": 0.005,
    "flow_time": 1.0,
}
#: §6.4, §9.3, §9.5: the Mexican-hat experiment.
MEXICAN_HAT = {
    "grid_radii": 15,
    "grid_angles": 32,
    "n_alphas": 21,
    "hidden": 32,
    "layers": 3,
    "integration_dt": 0.1,
    "coarsening": 100,
    "window": 20,
    "splits": 100,
    "sampled_instants": 10,
    "ics_per_alpha": 10,
    "validation_fraction": 0.25,
    "training_steps": (20_000, 50_000),
    "lr": 1e-3,
    "l1": 1e-5,
    "energy_max": 3.0,
    "rotation_degrees": 73.0,
    "unit_step": 0.02,
    "n_params": 4_514,
}

# ------------------------------------------------------------------------------------------------- §8.8, the annulus
_T = "notes §8.8"
_ROW = ("start", "end", "pred", "acc_start", "acc_end", "fixed_end", "fixed_acc")


def _row(*texts: str) -> dict[str, Quote]:
    return {k: Quote(t, _T) for k, t in zip(_ROW, texts, strict=True)}


#: (kind, condition) → the row of the §8.8 table: resolved ‖δ‖ start, end, prediction, accuracy start, end; fixed
#: ‖δ‖ end and accuracy end. kind "c": +c*; "b": −b (the paper's +b*).
ANNULUS_TABLE = {
    ("c", "wedge_init"): _row("0.273", "0.281", "0.273", "0.500", "0.500", "0.689", "0.500"),
    ("c", "wedge_trained"): _row("298", "298", "298", "1.000", "0.840", "321", "0.845"),
    ("c", "full_init"): _row("0.273", "0.281", "0.273", "0.500", "0.500", "0.689", "0.500"),
    ("c", "full_trained"): _row("56.1", "56.5", "56.1", "1.000", "1.000", "1237", "0.700"),
    ("b", "wedge_init"): _row("0.273", "0.100", "0.101", "0.500", "0.500", "0.015", "0.500"),
    ("b", "wedge_trained"): _row("298", "109", "110", "1.000", "1.000", "823", "0.405"),
    ("b", "full_init"): _row("0.273", "0.100", "0.101", "0.500", "0.500", "0.015", "0.500"),
    ("b", "full_trained"): _row("56.1", "20.5", "20.6", "1.000", "1.000", "95.4", "1.000"),
}
#: §8.8 summary: resolved rotation keeps ‖δ‖ within 2 %, the defect walk ends within 1 % of e^{-1}‖δ₀‖; the fixed
#: full/trained c* grows the defect 22×; the fixed and resolved overlays agree to ~1e-13.
RESOLVED_C_TOLERANCE = Quote("0.02", _T)
RESOLVED_B_TOLERANCE = Quote("0.01", _T)
FIXED_C_GROWTH = Quote("22", _T)
CONSISTENCY = Quote("1e-13", _T)
#: §8.4: final training BCE (wedge, full).
ANNULUS_BCE = {"wedge": Quote("6.4e-7", "notes §8.4"), "full": Quote("8.9e-7", "notes §8.4")}

# ------------------------------------------------------------------------------------------------- Hamiltonian notes
#: §9.3, §9.6, §12, §15: the authors' notes on their Mexican-hat ASRNN (a model that may not be the paper's).
HAMILTONIAN_NOTES = {
    "val_mse": Quote("6.7e-5", "notes §9.3"),
    "val_mse_steps": 8_000,
    "equivariance_error_augmented": Quote("9.1e-3", "notes §9.3"),
    "equivariance_error_plain": Quote("4.2e-3", "notes §9.3"),
    "rank": Quote("22", "notes §9.6"),
    "cos_polar": Quote("1e-14", "notes §6.4"),
    "cos_square": Quote("-0.1", "notes §6.4"),
}

# Mexican hat, issue 16: the authors' walk (notes §9.5, their run_potential_walk_experiment.py): resolved,
# unit-normalised steps in parameter space, so many forward and so many backward (−ẑ from θ₀) from the trained θ.
AUTHORS_WALK = {"unit_step": 0.02, "forward": 5, "backward": 3}
