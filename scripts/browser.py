#!/usr/bin/env python
"""Headless Chromium for the book: print the one-page HTML build to a PDF, and the launch settings the browser tests
share. Uses Debian's ``chromium`` package through Playwright (never a browser download).

Example::

    python scripts/browser.py _build/singlehtml/index.html _build/pdf/book.pdf
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

CHROMIUM_PACKAGE = "chromium"
# Flags for a sandbox-less root session on a closed network (no first-run, sync or component-update traffic).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: Resolves once MathJax has typeset the page (at once on a page without MathJax).
WAIT_FOR_MATHJAX = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) { await MathJax.startup.promise; }
}"""
#: Loads every image (lazy ones too) and resolves when each has loaded or failed.
WAIT_FOR_IMAGES = """async () => {
  document.querySelectorAll('img[loading="lazy"]').forEach(i => { i.loading = "eager"; });
  await Promise.all([...document.images].map(i => i.complete ? null
    : new Promise(resolve => { i.addEventListener("load", resolve); i.addEventListener("error", resolve); })));
}"""


def chromium_executable() -> str | None:
    """The system Chromium (``apt-get install chromium``), or None."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def launch(playwright):
    """A headless Chromium from the system package; raises naming the package when there is none."""
    executable = chromium_executable()
    if executable is None:
        raise RuntimeError(f"no Chromium found: install Debian's '{CHROMIUM_PACKAGE}' package")
    return playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)


def print_pdf(page_path: Path, out: Path) -> int:
    """Print ``page_path`` (an HTML file) to ``out`` as A4 with backgrounds, after MathJax and images are done.
    Written through a temporary file and a rename; returns the PDF's size in bytes."""
    from playwright.sync_api import sync_playwright

    page_path, out = Path(page_path).resolve(), Path(out).resolve()
    if not page_path.is_file():
        raise FileNotFoundError(f"{page_path} does not exist: build the one-page HTML first (make pdf)")
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    os.close(fd)
    try:
        with sync_playwright() as playwright:
            browser = launch(playwright)
            page = browser.new_page()
            page.goto(page_path.as_uri(), wait_until="load", timeout=120_000)
            page.evaluate(WAIT_FOR_IMAGES)
            page.evaluate(WAIT_FOR_MATHJAX)
            page.emulate_media(media="print")
            margin = {"top": "16mm", "bottom": "16mm", "left": "14mm", "right": "14mm"}
            page.pdf(path=tmp, format="A4", print_background=True, margin=margin)
            browser.close()
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return out.stat().st_size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Print the one-page HTML book to a PDF with headless Chromium.")
    parser.add_argument("page", type=Path, help="the HTML page to print (e.g. _build/singlehtml/index.html)")
    parser.add_argument("out", type=Path, help="the PDF to write (e.g. _build/pdf/book.pdf)")
    args = parser.parse_args(argv)
    try:
        size = print_pdf(args.page, args.out)
    except (RuntimeError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {args.out} ({size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
