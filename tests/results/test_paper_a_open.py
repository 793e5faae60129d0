"""What the chapter "What paper A left open" promises, read from the executed book's glued numbers.

Consistency with the task chapters (the ablation path ends at their ΔFVU), identities a wrong implementation breaks
(the inside and outside parts of a coupling carry its whole direct-action energy; the mass scan counts what the
per-block counts count), and every verdict recomputed here from the numbers it rests on.
"""

from __future__ import annotations

import math

import pytest

pytestmark = pytest.mark.results

CH = "paper_a_open::"
TASKS = ("flipflop", "sine", "context", "copy")
NEURO = ("flipflop", "sine", "context")
BLOCKS = ("RR", "CR", "CC")


def r(results, name):
    return results[CH + name]


@pytest.mark.parametrize("task", NEURO)
@pytest.mark.parametrize("block", BLOCKS)
def test_the_path_ends_at_the_task_chapters_ablation(results, task, block):
    ours = r(results, f"dfvu_lambda1_{task}_{block}")
    theirs = results[f"task_{task}::dfvu_{block}"]
    assert ours == pytest.approx(theirs, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("task", TASKS)
def test_the_path_starts_at_the_trained_model(results, task):
    for block in BLOCKS:
        assert abs(r(results, f"dfvu_lambda0_{task}_{block}")) <= 1e-10


@pytest.mark.parametrize("task", TASKS)
def test_inside_and_outside_parts_carry_the_whole_direct_action(results, task):
    e_in, e_out, total = (r(results, f"energy_{p}_{task}") for p in ("in", "out", "total"))
    assert total > 0
    assert e_in + e_out == pytest.approx(total, rel=1e-9)


def _avoid(median_enrichment, n):
    return "none to test" if n == 0 else "avoid" if median_enrichment < 1.0 else "do not avoid"


@pytest.mark.parametrize("task", TASKS)
def test_the_confound_verdict_follows_from_its_numbers(results, task):
    proj, ident = r(results, f"r2_projection_{task}"), r(results, f"r2_identity_{task}")
    better = math.isfinite(proj) and (not math.isfinite(ident) or proj > ident)
    n_dam = r(results, f"n_damaging_{task}")
    control = n_dam > 0 and r(results, f"frac_outside_harmless_{task}") >= 0.5
    avoid = _avoid(r(results, f"median_enrichment_harmless_{task}"), r(results, f"n_harmless_mass_{task}"))
    assert r(results, f"regression_better_{task}") == better
    assert r(results, f"control_inside_{task}") == control
    assert r(results, f"harmless_avoid_{task}") == avoid
    crit = [better, control] + ([] if avoid == "none to test" else [avoid == "avoid"])
    expected = "explains" if all(crit) else "does not explain" if not any(crit) else "partly explains"
    assert r(results, f"verdict_{task}") == expected


@pytest.mark.parametrize("task", TASKS)
def test_counts_of_ablations_are_consistent(results, task):
    n = r(results, f"n_ablations_{task}")
    assert r(results, f"n_damaging_{task}") + r(results, f"n_harmless_mass_{task}") <= n
    assert r(results, f"dist_n_keep_{task}") + r(results, f"dist_n_alter_{task}") <= n


def test_the_distance_verdicts_follow_from_the_counts(results):
    def verdict(keep, alter):
        return "holds" if keep and alter else "holds in part" if keep or alter else "does not hold"

    for task in TASKS:
        keep, alter = r(results, f"dist_n_keep_{task}"), r(results, f"dist_n_alter_{task}")
        assert r(results, f"dist_verdict_{task}") == verdict(keep, alter)
    keep_all = sum(r(results, f"dist_n_keep_{t}") for t in TASKS)
    alter_all = sum(r(results, f"dist_n_alter_{t}") for t in TASKS)
    assert (r(results, "dist_n_keep_all"), r(results, "dist_n_alter_all")) == (keep_all, alter_all)
    assert r(results, "dist_verdict_all") == verdict(keep_all, alter_all)


@pytest.mark.parametrize("task", TASKS)
def test_the_basis_verdict_follows_from_its_numbers(results, task):
    worse = r(results, f"basis_frac_eig_worse_{task}")
    assert r(results, f"basis_verdict_{task}") == ("holds" if worse > 0.5 else "does not hold")
    assert r(results, f"basis_min_kappa_{task}") >= 1.0 - 1e-9  # κ(V) = ‖V‖‖V⁻¹‖ ≥ 1
    assert r(results, f"basis_min_kappa_{task}") <= r(results, f"basis_median_kappa_{task}")
    assert r(results, f"basis_n_R_min_{task}") <= r(results, f"basis_n_R_max_{task}")


@pytest.mark.parametrize("task", NEURO)
def test_eps_star_is_the_worst_solution(results, task):
    for block in BLOCKS:
        # the smallest ε that covers every solution is at least the mean damage over solutions
        assert r(results, f"eps_star_{block}_{task}") >= results[f"task_{task}::dfvu_{block}"] - 1e-12


@pytest.mark.parametrize("task", TASKS)
def test_the_mass_scan_counts_candidate_invariances(results, task):
    scan = []
    i = 0
    while CH + f"mass_scan_{i}" in results:
        scan.append((r(results, f"mass_scan_{i}"), r(results, f"n_candidates_{i}_{task}")))
        i += 1
    assert len(scan) >= 2
    ordered = sorted(scan)
    assert all(a[1] >= b[1] for a, b in zip(ordered, ordered[1:], strict=False)), scan
    per_block = sum(r(results, f"n_candidates_{task}_{b}") for b in BLOCKS)
    at_threshold = [n for m, n in scan if m == r(results, "mass_threshold_used")]
    assert at_threshold and at_threshold[0] == per_block
    for b in BLOCKS:
        assert r(results, f"n_candidates_{task}_{b}") <= r(results, f"n_stabilizer_{b}_{task}")
