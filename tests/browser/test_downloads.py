"""What the book promised, in the built HTML: the appendix's runtime table (``bookrelease.costs``) and the
downloads (``bookrelease.downloads``) linked from the appendix and the scorecard, each resolving to a non-empty file of
its kind."""

from __future__ import annotations

import csv
import io
import json
import urllib.request
from urllib.parse import urljoin

import pytest

from bookrelease import costs
from bookrelease.downloads import CLAIMS, PROFILES, SCORECARD
from bookrun.manifest import load_manifest
from lib.core.paths import REPO_ROOT
from lib.core.profiles_csv import PROFILE_COLUMNS
from lib.core.scorecard_csv import CSV_COLUMNS

pytestmark = pytest.mark.browser

READ = """() => ({
  tables: [...document.querySelectorAll("article table")].map(t => ({
    head: [...t.querySelectorAll("thead th")].map(c => c.textContent.trim()),
    rows: [...t.querySelectorAll("tbody tr")].map(r => [...r.querySelectorAll("td")].map(c => c.textContent.trim())),
    visible: t.getBoundingClientRect().width > 0,
  })),
  downloads: [...document.querySelectorAll("article a.download")].map(a => a.getAttribute("href")),
})"""


def _read(browser, url: str) -> dict:
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    tab.goto(url, wait_until="load")
    info = tab.evaluate(READ)
    tab.close()
    return info


def test_the_appendix_shows_each_chapters_cost(browser, server):
    info = _read(browser, f"{server}/book/reproducibility.html")
    head = ["chapter", "cold: models trained", "warm: models cached", "the cold run computed"]
    found = [t for t in info["tables"] if t["head"][:4] == head]
    assert len(found) == 1, f"no runtime table on the appendix (tables: {[t['head'] for t in info['tables']]})"
    table = found[0]
    assert table["visible"]
    titles = costs.chapter_titles(load_manifest(REPO_ROOT / "book"), load_manifest(REPO_ROOT / "book"))
    assert sorted(r[0] for r in table["rows"][:-1]) == sorted(titles.values())
    assert table["rows"][-1][0] == "total"
    for row in table["rows"][:-1]:  # a time, or the statement that none is on record
        assert row[1].endswith((" s", " min")) or row[3] == "no cold run on record", row


@pytest.mark.parametrize("page", ["book/reproducibility.html", "book/scorecard.html"])
def test_each_download_resolves_to_a_file_of_its_kind(browser, server, page):
    info = _read(browser, f"{server}/{page}")
    links = {href.rsplit("/", 1)[-1]: urljoin(f"{server}/{page}", href) for href in info["downloads"]}
    assert set(links) >= {CLAIMS, SCORECARD, PROFILES}, f"{page} offers {sorted(links)}"
    body = {name: urllib.request.urlopen(url).read() for name, url in links.items()}  # noqa: S310 - the local server
    assert all(body.values()), f"empty downloads: {[n for n, b in body.items() if not b]}"

    claims = json.loads(body[CLAIMS])
    assert claims and all({"id", "verdict"} <= set(r) for r in claims.values())
    scorecard = list(csv.reader(io.StringIO(body[SCORECARD].decode("utf-8"))))
    assert tuple(scorecard[0]) == CSV_COLUMNS and len(scorecard) == len(claims) + 1
    profiles = list(csv.reader(io.StringIO(body[PROFILES].decode("utf-8"))))
    assert tuple(profiles[0]) == PROFILE_COLUMNS and len(profiles) > 1
