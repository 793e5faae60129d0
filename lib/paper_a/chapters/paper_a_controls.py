"""The controls of chapter ``paper_a_open``: raw distance, the λ path, the two coordinate systems, ε-stabilizers.

``records`` is task → the :class:`lib.paper_a.confound.AblationRecord` of every ablation of every solution
(:meth:`lib.paper_a.chapters.paper_a_open.OpenStudy.measure`); ``labels`` names the ablations as the figures do.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lib.core import claims
from lib.core.claims import Claim
from lib.core.tables import Table
from lib.paper_a import confound, rnn, schur
from lib.paper_a import open_questions as oq
from lib.paper_a import task_analysis as ta
from lib.paper_a.chapters.paper_a_open import TASKS, OpenStudy

Records = dict[str, list[confound.AblationRecord]]


def distance_table(
    records: Records, tolerance: float, analyses: dict[str, ta.TaskAnalysis]
) -> tuple[dict[str, Any], Records, Table]:
    """Each ablation against same-size random perturbations: values, the figure's example solution per task, table."""
    values = {}
    dist = {t: oq.distance_summary(records[t], tolerance) for t in TASKS}
    for t, s in dist.items():
        values |= {f"dist_{key}_{t}": value for key, value in s.items()}
    n_keep_all = sum(s["n_keep"] for s in dist.values())
    n_alter_all = sum(s["n_alter"] for s in dist.values())
    values["dist_n_keep_all"] = n_keep_all
    values["dist_n_alter_all"] = n_alter_all
    values["dist_verdict_all"] = oq.distance_verdict(n_keep_all, n_alter_all)
    examples = {t: [r for r in records[t] if r.seed == analyses[t].profiles[0].seed] for t in TASKS}
    heads = ("task", "percentile (isotropic)", "more damage: isotropic", "Schur pattern", "inside U",
             "harmless, random hurts", "damaging, random harmless", "the claim")  # fmt: skip
    keys = ("median_percentile_isotropic", "median_frac_more_isotropic",
            "median_frac_more_schur_pattern", "median_frac_more_subspace",
            "n_keep", "n_alter", "verdict")  # fmt: skip
    table = Table(
        heads,
        tuple((t, *[dist[t][k] for k in keys]) for t in TASKS),
        ".2f",
        caption="Each ablation against random perturbations of its Frobenius norm.",
    )
    return values, examples, table


def lambda_path_values(records: Records) -> dict[str, Any]:
    """Per task and block: mean ΔFVU at the path's end, the largest |ΔFVU| at its start, how often it is monotone."""
    values = {}
    for t in TASKS:
        for b in schur.ABLATION_BLOCKS:
            rs = [r for r in records[t] if r.ablation == b]
            ends = [r.dfvu_path[-1] for r in rs if r.mass > 0]  # empty blocks stay out of the means
            values[f"dfvu_lambda1_{t}_{b}"] = float(np.mean(ends)) if ends else float("nan")
            values[f"dfvu_lambda0_{t}_{b}"] = float(np.max(np.abs([r.dfvu_path[0] for r in rs])))
            mono = [bool(np.all(np.diff(r.dfvu_path) >= -1e-12)) for r in rs]
            values[f"frac_monotone_{t}_{b}"] = float(np.mean(mono))
    return values


def basis_table(
    study: OpenStudy, analyses: dict[str, ta.TaskAnalysis]
) -> tuple[dict[str, Any], dict[str, tuple], dict[str, tuple[int, int]], Table]:
    """Eigencoordinates against Schur coordinates per task: values, the figure's (departure, κ) points, how many
    solutions' eigenbasis moves more (solutions, of), and the table (paper A §2.8)."""
    values, rows, points, basis_worse = {}, [], {}, {}
    for t in TASKS:
        Ws = [rnn.as_float64(s.weights)["W_hh"].numpy() for s in analyses[t].solutions]
        summary, kappa, dep = oq.basis_summary(Ws, study.alpha, study.scales, study.stability_draws, study.draw_seed)
        basis_worse[t] = (round(summary["frac_eig_worse"] * len(Ws)), len(Ws))
        values |= {f"basis_{key}_{t}": value for key, value in summary.items()}
        points[t] = (dep, kappa)
        rows.append((t, *summary.values()))
    heads = ("task", "median κ(V)", "min κ(V)", "median dep/‖W‖", "ρ(κ, dep)", "R-subspace gain",
             "eigenvector gain", "n_R moves (largest δW)", "eigenbasis moves more", "§2.8", "n_R min",
             "n_R max", "n_R std", "modulus spectra: mean max diff")  # fmt: skip
    table = Table(heads, tuple(rows), ".3g", caption="Conditioning of the two coordinate systems, per task.")
    table = table.transposed("per task")
    return values, points, basis_worse, table


