"""The copy-task chapter's ablations (chapter ``copy_task``): glue values and tables of every ablated controller.

``profile`` below is an :class:`lib.paper_a.ablation.AblationResult`: one controller's accuracy after zeroing each
subset of couplings. The settings, solutions and replay score are in :mod:`lib.paper_a.chapters.copy_task`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from lib.core import claims
from lib.core.claims import Claim
from lib.core.tables import Table
from lib.paper_a import ablation, schur, train
from lib.paper_a import task_analysis as ta
from lib.paper_a.chapters.copy_task import MODELS, SUBSET_NAMES, CopyStudy, plain_values, solution_words
from lib.papers import schur_ablation

#: The subsets the Table-1 scan ablates at each threshold.
TABLE1_SUBSETS = [(), ("CC",), ("CR",)]
#: The chapter's sections its claims link to (claim group → section title).
SECTIONS = {
    "fig1": "The dense orthogonal controller: every subset of couplings",
    "classes": "Functional classes",
    "table1": "The split threshold (paper Table 1)",
    "cayley": "The Cayley controller",
}


def paper_fig1() -> dict[str, float]:
    """The paper's Fig. 1 accuracies of its dense orthogonal controller, by subset label."""
    return {schur.label(s): schur_ablation.COPY_DENSE_ORTH[s].value for s in schur.all_subsets()}


def representative_values(profile: ablation.AblationResult, preserve_tol: float) -> dict[str, Any]:
    """The representative dense-orthogonal controller: every subset's accuracy and mass, n_R, the drops, T_CC pairs."""
    values = {}
    for s, key in SUBSET_NAMES.items():
        values[f"acc_{key}_orth"] = profile.score(s)
        if s:
            values[f"mass_{key}_orth"] = profile.removed_mass(s)
    values["nR_orth"] = profile.n_R
    values["coupling_mass_orth"] = profile.coupling_mass
    full = profile.score(())
    for block in ("CC", "CR", "RR"):
        values[f"drop_{block}_orth"] = full - profile.score([block])
    cc_safe = all(
        abs(profile.score(s) - profile.score(s + ("CC",))) <= preserve_tol for s in schur.all_subsets() if "CC" not in s
    )
    values["cc_pairs_within_tol_orth"] = "holds" if cc_safe else "does not hold"
    return plain_values(values)


def cayley_values(profile: ablation.AblationResult, W_hh: torch.Tensor) -> dict[str, Any]:
    """The representative Cayley controller: accuracy, n_R, coupling mass, largest ablation drop, normality defect."""
    values = {
        "acc_full_cayley": profile.score(()),
        "nR_cayley": profile.n_R,
        "coupling_mass_cayley": profile.coupling_mass,
        "max_ablation_drop_cayley": float(np.max(np.abs(profile.scores - profile.score(())))),
        "normality_defect_cayley": float(
            torch.linalg.norm(W_hh @ W_hh.T - W_hh.T @ W_hh) / torch.linalg.norm(W_hh) ** 2
        ),
    }
    return plain_values(values)


def threshold_scans(
    representatives: dict[str, dict[str, torch.Tensor]], score: Callable, alphas: Sequence[float]
) -> dict[str, list[ablation.AblationResult]]:
    """model → the representative controller's profiles at each α of the paper's Table 1 (full, −T_CC, −T_C→R)."""
    return {
        model: ablation.profiles_over_alpha(weights, score, alphas, TABLE1_SUBSETS)
        for model, weights in representatives.items()
    }


