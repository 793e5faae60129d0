"""The one table renderer: HTML with caption and right-aligned numbers, aligned text, per-column formats."""

import math

import numpy as np
import pytest

from lib.core.tables import Code, Details, Table, as_myst, mean_sem_text, names_as_code, paths_as_code, table


def test_html_has_caption_escaped_cells_and_right_aligned_numbers():
    t = table(("block", "ΔFVU", "note"), [("T_C→R", 0.12345, "a<b"), ("T_CC", math.nan, "c")], ".3f", caption="Cap")
    html = t._repr_html_()
    assert html.startswith('<table class="table book-table"><caption>Cap</caption>')
    assert "a&lt;b" in html and "<td>T<sub>C→R</sub></td>" in html  # plain-text maths with a subscript
    assert '<td style="text-align: right; font-variant-numeric: tabular-nums">0.123</td>' in html
    assert '<td style="text-align: right; font-variant-numeric: tabular-nums">—</td>' in html  # NaN shown as a dash
    assert t.numeric_columns() == [False, True, False]


def test_text_repr_aligns_columns_and_right_justifies_numbers():
    t = Table(("name", "value"), (("a", 1.5), ("long name", 10.25)), ".2f")
    lines = repr(t).splitlines()
    assert lines[0] == "name       value" and lines[1] == "---------  -----"
    assert lines[2] == "a           1.50" and lines[3] == "long name  10.25"


def test_per_column_formats_ints_bools_and_none():
    t = Table(("x", "y", "z", "w"), ((0.5, 0.25, True, None), (12345, 2, False, 3)), (".1f", ".3f", "", ""))
    assert t.cells() == [["0.5", "0.250", "yes", "—"], ["12,345", "2", "no", "3"]]


def test_rows_and_formats_must_fit_the_headers():
    with pytest.raises(ValueError, match="row 1 has 1 cells"):
        Table(("a", "b"), ((1, 2), (3,)))
    with pytest.raises(ValueError, match="floatfmt"):
        Table(("a", "b"), ((1, 2),), (".1f",))


def test_mean_sem_text():
    assert mean_sem_text(0.123456, 0.0123, 3) == "0.123 ± 0.012"
    assert mean_sem_text(0.5, math.nan, 1) == "0.5"
    assert mean_sem_text(math.nan, 0.1, 2) == "—" and mean_sem_text(1.0, 0.1, 0) == "—"


def test_link_cells_render_as_anchors():
    from lib.core.tables import Link

    t = Table(("claim", "where"), (("A1", Link("§3 <copy>", "copy_task.html#x")),))
    assert '<a href="copy_task.html#x">§3 &lt;copy&gt;</a>' in t._repr_html_()
    assert "§3 <copy>" in repr(t)


def test_a_wide_table_transposed_reads_tall():
    from lib.core.tables import Table

    wide = Table(("task", "a", "b", "verdict"), (("x", 1.0, 2.0, "holds"), ("y", 3.0, 4.0, "fails")), ".1f", "c")
    tall = wide.transposed("per task")
    assert tall.headers == ("per task", "x", "y") and tall.caption == "c"
    assert tall.rows == (("a", 1.0, 3.0), ("b", 2.0, 4.0), ("verdict", "holds", "fails"))
    with pytest.raises(ValueError, match="one float format"):
        Table(("t", "a"), (("x", 1.0),), (".1f", ".2f")).transposed()


def test_numpy_scalars_and_sequences_read_as_numbers_never_as_reprs():
    t = Table(
        ("a", "b", "c"),
        ((np.int64(3), np.float64(0.74079704), np.bool_(True)), ((0.74079704, 0.5), ("1.00", "0.875"), None)),
    )
    assert t.cells() == [["3", "0.741", "yes"], ["0.741, 0.500", "1.00, 0.875", "—"]]


def test_code_cells_details_ids_and_backticks_render_as_inline_code():
    t = Table(
        ("line", "why", "claim"),
        ((Code("learned_fvu"), "the `safe_tolerance` of T_CC", Details("s", "d", code="A28_basis")),),
    )
    html = t._repr_html_()
    assert "<td><code>learned_fvu</code></td>" in html
    assert "the <code>safe_tolerance</code> of T<sub>CC</sub>" in html
    assert "<details><summary>s</summary><code>A28_basis</code> d</details>" in html


def test_identifiers_and_paths_become_code_and_maths_stays_maths():
    assert names_as_code("safe_tolerance and T_CC, n_R, S_i²") == "`safe_tolerance` and T_CC, n_R, S_i²"
    assert paths_as_code("FedeClaudi/pyrnn tasks/three_bit_memory.py; cue + j/51") == (
        "`FedeClaudi/pyrnn` `tasks/three_bit_memory.py`; cue + j/51"
    )
    assert as_myst("S_ΔT(−T_C→R) > S_ΔT(−T_CC) in A28_basis, c*") == (
        "$S_{\\Delta T}$(−$T_{C\\to R}$) > $S_{\\Delta T}$(−$T_{CC}$) in `A28_basis`, c\\*"
    )
