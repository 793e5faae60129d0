"""Compare two builds' glued values: ``python scripts/compare_results.py OLD_RESULTS_JSON NEW_RESULTS_JSON``.

Prints how many values are identical (bit for bit; NaN equals NaN), which differ (old → new) and which exist on one
side only. A refactor must leave every value but the timings identical. Exit status 1 when any value differs.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path


def same(a, b) -> bool:
    both_nan = isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)
    return a == b or both_nan


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    old, new = (json.loads(Path(p).read_text()) for p in argv)
    common = sorted(set(old) & set(new))
    differ = [k for k in common if not same(old[k], new[k])]
    print(f"identical {len(common) - len(differ)}, differ {len(differ)}, only in the first {len(set(old) - set(new))}, "
          f"only in the second {len(set(new) - set(old))}")  # fmt: skip
    for k in differ:
        print(f"  differ      {k}: {old[k]!r:.60} → {new[k]!r:.60}")
    for k in sorted(set(old) ^ set(new)):
        print(f"  {'first only ' if k in old else 'second only'} {k}")
    return 1 if differ or set(old) ^ set(new) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