def threshold_table(scans: dict[str, list[ablation.AblationResult]]) -> tuple[dict[str, Any], Table]:
    """n_R and accuracies at each threshold beside the paper's Table 1, and the glue values of the scan."""
    rows, values = [], {}
    for model, results in scans.items():
        paper = {k: q.value for k, q in schur_ablation.TABLE1[model].items()}
        for res in results:
            rows.append(
                (
                    res.alpha,
                    model,
                    res.n_R,
                    int(paper["n_R"]),
                    res.score(()),
                    res.score(["CC"]),
                    res.score(["CR"]),
                    paper["minus_CR"],
                    round(res.min_gap, 4),
                )
            )
    for model, tag in MODELS:
        for res in scans[model]:
            suffix = f"{round(res.alpha * 100):03d}"
            values[f"nR_{tag}_{suffix}"] = res.n_R
            values[f"acc_minus_CR_{tag}_{suffix}"] = res.score(["CR"])
            values[f"acc_minus_CC_{tag}_{suffix}"] = res.score(["CC"])
        constant = len({r.n_R for r in scans[model]}) == 1
        values[f"nR_{tag}_constant"] = "the same" if constant else "not the same"
    values["min_gap_cayley"] = min(r.min_gap for r in scans["Cayley"])
    values["min_gap_orth"] = min(r.min_gap for r in scans["dense orthogonal"])
    drops = [float(np.max(np.abs(r.scores - r.score(())))) for r in scans["Cayley"]]
    values["max_drop_cayley_alphas"] = max(drops)
    table = Table(
        ("α", "model", "n_R", "n_R paper", "full", "−T_CC", "−T_C→R", "−T_C→R paper", "min gap"),
        tuple(rows),
        (".2f", "", "", "", ".3f", ".3f", ".3f", ".3f", ".4f"),
        caption="n_R and accuracies at the three thresholds of the paper's Table 1",
    )
    return plain_values(values), table


def classes_table(profile: ablation.AblationResult, preserve_tol: float) -> tuple[dict[str, Any], Table]:
    """The representative controller's functional classes (accuracies cut at gaps above ``preserve_tol``)."""
    classes = profile.classes(tol=preserve_tol)
    table = Table(
        ("class", "mean Acc_rc (ours)", "members (ours)"),
        tuple((i + 1, acc, "; ".join(members)) for i, (acc, members) in enumerate(classes)),
        ".3f",
        caption="Functional classes of the representative dense orthogonal controller",
    )
    return plain_values({"n_classes_orth": len(classes)}), table


def class_order_values(profile: ablation.AblationResult) -> dict[str, Any]:
    """Whether the classes come in the paper's order: full above −T_RR above −T_C→R above both."""
    acc = {key: profile.score(s) for s, key in SUBSET_NAMES.items()}
    order_same = acc["full"] > acc["minus_RR"] > acc["minus_CR"] > acc["minus_RR_CR"]
    return {"class_order_orth": "the same as" if order_same else "different from"}


def every_solution_table(profiles: dict[str, ablation.AblationResult], preserve_tol: float) -> Table:
    """Every solution, every ablation: accuracy, ✓ where within ``preserve_tol`` of the solution's full accuracy."""
    ablated = [s for s in schur.all_subsets() if s]
    rows = []
    for name, p in profiles.items():
        keep = p.preserved(preserve_tol)
        cells = [f"{p.score(s):.3f}{' ✓' if keep[schur.label(s)] else ''}" for s in ablated]
        rows.append((solution_words(name), p.n_R, f"{p.coupling_mass:.3f}", f"{p.score(()):.3f}", *cells))
    return Table(
        ("solution", "n_R", "‖N‖/‖T‖", "full", *(schur.label(s) for s in ablated)),
        tuple(rows),
        caption=f"Every solution, every ablation: accuracy (✓: within {preserve_tol:g} of the full one)",
    )


def every_solution_values(study: CopyStudy, profiles: dict[str, ablation.AblationResult]) -> dict[str, Any]:
    """Over the dense and the Cayley solutions: how often each ablation preserves replay, the extreme drops."""
    tol = study.preserve_tol

    def count_preserved(subset, names):
        return sum(profiles[n].preserved(tol)[schur.label(subset)] for n in names)

    dense = [n for n in profiles if not n.startswith("cayley")]
    cayleys = [n for n in profiles if n.startswith("cayley")]
    orth = study.group(list(profiles), "dense_orthogonal")
    values = {"n_dense": len(dense), "n_cayley": len(cayleys), "n_orth72": len(orth)}
    for s, key in SUBSET_NAMES.items():
        if s:
            values[f"n_dense_preserve_{key[6:]}"] = count_preserved(s, dense)
            values[f"n_orth72_preserve_{key[6:]}"] = count_preserved(s, orth)
    values["n_cayley_all_preserved"] = sum(all(profiles[n].preserved(tol).values()) for n in cayleys)
    values["max_coupling_mass_cayley_all"] = max(profiles[n].coupling_mass for n in cayleys)
    values["min_drop_CR_dense"] = min(profiles[n].score(()) - profiles[n].score(["CR"]) for n in dense)
    values["max_drop_CC_dense"] = max(profiles[n].score(()) - profiles[n].score(["CC"]) for n in dense)
    values["range_nR_orth72"] = f"{min(profiles[n].n_R for n in orth)}–{max(profiles[n].n_R for n in orth)}"
    return plain_values(values)


