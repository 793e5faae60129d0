"""lib.core.verdicts rule by rule: each test pins one rule of the verdict protocol (the module's docstring) on cases
computed by hand or by an independent textbook formula (Student t quantiles from scipy), never by the function under
test. Written against the surviving mutants of a mutation run (issue 47)."""

from __future__ import annotations

import math
import statistics

import pytest
from scipy import stats

from lib.core import verdicts
from lib.core.verdicts import VERDICTS, Decision

Z = 1.959964  # the 97.5 % normal quantile to 7 digits (what wilson uses)
REPRODUCED, IN_KIND, UNDECIDED, NOT_REPRODUCED, NOT_TESTABLE = VERDICTS


def wilson_textbook(k, n, z=Z):
    """Wilson's score interval in its textbook form: (k + z²/2 ± z·√(k(n − k)/n + z²/4)) / (n + z²)."""
    centre, half = k + z * z / 2, z * math.sqrt(k * (n - k) / n + z * z / 4)
    return (centre - half) / (n + z * z), (centre + half) / (n + z * z)


def fewest_solutions(rate, level, limit=100_000):
    """Linear scan: the first m whose Wilson interval at k = rate·m lies wholly on one side of ``level``."""
    for m in range(1, limit + 1):
        lo, hi = wilson_textbook(rate * m, m)
        if lo > level or hi < level:
            return m
    return None


def fewest_values(xs, statistic, band, support=(None, None), limit=2000):
    """Linear scan: the first m ≥ 2 whose t interval (observed mean and SD; "mean": t·SD/√m, "one": t·SD·√(1 + 1/m)),
    cut to ``support``, lies wholly inside or wholly outside ``band``."""
    mean, sd = statistics.mean(xs), statistics.stdev(xs)
    for m in range(2, limit + 1):
        half = stats.t.ppf(0.975, m - 1) * sd * (1 / math.sqrt(m) if statistic == "mean" else math.sqrt(1 + 1 / m))
        lo = mean - half if support[0] is None else max(mean - half, support[0])
        hi = mean + half if support[1] is None else min(mean + half, support[1])
        if band[0] <= lo and hi <= band[1] or hi < band[0] or lo > band[1]:
            return m
    return None


def values_rec(xs, paper=1.0, tol=0.1, statistic="mean", **kw):
    return dict(ours_values=list(xs), statistic=statistic, paper_number=paper, tolerance=tol, **kw)


def share_rec(per, line=0.5, **kw):
    return dict(per_solution=list(per), line=line, **kw)


# --- wilson -------------------------------------------------------------------------------------------------------


def test_wilson_constant_is_the_normal_quantile():
    assert Z == pytest.approx(stats.norm.ppf(0.975), abs=1e-6)


def test_wilson_ends_are_exact_at_k_0_and_k_n():
    """At k = 0 the lower bound is exactly 0 and at k = n the upper bound exactly 1 (not centre ∓ half rounded,
    e.g. n = 69 at k = 0 and n = 4 at k = n, where the rounding misses)."""
    for n in range(1, 201):
        assert verdicts.wilson(0, n)[0] == 0.0, n
        assert verdicts.wilson(n, n)[1] == 1.0, n


@pytest.mark.parametrize(("k", "n"), [(1, 10), (9, 10), (1, 2), (1, 1), (0, 1), (1, 3), (2, 3), (29, 30)])
def test_wilson_matches_the_textbook_formula(k, n):
    """k = 1 and k = n − 1 (and small n) against the textbook form; n = 1 is allowed."""
    lo, hi = wilson_textbook(k, n)
    got = verdicts.wilson(k, n)
    assert got[0] == pytest.approx(0.0 if k == 0 else lo, abs=1e-12)
    assert got[1] == pytest.approx(1.0 if k == n else hi, abs=1e-12)


def test_wilson_of_one_solution_by_hand():
    # n = 1, k = 1: lower bound 1/(1 + z²) = 0.2066; k = 0: upper bound z²/(1 + z²) = 0.7934
    assert verdicts.wilson(1, 1) == pytest.approx((1 / (1 + Z * Z), 1.0))
    assert verdicts.wilson(0, 1) == pytest.approx((0.0, Z * Z / (1 + Z * Z)))


