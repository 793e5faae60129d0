"""bookrun: log the model-cache entries this process reads and writes (see bookrun.timings)."""


def _bookrun_cache_events():
    import os
    import sys

    folders = [d for d in os.environ.get("BOOK_CACHE_EVENTS", "").split(os.pathsep) if d]
    root = os.environ.get("BOOK_CACHE_EVENTS_ROOT", "")
    if not folders or not root:
        return
    prefix, logs, seen = root.rstrip(os.sep) + os.sep, [os.path.join(d, f"{os.getpid()}.txt") for d in folders], set()

    def hook(event, args):
        if event != "open" and event != "os.rename":
            return
        try:
            if event == "open":
                path, mode, flags = args
                reading = (
                    ("r" in mode and "+" not in mode)
                    if isinstance(mode, str)
                    else (isinstance(flags, int) and flags & 3 == os.O_RDONLY)
                )
                kind = "R" if reading else None
            else:
                path, kind = args[1], "W"
            if kind is None or isinstance(path, int):
                return
            path = os.path.abspath(os.fsdecode(path))
            name = os.path.basename(path)
            if not path.startswith(prefix) or name.startswith(".") or ".corrupt-" in name:  # temporaries, set aside
                return
            line = f"{kind} {path[len(prefix) :]}\n"
            if line not in seen:
                seen.add(line)
                for log in logs:
                    with open(log, "a") as fh:
                        fh.write(line)
        except Exception:  # never break the operation audited
            pass

    sys.addaudithook(hook)


_bookrun_cache_events()
del _bookrun_cache_events