def stabilizer_tables(
    study: OpenStudy, records: Records, labels: dict[str, str]
) -> tuple[dict[str, Any], Table, Table]:
    """ε* and candidate invariances per task and block (§2.6), and the candidates by mass threshold."""
    values, rows = {}, []
    summaries = {t: oq.stabilizer_summary(records[t], study.tolerance, study.mass_scan) for t in TASKS}
    for t in TASKS:
        s = summaries[t]
        values |= {f"{key}_{t}": value for key, value in s.items()}
        for b in schur.ABLATION_BLOCKS:
            rs = [r for r in records[t] if r.ablation == b and r.mass > 0]
            n_cand = sum(r.dfvu <= study.tolerance and r.mass >= study.mass_threshold for r in rs)
            values[f"n_candidates_{t}_{b}"] = int(n_cand)
            rows.append((t, labels[b], s[f"median_mass_{b}"], s[f"eps_star_{b}"],
                         s[f"n_stabilizer_{b}"], n_cand, len(rs), s[f"n_empty_{b}"]))  # fmt: skip
    heads = ("task", "block", "median mass", "ε*", "ε-stabilizer at the tolerance",
             "candidate invariances", "solutions", "solutions with an empty block")  # fmt: skip
    eps = Table(
        heads, tuple(rows), ".3g", caption="Removed Schur mass beside the smallest ε making the block a stabilizer."
    )
    scan = Table(
        ("task", *[f"mass ≥ {m:g}" for m in study.mass_scan]),
        tuple((t, *[summaries[t][f"n_candidates_{i}"] for i in range(len(study.mass_scan))]) for t in TASKS),
        caption="Candidate invariances (single blocks, all solutions) by mass threshold.",
    )
    return values, eps, scan


def open_claims(records: Records, tolerance: float, basis_worse: dict[str, tuple[int, int]]) -> list[Claim]:
    """The §5 statement on raw parameter distance (two existence statements, one per kind of counterexample, over
    every ablation of every task) and the §2.8 argument for Schur coordinates, as measured here."""
    basis_k, basis_n = (sum(kn[i] for kn in basis_worse.values()) for i in (0, 1))
    keeps, alters = ([], [])
    for t in TASKS:
        k, a = oq.counterexamples(records[t], tolerance)
        keeps += k
        alters += a
    link = "paper_a_open.html#" + claims.section_anchor("Raw distance against function")
    return [
        Claim(
            "A5_distance_keeps",
            "A",
            "§5",
            "raw parameter distance misses large structured changes that keep the function",
            None,
            f"{sum(keeps)} of {len(keeps)} ablations",
            "some harmless ablation whose same-size "
            "random perturbations typically damage (an existence statement: one example decides it)",
            per_solution=tuple(keeps),
            line="some",
            link=link,
            unit="ablations",
        ),
        Claim(
            "A5_distance_alters",
            "A",
            "§5",
            "raw parameter distance misses small directed changes that alter the function",
            None,
            f"{sum(alters)} of {len(alters)} ablations",
            "some damaging ablation whose same-size "
            "random perturbations are typically harmless (an existence statement: one example decides it)",
            per_solution=tuple(alters),
            line="some",
            link=link,
            unit="ablations",
        ),  # fmt: skip
        Claim(
            "A28_basis",
            "A",
            "§2.8",
            "eigencoordinates are ill-conditioned where Schur coordinates are stable",
            None,
            basis_k / basis_n,
            "the eigenvector basis moves more than the R-subspace at every perturbation size "
            "(per solution, all four tasks), for a majority of the solutions",
            per_solution=(True,) * basis_k + (False,) * (basis_n - basis_k),
            line="majority",
            link="paper_a_open.html#" + claims.section_anchor("Eigencoordinates against Schur coordinates"),
        ),
    ]


def open_claims_table(measured: list[Claim]) -> Table:
    """The claims measured here: ours, the verdict and its robustness."""
    return Table(
        ("claim", "ours", "verdict", "robustness"),
        tuple((c.statement, c.ours, c.verdict, c.robustness) for c in measured),
        ".2f",
        caption="Paper A's unmeasured statements, as measured here",
    )
