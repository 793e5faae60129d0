"""The coupling blocks of eq. (5) that can be ablated, their paper notation and the subsets of them (paper A §2.5)."""

from __future__ import annotations

from collections.abc import Iterable

from lib.core import params

#: The coupling blocks of eq. (5) that can be ablated, in canonical order.
ABLATION_BLOCKS: tuple[str, ...] = ("RR", "CR", "CC")

#: Paper notation of each ablation block (``CR`` is the paper's T_C→R: rows R, columns C).
BLOCK_NAMES: dict[str, str] = {"RR": "T_RR", "CR": "T_C→R", "CC": "T_CC"}


def all_subsets() -> tuple[tuple[str, ...], ...]:
    """The 8 subsets of ABLATION_BLOCKS in a readable order: ∅, CC, RR, RR+CC, CR, CR+CC, RR+CR, all."""
    return ((), ("CC",), ("RR",), ("RR", "CC"), ("CR",), ("CR", "CC"), ("RR", "CR"), ("RR", "CR", "CC"))


def label(subset: Iterable[str]) -> str:
    """Paper notation of an ablation: ``("RR", "CC")`` → ``"−T_RR, −T_CC"``; ``()`` → ``"full"``."""
    names = _canonical(subset, "subset")
    return ", ".join("−" + BLOCK_NAMES[k] for k in names) if names else "full"


def canonical(subset: Iterable[str], name: str = "subset") -> tuple[str, ...]:
    """A subset of ABLATION_BLOCKS as a tuple in canonical order (``["CC", "RR"]`` → ``("RR", "CC")``); validates."""
    return _canonical(subset, name)


def _canonical(remove: Iterable[str], name: str = "remove") -> tuple[str, ...]:
    names = params.subset(name, remove, ABLATION_BLOCKS)
    return tuple(k for k in ABLATION_BLOCKS if k in names)
