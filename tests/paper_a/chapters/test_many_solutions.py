"""The chapter "Many solutions": its settings refuse bad values before any work, the sweep of solution profiles
keeps its rows and resumes, and the orderings, Wilson intervals and width profile are computed as stated."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from lib.core import engine
from lib.core.claims import SECOND_SET_GLUE
from lib.core.results_table import ResultsTable
from lib.core.verdicts import wilson
from lib.paper_a import task_analysis as ta
from lib.paper_a import train
from lib.paper_a.chapters import many_solutions as chapter
from lib.paper_a.task_analysis import sweeps

TINY = {"steps": 3, "batch_size": 4, "construction": "dense_default"}  # spread moduli: C is not empty


@pytest.fixture(autouse=True)
def one_worker(monkeypatch):
    monkeypatch.setenv("BOOK_WORKERS", "1")
    monkeypatch.delenv(engine.SCHEDULER_ENV, raising=False)


@pytest.mark.parametrize(
    "changes, error, words",
    [
        ({"solutions": 0}, ValueError, r"solutions=0 is out of range; allowed: \[1, inf\)"),
        ({"solutions": 2.5}, TypeError, "solutions=2.5 must be an integer"),
        ({"tasks": ("flipflop", "flip_flop")}, ValueError, r"tasks contains \['flip_flop'\]; allowed elements"),
        ({"tasks": ()}, ValueError, "tasks=.* must name at least one task"),
        ({"widths": (32, 33)}, ValueError, r"widths\[1\]=33 is odd; allowed: an even integer ≥ 2"),
        ({"widths": (0, 64)}, ValueError, r"widths\[0\]=0 is out of range"),
        ({"widths": (64, 64)}, ValueError, "lists a width twice"),
        ({"widths": "64"}, TypeError, "widths='64' must be a non-empty list"),
        ({"width_solutions": 0}, ValueError, "width_solutions=0 is out of range"),
        ({"alpha": 1.5}, ValueError, "alpha=1.5 is out of range"),
        ({"scheduler": "tcp://host :1"}, ValueError, "scheduler='tcp://host :1' is not allowed"),
        ({"device": "gpu"}, ValueError, "device='gpu' is not a device; allowed: 'cpu', 'cuda' or 'cuda:<index>'"),
    ],
)
def test_bad_settings_name_parameter_value_and_what_is_allowed(changes, error, words):
    with pytest.raises(error, match=words):
        chapter.SolutionSweep(**changes)


def test_bad_workers_and_unreachable_scheduler_are_refused_at_once(monkeypatch):
    monkeypatch.setenv("BOOK_WORKERS", "0")
    with pytest.raises(ValueError, match="BOOK_WORKERS='0' must be a positive integer"):
        chapter.SolutionSweep()
    monkeypatch.setenv("BOOK_WORKERS", "1")
    monkeypatch.setattr(engine, "CONNECT_TIMEOUT", 0.5)
    with pytest.raises(ConnectionError, match=r"scheduler='tcp://127\.0\.0\.1:1' cannot be reached"):
        chapter.SolutionSweep(scheduler="tcp://127.0.0.1:1")


def test_the_default_solutions_are_the_task_chapters():
    study = chapter.SolutionSweep(widths=[128, 32, 64], tasks=["sine"])
    assert study.widths == (32, 64, 128) and study.tasks == ("sine",)
    configs = study.configs()
    assert configs[:10] == [ta.train_config("sine", s) for s in range(10)]  # the same cache entries
    assert configs[10:20] == [ta.train_config("sine", s) for s in range(10, 20)]  # the second set, disjoint
    n = study.width_solutions
    assert [c.n_hidden for c in configs[20:]] == [32] * n + [64] * n + [128] * n
    assert train.cache_path(configs[20 + n]) == train.cache_path(ta.train_config("sine", 0))  # the paper's width
    # more solutions than the second set starts at: its seeds are among them and not trained twice
    many = chapter.SolutionSweep(solutions=15, widths=[64], tasks=["sine"], second_set=10).configs()
    assert [c.seed for c in many[:20]] == list(range(20))
    assert list(chapter.SolutionSweep(second_set=0).second_seeds) == []


def test_solutions_needed_decides_against_the_scorecards_line():
    assert chapter.LEVEL == 0.5
    assert chapter.solutions_needed(1.0) == 4  # 4 / (4 + z²) is the first lower bound above 0.5
    assert wilson(4, 4)[0] > 0.5 > wilson(3, 3)[0]
    assert chapter.solutions_needed(1.0, level=0.8) == 16 and wilson(16, 16)[0] > 0.8 > wilson(15, 15)[0]
    assert chapter.solutions_needed(0.5, limit=200) is None
    assert chapter.solutions_needed(0.0) < chapter.solutions_needed(0.3) < chapter.solutions_needed(0.4)


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """Four tiny flip-flop solutions at two widths, profiled through a private cache and results table."""
    mp = pytest.MonkeyPatch()
    mp.setenv("BOOK_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    mp.setenv("BOOK_WORKERS", "1")
    table = tmp_path_factory.mktemp("table")
    configs = [ta.train_config("flipflop", s, **TINY, n_hidden=w) for w in (6, 8) for s in range(4)]
    profiles = sweeps.profile_sweep(configs, 0.9, n_heldout=16, table=table, progress=False)
    yield configs, profiles, table
    mp.undo()


def test_rows_are_the_task_analysis_profiles(swept):
    configs, profiles, _ = swept
    for config, prof in zip(configs, profiles, strict=True):
        model = train.load_or_train(config, progress=False)
        direct = ta.profile_solution(model.weights, ta.heldout_batch("flipflop", n_trials=16), seed=config.seed)
        single_empty = tuple(b for b in ta.SINGLE_BLOCKS if b in direct.empty)
        assert (prof.seed, prof.n_R, prof.fvu_full) == (direct.seed, direct.n_R, direct.fvu_full)
        assert prof.empty == single_empty
        for b in ta.SINGLE_BLOCKS:
            for kind in ("dfvu", "sens", "mass", "fvu"):
                ours, theirs = getattr(prof, kind)[b], getattr(direct, kind)[b]
                assert ours == theirs or (math.isnan(ours) and math.isnan(theirs))
        for name in ta.ORDERINGS:
            assert ta.holds(name, prof) == ta.holds(name, direct)
        np.testing.assert_array_equal(prof.gaps, direct.gaps)


def test_a_second_sweep_reads_the_rows(swept, monkeypatch):
    configs, profiles, table = swept
    monkeypatch.setattr(sweeps, "profile_row", lambda **_: pytest.fail("a finished row was computed again"))
    monkeypatch.setattr(train, "load_or_train_many", lambda configs, **_: pytest.fail("trained") if configs else [])
    again = sweeps.profile_sweep(configs, 0.9, n_heldout=16, table=table, progress=False)
    np.testing.assert_equal([p.dfvu for p in again], [p.dfvu for p in profiles])  # NaN where a block is empty


def test_an_interrupted_sweep_computes_only_the_rows_left(swept, tmp_path, monkeypatch):
    configs, profiles, table = swept
    keys = [ResultsTable.key(sweeps.row_config(c, 0.9, 16), sweeps.ROW_CODE) for c in configs]
    rows = {r["key"]: r for r in ResultsTable(table).read()}
    ResultsTable(tmp_path).append([rows[k] for k in keys[:4]])  # the first four finished before the interruption
    ran = []
    real = sweeps.profile_row
    monkeypatch.setattr(sweeps, "profile_row", lambda **job: ran.append(job["model"]["seed"]) or real(**job))
    resumed = sweeps.profile_sweep(configs, 0.9, n_heldout=16, table=tmp_path, progress=False)
    assert len(ran) == 4 and [p.fvu_full for p in resumed] == [p.fvu_full for p in profiles]


def test_another_alpha_or_heldout_set_is_another_row(swept):
    configs, _, _ = swept
    a = sweeps.row_config(configs[0], 0.9, 16)
    assert ResultsTable.key(a, sweeps.ROW_CODE) != ResultsTable.key(sweeps.row_config(configs[0], 0.85, 16), "x")
    assert a["model"] == configs[0].to_dict() and a["model_code"] == train.code_fingerprint("flipflop")
    assert sweeps.row_config(configs[0], 0.9, 32) != a


def _profiles(swept) -> chapter.ManyProfiles:
    configs, profiles, _ = swept
    study = chapter.SolutionSweep(solutions=4, widths=(6, 8), width_solutions=2, tasks=("flipflop",))
    by = {(c.n_hidden, c.seed): p for c, p in zip(configs, profiles, strict=True)}
    analysis = lambda w, n: ta.TaskAnalysis("flipflop", {}, 0.9, [by[w, s] for s in range(n)])  # noqa: E731
    widths = {"flipflop": {6: analysis(6, 2), 8: analysis(8, 2)}}
    return chapter.ManyProfiles(study, {"flipflop": analysis(8, 4)}, widths, {"flipflop": analysis(6, 4)})


def test_ordering_frequencies_and_intervals(swept):
    many = _profiles(swept)
    values, table = chapter.ordering_values(many)
    assert len(table.rows) == len(ta.ORDERINGS)
    for name, test in ta.GENERIC_ORDERINGS.items():
        k, n = many.main["flipflop"].count(test)
        tag = f"flipflop_{name}"
        assert (values[f"k_{tag}"], values[f"n_{tag}"]) == (k, n)
        if n:
            assert values[f"frac_{tag}"] == many.main["flipflop"].fraction(test)
            assert (values[f"lo_{tag}"], values[f"hi_{tag}"]) == wilson(k, n)
            assert values[f"lo_{tag}"] <= values[f"frac_{tag}"] <= values[f"hi_{tag}"]
    assert any(values[f"n_flipflop_{name}"] for name in ta.ORDERINGS)  # the tiny solutions judge some orderings
    assert f"flipflop, {ta.ORDERING_TEXT['CR_largest']}" in values["paper_orderings_summary"]  # in words, no ids


def test_running_intervals_end_at_the_table_and_narrow(swept):
    many = _profiles(swept)
    values, _ = chapter.ordering_values(many)
    curves = chapter.narrowing_curves(many)
    for name, (n, f, lo, hi) in curves["flipflop"].items():
        assert np.all(np.diff(n) == 1) and np.all(lo <= f) and np.all(f <= hi)
        if n.size:
            assert (lo[-1], hi[-1]) == (values[f"lo_flipflop_{name}"], values[f"hi_flipflop_{name}"])
    narrowing = chapter.narrowing_values(many)
    assert narrowing["all_hold_low"] == wilson(4, 4)[0] and narrowing["all_hold_needed"] == 4
    widths = [hi - lo for lo, hi in (wilson(m, m) for m in range(1, 200))]
    assert all(a > b for a, b in zip(widths, widths[1:], strict=False))


def test_width_profile_has_a_point_per_width(swept):
    many = _profiles(swept)
    values, table = chapter.width_values(many)
    for b in ta.SINGLE_BLOCKS:
        defined = sum(many.widths["flipflop"][w].mean_sem("dfvu", b)[2] > 0 for w in (6, 8))
        assert values[f"width_points_flipflop_{b}"] == defined
        for w in (6, 8):
            m = values[f"width_dfvu_flipflop_{b}_{w}"]
            assert m == many.widths["flipflop"][w].mean_sem("dfvu", b)[0] or math.isnan(m)
    assert len(table.rows) == len(ta.SINGLE_BLOCKS) and len(table.headers) == 2 + 2


def test_figures_draw(swept):
    import matplotlib.pyplot as plt

    from lib.plots import many_solutions as plots

    many = _profiles(swept)
    for fig in (
        plots.ablation_ecdfs(many.main),
        plots.interval_narrowing(chapter.narrowing_curves(many), 0.5, chapter.claimed_orderings(["flipflop"])),
        plots.width_profile(many.widths),
    ):
        assert fig.axes
        plt.close(fig)


def test_the_second_set_publishes_the_task_claims(swept):
    many = _profiles(swept)
    records = json.loads(chapter.task_second_set(many)[SECOND_SET_GLUE])
    first = {c.id: c for c in ta.task_claims(many.main["flipflop"])}
    assert set(records) == set(first) and records  # the same claims, on other solutions
    again = {c.id: c.record() for c in ta.task_claims(many.second["flipflop"])}
    assert all(records[k]["kind"] == again[k]["kind"] and records[k]["k"] == again[k]["k"] for k in records)
    statements = sorted(records[k]["statement"] for k in records)  # the table names each claim in words
    assert sorted(r[0] for r in chapter.second_set_table(many).rows) == statements
