"""Sphinx extension for the book's pages (enabled in ``_config.yml``, ``sphinx: local_extensions``).

- Every chapter page's download menu offers the executed notebook and its MyST source. The book is built from the
  executed notebooks, so the theme's "source file" is the executed ``.ipynb``; this adds the chapter's MyST source
  (``book/<source>.md`` named in ``book/chapters.yml``), copied into ``_build/html/_myst/``, so a reader can run what
  they read.
- The *Reproducibility* page shows the arithmetic of the build it belongs to and what moved against the published
  reference (``bookrelease.provenance``).
- Every page's footer says which release of the book it is (version and commit, ``bookrelease.release``) and under
  which licences its text, figures and code are; the introduction says how to cite the book, from ``CITATION.cff``
  (``bookrelease.citation``).
- Pages open without console errors: the light theme is the default (pydata-sphinx-theme otherwise logs "invalid
  theme mode" on a first visit), a script added twice (sphinx-thebe's configuration) is kept once, and the page
  declares an empty icon instead of requesting a ``favicon.ico`` the book does not have.
"""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDER = "_myst"


def chapter_sources(book_dir: Path = ROOT / "book") -> dict[str, Path]:
    """Chapter stem -> its MyST source, from the execution manifest."""
    from bookrun.manifest import load_manifest

    return {stem: entry["source"] for stem, entry in load_manifest(book_dir).items()}


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
                "tooltip": "Download the chapter's MyST source (run it with python -m bookrun or papermill)",
                "icon": "fas fa-file-code",
                "label": "download-myst-button",
            },
        )


def clean_head(app, pagename, templatename, context, doctree):
    """Light mode by default, each script once (same file and body), an empty icon (browsers request no favicon)."""
    context["default_mode"] = "light"  # the template's first-visit mode (sphinx-book-theme has no option for it)
    scripts, seen = [], set()
    for script in context.get("script_files", []):
        key = (getattr(script, "filename", None) or "", (getattr(script, "attributes", None) or {}).get("body"))
        if key not in seen:
            seen.add(key)
            scripts.append(script)
    context["script_files"] = scripts
    context["metatags"] = context.get("metatags", "") + '\n<link rel="icon" href="data:,">'


def build_record(app, docname, source):
    """The *Reproducibility* page: the build's arithmetic and its comparison with the published reference, read from
    ``_build`` when the page is built (``bookrelease.provenance``)."""
    if docname.rsplit("/", 1)[-1] != "reproducibility":
        return
    from bookrelease.provenance import MARKER, section
    from lib.core.paths import build_dir

    source[0] = source[0].replace(MARKER, section(build_dir()))


def build_standing(app, docname, source):
    """The findings page's first paragraph after its introduction: this build against the published reference, in
    the appendix's words (``bookrelease.provenance.standing``). The page is an executed notebook, so the paragraph goes
    into its JSON as a JSON string's content."""
    if docname.rsplit("/", 1)[-1] != "findings":
        return
    import json

    from bookrelease.provenance import STANDING_MARKER, standing
    from lib.core.paths import build_dir

    source[0] = source[0].replace(STANDING_MARKER, json.dumps(standing(build_dir()))[1:-1])


def verdict_changes(app, docname, source):
    """The page *Changes to the verdicts*: every change of a published verdict (``bookrelease.changes``)."""
    if docname.rsplit("/", 1)[-1] != "changes":
        return
    from bookrelease.changes import MARKER, section

    source[0] = source[0].replace(MARKER, section())


def how_to_cite(app, docname, source):
    """The introduction's *How to cite* section, rendered from ``CITATION.cff`` (``bookrelease.citation``)."""
    if docname.rsplit("/", 1)[-1] != "intro":
        return
    from bookrelease.citation import MARKER, section

    source[0] = source[0].replace(MARKER, section())


def release_footer(app, config):
    """Every page's footer: the book's version, the commit it was built from, and the licences (``bookrelease.release``;
    the theme shows its ``extra_footer`` option below the author). A theme option, so that Sphinx writes every page
    again when the footer changes (a new commit), not only the pages whose source changed."""
    from bookrelease.release import footer_html, record

    config.html_theme_options = {**(config.html_theme_options or {}), "extra_footer": footer_html(record())}


#: Pages whose tables need the whole width: the theme's right-hand sidebar (the page's contents) is left out.
WIDE_PAGES = ("scorecard", "copy_task", "paper_a_open")


def wide_pages(app, pagename, templatename, context, doctree):
    """No secondary sidebar on :data:`WIDE_PAGES`, and their text column takes its place (the theme caps it at 60em),
    so their tables fit a 1,280 px window without scrolling."""
    if pagename.rsplit("/", 1)[-1] in WIDE_PAGES:
        context["secondary_sidebar_items"] = []
        wide = "body .bd-main .bd-content .bd-article-container { max-width: 100%; }"
        context["metatags"] = context.get("metatags", "") + f"\n<style>{wide}</style>"


#: Pages whose text is read from ``_build``, ``published/`` or ``CITATION.cff`` when the book is rendered (the hooks
#: above): Sphinx must read them again on every build, since their MyST source does not change when that data does.
DATA_PAGES = ("reproducibility", "changes", "intro", "findings")


def reread_data_pages(app, env, added, changed, removed):
    """Every build reads :data:`DATA_PAGES` again (their text comes from data, not from their source)."""
    return [doc for doc in env.found_docs if doc.rsplit("/", 1)[-1] in DATA_PAGES]


def setup(app):
    app.connect("config-inited", release_footer)
    app.connect("source-read", build_record)
    app.connect("source-read", build_standing)
    app.connect("source-read", verdict_changes)
    app.connect("source-read", how_to_cite)
    app.connect("env-get-outdated", reread_data_pages)
    app.connect("html-page-context", add_downloads, priority=502)  # after the theme builds its buttons (501)
    app.connect("html-page-context", clean_head, priority=900)
    app.connect("html-page-context", wide_pages, priority=901)  # after the theme sets the sidebar's items (500)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
