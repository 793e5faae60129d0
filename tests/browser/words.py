"""The reader's words: find code in the text a reader reads (no browser here; ``test_words.py`` feeds it pages).

The rule, kept narrow so that it can fail:

- **An identifier** is a word with an underscore between two letters or digits (``dfvu_CC``, ``A28_basis``,
  ``OMP_NUM_THREADS``, ``T_CC``, ``x_i``): no exception, not even one-letter maths, which a page writes as maths
  (``$T_{CC}$``) or with an HTML subscript (T<sub>CC</sub>). Inline code (``<code>``) is not reader text, so an id or a
  parameter a reader types stays allowed there.
- **A Python repr**: ``np.``/``numpy.``/``torch.`` calls (``np.int64(3)``), ``array(``/``tensor(``; a tuple or list of
  at least two floats one of which has five decimals or more (``(0.7407970428466797, 0.5)``); a list of at least
  three numbers or of numbers and an ellipsis (``[0.72, 0.31, 0.5]``, a two-number bracket ``[0.72, 0.91]`` reads as an
  interval and is allowed); a tuple or list of quoted strings (``('1.00', '0.875')``); ``True``, ``False`` or
  ``None`` as a whole table cell or beside repr punctuation (``=None``, ``(True,``, ``[None]``) anywhere: the English
  word "None" that opens a sentence is not code.
"""

from __future__ import annotations

import re

IDENTIFIER = re.compile(r"(?<![\w.])[^\W_]+(?:_[^\W_]+)+(?![\w])")
_NUMBER = r"[-+−]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
REPRS = {
    "a numpy or torch call": re.compile(r"\b(?:np|numpy|torch)\.\w+\(|\b(?:array|tensor)\("),
    "a tuple or list of long floats": re.compile(
        rf"[(\[]\s*(?:{_NUMBER}\s*,\s*)*[-+−]?\d+\.\d{{5,}}\s*,|[(\[]\s*(?:{_NUMBER}\s*,\s*)+[-+−]?\d+\.\d{{5,}}\b"
    ),
    "a list of numbers": re.compile(rf"\[\s*{_NUMBER}\s*,\s*{_NUMBER}\s*,\s*(?:{_NUMBER}|…|\.\.\.)"),
    "a list of numbers and an ellipsis": re.compile(rf"[(\[]\s*{_NUMBER}\s*,\s*(?:{_NUMBER}\s*,\s*)*(?:…|\.\.\.)"),
    "a tuple or list of quoted strings": re.compile(r"""[(\[]\s*(['"])[^'"]*\1\s*[,)\]]"""),
    "a Python constant": re.compile(r"(?:[=(\[,]\s*)(?:True|False|None)\b|\b(?:True|False|None)\s*[)\],]"),
}
CONSTANT_CELL = re.compile(r"(?:True|False|None|nan|NaN)")


def offenders(text: str, cells: list[str] = ()) -> list[str]:
    """What in ``text`` (the page's reader text) and ``cells`` (its table cells' texts) is code, each once, in order
    of appearance: ``"identifier dfvu_CC"``, ``"a Python constant ', None'"``…"""
    found: list[str] = []
    for match in IDENTIFIER.finditer(text):
        found.append(f"identifier {match.group(0)}")
    for name, pattern in REPRS.items():
        for match in pattern.finditer(text):
            found.append(f"{name} {match.group(0)!r}")
    for cell in cells:
        cell = " ".join(cell.split())
        if CONSTANT_CELL.fullmatch(cell):
            found.append(f"a Python constant as a table cell {cell!r}")
    return list(dict.fromkeys(found))
