"""Compare two builds' glued values: ``python scripts/compare_results.py OLD_RESULTS_JSON NEW_RESULTS_JSON``.

Prints how many values are identical (bit for bit; NaN equals NaN), which differ (old → new, with their relative
difference) and which exist on one side only. A refactor must leave every value but the timings identical
(``lib.core.reference.exempt``; ``--all`` compares the timings too). Exit status 1 when any value differs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lib.core.reference import exempt, relative_difference, same  # noqa: E402


def main(argv: list[str]) -> int:
    every = "--all" in argv
    argv = [a for a in argv if a != "--all"]
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    old, new = ({k: v for k, v in json.loads(Path(p).read_text()).items() if every or not exempt(k)} for p in argv)
    common = sorted(set(old) & set(new))
    differ = [k for k in common if not same(old[k], new[k])]
    print(f"identical {len(common) - len(differ)}, differ {len(differ)}, only in the first {len(set(old) - set(new))}, "
          f"only in the second {len(set(new) - set(old))}" + ("" if every else " (timings left out)"))  # fmt: skip
    for k in differ:
        rel = relative_difference(old[k], new[k])
        print(f"  differ      {k}: {old[k]!r:.60} → {new[k]!r:.60}" + ("" if rel is None else f" (relative {rel:.2g})"))
    for k in sorted(set(old) ^ set(new)):
        print(f"  {'first only ' if k in old else 'second only'} {k}")
    return 1 if differ or set(old) ^ set(new) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
