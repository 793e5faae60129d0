"""Every page of the built book, opened in headless Chromium as a reader would: the page is the product.

Each page fails on raw Markdown table text, progress-bar, traceback or stderr text in an output, an image that did not
load, a table wider than the box that shows it at 1,280 px (the nearest ancestor that scrolls or clips, such as the
``overflow: auto`` ``div.output`` myst-nb wraps around every output, else the article: a table wider than that box
is clipped and scrolls inside it), a page that scrolls sideways,
maths that MathJax did not render (or rendered as an error), unresolved ``{glue`` text, a broken internal link or
anchor, a footer that does not name the book's version and commit, and any console error. A full-page screenshot of
each page lands in ``_build/screenshots/``, with a JSON record of what was checked. The PDF of ``make pdf`` is checked
with ``pdftotext``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path
from urllib.parse import unquote, urldefrag, urljoin, urlparse

import pytest

from bookrelease import release
from lib.core.paths import build_dir
from tests.browser.conftest import BROWSER

pytestmark = pytest.mark.browser

HTML = build_dir() / "html"
SCREENSHOTS = build_dir() / "screenshots"
PDF = build_dir() / "pdf" / "book.pdf"
SKIP_DIRS = {"_static", "_sources", "_images", "_downloads", "mathjax", "sources"}


def book_pages() -> list[str]:
    """Every HTML page of the build (relative paths), or a placeholder that fails when there is no build."""
    if not HTML.is_dir():
        return ["index.html"]
    pages = [p.relative_to(HTML).as_posix() for p in HTML.rglob("*.html")]
    return sorted(p for p in pages if not SKIP_DIRS & set(p.split("/")[:-1]))


RAW_TABLE = re.compile(r"\|\s*:?[-—–]{1,}:?\s*\|")
PROGRESS = re.compile(r"it/s\]|s/it\]|\d+%\|[█▏▎▍▌▋▊▉ #]*\||Traceback \(most recent call last\)")
#: A dataclass's generated repr left as a cell's output (a call's value the cell did not assign), e.g.
#: ``Work(chapter='annulus', parts=((...`` (a summary a class writes for readers, ``SchurForm(n=72, blocks=38 ...)``,
#: is not one: its first field is not a quoted string, a tuple or a list).
OBJECT_REPR = re.compile(r"^\s*[A-Z]\w*\(\w+=['\"(\[]")
#: Every page's footer: the book's version and the commit it was built from (``bookrelease.release``).
RELEASE = re.compile(
    rf"Version {re.escape(release.version())} · built from "
    r"(commit [0-9a-f]{7}( with uncommitted changes)?|an unknown commit)"
)
RAW_TEX = re.compile(r"\\\(|\\\)|\\\[|\\frac|\\mathrm|\$\$")

INSPECT = """async () => {
  const article = document.querySelector("article.bd-article") || document.querySelector("main") || document.body;
  const clone = article.cloneNode(true);
  clone.querySelectorAll("pre, code, script, style, mjx-container, .highlight, .math").forEach(e => e.remove());
  return {
    title: (document.querySelector("h1") || {innerText: ""}).innerText,
    text: clone.textContent,
    outputs: [...document.querySelectorAll(".cell_output")].map(e => e.textContent),
    stderr: document.querySelectorAll(".output.stderr, .output.traceback, .output.error").length,
    images: [...document.images].map(i => ({src: i.getAttribute("src"), ok: i.complete && i.naturalWidth > 0})),
    math: document.querySelectorAll(".math").length,
    mathjax: typeof window.MathJax !== "undefined",
    rendered: document.querySelectorAll("mjx-container").length,
    math_errors: document.querySelectorAll("mjx-merror, [data-mjx-error]").length,
    tables: document.querySelectorAll("article table").length,
    wide_tables: [...document.querySelectorAll("article table")]
      .filter(t => {
        let box = t.parentElement;
        while (box && box !== article && getComputedStyle(box).overflowX === "visible") { box = box.parentElement; }
        box = box || article;
        const scrolls = box !== article && box.scrollWidth > box.clientWidth + 1;
        return t.getBoundingClientRect().width > box.clientWidth + 1 || scrolls;
      })
      .map(t => (t.querySelector("caption") || t.querySelector("th") || {textContent: "a table"}).textContent.trim()),
    page_scrolls: document.documentElement.scrollWidth > window.innerWidth + 1,
    links: [...document.querySelectorAll("a[href]")].map(a => a.getAttribute("href")),
    ids: [...document.querySelectorAll("[id]")].map(e => e.id),
    release: (document.querySelector("footer .book-release") || {textContent: ""}).textContent.trim(),
  };
}"""


@cache
def anchors_of(path: Path) -> frozenset[str]:
    """Every ``id``/``name`` in an HTML file."""
    return frozenset(re.findall(r'\b(?:id|name)="([^"]+)"', path.read_text(errors="replace")))


def broken_links(page: str, base_url: str, links: list[str], ids: list[str]) -> list[str]:
    """Internal links of ``page`` whose file or anchor does not exist in the build."""
    broken = []
    page_url = f"{base_url}/{page}"
    for href in links:
        if re.match(r"^(https?:|mailto:|javascript:|data:)", href) and not href.startswith(base_url):
            continue
        target, fragment = urldefrag(urljoin(page_url, href))
        path = unquote(urlparse(target).path).lstrip("/")
        file = HTML / (path or "index.html")
        if file.is_dir():
            file = file / "index.html"
        if not file.is_file():
            broken.append(f"{href} (no file {file.relative_to(HTML)})")
        elif fragment and fragment not in (set(ids) if file == HTML / page else anchors_of(file)):
            broken.append(f"{href} (no anchor #{fragment} in {file.relative_to(HTML)})")
    return broken


@pytest.mark.parametrize("page", book_pages())
def test_page_reads_as_a_book(page, browser, server, html_dir):
    redirect = re.search(r'http-equiv="Refresh" content="\d+; url=([^"]+)"', (html_dir / page).read_text(), re.I)
    if redirect:  # the root index.html only forwards to the first chapter
        target = (html_dir / page).parent / redirect.group(1)
        assert target.is_file(), f"{page} forwards to {redirect.group(1)}, which does not exist"
        return
    errors: list[str] = []
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    tab.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    tab.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
    tab.on("requestfailed", lambda r: errors.append(f"request failed: {r.url} ({r.failure})"))
    tab.on("response", lambda r: errors.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)
    tab.goto(f"{server}/{page}", wait_until="load")
    tab.evaluate(BROWSER.WAIT_FOR_IMAGES)
    tab.evaluate(BROWSER.WAIT_FOR_MATHJAX)
    info = tab.evaluate(INSPECT)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shot = SCREENSHOTS / (page.replace("/", "__").removesuffix(".html") + ".png")
    tab.screenshot(path=str(shot), full_page=True)
    tab.close()

    problems = list(errors)
    if RAW_TABLE.search(info["text"]):
        problems.append(f"raw Markdown table text: …{RAW_TABLE.search(info['text']).group(0)}…")
    if "{glue" in info["text"]:
        problems.append("unresolved {glue …} text")
    if info["stderr"]:
        problems.append(f"{info['stderr']} stderr/traceback output(s)")
    for text in info["outputs"]:
        if PROGRESS.search(text):
            problems.append(f"progress or traceback text in an output: {PROGRESS.search(text).group(0)!r}")
        if OBJECT_REPR.search(text):
            problems.append(f"an object's repr as an output: {text.strip()[:60]!r}")
    problems += [f"image did not load: {img['src']}" for img in info["images"] if not img["ok"]]
    problems += [
        f"table wider than the box that shows it (scrolls or is clipped): {t[:80]!r}" for t in info["wide_tables"]
    ]
    if info["page_scrolls"]:
        problems.append("the page scrolls horizontally at 1,280 px")
    if info["math"]:
        if not info["mathjax"]:
            problems.append(f"{info['math']} maths elements but no MathJax")
        elif info["rendered"] == 0:
            problems.append(f"{info['math']} maths elements and nothing rendered by MathJax")
        if info["math_errors"]:
            problems.append(f"{info['math_errors']} MathJax error(s)")
    problems += [f"broken link {b}" for b in broken_links(page, server, info["links"], info["ids"])]
    if not RELEASE.fullmatch(info["release"]):
        problems.append(f"footer does not name the version and commit: {info['release']!r}")

    record = {
        "page": page,
        "title": info["title"].strip(),
        "tables": info["tables"],
        "images": len(info["images"]),
        "maths": info["math"],
        "maths_rendered": info["rendered"],
        "links": len(info["links"]),
        "problems": problems,
        "screenshot": shot.name,
    }
    (SCREENSHOTS / (shot.stem + ".json")).write_text(json.dumps(record, indent=1) + "\n")
    assert not problems, f"{page}:\n  " + "\n  ".join(problems)


def test_pdf_of_the_whole_book():
    """``make pdf`` printed the whole book: chapter titles, figures, rendered maths, no raw tables."""
    if BROWSER.chromium_executable() is None:
        pytest.skip(f"no Chromium: install Debian's '{BROWSER.CHROMIUM_PACKAGE}' package to print the PDF")
    if shutil.which("pdftotext") is None:
        pytest.skip("no pdftotext: install Debian's 'poppler-utils' package")
    if not PDF.is_file():
        pytest.fail(f"{PDF} does not exist: make pdf")
    text = subprocess.run(["pdftotext", "-layout", str(PDF), "-"], capture_output=True, text=True, check=True).stdout
    info = subprocess.run(["pdfinfo", str(PDF)], capture_output=True, text=True, check=True).stdout
    pages = int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))
    titles = [t for t in _chapter_titles() if t]
    flat = re.sub(r"\s+", " ", text)
    missing = [t for t in titles if re.sub(r"\s+", " ", t) not in flat]
    images = subprocess.run(["pdfimages", "-list", str(PDF)], capture_output=True, text=True, check=True).stdout
    n_images = max(0, len(images.strip().splitlines()) - 2)
    figures = sum(len(re.findall(r"<img ", p.read_text())) for p in (HTML / "book").glob("*.html"))
    assert pages >= 20, f"the PDF has {pages} pages"
    assert not missing, f"chapter titles missing from the PDF: {missing}"
    assert n_images >= figures * 0.9, f"the PDF holds {n_images} images, the HTML book {figures}"
    assert not RAW_TEX.search(text), f"raw TeX in the PDF: {RAW_TEX.search(text).group(0)}"
    assert not RAW_TABLE.search(text), "raw Markdown table text in the PDF"
    assert "{glue" not in text


def _chapter_titles() -> list[str]:
    """The first heading of every chapter page of the HTML build."""
    titles = []
    for page in sorted((HTML / "book").glob("*.html")):
        match = re.search(r"<h1[^>]*>(.*?)</h1>", page.read_text(), re.S)
        if match:
            title = re.sub(r"<[^>]+>", "", match.group(1)).replace("#", "").strip()
            titles.append(re.sub(r"\s+", " ", title.replace("¶", "")).strip())
    return titles
