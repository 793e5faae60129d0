"""Models and math behind the executable report on symmetry in trained networks.

``core``: shared foundations (paths, the one cache, parameter checks, progress, tables, claims, process pool);
``paper_a``: Schur coordinates, the RNN and its tasks, training, ablations and their analyses;
``paper_b``: functional sensitivity, symmetry generators, lifting flows and the paper's two systems;
``papers``: what the papers print and what the book expects of each claim; ``plots``: every figure.
"""

import sys as _sys

__all__ = ["__version__"]
__version__ = "0.1.0"

if "ipykernel" in _sys.modules:  # a chapter in a Jupyter kernel: say so once if its arithmetic is not the book's
    from lib.core.arithmetic import warn_if_unpinned as _warn

    _warn(stacklevel=3)