def test_wilson_upper_bound_never_exceeds_one_for_a_fractional_k():
    # k = rate·m (as solutions_to_decide passes it) just under n: centre + half rounds to 1 + 2⁻⁵²; the bound is 1
    assert verdicts.wilson(20 - 1e-8, 20)[1] <= 1.0


@pytest.mark.parametrize(("k", "n"), [(0, 0), (1, 0), (3, 2), (-1, 2)])
def test_wilson_refuses_n_below_1_or_k_outside_0_n(k, n):
    with pytest.raises(ValueError, match=rf"k={k}, n={n}: need n ≥ 1 and 0 ≤ k ≤ n"):
        verdicts.wilson(k, n)


# --- decide_share, solutions_to_decide ----------------------------------------------------------------------------


def test_decide_share_at_and_near_the_line():
    """Holds only when the lower bound lies strictly above the line, fails only when the upper bound lies strictly
    below it; a bound exactly on the line leaves it undecided."""
    lo, hi = wilson_textbook(6, 10)  # 0.313, 0.832
    assert verdicts.decide_share(6, 10, lo - 1e-9) is True
    assert verdicts.decide_share(6, 10, lo + 1e-9) is None
    assert verdicts.decide_share(6, 10, hi - 1e-9) is None
    assert verdicts.decide_share(6, 10, hi + 1e-9) is False
    assert verdicts.decide_share(0, 5, 0.0) is None  # lower bound exactly 0 = the line
    assert verdicts.decide_share(5, 5, 1.0) is None  # upper bound exactly 1 = the line


def test_solutions_to_decide_can_be_one():
    # every solution holds: one solution already puts the lower bound 1/(1 + z²) = 0.207 above a line at 0.1
    assert verdicts.solutions_to_decide(5, 5, 0.1) == 1


def test_solutions_to_decide_is_none_beyond_the_limit_and_at_the_line():
    assert verdicts.solutions_to_decide(6, 10, 0.5, limit=10) is None  # 6 of 10 is undecided at 10
    assert verdicts.solutions_to_decide(6, 10, 0.5, limit=fewest_solutions(0.6, 0.5)) == fewest_solutions(0.6, 0.5)
    assert verdicts.solutions_to_decide(3, 6, 0.5) is None  # the rate is the line


@pytest.mark.parametrize(
    ("k", "n", "level"),
    [(6, 10, 0.5), (8, 10, 0.5), (3, 10, 0.5), (2, 3, 0.9), (7, 10, 0.75), (1, 4, 0.1), (9, 10, 0.8), (1, 2, 0.3)],
)
def test_solutions_to_decide_is_the_fewest_that_decide(k, n, level):
    """The returned m (an int) decides at the observed rate and m − 1 does not (a linear scan with the textbook
    Wilson interval)."""
    m = verdicts.solutions_to_decide(k, n, level)
    assert type(m) is int and m == fewest_solutions(k / n, level)


# --- interval, clip -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lo", "hi", "support", "expected"),
    [
        (-1.0, 2.0, None, (-1.0, 2.0)),
        (-1.0, 2.0, (None, None), (-1.0, 2.0)),
        (-1.0, 2.0, (0.0, None), (0.0, 2.0)),
        (-1.0, 2.0, (None, 1.5), (-1.0, 1.5)),
        (-1.0, 2.0, (0.0, 1.5), (0.0, 1.5)),
        (0.2, 0.7, (0.0, 1.0), (0.2, 0.7)),  # inside the support: unchanged
    ],
)
def test_clip_cuts_to_the_support_with_none_for_an_open_end(lo, hi, support, expected):
    assert verdicts.clip(lo, hi, support) == expected


def test_interval_is_cut_to_the_support():
    # mean 0, SD √2, SEM 1, t(1) = 12.706: (−12.706, 12.706), cut to (0, ∞) and to (−∞, 1)
    t1 = stats.t.ppf(0.975, 1)
    assert verdicts.interval([-1.0, 1.0], "mean") == pytest.approx((-t1, t1))
    assert verdicts.interval([-1.0, 1.0], "mean", (0.0, None)) == pytest.approx((0.0, t1))
    assert verdicts.interval([-1.0, 1.0], "mean", (None, 1.0)) == pytest.approx((-t1, 1.0))


