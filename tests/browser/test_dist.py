"""The archive of ``make dist`` (``bookrelease.dist``), built from the current build into a temporary folder and
unpacked: it holds what READ-ME-FIRST.txt says, the same bytes twice, and its ``index.html`` and a chapter open in
headless Chromium with the network off, maths rendered by the MathJax inside it, every figure loaded, nothing fetched
from outside and no link leaving the archive but the papers' references and the licence (:data:`ALLOWED_HOSTS`).
Screenshots of both pages land in ``_build/screenshots/dist__*.png``."""

from __future__ import annotations

import csv
import io
import json
import re
import tarfile
import tomllib
from collections.abc import Iterable
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import pytest

from bookrelease import dist
from lib.core.paths import REPO_ROOT, build_dir
from tests.browser.conftest import BROWSER

#: Where a page may link outside the archive ({host: path prefix}; a host's subdomains too). The papers' references:
#: both papers, and the Hamiltonian-network paper the second builds on, are arXiv preprints (``book/references.bib``),
#: and a journal reference resolves through doi.org; the bibliography carries no url or doi field today, so the pages
#: link to neither yet. And the licence: CC BY 4.0 asks that a copy name the licence by its text or its URI, which
#: every page's footer links (``bookrelease.release.CC_BY``; its text is in LICENSE-BOOK, in the archive too).
ALLOWED_HOSTS = {"arxiv.org": "/", "doi.org": "/", "creativecommons.org": "/licenses/"}
#: Top-level names of the archive's folder, LICENSE files of the repository's root aside.
TOP = {"index.html", "html", "book.pdf", "claims.json", "results.json", "provenance.json", "scorecard.csv",
       "READ-ME-FIRST.txt"}  # fmt: skip
#: (page opened, page shown after its redirect): the archive's index, and a chapter with figures and maths.
PAGES = [("index.html", "html/book/intro.html"), ("html/book/annulus.html", "html/book/annulus.html")]
LOCAL = ("file:", "data:", "blob:", "about:")

INSPECT = """() => ({
  math: document.querySelectorAll(".math").length,
  unrendered: document.querySelectorAll(".math:not(:has(mjx-container))").length,
  rendered: document.querySelectorAll("mjx-container").length,
  math_errors: document.querySelectorAll("mjx-merror, [data-mjx-error]").length,
  images: [...document.images].map(i => ({src: i.getAttribute("src"), ok: i.complete && i.naturalWidth > 0})),
  links: [...document.querySelectorAll("[href], [src]")].map(e => e.getAttribute("href") ?? e.getAttribute("src")),
})"""


def outside_links(page: Path, links: Iterable[str], root: Path) -> list[str]:
    """The links of ``page`` (a file under ``root``) that do not stay in ``root``: a web address off the hosts and
    paths of :data:`ALLOWED_HOSTS`, any other scheme but ``data:``, a host-relative ``//host/…``, and a path that
    resolves outside ``root`` or to no file there (a folder counts when it holds ``index.html``)."""
    root, found = root.resolve(), []
    for href in (h.strip() for h in links):
        if not href or href.startswith(("#", "data:")):
            continue
        url = urlparse(urljoin(page.resolve().as_uri(), href))
        if url.scheme in ("http", "https"):
            host = url.hostname or ""
            allowed = [p for h, p in ALLOWED_HOSTS.items() if host == h or host.endswith("." + h)]
            if not any(url.path.startswith(p) for p in allowed):
                found.append(f"{href} (leaves the archive for {host}{url.path})")
        elif url.scheme != "file" or url.netloc not in ("", "localhost"):
            found.append(f"{href} (leaves the archive: {url.scheme}://{url.netloc})")
        elif not (target := Path(unquote(url.path)).resolve()).is_relative_to(root):
            found.append(f"{href} (outside the archive: {target})")
        elif not (target.is_file() or (target / "index.html").is_file()):
            found.append(f"{href} (no file {target.relative_to(root)} in the archive)")
    return found


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.links += [v for k, v in attrs if k in ("href", "src") and v is not None]