def chapter_claims(
    study: CopyStudy,
    solutions: dict[str, train.TrainResult],
    profiles: dict[str, ablation.AblationResult],
    representative: ablation.AblationResult,
    scans: dict[str, list[ablation.AblationResult]],
) -> list[Claim]:
    """Paper A §2.6 and §3's claims, judged over the dense orthogonal and Cayley solutions at n_hidden."""
    groups = {"orth": study.group(list(profiles), "dense_orthogonal"), "cayley": study.group(list(profiles), "cayley")}
    n_R_over_alpha = {
        kind: [
            [schur.split(schur.ordered_real_schur(solutions[n].weights["W_hh"]), a).n_R for a in study.alphas]
            for n in names
        ]
        for kind, names in groups.items()
    }
    return ta.copy_claims(
        representative,
        [profiles[n] for n in groups["orth"]],
        [profiles[n] for n in groups["cayley"]],
        {"orth": scans["dense orthogonal"], "cayley": scans["Cayley"]},
        n_R_over_alpha,
        study.preserve_tol,
        study.negligible_mass,
        {key: f"copy_task.html#{claims.section_anchor(title)}" for key, title in SECTIONS.items()},
    )


def copy_second_set(study: CopyStudy, score: Callable) -> dict[str, str]:
    """The chapter's claims computed on the second set of solutions (``study.second_configs``: seeds disjoint from
    the chapter's, both constructions at n_hidden; its first dense orthogonal and Cayley solutions stand for the
    representatives), as the glue ``claims.SECOND_SET_GLUE``: {claim id: record} in JSON, for the scorecard."""
    if not study.second_configs:
        return {claims.SECOND_SET_GLUE: "{}"}
    configs = study.second_configs
    solutions = dict(zip(configs, train.load_or_train_many(configs.values()), strict=True))
    profiles = {name: ablation.ablation_profile(r.weights, score, alpha=study.alpha) for name, r in solutions.items()}
    first = {c: study.group(list(solutions), c)[0] for c in ("dense_orthogonal", "cayley")}
    reps = {
        "dense orthogonal": solutions[first["dense_orthogonal"]].weights,
        "Cayley": solutions[first["cayley"]].weights,
    }
    scans = threshold_scans(reps, score, study.alphas)
    found = chapter_claims(study, solutions, profiles, profiles[first["dense_orthogonal"]], scans)
    records = {c.id: c.record() for c in found}
    return {claims.SECOND_SET_GLUE: json.dumps(records, ensure_ascii=False, sort_keys=True)}


#: The summary's glue name → the claim whose per-solution results it counts.
SUMMARY = {
    "cc_keeps_replay_in": "A3_CC_stabilizer",
    "cc_invariance_in": "A26_eps_stabilizer",
    "rr_leaves_class_in": "A3_fig1_minus_RR",
    "cr_leaves_class_in": "A3_fig1_minus_CR",
    "cayley_untouched_in": "A3_cayley_harmless",
}


def in_how_many(k: int, n: int) -> str:
    """ "all n", "none of the n" or "k of n": the solutions for which a statement holds, as the prose says it."""
    if not 0 <= k <= n or n < 1:
        raise ValueError(f"k={k}, n={n}: need n ≥ 1 and 0 ≤ k ≤ n")
    return f"all {n}" if k == n else f"none of the {n}" if k == 0 else f"{k} of {n}"


def summary_values(copy_claims: list[Claim]) -> dict[str, str]:
    """For the closing summary: in how many solutions each of its claims holds (:data:`SUMMARY`)."""
    per_solution = {c.id: c.per_solution for c in copy_claims}
    return {name: in_how_many(sum(per_solution[cid]), len(per_solution[cid])) for name, cid in SUMMARY.items()}


def copy_claims_table(copy_claims: list[Claim]) -> Table:
    """Every claim, ours beside the paper's, and the computed verdict."""
    return Table(
        ("claim", "paper", "ours", "verdict", "robustness"),
        tuple((c.statement, c.paper_value, c.ours, c.verdict, c.robustness) for c in copy_claims),
        ".3f",
        caption="Paper A §2.6 and §3: every claim, ours beside the paper's, and the computed verdict",
    )
