"""Sphinx extension: every chapter page's download menu offers the executed notebook and its MyST source.

The book is built from the executed notebooks, so the theme's "source file" is the executed ``.ipynb``; this adds the
chapter's MyST source (``book/<source>.md`` named in ``book/chapters.yml``), copied into ``_build/html/_myst/``, so a
reader can run what they read. Enabled in ``_config.yml`` (``sphinx: local_extensions``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
FOLDER = "_myst"


def chapter_sources(book_dir: Path = ROOT / "book") -> dict[str, Path]:
    """Chapter stem -> its MyST source, from the execution manifest."""
    manifest = yaml.safe_load((book_dir / "chapters.yml").read_text()) or {}
    return {stem: book_dir / (entry or {}).get("source", f"{stem}.md") for stem, entry in manifest.items()}


def add_downloads(app, pagename, templatename, context, doctree):
    source = chapter_sources().get(pagename.rsplit("/", 1)[-1])
    if source is None or not source.is_file():
        return
    target = Path(app.outdir) / FOLDER / source.name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    for group in context.get("header_buttons", []):
        if group.get("label") != "download-buttons":
            continue
        for button in group["buttons"]:
            if button.get("label") == "download-source-button" and button.get("text") == ".ipynb":
                button["text"] = ".ipynb (executed)"
                button["tooltip"] = "Download the executed notebook"
        group["buttons"].insert(
            1,
            {
                "type": "link",
                "url": f"{context['pathto'](FOLDER, 1)}/{source.name}",
                "text": ".md (MyST source)",
                "tooltip": "Download the chapter's MyST source (run it with scripts/execute_book.py or papermill)",
                "icon": "fas fa-file-code",
                "label": "download-myst-button",
            },
        )


def setup(app):
    app.connect("html-page-context", add_downloads, priority=502)  # after the theme builds its buttons (501)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