def static_links(path: Path) -> list[str]:
    """Every ``href``/``src`` of an HTML file, or every ``url(…)`` of a stylesheet."""
    text = path.read_text(errors="replace")
    if path.suffix == ".css":
        return [u for u in re.findall(r"""url\(\s*['"]?([^'")]+)""", text) if not u.startswith("data:")]
    parser = _Links()
    parser.feed(text)
    return parser.links


def open_offline(browser, uri: str, shown: str, screenshot: Path | None = None) -> dict:
    """Open ``uri`` in a context with the network off, wait for the page ``shown`` (after any redirect), its images
    and MathJax; return :data:`INSPECT`'s record with ``url``, ``outside`` (requests that left ``file:``) and
    ``errors`` (console errors, page errors, failed requests)."""
    context = browser.new_context(offline=True, viewport={"width": 1280, "height": 900})
    outside, errors = [], []
    context.on("request", lambda r: None if r.url.startswith(LOCAL) else outside.append(r.url))
    tab = context.new_page()
    tab.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    tab.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
    tab.on("requestfailed", lambda r: errors.append(f"request failed: {r.url} ({r.failure})"))
    try:
        tab.goto(uri, wait_until="load")
        tab.wait_for_url(lambda url: url == shown, timeout=15_000)
        tab.wait_for_load_state("load")
        tab.evaluate(BROWSER.WAIT_FOR_IMAGES)
        tab.evaluate(BROWSER.WAIT_FOR_MATHJAX)
        info = tab.evaluate(INSPECT)
        if screenshot is not None:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            tab.screenshot(path=str(screenshot), full_page=True)
        return {**info, "url": tab.url, "outside": outside, "errors": errors}
    finally:
        context.close()


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Path:
    if BROWSER.chromium_executable() is None:
        pytest.skip(f"no Chromium: the archive holds the PDF, made by Debian's '{BROWSER.CHROMIUM_PACKAGE}' package")
    try:
        return dist.build_archive(tmp_path_factory.mktemp("dist"))
    except dist.DistError as exc:
        pytest.fail(f"{exc}: build the book and its PDF first (make html pdf)")


