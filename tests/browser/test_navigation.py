"""Every page of the built book can be navigated at 1,280 px: short enough, figures described and legible, no clipped
table.

Each page is opened once in headless Chromium (1,280 × 900) and measured twice: as first displayed (folded sections,
dropdowns and hidden cells closed) for its height, then with every fold opened for its figures and tables.

- **Height**: the page as first displayed is under ``MAX_HEIGHT`` px; secondary sections of a longer chapter are
  folded (``{dropdown}``, a ``hide-cell`` cell), its main line stays open.
- **Alt text**: every image of the article has an ``alt`` that says what it shows: a sentence of at least
  ``MIN_ALT_WORDS`` words, not a file name or a hash (Sphinx's default alt is the image's path).
- **No clipped table**: no table is wider than the box that shows it, the nearest ancestor that scrolls or clips
  (myst-nb wraps each output in an ``overflow: auto`` ``div.output``, pydata-sphinx-theme a table in
  ``.pst-scrollable-table-container``), else the article. A table inside such a box scrolls instead of widening the
  page, so comparing its width with the article's, as ``test_pages`` once did, misses it: the box is narrower than the
  article by the cell's margins.
- **Legible figures**: the book's figures are matplotlib PNGs at 100 dpi whose smallest text is ``MIN_FONT_PT``
  (``test_plots_draw_no_text_below_the_floor`` checks ``lib/plots``); a figure shown at a fraction ``s`` of its natural
  width draws that text ``MIN_FONT_PT × 100/72 × s`` CSS px tall. The rule: every image is shown at no less than
  ``MIN_SCALE`` of its natural width, so the smallest text stays at least about 6.7 px (8 pt at 60 %), and larger
  text (titles, axis labels at 9–10 pt) at 7.5–8.3 px. A figure drawn wider than the text column divided by
  ``MIN_SCALE`` (about 1,120 px beside the page's contents, 1,570 px without) must be redrawn with fewer panels per row.
"""

from __future__ import annotations

import re
from functools import cache

import pytest

from lib.core.paths import REPO_ROOT
from tests.browser.conftest import BROWSER
from tests.browser.test_pages import HTML, book_pages

pytestmark = pytest.mark.browser

MAX_HEIGHT = 8000  #: px, the page as first displayed at 1,280 px wide
MIN_ALT_WORDS = 4
MIN_SCALE = 0.6  #: displayed width / natural width of a figure
MIN_FONT_PT = 8  #: the smallest text lib/plots draws
FILE_NAME = re.compile(r"\.(png|jpe?g|svg|gif|webp)\b|[0-9a-f]{16,}|^\W*$", re.I)

#: Every fold of the page: <details> (sphinx-design dropdowns, myst-nb hidden cells, togglebutton admonitions).
OPEN_FOLDS = """async () => {
  document.querySelectorAll("details").forEach(d => { d.open = true; });
  document.querySelectorAll("button.toggle-button").forEach(b => {
    if (b.classList.contains("toggle-button-hidden")) { b.click(); }
  });
  await new Promise(resolve => setTimeout(resolve, 50));
}"""

MEASURE = """() => {
  const article = document.querySelector("article.bd-article") || document.querySelector("main") || document.body;
  const clipper = (element) => {
    for (let e = element.parentElement; e && e !== article; e = e.parentElement) {
      if (getComputedStyle(e).overflowX !== "visible") { return e; }
    }
    return article;
  };
  const name = (t) => (t.querySelector("caption") || t.querySelector("th") || {textContent: "a table"})
    .textContent.trim().slice(0, 80);
  return {
    height: document.documentElement.scrollHeight,
    images: [...article.querySelectorAll("img")].map(i => ({
      src: i.getAttribute("src"), alt: (i.getAttribute("alt") || "").trim(),
      natural: i.naturalWidth, shown: i.getBoundingClientRect().width,
    })),
    clipped: [...article.querySelectorAll("table")].map(t => {
      const box = clipper(t);
      const scrolls = box === article ? 0 : box.scrollWidth - box.clientWidth;
      const over = Math.max(t.getBoundingClientRect().width - box.clientWidth, scrolls);
      return {table: name(t), over: Math.round(over), box: box.className || box.tagName};
    }).filter(c => c.over > 1),
  };
}"""


