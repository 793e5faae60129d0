"""lib.core.claims: the verdict rule, the tolerance helpers, the Wilson interval, publishing and reading back."""

from __future__ import annotations

import json
import math

import pytest

from lib.core import claims
from lib.core.claims import Claim
from lib.papers import Quote, schur_ablation, symmetry_lifting


def claim(**kw):
    base = dict(id="X1", paper="A", section="§3", statement="s", paper_value=1.0, ours=1.0, criterion="c")
    return Claim(**{**base, **kw})


@pytest.mark.parametrize(
    ("kw", "kind"),
    [
        (dict(), "not testable here"),
        (dict(matches=True, holds=True), "reproduced"),
        (dict(matches=True), "reproduced"),
        (dict(holds=True), "reproduced"),
        (dict(matches=False, holds=True), "reproduced in kind, values differ"),
        (dict(matches=False, holds=False), "not reproduced"),
        (dict(matches=True, holds=False), "not reproduced"),
        (dict(matches=False), "not reproduced"),
        (dict(holds=True, per_solution=(True,) * 8 + (False,) * 2), "reproduced"),
        (dict(holds=True, per_solution=(True,) * 7 + (False,) * 3), "fragile"),
        (dict(holds=True, per_solution=(False,) * 3), "not reproduced"),
        (dict(holds=False, per_solution=(True,) * 9 + (False,)), "not reproduced"),
        (dict(matches=True, holds=True, per_solution=(True, False)), "fragile"),
    ],
)
def test_verdict_rule(kw, kind):
    assert claim(**kw).kind == kind


def test_fragile_verdict_names_k_of_n_and_robustness_has_a_wilson_interval():
    c = claim(holds=True, per_solution=(True, True, True, False, False, False, False, False, False, False))
    assert c.verdict == "fragile (holds in 3 of 10)"
    assert c.robustness.startswith("3 of 10 (95% CI 0.11–0.60")
    assert claim(holds=True).robustness == "—"


def test_wilson_known_values():
    lo, hi = claims.wilson(3, 10)
    assert lo == pytest.approx(0.1078, abs=1e-4) and hi == pytest.approx(0.6032, abs=1e-4)
    assert claims.wilson(0, 5)[0] == 0.0 and claims.wilson(5, 5)[1] == 1.0
    for n in range(1, 201):  # every interval contains its own frequency, the ends 0 and 1 included exactly
        for k in range(n + 1):
            lo, hi = claims.wilson(k, n)
            assert lo <= k / n <= hi, (k, n)
    with pytest.raises(ValueError, match="n=0"):
        claims.wilson(0, 0)


def test_printed_tolerance():
    q = Quote("0.876", "§3")
    assert q.half_unit == pytest.approx(5e-4)
    assert claims.matches_printed(0.8764, q.value, q.half_unit)
    assert not claims.matches_printed(0.877, q.value, q.half_unit)
    assert claims.matches_printed(0.90, q.value, q.half_unit, spread=0.015)  # 2 × spread widens it
    assert Quote("9.45e-2", "§4").half_unit == pytest.approx(5e-5)
    assert Quote("1237", "§8.8").half_unit == 0.5
    assert not claims.matches_printed(math.nan, 1.0, 0.5)
    with pytest.raises(ValueError, match="spread"):
        claims.matches_printed(1.0, 1.0, 0.5, spread=-1)


def test_mean_sem_tolerance():
    assert claims.matches_mean_sem(2.5, 0.1, 2.08, 0.23)  # |0.42| ≤ 2·0.25
    assert not claims.matches_mean_sem(3.0, 0.1, 2.08, 0.23)
    assert claims.matches_mean_sem(2.08, math.nan, 2.08, 0.23)


def test_bad_claims_are_refused():
    with pytest.raises(ValueError, match="id="):
        claim(id="1bad")
    with pytest.raises(ValueError, match="paper="):
        claim(paper="C")
    with pytest.raises(TypeError, match="holds="):
        claim(holds=1)


def test_publish_and_read_back():
    glued = {}
    cs = [claim(id="A1", holds=True, per_solution=[True, False]), claim(id="A2", matches=True, ours=(1, 2))]
    claims.publish(cs, lambda name, value, display: glued.__setitem__(name, value))
    assert glued["claim_A1_verdict"] == "fragile (holds in 1 of 2)"
    rec = json.loads(glued["claim_A2"])
    assert rec["verdict"] == "reproduced" and rec["ours"] == [1, 2]
    back = claims.records_from_values(glued, "ch")
    assert [r["id"] for r in back] == ["A1", "A2"] and back[0]["chapter"] == "ch"
    assert claims.counts(back)["fragile"] == 1
    with pytest.raises(ValueError, match="unique"):
        claims.publish([cs[0], cs[0]], lambda *a, **k: None)