def test_interval_one_is_the_prediction_interval():
    # [0.6, 1.4, 1.0, 1.2]: mean 1.05, SD √(0.35/3), t(3): mean ± t·SD·√(1 + 1/4)
    half = stats.t.ppf(0.975, 3) * math.sqrt(0.35 / 3) * math.sqrt(1.25)
    assert verdicts.interval([0.6, 1.4, 1.0, 1.2], "one") == pytest.approx((1.05 - half, 1.05 + half))


def test_model_takes_exactly_one_value():
    assert verdicts.interval([2.5], "model") == (2.5, 2.5)
    with pytest.raises(ValueError, match="statistic='model' takes one value, got 2"):
        verdicts.interval([1.0, 2.0], "model")


# --- values_to_decide ---------------------------------------------------------------------------------------------

XS = [0.6, 1.4, 1.0, 1.2]  # mean 1.05, SD 0.342


def test_values_to_decide_is_none_for_a_model_or_fewer_than_two_values():
    assert verdicts.values_to_decide([1.0, 2.0], "model", (-100.0, 100.0)) is None
    assert verdicts.values_to_decide([1.0], "model", (-100.0, 100.0)) is None
    assert verdicts.values_to_decide([1.0, math.nan, None], "mean", (-100.0, 100.0)) is None


def test_values_to_decide_two_values_can_decide_at_two():
    # [1.0, 1.1]: SD 0.0707, at m = 2: 1.05 ± 12.706·0.0707/√2 = (0.415, 1.685), inside (0, 10)
    assert verdicts.values_to_decide([1.0, 1.1], "mean", (0.0, 10.0)) == 2


@pytest.mark.parametrize(
    ("statistic", "band"),
    [
        ("mean", (0.9, 1.1)),  # the paper's 1 ± 0.1: half-width 0.05 on the mean's side, about 180 solutions
        ("mean", (0.95, 1.3)),
        ("mean", (1.5, 3.0)),  # wholly outside once the upper end drops below 1.5
        ("mean", (-1.0, 0.8)),  # wholly outside once the lower end rises above 0.8
        ("one", (-1.0, 3.0)),  # a prediction interval that fits at 3
        ("one", (0.0, 2.2)),
    ],
)
def test_values_to_decide_is_the_fewest_that_decide(statistic, band):
    """The returned m (an int) decides at the observed mean and spread and m − 1 does not (a linear scan with
    scipy's t quantiles)."""
    m = verdicts.values_to_decide(XS, statistic, band)
    assert type(m) is int and m == fewest_values(XS, statistic, band)


def test_values_to_decide_with_support():
    # [0, 0, 0.3, 0.1]: mean 0.1, SD 0.141; band (−0.02, 0.32): cut to (0, ∞) only the upper end binds (m = 5),
    # uncut the lower end needs t·SEM ≤ 0.12 (m = 8)
    xs, band = [0.0, 0.0, 0.3, 0.1], (-0.02, 0.32)
    assert verdicts.values_to_decide(xs, "mean", band) == fewest_values(xs, "mean", band) == 8
    assert verdicts.values_to_decide(xs, "mean", band, (0.0, None)) == fewest_values(xs, "mean", band, (0.0, None)) == 5


def test_values_to_decide_one_never_narrows_below_its_spread():
    # the prediction interval's half-width tends to 1.96·SD = 0.67, wider than the band 1 ± 0.1 around the mean 1.05
    assert verdicts.values_to_decide(XS, "one", (0.9, 1.1)) is None
    assert fewest_values(XS, "one", (0.9, 1.1)) is None


# --- decide_band, tolerance, factor_band, matches_printed ---------------------------------------------------------


@pytest.mark.parametrize(
    ("lo", "hi", "expected"),
    [
        (0.0, 0.5, True),  # touching the lower edge: inside (inclusive)
        (0.5, 1.0, True),  # touching the upper edge: inside
        (0.0, 1.0, True),
        (-1.0, 0.0, None),  # touching from outside: not wholly outside
        (1.0, 2.0, None),
        (-1.0, -1e-12, False),
        (1.0 + 1e-12, 2.0, False),
        (-1.0, 2.0, None),  # straddles both edges
        (math.nan, 0.5, False),  # undefined: False
        (0.5, math.nan, False),
        (math.nan, math.nan, False),
        (0.5, math.inf, False),
    ],
)
def test_decide_band_edges(lo, hi, expected):
    assert verdicts.decide_band(lo, hi, (0.0, 1.0)) is expected


