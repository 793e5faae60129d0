"""What paper A's chapters compute beyond the analysis: their glue values (name → plain value) and their tables.

One module per chapter. Each function returns plain Python values (what a chapter glues) or a
:class:`lib.core.tables.Table`, so a chapter cell is prose plus a call; nothing here imports a chapter or myst_nb.
"""


def glue_all(glue, values: dict) -> None:
    """Glue every plain value of ``values`` (name → value) with a chapter's ``glue`` (myst_nb's), not displayed."""
    for name, value in values.items():
        glue(name, value, display=False)
