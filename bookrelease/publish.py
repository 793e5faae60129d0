"""Publish the build as the book's reference: ``python -m bookrelease.publish`` (``make publish``).

Copies ``_build/results.json`` (every glued value but the timings, ``lib.core.reference.exempt``), ``claims.json`` and
``provenance.json`` into ``published/`` (each written to a temporary file, then renamed), after checking that the
build is complete and computed with the pinned arithmetic, and prints what changed against the previous reference.
A change of the reference is a change of the book's numbers: commit it on its own, saying why (a new seed, a fixed bug,
a new library version), never to make a test pass. A reference that changes needs ``--why TEXT`` (``make publish
WHY="..."``) and a version of the book not yet released (``CHANGELOG.md``: raise ``[project] version`` in
``pyproject.toml`` and open its section first). The publish is logged, with the reason and the version, in
``published/publishes.json`` (how many values moved, per chapter) and each verdict that changes in
``published/changes.json`` (the page *Changes to the verdicts*); ``python -m bookrelease.changelog`` then writes both
into ``CHANGELOG.md``. Last, ``published/SHA256SUMS`` records every file's checksum (``lib.core.reference.CHECKSUMS``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys

from bookrun.manifest import load_manifest
from lib.core import reference
from lib.core.paths import REPO_ROOT, atomic_write_bytes, atomic_write_json, build_dir, display_path

from . import changelog, release

CHANGES = changelog.CHANGES
PUBLISHES = changelog.PUBLISHES


def verdict_changes(previous: dict, claims: dict) -> list[dict[str, str]]:
    """Every claim whose verdict kind differs from the previous reference's (new and removed claims included)."""
    old = {k: v["kind"] for k, v in previous.items()}
    new = {k: v["kind"] for k, v in claims.items()}
    return [
        {"claim": k, "from": old.get(k, "(new claim)"), "to": new.get(k, "(removed)")}
        for k in sorted(set(old) | set(new))
        if old.get(k) != new.get(k)
    ]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bookrelease.publish", description=__doc__.split("\n\n")[0])
    parser.add_argument("--why", default="", help="why the reference changes (required when it does)")
    args = parser.parse_args(argv)
    build = build_dir()
    try:
        results = json.loads((build / "results.json").read_text())
        claims = json.loads((build / "claims.json").read_text())
        provenance = json.loads((build / "provenance.json").read_text())
    except (OSError, ValueError) as exc:
        print(f"publish: cannot read the build in {build} ({exc}); run `make execute` first", file=sys.stderr)
        return 2
    if not provenance.get("pinned"):
        print("publish: refused: this build's arithmetic is not pinned, so its bits are this CPU's, not the book's:",
              *provenance.get("departures", []), sep="\n  ", file=sys.stderr)  # fmt: skip
        return 2
    chapters = {k.split("::", 1)[0] for k in results}
    absent = [stem for stem in load_manifest(REPO_ROOT / "book") if stem not in chapters]
    if absent:
        print(f"publish: refused: no values of {absent} in the build; execute the whole book first", file=sys.stderr)
        return 2
    try:
        previous = reference.load()
    except FileNotFoundError:
        previous = None
    changes = verdict_changes(previous["claims"], claims) if previous is not None else []
    kept = {k: v for k, v in sorted(results.items()) if not reference.exempt(k)}
    diff = None if previous is None else reference.compare(kept, claims, previous)
    changed = diff is None or not reference.agrees(diff) or bool(diff["pending"])  # a pending chapter's first values
    why, version = args.why.strip(), release.version()
    if changed and not why:
        what = f"{len(changes)} verdicts change: {', '.join(c['claim'] for c in changes)}" if changes else "values"
        print(f'publish: refused: the reference changes ({what}); say why with --why "..." (make publish WHY="...")',
              file=sys.stderr)  # fmt: skip
        return 2
    if changed and changelog.released(version):
        print(f"publish: refused: version {version} is released (CHANGELOG.md), and a released version's reference "
              "never changes: raise [project] version in pyproject.toml and open its section in CHANGELOG.md "
              f"('## X.Y.Z — {changelog.UNRELEASED}')", file=sys.stderr)  # fmt: skip
        return 2
    stamp = {"date": datetime.date.today().isoformat(), "version": version}
    if changed:
        record = changelog.publish_record(previous, kept, claims, len(changes), why, **stamp)
        atomic_write_json(PUBLISHES, [*_log(PUBLISHES), record])
    if changes:
        atomic_write_json(CHANGES, [*_log(CHANGES), *({**c, **stamp, "why": why} for c in changes)])
    atomic_write_json(reference.PUBLISHED / "results.json", kept)
    atomic_write_json(reference.PUBLISHED / "claims.json", claims)
    atomic_write_json(reference.PUBLISHED / "provenance.json", provenance)
    _clear_pending({k.split("::", 1)[0] for k in kept})
    atomic_write_bytes(
        reference.PUBLISHED / reference.CHECKSUMS, reference.checksum_lines(reference.PUBLISHED).encode()
    )
    print(f"published {len(kept)} values ({len(results) - len(kept)} timings left out) and {len(claims)} claims to "
          f"{display_path(reference.PUBLISHED)}/")  # fmt: skip
    if previous is not None:
        print("against the previous reference:", reference.summary(reference.compare(results, claims, previous)))
        where = f", recorded in {display_path(CHANGES)}" if changes else ""
        print(f"{len(changes)} verdicts changed{where}")
    if changed:
        print(f"logged in {display_path(PUBLISHES)} under version {version}: run python -m bookrelease.changelog")
    return 0


def _clear_pending(published: set[str]) -> None:
    """Drop from ``published/pending.json`` every chapter now published (the file goes when none is left)."""
    path = reference.PUBLISHED / reference.PENDING
    waiting = json.loads(path.read_text()) if path.is_file() else {}
    left = {c: why for c, why in waiting.items() if c not in published}
    if left == waiting:
        return
    if left:
        atomic_write_json(path, left)
    else:
        path.unlink()


def _log(path) -> list:
    return json.loads(path.read_text()) if path.is_file() else []


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
