"""``python -m bookrun``: see :mod:`bookrun.cli` (and the hidden modes of the processes it starts)."""

import sys

from .checks import CHILD_CHECK, check_values_child
from .child import CHILD_PAPERMILL, papermill_child

if len(sys.argv) > 2 and sys.argv[1] == CHILD_PAPERMILL:
    sys.exit(papermill_child(sys.argv[2]))
if len(sys.argv) > 3 and sys.argv[1] == CHILD_CHECK:
    sys.exit(check_values_child(sys.argv[2], sys.argv[3]))

from .cli import entry_point  # noqa: E402 - the children above need none of it

sys.exit(entry_point())
