"""Every built page speaks the reader's words: no identifier and no Python repr in the text a reader reads.

The reader's text is the page's article in Chromium without ``pre``, ``code``, ``script``, ``style``, maths (``.math``,
``mjx-container``), cell inputs (``.cell_input``) and the ``pre`` blocks of cell outputs: prose, headings, captions,
table headers and cells, admonitions. What counts as code there is the rule of ``tests/browser/words.py`` (its
docstring states it): a word with an underscore (claim ids, glue names, parameters, plain-text ``T_CC``) and Python
reprs (``np.`` calls, tuples or lists of long floats or of quoted strings, ``True``/``False``/``None`` as a table cell
or in repr punctuation). An id or a parameter a reader may want stays allowed inside ``<code>``.
"""

from __future__ import annotations

import pytest

from tests.browser.test_pages import book_pages
from tests.browser.words import offenders

READER_TEXT = """() => {
  const article = document.querySelector("article.bd-article") || document.querySelector("main") || document.body;
  const clone = article.cloneNode(true);
  clone.querySelectorAll("pre, code, script, style, .math, mjx-container, .cell_input, .cell_output pre")
    .forEach(e => e.remove());
  // Block elements end a word: textContent would glue a heading to the paragraph after it.
  clone.querySelectorAll("p, li, td, th, caption, h1, h2, h3, h4, h5, h6, div, dt, dd, figcaption, br")
    .forEach(e => e.append(" "));
  return {
    text: clone.textContent.replace(/\\s+/g, " "),
    cells: [...clone.querySelectorAll("td, th")].map(c => c.textContent),
  };
}"""


@pytest.mark.browser
@pytest.mark.parametrize("page", book_pages())
def test_page_speaks_words_not_code(page, browser, server, html_dir):
    if 'http-equiv="Refresh"' in (html_dir / page).read_text():  # the root index.html only forwards
        return
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    tab.goto(f"{server}/{page}", wait_until="load")
    reader = tab.evaluate(READER_TEXT)
    tab.close()
    found = offenders(reader["text"], reader["cells"])
    assert not found, f"{page}: code in the reader's text ({len(found)}):\n  " + "\n  ".join(found)


@pytest.mark.parametrize(
    "text",
    [
        "In short: A4_sine_dfvu_CC and A28_basis do not reproduce.",
        "Set OMP_NUM_THREADS before the run.",
        "the ablation of T_CC removes little",
        "the accuracy was (0.7407970428466797, 0.7407598495483398)",
        "accuracies [0.72, 0.31, 0.55] across solutions",
        "accuracies [0.72, …] across solutions",
        "the labels ('1.00', '0.875', '0.5') of the rows",
        "a count of np.int64(3) solutions",
        "with tolerance=None given",
        "a flag (True, False)",
    ],
)
def test_the_scan_finds_planted_code(text):
    assert offenders(text), f"nothing found in {text!r}"


@pytest.mark.parametrize("cell", ["True", "False", " None ", "nan"])
def test_the_scan_finds_a_constant_as_a_table_cell(cell):
    assert offenders("", [cell]) == [f"a Python constant as a table cell {cell.strip()!r}"]


def test_the_scan_names_each_offender_once():
    found = offenders("dfvu_CC then dfvu_CC and (0.123456, 0.5)")
    assert found == ["identifier dfvu_CC", "a tuple or list of long floats '(0.123456,'"]


def test_the_scan_passes_the_reader_s_words():
    text = (
        "None of the ten solutions keeps its accuracy when the C-to-R coupling is removed (ΔFVU 0.731, the paper "
        "0.18 ± 0.02; interval [0.72, 0.91]). The copy task is reproduced in 3 of 3 solutions: True to the paper. "
        "Version 1.0.0, built from commit abc1234; see claims.json and e.g. (a), (b) or Fig. 2.1 (left). "
        "Rows (0.5 of the mass) and cut-offs (1e-3) read as words; C→R, n = 64, 2×2 blocks."
    )
    assert offenders(text, ["0.731", "reproduced", "None of them", "—"]) == []
