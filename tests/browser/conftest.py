"""A headless Chromium (Debian's ``chromium`` package, driven by Playwright) and a local server for ``_build/html``."""

from __future__ import annotations

import functools
import http.server
import importlib.util
import threading
from pathlib import Path

import pytest

from lib.core.paths import REPO_ROOT, build_dir


def _load_browser_module():
    """``scripts/browser.py``, the launch settings and PDF printer shared with ``make pdf``."""
    spec = importlib.util.spec_from_file_location("book_browser", REPO_ROOT / "scripts" / "browser.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BROWSER = _load_browser_module()


@pytest.fixture(scope="session")
def html_dir() -> Path:
    path = build_dir() / "html"
    if not (path / "index.html").is_file():
        pytest.fail(f"{path}/index.html does not exist: build the book first (make book)")
    return path


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass


@pytest.fixture(scope="session")
def server(html_dir):
    """Serve the built book on 127.0.0.1 (a free port) for the session; yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(html_dir))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="session")
def browser():
    if BROWSER.chromium_executable() is None:
        pytest.skip(
            f"no Chromium on this machine: install Debian's '{BROWSER.CHROMIUM_PACKAGE}' package "
            f"(apt-get install {BROWSER.CHROMIUM_PACKAGE}) to run the browser tests"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = BROWSER.launch(playwright)
        yield browser
        browser.close()