def test_paper_tolerance_is_half_unit_plus_two_sems():
    assert verdicts.paper_tolerance(0.005) == 0.005
    assert verdicts.paper_tolerance(0.005, None) == 0.005
    assert verdicts.paper_tolerance(0.005, 0.01) == pytest.approx(0.025)


def test_factor_band():
    assert verdicts.factor_band(2.0, 3.0) == pytest.approx((2 / 3, 6.0))
    assert verdicts.factor_band(2.0, 3.0, below=False) == (0.0, 6.0)  # "at most 3 times the paper's"
    assert verdicts.factor_band(0.5, 2.0) == (0.25, 1.0)  # a paper value below 1 is fine
    assert verdicts.factor_band(2.0, 1.0) == (2.0, 2.0)  # factor 1 is allowed
    assert verdicts.factor_band(3.0, 1.5) == pytest.approx((2.0, 4.5))


@pytest.mark.parametrize(("paper", "factor"), [(0.0, 2.0), (-1.0, 2.0), (1.0, 0.5), (-1.0, 0.5), (math.nan, 2.0)])
def test_factor_band_refuses_a_nonpositive_paper_or_factor_below_one(paper, factor):
    with pytest.raises(ValueError, match="need paper > 0 and factor ≥ 1"):
        verdicts.factor_band(paper, factor)


def test_matches_printed():
    assert verdicts.matches_printed(1.25, 1.0, 0.25) is True  # exactly half a unit away: matches (inclusive)
    assert verdicts.matches_printed(1.2500001, 1.0, 0.25) is False
    assert verdicts.matches_printed(1.0, 1.0, 0.0) is True  # a zero half unit is allowed
    assert verdicts.matches_printed(math.nan, 1.0, 0.25) is False
    with pytest.raises(ValueError, match="half_unit=-0.1 must be ≥ 0"):
        verdicts.matches_printed(1.0, 1.0, -0.1)


# --- _subset, decide ----------------------------------------------------------------------------------------------


def test_subset_drop_and_keep():
    s = verdicts._subset
    assert s(None, 3, 0, None) is None
    assert s("abc", 3, 1, None) == ["a", "c"]  # drops solution 1
    assert s("abc", 3, 2, None) == ["a", "b"]
    assert s("abc", None, 0, None) == ["b", "c"]  # no count to compare with: drops
    assert s("abc", 4, 1, None) == ["a", "b", "c"]  # another length than the n solutions: left whole
    assert s("abcd", 4, None, [True, False, True, False]) == ["a", "c"]
    assert s("ab", 4, None, [True, False, True, False]) == ["a", "b"]  # another length: left whole by keep


def test_decide_all_fields_of_a_per_solution_statement():
    # 6 of 10 against a majority: Wilson (0.31, 0.83) straddles 0.5: undecided, with the solutions that would decide
    d = verdicts.decide(share_rec([True] * 6 + [False] * 4))
    assert d == Decision(UNDECIDED, None, "absent", None, 6, 10, fewest_solutions(0.6, 0.5), None, None, None, None)
    assert d.needed is not None


def test_decide_all_fields_of_a_decided_statement_and_differing_value():
    # 10 of 10 holds (lower bound 0.72); values mean 1.525 far outside 1 ± 0.1: in kind, values differ
    xs = [1.5, 1.6, 1.5, 1.5]
    d = verdicts.decide({**share_rec([True] * 10), **values_rec(xs)})
    half = stats.t.ppf(0.975, 3) * statistics.stdev(xs) / 2
    assert (d.kind, d.statement, d.value, d.k, d.n, d.needed) == (IN_KIND, True, False, 10, 10, None)
    assert d.interval == pytest.approx((1.525 - half, 1.525 + half))
    assert d.band == pytest.approx((0.9, 1.1)) and d.value_n == 4 and d.value_needed is None and d.paper_number == 1.0


