"""The two papers as data: every number the book quotes, with its section and printed precision, and every setting.

* :mod:`lib.papers.schur_ablation`: paper A, Dräger (2026), *Task-Restricted Symmetries in Recurrent Weight Space*;
* :mod:`lib.papers.symmetry_lifting`: paper B, Muriithi, Thapar & Berndt (2026), *Parameter-Level Attribution of
  Symmetry in Trained Networks*, with the numbers of its authors' notes (``../shared/papers``, §8.8).

Neither module records a verdict: each is computed by its chapter (``lib.core.claims``) and the results tests compare
it with the published reference (``published/claims.json``), which changes only with a commit that says why
(``published/changes.json``, shown on the page *Changes to the verdicts*).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal


@dataclass(frozen=True)
class Quote:
    """A number as a paper prints it (``text``, e.g. "0.876", "9.45e-2", "1237"), its section and optional SEM."""

    text: str
    section: str
    sem_text: str | None = None

    def __post_init__(self):
        for t in (self.text, self.sem_text):
            if t is not None and not math.isfinite(float(t)):
                raise ValueError(f"Quote text={t!r} must be a finite number as printed")

    @property
    def value(self) -> float:
        return float(self.text)

    @property
    def sem(self) -> float | None:
        return None if self.sem_text is None else float(self.sem_text)

    @property
    def half_unit(self) -> float:
        """Half a unit of the last printed digit: "0.876" → 5e-4, "9.45e-2" → 5e-5, "1237" → 0.5."""
        return 0.5 * 10.0 ** Decimal(self.text).as_tuple().exponent

    def __str__(self) -> str:
        return self.text if self.sem_text is None else f"{self.text} ± {self.sem_text}"
