"""bookrun: warnings raised in a chapter's kernel go to its run's faults file, not to the page (see bookrun.faults)."""

import warnings as _warnings

_book_shown = _warnings.showwarning


def _book_warning_to_terminal(message, category, filename, lineno, file=None, line=None):
    try:
        from lib.core import faults

        faults.report(f"{category.__name__}: {message}", file=f"{filename}:{lineno}", action="warned; went on")
    except Exception:  # the faults file cannot be written: the warning is shown where it would have been
        _book_shown(message, category, filename, lineno, file, line)


_warnings.showwarning = _book_warning_to_terminal
del _warnings
