#!/usr/bin/env python
"""``python scripts/execute_book.py ...`` is ``python -m bookrun ...`` (the executor is the package ``bookrun``)."""

import runpy

if __name__ == "__main__":
    runpy.run_module("bookrun", run_name="__main__", alter_sys=True)
