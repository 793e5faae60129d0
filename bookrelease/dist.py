"""The built book as one readable archive: ``python -m bookrelease.dist`` (``make dist``).

Writes ``dist/<name>-<version>.tar.gz`` (the name and version of ``pyproject.toml``'s ``[project]``), one folder
``<name>-<version>/`` holding the rendered HTML (its ``index.html`` opens offline: MathJax, fonts and figures are in
it), the PDF of ``make pdf``, the build's ``claims.json``, ``results.json`` and ``provenance.json``, the scorecard as
CSV (``lib.core.scorecard_csv``; also written to ``_build/scorecard.csv``), the licence files at the repository's root
and ``READ-ME-FIRST.txt``, which says what each of them is. Nothing else of the build goes in (no model cache,
executed notebooks, doctrees or screenshots). The members are in a fixed order with fixed owners, modes and times, so
the same build gives the same bytes; the archive is written to a temporary file, then renamed.
"""

from __future__ import annotations

import argparse
import gzip
import html
import io
import json
import os
import re
import sys
import tarfile
import textwrap
from pathlib import Path

import yaml

from lib.core.paths import REPO_ROOT, atomic_write_bytes, build_dir, remove_stale_temporaries
from lib.core.scorecard_csv import CSV_COLUMNS, csv_text

from .release import project

#: What the archive's folder holds: (name in it, the file of the build or None when made here, what it is).
CONTENTS = (
    ("index.html", None, "opens the book: forwards to the first page in html/ (open this one)"),
    ("html/", "html", "the book as web pages, every chapter with its figures and maths (MathJax is inside)"),
    ("book.pdf", "pdf/book.pdf", "the whole book printed to one PDF"),
    ("claims.json", "claims.json", "every claim of the two papers: what it states, our value, the verdict and the "
     "inputs of that verdict, by claim id"),
    ("scorecard.csv", None, "the scorecard as a table, one row per claim (UTF-8, comma-separated; columns: "
     + ", ".join(CSV_COLUMNS) + "); link is the chapter page in html/book/ where the claim is computed"),
    ("results.json", "results.json", 'every number the book states, as "<chapter>::<name>": value'),
    ("provenance.json", "provenance.json", "the machine, libraries and arithmetic that computed the numbers"),
    ("READ-ME-FIRST.txt", None, "this file"),
)  # fmt: skip
#: The build's files a dist needs, and the make target that writes each.
NEEDS = {"html/index.html": "make html", "pdf/book.pdf": "make pdf", "claims.json": "make execute",
         "results.json": "make execute", "provenance.json": "make execute",
         "html/mathjax/VERSION": "make html with npm at hand: without it scripts/vendor_mathjax.sh makes the pages "
                                 "load MathJax from a CDN, and the archive would not render maths offline"}  # fmt: skip


class DistError(RuntimeError):
    """The build lacks what the archive holds; the message names the file and the make target that writes it."""


def archive_name(root: Path = REPO_ROOT) -> str:
    """``<name>-<version>.tar.gz``."""
    return "{}-{}.tar.gz".format(*project(root))


def _first_page(html: Path) -> str:
    """The page ``html/index.html`` forwards to (Sphinx's root page only redirects), relative to ``html/``."""
    found = re.search(r'http-equiv="Refresh" content="\d+;\s*url=([^"]+)"', (html / "index.html").read_text(), re.I)
    return found.group(1) if found else "index.html"


def _index(title: str, label: str, target: str) -> str:
    """The archive's ``index.html``: forwards to the book's first page, with a link for a browser that does not."""
    title = html.escape(title)
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Refresh" content="0; url={target}">\n<title>{title}</title>\n</head>\n'
            f'<body>\n<p><a href="{target}">Open the book</a>: {title} ({label}). What this folder holds: '
            f'READ-ME-FIRST.txt.</p>\n</body>\n</html>\n')  # fmt: skip


def _build_record(provenance: dict, version: str) -> str:
    """The paragraph on the build: the version and commit provenance.json records (``bookrelease.release``: ``version``,
    ``commit``, ``uncommitted_changes``), else that it records none; the arithmetic and libraries it computed with."""
    recorded, commit = provenance.get("version"), provenance.get("commit")
    if recorded:
        text = f"Version {recorded}, as provenance.json records it"
        text += "" if recorded == version else f" (pyproject.toml now says {version})"
    else:
        text = f"Version {version} (of pyproject.toml; provenance.json records no version)"
    if commit and commit != "unknown":
        dirty = " with uncommitted changes" if provenance.get("uncommitted_changes") else ""
        text += f", built from commit {commit}{dirty}. "
    else:
        text += "; provenance.json records no commit (the build ran outside a git checkout, or before it was "
        text += "recorded), so this archive names none. "
    if provenance.get("pinned"):
        pins = f" (pin set {provenance['pin_version']})" if provenance.get("pin_version") else ""
        text += f"Computed with the book's pinned arithmetic{pins}"
    else:
        text += "Computed with this machine's own arithmetic, not the book's pins (see the Reproducibility appendix)"
    versions = [("Python", provenance.get("python")), *sorted((provenance.get("versions") or {}).items())]
    computed = ", ".join(f"{k} {v}" for k, v in versions if v)
    return text + (f"; {computed}." if computed else ".")


