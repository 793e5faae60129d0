"""The numbers and verdicts of "What paper A left open": from :class:`~lib.paper_a.confound.AblationRecord` lists.

Each ``*_summary`` returns a flat dict of plain Python values (what a chapter glues); each verdict rule is a plain
function of numbers in that dict, so a test can recompute the verdict from the glued numbers alone.

Classifications: an ablation is *harmless* when ΔFVU ≤ ``tolerance`` and *damaging* otherwise; it removes
*non-negligible mass* when ‖ΔT‖_F/‖T‖_F ≥ ``mass_threshold``. Comparisons with random draws or with the
inside/outside control use the ablation's ΔFVU on the same evaluation trials (``dfvu_eval``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.stats import spearmanr

from lib.core import params
from lib.core.lines import line
from lib.core.verdicts import decide_share
from lib.paper_a import conditioning as cd
from lib.paper_a import perturbation as pt
from lib.paper_a import schur
from lib.paper_a.confound import SUBSPACES, AblationRecord

CONFOUND_VERDICTS = ("explains", "partly explains", "does not explain")
AVOIDANCE = ("avoid", "do not avoid", "none to test")


def adjusted_r2(y, X) -> float:
    """Adjusted R² of the least-squares fit y ≈ a + X b (X (n, p)); NaN when n ≤ p + 1 or y is constant."""
    y = np.asarray(y, dtype=np.float64)
    X = np.asarray(X, dtype=np.float64).reshape(len(y), -1)
    n, p = X.shape
    ss_tot = float(np.sum((y - y.mean()) ** 2)) if n else 0.0
    if n <= p + 1 or ss_tot == 0:
        return float("nan")
    A = np.column_stack([np.ones(n), X])
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    ss_res = float(np.sum((y - A @ coef) ** 2))
    return 1.0 - (ss_res / (n - p - 1)) / (ss_tot / (n - 1))


def one_hot(labels: Sequence[str]) -> np.ndarray:
    """(n, levels − 1) dummy coding of categorical labels (the first level in sorted order is the reference)."""
    levels = sorted(set(labels))
    return np.array([[lab == lv for lv in levels[1:]] for lab in labels], dtype=np.float64).reshape(len(labels), -1)


def log_damage(dfvu, floor: float = 1e-6) -> np.ndarray:
    """log10(max(ΔFVU, floor)): the damage on the scale the regression uses."""
    floor = params.real("floor", floor, min=0.0, min_open=True)
    return np.log10(np.maximum(np.asarray(dfvu, dtype=np.float64), floor))


def spearman(x, y) -> float:
    """Spearman's rank correlation over the finite pairs (NaN when fewer than 3 or one side is constant)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 3 or np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
        return float("nan")
    return float(spearmanr(x[ok], y[ok]).statistic)


# ------------------------------------------------------------------------------------------------- verdict rules


def regression_better(r2_projection: float, r2_identity: float) -> bool:
    """The readout/PC projection explains log ΔFVU, and better than the block identity (adjusted R²: above 0, and
    above the identity's; NaN loses). A projection at or below an adjusted R² of 0 explains nothing."""
    if not (np.isfinite(r2_projection) and r2_projection > 0):
        return False
    return bool(not np.isfinite(r2_identity) or r2_projection > r2_identity)


def control_inside(frac_outside_harmless: float, n_damaging: int) -> bool:
    """The control puts the damage inside U: the outside part alone is harmless in at least the line
    "control_share" (half) of the damaging ablations."""
    return bool(n_damaging > 0 and frac_outside_harmless >= line("control_share"))


def avoidance(median_enrichment: float, n_harmless_mass: int) -> str:
    """Do the harmless ablations with non-negligible mass avoid U (median enrichment below chance, < 1)?"""
    if n_harmless_mass == 0:
        return AVOIDANCE[2]
    return AVOIDANCE[0] if median_enrichment < 1.0 else AVOIDANCE[1]


def confound_verdict(regression: bool, control: bool, avoid: str, r2_projection: float = math.nan) -> str:
    """ "explains" if every defined criterion holds, "does not explain" if none does or the projection explains
    nothing (adjusted R² ``r2_projection`` at or below 0), "partly explains" otherwise."""
    params.choice("avoid", avoid, AVOIDANCE)
    if math.isfinite(r2_projection) and r2_projection <= 0:
        return CONFOUND_VERDICTS[2]
    crit = [bool(regression), bool(control)] + ([] if avoid == AVOIDANCE[2] else [avoid == AVOIDANCE[0]])
    return CONFOUND_VERDICTS[0] if all(crit) else CONFOUND_VERDICTS[2] if not any(crit) else CONFOUND_VERDICTS[1]


