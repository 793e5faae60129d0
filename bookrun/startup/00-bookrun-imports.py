"""bookrun: after every cell, log the repository files this kernel imported (see bookrun.fingerprints)."""


def _bookrun_log_imports():
    import os
    import sys

    root = os.environ.get("BOOK_REPO_ROOT", "")
    logs = [d for d in os.environ.get("BOOK_IMPORT_LOGS", "").split(os.pathsep) if d]
    build = os.path.realpath(os.environ.get("BOOK_BUILD_DIR", os.path.join(root, "_build")))
    seen = set()

    def log(*_):
        new = []
        for module in list(sys.modules.values()):
            path = getattr(module, "__file__", None)
            if not isinstance(path, str) or not os.path.isabs(path) or path in seen:  # torch._classes: "_classes.py"
                continue
            seen.add(path)
            path = os.path.realpath(path)
            inside = path.startswith(root + os.sep) and not path.startswith(build + os.sep)
            if inside and "site-packages" not in path and path.endswith(".py"):
                new.append(os.path.relpath(path, root))
        for folder in logs if new else ():
            try:
                with open(os.path.join(folder, f"{os.getpid()}.txt"), "a") as fh:
                    fh.write("\n".join(new) + "\n")
            except OSError:
                pass

    if root and logs:
        log()
        get_ipython().events.register("post_run_cell", log)  # noqa: F821 - IPython's startup namespace


_bookrun_log_imports()
del _bookrun_log_imports
