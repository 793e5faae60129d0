"""Your own network (issue 33): a recurrent network trained elsewhere, read in and analysed as the book's are.

::

    net = load_rnn(model.rnn, model.readout)                  # or a state dict, a dict of arrays, a .npz/.pt path
    result = analyse_network(net, task="flipflop")            # or analyse_network(net, inputs, targets, mask)
    result.table(), result.orderings, result.profile.dfvu["CR"]

The modules: :mod:`.load` (:class:`RecurrentNet`, :func:`load_rnn`: what is accepted, what is refused) and
:mod:`.paper_a` (paper A's Schur-coupling ablations on it, built on :mod:`lib.paper_a`).
"""

from lib.own_network.files import FILE_SUFFIXES
from lib.own_network.load import ARRAY_KEYS, RecurrentNet, load_rnn
from lib.own_network.paper_a import (
    SPLIT_ON,
    NetworkAnalysis,
    analyse_network,
    checked_trials,
    deciding_split,
    effective_recurrence,
    network_batch,
    network_split,
    profile_network,
    scan_network,
)

__all__ = [
    "ARRAY_KEYS",
    "FILE_SUFFIXES",
    "SPLIT_ON",
    "NetworkAnalysis",
    "RecurrentNet",
    "analyse_network",
    "checked_trials",
    "deciding_split",
    "effective_recurrence",
    "load_rnn",
    "network_batch",
    "network_split",
    "profile_network",
    "scan_network",
]