def distance_verdict(n_keep: int, n_alter: int) -> str:
    """§5's raw-distance claim, two existence statements: "holds" if both kinds of counterexample occur, "holds in
    part" if one does, "is not shown" if neither (no finite sample shows that none exists)."""
    return "holds" if n_keep > 0 and n_alter > 0 else "holds in part" if n_keep + n_alter > 0 else "is not shown"


def basis_verdict(k: int, n: int) -> str:
    """§2.8 over ``n`` solutions, ``k`` of whose eigenbasis moves more than their R-subspace: the scorecard's protocol
    against "a majority" (lib.core.lines): "holds", "does not hold" or "undecided at n = …"."""
    decided = decide_share(k, n, line("majority"))
    return "holds" if decided else "does not hold" if decided is False else f"undecided at n = {n}"


# ------------------------------------------------------------------------------------------------- summaries


def confound_summary(records: Sequence[AblationRecord], tolerance: float, mass_threshold: float) -> dict:
    """Rank correlations, the regression, the inside/outside control, the avoidance test and the verdict."""
    tolerance = params.real("tolerance", tolerance, min=0.0)
    mass_threshold = params.real("mass_threshold", mass_threshold, min=0.0)
    recs = [r for r in records if r.mass > 0]
    d = np.array([r.dfvu for r in recs])
    out = {"n_ablations": len(recs)}
    for key in ("readout", "pc95", "manifold", "union"):
        out[f"rho_dw_{key}"] = spearman([r.frac_dw[key] for r in recs], d)
        out[f"rho_dh_{key}"] = spearman([r.frac_dh[key] for r in recs], d)
    out["rho_action_in"] = spearman([r.action_in for r in recs], d)
    y = log_damage(d)
    out["r2_identity"] = adjusted_r2(y, one_hot([r.ablation for r in recs]))
    out["r2_projection"] = adjusted_r2(y, np.log10([max(r.action_in, 1e-300) for r in recs]))
    out["r2_action"] = adjusted_r2(y, np.log10([max(r.action, 1e-300) for r in recs]))
    out["regression_better"] = regression_better(out["r2_projection"], out["r2_identity"])
    damaging = [r for r in recs if r.dfvu_eval > tolerance]
    out["n_damaging"] = len(damaging)
    out["frac_outside_harmless"] = float(np.mean([r.dfvu_outside <= tolerance for r in damaging])) if damaging else 0.0
    share = [max(r.dfvu_inside, 0) / max(max(r.dfvu_inside, 0) + max(r.dfvu_outside, 0), 1e-300) for r in damaging]
    out["median_share_inside"] = float(np.median(share)) if share else float("nan")
    out["control_inside"] = control_inside(out["frac_outside_harmless"], out["n_damaging"])
    harmless = [r for r in recs if r.dfvu <= tolerance and r.mass >= mass_threshold]
    out["n_harmless_mass"] = len(harmless)
    out["median_enrichment_harmless"] = float(np.median([r.enrichment for r in harmless])) if harmless else 0.0
    dam_full = [r for r in recs if r.dfvu > tolerance]
    out["median_enrichment_damaging"] = float(np.median([r.enrichment for r in dam_full])) if dam_full else 0.0
    out["harmless_avoid"] = avoidance(out["median_enrichment_harmless"], out["n_harmless_mass"])
    out["verdict"] = confound_verdict(
        out["regression_better"], out["control_inside"], out["harmless_avoid"], out["r2_projection"]
    )
    return out


def counterexamples(records: Sequence[AblationRecord], tolerance: float) -> tuple[list[bool], list[bool]]:
    """Per ablation that removes something: (harmless while its same-size isotropic random perturbations typically
    damage, damaging while they are typically harmless), "typically" by their median."""
    recs = [r for r in records if r.mass > 0]
    iso = [float(np.median(r.draws["isotropic"])) for r in recs]
    keeps = [bool(r.dfvu_eval <= tolerance and m > tolerance) for r, m in zip(recs, iso, strict=True)]
    alters = [bool(r.dfvu_eval > tolerance and m <= tolerance) for r, m in zip(recs, iso, strict=True)]
    return keeps, alters


def distance_summary(records: Sequence[AblationRecord], tolerance: float) -> dict:
    """Per kind: the median fraction of same-norm random draws doing more damage; the two counterexample counts."""
    recs = [r for r in records if r.mass > 0]
    out = {}
    for kind in pt.KINDS:
        more = [pt.fraction_more_damage(r.dfvu_eval, r.draws[kind]) for r in recs]
        out[f"median_frac_more_{kind}"] = float(np.median(more))
    out["median_percentile_isotropic"] = float(
        np.median([pt.percentile_of(r.dfvu_eval, r.draws["isotropic"]) for r in recs])
    )
    keeps, alters = counterexamples(records, tolerance)
    out["n_keep"], out["n_alter"] = int(sum(keeps)), int(sum(alters))
    out["verdict"] = distance_verdict(out["n_keep"], out["n_alter"])
    return out


