"""The lines verdicts are decided against: every threshold a claim's verdict, a safe/unsafe call or a reported count
uses, named once with its source.

A chapter takes its thresholds from here (:func:`line`); the scorecard lists them all (``lib.core.scorecard``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Line:
    """A threshold a verdict uses: its value, what it decides, and where it comes from (the paper, or the book)."""

    value: float
    decides: str
    source: str


#: Every line a verdict, a safe/unsafe call or a reported count uses, named once with its source. Chapters and the
#: defaults of lib take their thresholds from here (``line(name)``), never a copy of the value.
LINES: dict[str, Line] = {
    "majority": Line(
        0.5,
        "a statement about trained solutions holds for most of them (the Wilson bound clears the line)",
        "the book's reading: paper A reports its orderings and effects as means over three seeds (§4) and its copy "
        "task on one representative controller (§3), and says neither 'all' nor 'most'; a statement of a typical "
        "solution is read as holding for a majority",
    ),
    "some": Line(
        0.0,
        "an existence statement holds once one case shows it (the Wilson lower bound of k/n is above zero from k = 1);"
        " no finite number of cases without one decides it false",
        "the paper's wording: paper A §5 says raw parameter distance *can* miss both kinds of change",
    ),
    "kind_factor": Line(
        3.0,
        "a value is of the paper's kind when within this factor of it, either way",
        "the book's choice (half a decade)",
    ),
    "fvu_kind_factor": Line(
        10.0,
        "a full model's FVU is of the paper's kind when at most this many times the paper's",
        "the book's choice: the task is solved to the paper's order of magnitude",
    ),
    "learned_fvu": Line(
        0.1,
        "a solution has learned its task when its held-out FVU is at most this (the scorecard shows the "
        "verdicts without the others beside)",
        "the book's choice: it explains nine tenths of the target's variance",
    ),
    "safe_dfvu": Line(
        0.01,
        "an ablation is safe (harmless) when it raises the held-out FVU by at most this",
        "the book's choice (the task chapters' parameter safe_tolerance)",
    ),
    "replay_tolerance": Line(
        0.01,
        "an ablation preserves replay when it moves the copy task's accuracy by at most this",
        "the book's choice: paper A's plateaus are at least 0.015 apart (1.00, 0.875, 0.639, 0.624)",
    ),
    "negligible_mass": Line(
        0.01,
        "a removal is not empty: it takes at least this share ‖ΔT‖/‖T‖ of the Schur form (an ε-stabilizer must "
        "remove something)",
        "the book's choice (the copy chapter's parameter negligible_mass): one hundredth of the form",
    ),
    "round_off": Line(
        1e-10,
        "an identity holds in float64 when the relative gap is below this",
        "the book's choice: a few thousand roundings of 1e-16",
    ),
    "roundoff_size": Line(
        1e-10,
        "a glued value that differs from the published reference is itself a round-off quantity (a gap or residual "
        "at round-off) when it and the reference's are both smaller than this in size: the build's standing gives "
        "the largest difference over the other values, and these apart",
        "the book's choice: the size below which its float64 identities hold (round_off)",
    ),
    "finite_difference": Line(
        1e-7,
        "the Jacobian agrees with central finite differences when their relative error is below this",
        "the book's choice: the truncation error of a central difference at its step",
    ),
    "orthogonal_cos": Line(
        1e-8,
        "two directions are orthogonal on the polar grid when |cos| is below this",
        "the book's choice: the notes print 1e-14, the grid's quadrature leaves more",
    ),
    "nonzero_cos": Line(
        1e-3,
        "two directions are not orthogonal on the square lattice when |cos| is at least this",
        "the book's choice: the notes print −0.1 for their network; another network gives another value, but "
        "clearly above round-off",
    ),
    "defect_kept": Line(
        0.05,
        "the resolved c* walk keeps the defect when its ratio stays within this of 1",
        "the book's choice, beside the paper's 2 % for the annulus (notes §8.8)",
    ),
    "flow_follows": Line(
        0.1,
        "the resolved b* walk follows the predicted flow when its defect ratio is within this of e^(−t)",
        "the book's choice",
    ),
    "value_kind_factor": Line(
        10.0,
        "a deterministic re-run's value (BCE, the equivariance error) is of the paper's kind within this factor",
        "the book's choice (one decade)",
    ),
    "replays": Line(
        0.99,
        "a copy-task controller replays when its held-out accuracy reaches this (the copy chapter counts those that "
        "do)",
        "the book's choice (the copy chapter's parameter solved)",
    ),
    "split_gap": Line(
        0.01,
        "a solution has a block at the split threshold when its nearest block modulus lies within this of α·ρ "
        "(| |λ|/ρ − α |, in units of ρ; the task chapters report the share of such solutions)",
        "the book's choice (the task chapters' gap tables)",
    ),
    "invariance_mass": Line(
        0.05,
        "a harmless ablation is a candidate invariance when it removes at least this share ‖ΔT‖_F/‖T‖_F of the "
        "Schur form (the open-questions chapter's counts; its mass scan moves it)",
        "the book's choice (the open-questions chapter's parameter mass_threshold), five times negligible_mass",
    ),
    "control_share": Line(
        0.5,
        "the inside/outside control puts the damage inside U when the outside part alone is harmless in at least "
        "this share of the damaging ablations",
        "the book's choice: at least half",
    ),
    "ranks_ablations": Line(
        0.8,
        "a prediction ranks a task's ablations when its Spearman ρ with the real ΔFVU reaches this (hypothesis L2 of "
        "the two-lenses chapter)",
        "the book's choice: a strong monotone relation by the usual reading of ρ (the chapter's parameter "
        "rank_threshold)",
    ),
    "accuracy_kept": Line(
        0.01,
        "a flow leaves the annulus classifier's accuracy unchanged when it moves it by at most this (and lowers it "
        "when it drops by more)",
        "the book's choice",
    ),
    "chance": Line(
        0.5,
        "a classifier of the annulus is below chance when its accuracy is under this",
        "the data: two classes of equal size (100 points each), so a constant guess scores one half",
    ),
    "gauge_differs": Line(
        0.1,
        "two gauges split a lift differently when their coefficient vectors differ by more than this share of "
        "their norm",
        "the book's choice",
    ),
    "sketch_gate_band": Line(
        0.05,
        "a sketched re-solve flickers (counted, and re-solved exactly) when a singular value within this share of "
        "the cutoff τσ₁ lies on the other side of it in the sketch than in the exact spectrum",
        "the book's choice (the Mexican-hat chapter's parameter gate_band)",
    ),
}


def line(name: str) -> float:
    """The value of the line ``name`` of :data:`LINES` (KeyError naming the known lines otherwise)."""
    if name not in LINES:
        raise KeyError(f"line={name!r} is not one of LINES: {sorted(LINES)}")
    return LINES[name].value
