"""Publish the build as the book's reference: ``python -m bookrun.publish`` (``make publish``).

Copies ``_build/results.json`` (every glued value but the timings, ``lib.core.reference.exempt``), ``claims.json`` and
``provenance.json`` into ``published/`` (each written to a temporary file, then renamed), after checking that the
build is complete and computed with the pinned arithmetic, and prints what changed against the previous reference.
A change of the reference is a change of the book's numbers: commit it on its own, saying why (a new seed, a fixed bug,
a new library version), never to make a test pass. A verdict that changes needs ``--why TEXT`` (``make publish
WHY="..."``): each such change is appended to ``published/changes.json`` with the reason, and the page *Changes to the
verdicts* lists them.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys

from lib.core import reference
from lib.core.paths import REPO_ROOT, build_dir

from .manifest import load_manifest
from .processes import write_json_atomic

CHANGES = reference.PUBLISHED / "changes.json"


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
    parser = argparse.ArgumentParser(prog="python -m bookrun.publish", description=__doc__.split("\n\n")[0])
    parser.add_argument("--why", default="", help="why the verdicts change (required when one does)")
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
    if changes and not args.why.strip():
        print(f"publish: refused: {len(changes)} verdicts change ({', '.join(c['claim'] for c in changes)}); say why "
              'with --why "..." (make publish WHY="...")', file=sys.stderr)  # fmt: skip
        return 2
    if changes:
        log = json.loads(CHANGES.read_text()) if CHANGES.is_file() else []
        date = datetime.date.today().isoformat()
        log += [{**c, "date": date, "why": args.why.strip()} for c in changes]
        write_json_atomic(CHANGES, log)
    kept = {k: v for k, v in sorted(results.items()) if not reference.exempt(k)}
    write_json_atomic(reference.PUBLISHED / "results.json", kept)
    write_json_atomic(reference.PUBLISHED / "claims.json", claims)
    write_json_atomic(reference.PUBLISHED / "provenance.json", provenance)
    print(f"published {len(kept)} values ({len(results) - len(kept)} timings left out) and {len(claims)} claims to "
          f"{reference.PUBLISHED.relative_to(REPO_ROOT)}/")  # fmt: skip
    if previous is not None:
        print("against the previous reference:", reference.summary(reference.compare(results, claims, previous)))
        where = f", recorded in {CHANGES.relative_to(REPO_ROOT)}" if changes else ""
        print(f"{len(changes)} verdicts changed{where}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
