"""Models and math behind the executable report on symmetry in trained networks.

One concept per module: ``schur`` (ordered real Schur coordinates and ablations), ``rnn``, ``tasks``, ``train``,
``metrics`` (paper A); ``sensitivity``, ``symmetry``, ``flows``, ``annulus``, ``hamiltonian`` (paper B);
``plots`` draws every figure; ``params``, ``paths`` and ``store`` are small utilities.
"""

__all__ = ["__version__"]
__version__ = "0.1.0"