def _readme(title: str, label: str, provenance: dict, licences: list[str]) -> str:
    """READ-ME-FIRST.txt: what the archive is, how to open it, each file, the version and commit, the licence."""
    rows = [(name, what) for name, _, what in CONTENTS]
    rows += [(name, "licence terms, copied from the repository (the file says what it covers)") for name in licences]
    licence = (f"The terms are in {', '.join(licences)} (in this folder); each says what it covers." if licences else
               "No licence file was at the repository's root when this archive was made: ask the authors before "
               "reusing its contents.")  # fmt: skip
    sections = [
        ("WHAT THIS IS",
         "An executable research report that recomputes, checks and extends two 2026 papers on symmetry in trained "
         "networks (arXiv 2606.18457 and 2608.24700). Every number the book states was computed by its executed "
         "chapters, and every claim of the papers gets a verdict. This folder holds the rendered book and the "
         "numbers, claims and provenance of the build that rendered it."),
        ("HOW TO OPEN IT",
         "Open index.html (in this folder) in a web browser. It works offline: the maths (MathJax), fonts, scripts "
         "and figures are all in this folder, and the only links that leave it are the papers' references and "
         "the licence's web page. "
         "book.pdf is the same book as one PDF."),
        ("VERSION AND COMMIT", _build_record(provenance, label.split()[-1])),
        ("LICENCE", licence),
    ]  # fmt: skip
    lines = [title, f"{label}: the built book as one archive", ""]
    for head, text in sections[:2]:
        lines += [head, *textwrap.wrap(text, 100, initial_indent="  ", subsequent_indent="  "), ""]
    lines.append("WHAT EACH FILE IS")
    for name, what in rows:
        lines += textwrap.wrap(f"{name:<20}{what}", 100, initial_indent="  ", subsequent_indent=" " * 22)
    lines.append("")
    for head, text in sections[2:]:
        lines += [head, *textwrap.wrap(text, 100, initial_indent="  ", subsequent_indent="  "), ""]
    return "\n".join(lines)


def members(build: Path | None = None, root: Path = REPO_ROOT) -> dict[str, Path | bytes]:
    """What the archive holds, by path inside its folder: a file of the build or the repository, or bytes made here
    (``index.html``, ``scorecard.csv``, ``READ-ME-FIRST.txt``). Raises :class:`DistError` naming a missing input."""
    build, root = Path(build or build_dir()), Path(root)
    missing = [f"{build / f} ({target})" for f, target in NEEDS.items() if not (build / f).is_file()]
    if missing:
        raise DistError("the build lacks what the archive holds: " + "; ".join(missing))
    name, version = project(root)
    label = f"{name} {version}"
    title = (yaml.safe_load((root / "_config.yml").read_text()) or {}).get("title", name)
    out: dict[str, Path | bytes] = {}
    pages = build / "html"
    for path in pages.rglob("*"):
        rel = path.relative_to(pages)
        if path.is_file() and not any(part.startswith(".") for part in rel.parts):  # .buildinfo, .doctrees
            out[f"html/{rel.as_posix()}"] = path
    for arcname, source, _ in CONTENTS:
        if source and not arcname.endswith("/"):
            out[arcname] = build / source
    licences = sorted(p.name for p in root.glob("LICEN[CS]E*") if p.is_file())
    out.update({n: root / n for n in licences})
    records = json.loads((build / "claims.json").read_text())
    out["scorecard.csv"] = csv_text(records.values()).encode()
    out["index.html"] = _index(title, label, "html/" + _first_page(pages)).encode()
    provenance = json.loads((build / "provenance.json").read_text())
    out["READ-ME-FIRST.txt"] = _readme(title, label, provenance, licences).encode()
    return out


def _tar(fh, folder: str, contents: dict[str, Path | bytes], mtime: int) -> None:
    """A gzipped tar of ``contents`` under ``folder/``: sorted, every directory listed, owner root, modes 644/755,
    one modification time, no name or time in the gzip header."""
    names = set(contents)
    dirs = {"/".join(n.split("/")[:i]) for n in names for i in range(1, n.count("/") + 1)}
    with (
        gzip.GzipFile(filename="", mode="wb", fileobj=fh, mtime=0) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for name in sorted(names | dirs | {""}, key=lambda n: n.split("/")):
            info = tarfile.TarInfo(f"{folder}/{name}".rstrip("/"))
            info.mtime, info.uid, info.gid, info.uname, info.gname = mtime, 0, 0, "", ""
            if name not in names:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
                continue
            source = contents[name]
            data = source if isinstance(source, bytes) else source.read_bytes()
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))


def build_archive(out: Path, build: Path | None = None, root: Path = REPO_ROOT) -> Path:
    """Write ``out/<name>-<version>.tar.gz`` from the build (default ``_build``) and ``_build/scorecard.csv``;
    return the archive's path. Its times are ``$SOURCE_DATE_EPOCH``, else the newest input's."""
    build = Path(build or build_dir())
    contents = members(build, root)
    atomic_write_bytes(build / "scorecard.csv", contents["scorecard.csv"])
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    mtime = int(epoch) if epoch else int(max(p.stat().st_mtime for p in contents.values() if isinstance(p, Path)))
    archive = Path(out) / archive_name(root)
    remove_stale_temporaries(archive.parent)  # what an interrupted dist left there
    packed = io.BytesIO()
    _tar(packed, archive.name.removesuffix(".tar.gz"), contents, mtime)
    atomic_write_bytes(archive, packed.getvalue())
    return archive


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bookrelease.dist", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "dist", help="folder of the archive (default dist/)")
    args = parser.parse_args(argv)
    try:
        archive = build_archive(args.out)
    except DistError as exc:
        print(f"dist: {exc}", file=sys.stderr)
        return 2
    with tarfile.open(archive) as tar:
        n = sum(m.isfile() for m in tar.getmembers())
    print(f"wrote {archive} ({archive.stat().st_size / 1e6:.1f} MB, {n} files); open index.html in its folder")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