def test_nan_becomes_null_in_the_record():
    assert json.loads(json.dumps(claim(ours=math.nan).record()))["ours"] is None


def test_section_anchor_is_sphinx_id():
    assert claims.section_anchor("How often the paper's orderings hold") == "how-often-the-paper-s-orderings-hold"


@pytest.mark.parametrize("module", [schur_ablation, symmetry_lifting])
def test_expected_verdicts_are_categories_with_reasons(module):
    for cid, (verdict, reason) in module.EXPECTED.items():
        assert cid.startswith(module.PAPER), cid
        assert verdict in claims.VERDICTS, (cid, verdict)
        assert (verdict == "reproduced") == (reason == ""), f"{cid}: a reason is needed exactly when not reproduced"


def paper_values():
    """The annulus chapter's ``values`` filled with the paper's own §8.8 numbers."""
    v = {}
    for (kind, c), row in symmetry_lifting.ANNULUS_TABLE.items():
        v[f"defect_start_{c}"], v[f"acc_start_{c}"] = row["start"].value, row["acc_start"].value
        v[f"defect_pred_{kind}_{c}"] = row["pred"].value
        v[f"defect_end_{kind}_resolved_{c}"], v[f"acc_end_{kind}_resolved_{c}"] = row["end"].value, row["acc_end"].value
        v[f"defect_end_{kind}_fixed_{c}"], v[f"acc_end_{kind}_fixed_{c}"] = (
            row["fixed_end"].value,
            row["fixed_acc"].value,
        )
    v["bce_wedge"], v["bce_full"] = 6.4e-7, 8.9e-7
    return v


def test_the_papers_own_annulus_numbers_reproduce_its_rows():
    from lib.paper_b.annulus import flow_claims

    out = {c.id: c for c in flow_claims(paper_values(), {"table": "t", "training": "u"})}
    rows = [c for cid, c in out.items() if cid.endswith(("_resolved", "_fixed")) and cid.count("_") >= 3]
    assert len(rows) == 16 and all(c.kind == "reproduced" for c in rows), [c.id for c in rows if c.kind != "reproduced"]
    # the paper's own table breaks its "within 2 %" summary (0.273 → 0.281 at initialisation)
    assert out["B88_resolved_c_2pct"].kind == "not reproduced"
    assert out["B88_fixed_c_growth"].kind == "reproduced"  # 1237 / 56.1 = 22.05, printed "22"
    assert out["B88_consistency"].kind == "not testable here"


def test_a_wrong_flow_is_caught():
    from lib.paper_b.annulus import flow_claims

    v = paper_values()
    v["acc_end_b_fixed_wedge_trained"] = 0.59  # the plain lift's accuracy: not below chance
    v["defect_end_b_fixed_wedge_trained"] = 200.0  # the defect falls instead of rising to 823
    out = {c.id: c for c in flow_claims(v, {"table": "t", "training": "u"})}
    assert out["B88_fixed_b_accuracy"].kind == "not reproduced"
    assert out["B88_b_wedge_trained_fixed"].kind == "not reproduced"


def test_summary_values_count_per_verdict_and_paper():
    records = [
        {"id": "a1", "paper": "A", "kind": "reproduced"},
        {"id": "a2", "paper": "A", "kind": "fragile"},
        {"id": "b1", "paper": "B", "kind": "reproduced"},
    ]
    values = claims.summary_values(records, expected={"a1", "a2", "b1", "b2"})
    assert values["n_claims"] == 3 and values["n_claims_A"] == 2 and values["n_claims_B"] == 1
    assert values["n_reproduced"] == 2 and values["n_reproduced_A"] == 1 and values["n_fragile_A"] == 1
    assert values["n_fragile_B"] == 0 and values["n_expected"] == 4 and values["n_missing"] == 1


def test_scorecard_lists_one_papers_claims_by_section():
    rec = dict(statement="s", paper_value=[0.5, None], ours=0.123456, verdict="reproduced", robustness="—", link="")
    records = [
        {**rec, "id": "x", "paper": "A", "section": "§3", "chapter": "c"},
        {**rec, "id": "y", "paper": "A", "section": "§2", "chapter": "c"},
        {**rec, "id": "z", "paper": "B", "section": "§1", "chapter": "c"},
    ]
    table = claims.scorecard(records, "A")
    assert [row[0] for row in table.rows] == ["§2", "§3"]
    assert table.rows[0][2] == "0.5 / None" and table.rows[0][3] == "0.1235"