def stabilizer_summary(records: Sequence[AblationRecord], tolerance: float, thresholds: Sequence[float]) -> dict:
    """§2.6 per single block, over the solutions where the block is not empty: ε* (the smallest ε that makes the
    block an ε-stabilizer in all of them, max ΔFVU⁺), the median removed mass, how many are ε-stabilizers at
    ``tolerance``; ``n_empty_<b>`` counts the solutions where the block has no entries. Per mass threshold, the number
    of candidate invariances (ΔFVU ≤ tolerance, mass ≥ threshold) over the solutions and blocks."""
    out = {}
    for b in ("RR", "CR", "CC"):
        rs = [r for r in records if r.ablation == b and r.mass > 0]
        out[f"n_empty_{b}"] = int(sum(r.ablation == b and r.mass == 0 for r in records))
        out[f"eps_star_{b}"] = float(max(max(r.dfvu, 0.0) for r in rs)) if rs else 0.0
        out[f"median_mass_{b}"] = float(np.median([r.mass for r in rs])) if rs else 0.0
        out[f"n_stabilizer_{b}"] = int(sum(r.dfvu <= tolerance for r in rs))
    singles = [r for r in records if r.ablation in ("RR", "CR", "CC") and r.mass > 0]
    for i, m in enumerate(thresholds):
        out[f"n_candidates_{i}"] = int(sum(r.dfvu <= tolerance and r.mass >= m for r in singles))
    return out


def dimension_rows(records: Sequence[AblationRecord]) -> tuple:
    """Median dimension over solutions of each subspace (readout, PCs at each level, manifold, U)."""
    per_seed = {r.seed: r.dims for r in records}
    return tuple(float(np.median([d[k] for d in per_seed.values()])) for k in SUBSPACES)


def basis_summary(Ws: Sequence[np.ndarray], alpha: float, scales, draws: int, seed: int) -> dict:
    """§2.8 for the solutions of one task: κ(V), departure, the two coordinate systems' movement, the verdict.

    ``r_gain``/``eig_gain``: median over solutions of the median sine per unit ‖δW‖/‖W‖ at the smallest size;
    ``frac_eig_worse``: solutions whose eigenbasis moves more than their R-subspace at every size.
    Returns ``(values, kappa, departure)``.
    """
    kappa = np.array([cd.eigenvector_condition(W) for W in Ws])
    dep = np.array([cd.henrici_departure(W, relative=True) for W in Ws])
    stab = [cd.stability(W, alpha, scales, draws, np.random.default_rng([seed, 28, i])) for i, W in enumerate(Ws)]
    flags = [bool(np.all(s.eig_over_r() > 1.0)) for s in stab]
    worse = float(np.mean(flags))
    values = {
        "median_kappa": float(np.median(kappa)),
        "min_kappa": float(kappa.min()),
        "median_departure": float(np.median(dep)),
        "rho_kappa_departure": spearman(kappa, dep),
        "r_gain": float(np.median([np.median(s.r_sine[0]) / s.scales[0] for s in stab])),
        "eig_gain": float(np.median([np.median(s.eig_sine[0]) / s.scales[0] for s in stab])),
        "frac_nR_moves": float(np.mean([s.n_R_changed[-1].mean() for s in stab])),
        "frac_eig_worse": worse,
        "verdict": basis_verdict(sum(flags), len(flags)),
        **cd.spectrum_similarity([schur.ordered_real_schur(W) for W in Ws], alpha),
    }
    return values, kappa, dep


def fraction_rows(records: Sequence[AblationRecord], names: Sequence[str], which: str) -> list[tuple]:
    """Per ablation: mean mass, mean ΔFVU and the mean energy share in each subspace of Δh (``which="dh"``) or of
    the direct action ΔW h (``which="dw"``), over the solutions where the ablation removes something."""
    params.choice("which", which, ("dh", "dw"))
    rows = []
    for name in names:
        rs = [r for r in records if r.ablation == name and r.mass > 0]
        mean = lambda get, rs=rs: float(np.nanmean([get(r) for r in rs])) if rs else float("nan")  # noqa: E731
        shares = [mean(lambda r, k=k: getattr(r, f"frac_{which}")[k]) for k in SUBSPACES]
        rows.append((name, mean(lambda r: r.mass), mean(lambda r: r.dfvu), *shares))
    return rows
