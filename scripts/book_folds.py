"""Sphinx extension (``_config.yml``, ``sphinx: local_extensions``): the style of folded sections, ``book/_static``.

Long chapters fold their secondary sections (``{dropdown}``, cells tagged ``hide-cell``) so that a page as first
displayed stays short (``tests/browser/test_navigation.py``); ``folds.css`` keeps the hidden code cells' toggles
compact, bounds the parameters cell, sets tables a little smaller so that they fit the text column at 1,280 px, and
prints every dropdown open, so the PDF still holds every figure.
"""

from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).resolve().parent.parent / "book" / "_static"


def add_static(app, config):
    if str(STATIC) not in config.html_static_path:
        config.html_static_path.append(str(STATIC))


def setup(app):
    app.connect("config-inited", add_static)
    app.add_css_file("folds.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
