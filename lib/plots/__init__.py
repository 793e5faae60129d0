"""Every figure the book draws, one module per chapter family (``copy``, ``tasks``, ...)."""