def test_decide_all_fields_of_an_undecided_mean():
    # mean 1.05 ± t(3)·√(0.35/3)/2 = ±0.54 straddles 1 ± 0.1
    d = verdicts.decide(values_rec(XS))
    half = stats.t.ppf(0.975, 3) * math.sqrt(0.35 / 3) / 2
    assert (d.kind, d.statement, d.value, d.k, d.n, d.needed) == (UNDECIDED, "absent", None, None, None, None)
    assert d.interval == pytest.approx((1.05 - half, 1.05 + half))
    assert d.band == pytest.approx((0.9, 1.1)) and d.value_n == 4 and d.paper_number == 1.0
    assert d.value_needed == fewest_values(XS, "mean", (0.9, 1.1)) and d.value_needed > 100


def test_decide_model_uses_ours_not_the_sample():
    """A deterministic value ("model") is decided on its one value ``ours``, never on ``ours_values``."""
    rec = dict(statistic="model", ours=1.02, paper_number=1.0, tolerance=0.05)
    d = verdicts.decide(rec)
    assert d == Decision(REPRODUCED, "absent", True, (1.02, 1.02), None, None, None, (0.95, 1.05), 1, None, 1.0)
    d = verdicts.decide({**rec, "ours": 1.2, "ours_values": [1.0, 1.01]})  # the values would match; ours does not
    assert (d.kind, d.value, d.interval, d.value_n, d.value_needed) == (NOT_REPRODUCED, False, (1.2, 1.2), 1, None)


def test_decide_cuts_the_interval_to_the_support():
    # [0, 0, 0.3, 0.1]: 0.1 ± 0.225 = (−0.125, 0.325); against 0.15 ± 0.2 = (−0.05, 0.35): cut to (0, ∞) it matches
    xs, half = [0.0, 0.0, 0.3, 0.1], stats.t.ppf(0.975, 3) * math.sqrt(0.02) / 2
    rec = values_rec(xs, paper=0.15, tol=0.2)
    assert verdicts.decide(rec).value is None
    d = verdicts.decide({**rec, "support": (0.0, None)})
    assert d.value is True and d.kind == REPRODUCED and d.interval == pytest.approx((0.0, 0.1 + half))


def test_decide_needed_values_use_the_support():
    # band 0.15 ± 0.17 = (−0.02, 0.32): undecided either way; 8 solutions decide it uncut, 5 cut to (0, ∞)
    rec = values_rec([0.0, 0.0, 0.3, 0.1], paper=0.15, tol=0.17)
    assert verdicts.decide(rec).value_needed == 8
    assert verdicts.decide({**rec, "support": (0.0, None)}).value_needed == 5


def test_decide_of_booleans_has_no_interval_counts_or_paper_number():
    d = verdicts.decide(dict(matches=True, holds=True, paper_number=1.0))
    assert d == Decision(REPRODUCED, True, True, None, None, None, None, None, None, None, None)
    assert verdicts.decide(dict(paper_number=1.0)) == Decision(NOT_TESTABLE, "absent", "absent", None)


def test_decide_unit_names_what_k_of_n_counts():
    rec = share_rec([True] * 6 + [False] * 4)
    assert verdicts.decide(rec).unit == "solutions"  # the default
    assert verdicts.decide({**rec, "unit": None}).unit == "solutions"
    assert verdicts.decide({**rec, "unit": "seeds"}).unit == "seeds"


def test_decide_kind_band_is_given_only_where_it_is_the_statement():
    """The kind band is the statement (and given as a tuple) only when there is neither a per-solution statement nor
    ``holds``; a record without ``statistic`` decides no kind band."""
    rec = values_rec([1.5, 1.6, 1.5, 1.5], kind_band=[0.5, 3.0])  # differs from 1 ± 0.1, inside (0.5, 3)
    d = verdicts.decide(rec)
    assert (d.kind, d.statement, d.kind_band) == (IN_KIND, True, (0.5, 3.0))
    d = verdicts.decide({**rec, "kind_band": [2.0, 3.0]})  # wholly below the kind band: not reproduced
    assert (d.kind, d.statement, d.kind_band) == (NOT_REPRODUCED, False, (2.0, 3.0))
    assert verdicts.decide({**rec, **share_rec([True] * 10)}).kind_band is None
    d = verdicts.decide({**rec, "holds": False})
    assert (d.kind, d.statement, d.kind_band) == (NOT_REPRODUCED, False, None)
    assert verdicts.decide(dict(matches=True, kind_band=[0.5, 3.0])).kind_band is None
    assert verdicts.decide(values_rec([1.5, 1.6, 1.5, 1.5])).kind_band is None


