"""``python -m bookrun``: the command (:mod:`bookrun.cli`)."""

import sys

from .cli import entry_point

sys.exit(entry_point())
