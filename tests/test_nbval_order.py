"""``tests.nbval_order``: nbval's notebooks longest first, by the last run's record (else the executor's)."""

from __future__ import annotations

import json
from types import SimpleNamespace

from tests import nbval_order


def _items(*nodeids):
    return [SimpleNamespace(nodeid=n) for n in nodeids]


def test_longest_first_puts_unknown_stems_first_and_keeps_ties_in_order():
    costs = {"a": 5.0, "b": 100.0, "c": 5.0, "d": 40.0}
    assert nbval_order.longest_first(["a", "b", "new", "c", "d", "a"], costs) == ["new", "b", "d", "a", "c"]


def test_the_last_nbval_record_wins_over_the_executors_and_a_corrupt_one_is_passed_over(tmp_path):
    """(``bookrun.timings.read_timings``, which the executor's timings.json goes through too.)"""
    (tmp_path / nbval_order.EXECUTOR_RECORD).write_text(json.dumps({"x": 300.0, "y": 10.0}))
    assert nbval_order.read_costs(tmp_path) == {"x": 300.0, "y": 10.0}
    (tmp_path / nbval_order.RECORD).write_text("{not json")
    assert nbval_order.read_costs(tmp_path) == {"x": 300.0, "y": 10.0}
    (tmp_path / nbval_order.RECORD).write_text(json.dumps({"x": 4.0, "y": 90.0, "flag": True}))
    assert nbval_order.read_costs(tmp_path) == {"x": 4.0, "y": 90.0}


def test_cells_are_grouped_by_notebook_longest_first_in_their_own_order(tmp_path, monkeypatch):
    monkeypatch.setenv("BOOK_BUILD_DIR", str(tmp_path))
    (tmp_path / nbval_order.RECORD).write_text(json.dumps({"annulus": 130.0, "two_lenses": 170.0, "schur": 3.0}))
    items = _items(
        "b/annulus.ipynb::Cell 0", "b/annulus.ipynb::Cell 1", "b/schur.ipynb::Cell 0",
        "b/two_lenses.ipynb::Cell 0", "b/two_lenses.ipynb::Cell 1", "b/two_lenses.ipynb::Cell 2",
    )  # fmt: skip
    nbval_order.pytest_collection_modifyitems(None, None, items)
    assert [i.nodeid for i in items] == [
        "b/two_lenses.ipynb::Cell 0", "b/two_lenses.ipynb::Cell 1", "b/two_lenses.ipynb::Cell 2",
        "b/annulus.ipynb::Cell 0", "b/annulus.ipynb::Cell 1", "b/schur.ipynb::Cell 0",
    ]  # fmt: skip


def test_a_run_of_ordinary_tests_is_left_as_collected(tmp_path, monkeypatch):
    monkeypatch.setenv("BOOK_BUILD_DIR", str(tmp_path))
    (tmp_path / nbval_order.RECORD).write_text(json.dumps({"test_b": 9.0, "b": 50.0}))
    items = _items("tests/test_a.py::test_x", "tests/test_b.py::test_y", "a.ipynb::Cell 0", "b.ipynb::Cell 0")
    nbval_order.pytest_collection_modifyitems(None, None, items)
    assert [i.nodeid for i in items] == ["tests/test_a.py::test_x", "tests/test_b.py::test_y", "a.ipynb::Cell 0",
                                         "b.ipynb::Cell 0"]  # fmt: skip


def test_the_recorder_sums_each_notebooks_phases_and_keeps_the_others_record(tmp_path, monkeypatch):
    monkeypatch.setenv("BOOK_BUILD_DIR", str(tmp_path))
    (tmp_path / nbval_order.RECORD).write_text(json.dumps({"mexican_hat": 175.0, "annulus": 999.0}))
    recorder = nbval_order._Recorder()
    for nodeid, seconds in [
        ("b/annulus.ipynb::Cell 0", 0.25), ("b/annulus.ipynb::Cell 0", 120.0), ("b/annulus.ipynb::Cell 1", 10.0),
        ("tests/test_a.py::test_x", 50.0),
    ]:  # fmt: skip
        recorder.pytest_runtest_logreport(SimpleNamespace(nodeid=nodeid, duration=seconds))
    recorder.pytest_sessionfinish(None, 1)  # a failed run is not recorded
    assert json.loads((tmp_path / nbval_order.RECORD).read_text())["annulus"] == 999.0
    recorder.pytest_sessionfinish(None, 0)
    assert json.loads((tmp_path / nbval_order.RECORD).read_text()) == {"annulus": 130.2, "mexican_hat": 175.0}
    assert [p.name for p in tmp_path.iterdir()] == [nbval_order.RECORD]  # no temporary file left behind