def test_decide_keep_and_drop_apply_to_solutions_and_values():
    rec = {**share_rec([True, True, False, False, True]), **values_rec([1.0, 1.0, 5.0, 1.0, 1.0])}
    d = verdicts.decide(rec, keep=[True, True, False, True, True])
    assert (d.k, d.n, d.value_n) == (3, 4, 4)
    d = verdicts.decide(rec, drop=2)
    assert (d.k, d.n, d.value_n) == (3, 4, 4)


def test_decide_drop_leaves_a_per_solution_record_of_another_length_whole():
    # judged only where defined: 3 judgements for 4 values; dropping solution 0 drops a value, not a judgement
    rec = {**share_rec([True, True, False]), **values_rec([1.0, 1.01, 0.99, 1.0])}
    d = verdicts.decide(rec, drop=0)
    assert (d.k, d.n, d.value_n) == (2, 3, 3)


def test_decide_with_no_solution_left_is_undecided():
    d = verdicts.decide(share_rec([True, False, True]), keep=[False, False, False])
    assert (d.kind, d.statement, d.k, d.n, d.needed) == (UNDECIDED, None, 0, 0, None)


# --- leave_one_out, without_unlearned, rank, contradicts ----------------------------------------------------------


def test_leave_one_out_with_two_solutions():
    # [1.0, 1.05]: 1.025 ± 12.706·0.0354/√2 = ±0.32 straddles 1 ± 0.1; without either: one value, inside
    assert verdicts.leave_one_out(values_rec([1.0, 1.05])) == [(0, REPRODUCED), (1, REPRODUCED)]
    # 1 of 2 against 0.1: lower bound 0.095, undecided; without the failure 1 of 1 (0.207) holds
    assert verdicts.leave_one_out(share_rec([True, False], line=0.1)) == [(1, REPRODUCED)]
    assert verdicts.leave_one_out(values_rec([1.5])) == []  # one solution: nothing to leave out


def test_without_unlearned():
    # 4 of 5 against a majority: lower bound 0.376, undecided; the 4 that learned: 4/(4 + z²) = 0.510 holds
    rec = share_rec([True, True, True, True, False], learned=[True, True, True, True, False])
    assert verdicts.without_unlearned(rec) == (1, REPRODUCED)
    assert verdicts.without_unlearned({**rec, "learned": [True] * 5}) is None
    assert verdicts.without_unlearned({**rec, "learned": None}) is None


@pytest.mark.parametrize(
    ("decision", "expected"),
    [
        (Decision(REPRODUCED, True, True, None), 2),
        (Decision(IN_KIND, True, False, None), 1),
        (Decision(UNDECIDED, True, None, None), 1),  # the statement holds, the value undecided
        (Decision(UNDECIDED, None, True, None), 0),
        (Decision(UNDECIDED, "absent", None, None), 0),
        (Decision(NOT_REPRODUCED, False, True, None), 0),
        (Decision(NOT_REPRODUCED, "absent", False, None), 0),
        (Decision(NOT_TESTABLE, "absent", "absent", None), 0),
    ],
)
def test_rank(decision, expected):
    assert verdicts.rank(decision) == expected


def test_contradicts():
    assert verdicts.contradicts(REPRODUCED, NOT_REPRODUCED) and verdicts.contradicts(IN_KIND, REPRODUCED)
    assert not verdicts.contradicts(REPRODUCED, REPRODUCED)
    assert not verdicts.contradicts(REPRODUCED, UNDECIDED) and not verdicts.contradicts(UNDECIDED, NOT_REPRODUCED)
    assert not verdicts.contradicts(NOT_TESTABLE, REPRODUCED) and not verdicts.contradicts(REPRODUCED, NOT_TESTABLE)
