"""The one table renderer: HTML with caption and right-aligned numbers, aligned text, per-column formats."""

import math

import pytest

from lib.core.tables import Table, mean_sem_text, table


def test_html_has_caption_escaped_cells_and_right_aligned_numbers():
    t = table(("block", "ΔFVU", "note"), [("T_C→R", 0.12345, "a<b"), ("T_CC", math.nan, "c")], ".3f", caption="Cap")
    html = t._repr_html_()
    assert html.startswith('<table class="table book-table"><caption>Cap</caption>')
    assert "a&lt;b" in html and "<td>T_C→R</td>" in html
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