@pytest.fixture(scope="module")
def unpacked(archive, tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("unpacked")
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    return dest / archive.name.removesuffix(".tar.gz")


@pytest.mark.browser
def test_archive_holds_the_readable_book(archive, unpacked):
    meta = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    folder = f"{meta['name']}-{meta['version']}"
    assert archive.name == f"{folder}.tar.gz"
    with tarfile.open(archive) as tar:
        infos = tar.getmembers()
    names = [m.name for m in infos]
    assert all(n == folder or n.startswith(folder + "/") for n in names), "a member outside the archive's folder"
    assert names == sorted(names, key=lambda n: n.split("/")), "members not in a fixed (sorted) order"
    assert {(m.uid, m.gid, m.mode) for m in infos} <= {(0, 0, 0o644), (0, 0, 0o755)}
    licences = {p.name for p in REPO_ROOT.glob("LICEN[CS]E*") if p.is_file()}
    assert {p.name for p in unpacked.iterdir()} == TOP | licences
    unwanted = [n for n in names if re.search(r"/\.|cache|screenshots|doctrees|executed|checkpoints", n)]
    assert not unwanted, f"build leftovers in the archive: {unwanted[:5]}"
    build = build_dir()
    html = {p.relative_to(build / "html") for p in (build / "html").rglob("*") if p.is_file()}
    packed = {p.relative_to(unpacked / "html") for p in (unpacked / "html").rglob("*") if p.is_file()}
    assert packed == {p for p in html if not p.name.startswith(".")}, "the HTML in the archive is not the build's"
    for name in ("claims.json", "results.json", "provenance.json"):
        assert json.loads((unpacked / name).read_text()) == json.loads((build / name).read_text()), name
    assert (unpacked / "book.pdf").read_bytes() == (build / "pdf" / "book.pdf").read_bytes()
    claims = json.loads((build / "claims.json").read_text())
    rows = list(csv.DictReader(io.StringIO((unpacked / "scorecard.csv").read_text(encoding="utf-8"))))
    assert sorted(r["id"] for r in rows) == sorted(claims), "scorecard.csv is not one row per claim"
    assert all(r["verdict"] == claims[r["id"]]["verdict"] and r["paper"] == claims[r["id"]]["paper"] for r in rows)
    assert (build / "scorecard.csv").read_bytes() == (unpacked / "scorecard.csv").read_bytes()
    readme = (unpacked / "READ-ME-FIRST.txt").read_text()
    assert meta["version"] in readme and "index.html" in readme and "offline" in readme
    assert all(name in readme for name in TOP | licences), "READ-ME-FIRST.txt does not name every file"


@pytest.mark.browser
def test_archive_is_the_same_bytes_twice(archive, tmp_path):
    assert dist.build_archive(tmp_path).read_bytes() == archive.read_bytes()


@pytest.mark.browser
def test_no_page_of_the_archive_links_outside_it(unpacked):
    """Every page and stylesheet, read as text (the theme's Jinja templates in ``_static/`` are no pages)."""
    pages = [p for p in sorted(unpacked.rglob("*.html")) if "_static" not in p.relative_to(unpacked).parts]
    files = pages + sorted(unpacked.rglob("*.css"))
    assert len(files) > 20
    found = [f"{p.relative_to(unpacked)}: {o}" for p in files for o in outside_links(p, static_links(p), unpacked)]
    assert not found, "links that leave the archive:\n  " + "\n  ".join(found[:20])


@pytest.mark.browser
@pytest.mark.parametrize(("page", "shown"), PAGES)
def test_page_opens_offline_from_the_unpacked_archive(page, shown, unpacked, browser):
    expected = (unpacked / shown).as_uri()
    shot = build_dir() / "screenshots" / f"dist__{Path(shown).stem}.png"
    info = open_offline(browser, (unpacked / page).as_uri(), expected, screenshot=shot)
    assert info["url"] == expected
    assert not info["outside"], f"requests that left the archive: {info['outside']}"
    assert not info["errors"], "\n".join(info["errors"])
    assert info["math"] > 0 and info["unrendered"] == 0, f"{info['unrendered']} of {info['math']} maths not rendered"
    assert info["math_errors"] == 0
    images = len(re.findall(r"<img ", (unpacked / shown).read_text()))
    assert len(info["images"]) == images and all(i["ok"] for i in info["images"]), info["images"]
    if shown != PAGES[0][1]:
        assert images > 0, f"{shown} has no figure to check"
    assert not outside_links(unpacked / shown, info["links"], unpacked)


@pytest.mark.browser
def test_offline_check_catches_a_page_that_needs_the_network(tmp_path, browser):
    page = tmp_path / "page.html"
    page.write_text('<p class="math">\\(x\\)</p><img src="https://example.com/figure.png">'
                    '<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js"></script>')  # fmt: skip
    info = open_offline(browser, page.as_uri(), page.as_uri())
    assert "https://example.com/figure.png" in info["outside"] and len(info["outside"]) == 2
    assert info["unrendered"] == 1 and not info["images"][0]["ok"]


def test_link_checker_catches_links_that_leave_the_archive(tmp_path):
    root = tmp_path / "archive"
    (root / "sub").mkdir(parents=True)
    for name in ("page.html", "other.html", "sub/index.html"):
        (root / name).write_text("")
    (tmp_path / "outside.html").write_text("")
    kept = ["other.html", "other.html?v=1#top", "#here", "data:,", "sub/", "https://arxiv.org/abs/2606.18457",
            "https://doi.org/10.1038/nature12742", "http://export.arxiv.org/abs/2608.24700",
            "https://creativecommons.org/licenses/by/4.0/"]  # fmt: skip
    leaving = ["https://example.com/", "//cdn.jsdelivr.net/npm/mathjax.js", "https://arxiv.org.example.net/x",
               "../outside.html", "missing.html", "file:///etc/hostname", "mailto:someone@example.com",
               "javascript:void(0)", "https://creativecommons.org/about/"]  # fmt: skip
    found = outside_links(root / "page.html", kept + leaving, root)
    assert [f.split(" (")[0] for f in found] == leaving


def test_dist_names_what_the_build_lacks(tmp_path):
    with pytest.raises(dist.DistError, match=r"pdf/book\.pdf \(make pdf\).*mathjax/VERSION \(make html with npm"):
        dist.build_archive(tmp_path / "dist", build=tmp_path / "empty")
    assert not (tmp_path / "dist").exists()