def _is_redirect(page: str) -> bool:
    return bool(re.search(r'http-equiv="Refresh"', (HTML / page).read_text(errors="replace"), re.I))


PAGES = [p for p in book_pages() if not (HTML / p).is_file() or not _is_redirect(p)]


@pytest.fixture(scope="session")
def measured(browser, server, html_dir):
    """page -> (as first displayed, with every fold open), each measured once per session."""

    @cache
    def measure(page: str) -> tuple[dict, dict]:
        tab = browser.new_page(viewport={"width": 1280, "height": 900})
        try:
            tab.goto(f"{server}/{page}", wait_until="load")
            tab.evaluate(BROWSER.WAIT_FOR_IMAGES)
            tab.evaluate(BROWSER.WAIT_FOR_MATHJAX)
            closed = tab.evaluate(MEASURE)
            tab.evaluate(OPEN_FOLDS)
            tab.evaluate(BROWSER.WAIT_FOR_IMAGES)
            return closed, tab.evaluate(MEASURE)
        finally:
            tab.close()

    return measure


@pytest.mark.parametrize("page", PAGES)
def test_page_is_short_as_first_displayed(page, measured):
    closed, _ = measured(page)
    assert closed["height"] < MAX_HEIGHT, (
        f"{page} is {closed['height']} px tall at 1,280 px wide (limit {MAX_HEIGHT}): fold its secondary sections"
    )


@pytest.mark.parametrize("page", PAGES)
def test_every_image_says_what_it_shows(page, measured):
    _, opened = measured(page)
    bad = [
        f"{img['src']}: alt {img['alt']!r}"
        for img in opened["images"]
        if FILE_NAME.search(img["alt"]) or len(img["alt"].split()) < MIN_ALT_WORDS
    ]
    assert not bad, f"{page}: images without a descriptive alt text:\n  " + "\n  ".join(bad)


@pytest.mark.parametrize("page", PAGES)
def test_no_table_is_clipped(page, measured):
    _, opened = measured(page)
    assert not opened["clipped"], f"{page}: tables wider than the box that shows them:\n  " + "\n  ".join(
        f"{c['table']!r}: {c['over']} px clipped by {c['box']!r}" for c in opened["clipped"]
    )


@pytest.mark.parametrize("page", PAGES)
def test_figures_are_not_shrunk_below_legibility(page, measured):
    _, opened = measured(page)
    small = [
        f"{img['alt'][:60]!r} ({img['src'].rsplit('/', 1)[-1][-16:]}): {img['natural']} px shown at "
        f"{img['shown']:.0f} px ({img['shown'] / img['natural']:.0%})"
        for img in opened["images"]
        if img["natural"] and img["shown"] < MIN_SCALE * img["natural"]
    ]
    assert not small, (
        f"{page}: figures shown under {MIN_SCALE:.0%} of their natural width (their {MIN_FONT_PT}-pt text falls "
        f"under {MIN_FONT_PT * 100 / 72 * MIN_SCALE:.1f} px): draw fewer panels per row\n  " + "\n  ".join(small)
    )


FONT_SIZE = re.compile(r"\b(?:fontsize|labelsize|size)\s*=\s*([0-9]+(?:\.[0-9]+)?)\b")


def test_plots_draw_no_text_below_the_floor():
    """No explicit font size in ``lib/plots`` under ``MIN_FONT_PT`` (the premise of the legibility rule above).

    ``scorecard.py`` is left out: its figures are drawn at the page's width and shown at their natural size (7 pt is
    9.7 px there).
    """
    small = [
        f"{path.relative_to(REPO_ROOT)}:{n}: {line.strip()}"
        for path in sorted((REPO_ROOT / "lib" / "plots").glob("*.py"))
        if path.name != "scorecard.py"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        for match in FONT_SIZE.finditer(line)
        if float(match.group(1)) < MIN_FONT_PT
    ]
    assert not small, f"text under {MIN_FONT_PT} pt in the figures:\n  " + "\n  ".join(small)
