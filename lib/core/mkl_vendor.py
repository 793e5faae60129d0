"""MKL's vendor question, answered where the book's pins are in force on a CPU that is not Intel's.

oneMKL (inside torch's ``libtorch_cpu.so``) honours its instruction-set branches other than AUTO and COMPATIBLE only
where its own ``mkl_serv_intel_cpu_true()`` says the CPU is Intel's (oneMKL developer guide, *Specifying code
branches*); on another vendor's CPU it ignores ``MKL_CBWR=AVX2,STRICT`` and runs its own dispatch. ``libtorch_cpu.so``
exports that function, so a library that defines it, loaded into the global symbol scope before torch, wins the
lookup: ``mkl_vendor.c`` beside this file, one function that returns 1. ``make venv`` builds it into ``.venv/lib``
and writes a ``.pth`` hook into the environment's site-packages (:func:`install_vendor_answer`) that runs
:func:`load_vendor_answer` at the start of every Python process of the environment whose pins are in force. It loads
the library only on an x86-64 CPU with AVX2 and FMA that is not Intel's (:func:`vendor_answer_needed`), and only
before torch is imported. What MKL then runs is read from MKL (``lib.core.arithmetic.in_force``), never assumed.

Imports only the standard library (and ``lib.core.settings``): the hook runs it before anything else loads.
"""

from __future__ import annotations

import functools
import os
import platform
import sys
from pathlib import Path

from lib.core import settings

#: The reproducibility branch of the book's pins (``lib.core.arithmetic.PINS["MKL_CBWR"]``).
BRANCH = "AVX2,STRICT"


@functools.lru_cache(maxsize=1)
def cpu() -> dict:
    """This CPU: ``{"machine", "model", "vendor", "flags"}`` (flags: the instruction sets that decide arithmetic)."""
    info = {"machine": platform.machine(), "model": platform.processor() or "unknown", "vendor": "unknown", "flags": []}
    try:
        with open("/proc/cpuinfo") as fh:
            text = fh.read()
    except OSError:
        return info
    fields = {}
    for line in text.splitlines():
        if not line.strip():
            break  # the first processor is enough
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    wanted = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile")
    flags = set(fields.get("flags", "").split())
    info.update(model=fields.get("model name", info["model"]), vendor=fields.get("vendor_id", "unknown"),
                flags=[f for f in wanted if f in flags])  # fmt: skip
    return info


#: The C source of the vendor answer, the library ``make venv`` builds from it (in ``<venv>/lib``) and the ``.pth``
#: hook that loads it at the start of every Python process of the environment (:func:`install_vendor_answer`).
VENDOR_SOURCE = Path(__file__).with_name("mkl_vendor.c")
VENDOR_LIBRARY = "libbook_mkl_vendor.so"
VENDOR_HOOK = "book_mkl_vendor.pth"
#: The hook's one line: it imports this module only where the pins are in force, and never fails a process's start
#: (a hook that could not run leaves the answer unloaded, which :func:`departures` then names).
HOOK_LINE = (
    "import os; os.environ.get('MKL_CBWR') == 'AVX2,STRICT' and exec(\"try:\\n import lib.core.mkl_vendor as _a; "
    '_a.load_vendor_answer()\\nexcept Exception:\\n pass")\n'
)

_vendor_state: dict | None = None


def vendor_library(prefix: str | os.PathLike | None = None) -> Path:
    """Where ``make venv`` puts the vendor answer: ``<prefix>/lib/libbook_mkl_vendor.so`` (default: this interpreter's
    environment, ``sys.prefix``)."""
    return Path(sys.prefix if prefix is None else prefix) / "lib" / VENDOR_LIBRARY


def vendor_answer_needed(machine: dict | None = None, environ: dict[str, str] | None = None) -> bool:
    """Whether a process with ``environ`` on ``machine`` needs MKL's vendor question answered: the pins in force
    (``MKL_CBWR=AVX2,STRICT``, not ``BOOK_ARITHMETIC=native``) on an x86-64 CPU with AVX2 and FMA whose vendor is not
    Intel. Never raises (the start-up hook calls it)."""
    machine = cpu() if machine is None else machine
    environ = settings.environment() if environ is None else environ
    pinned = environ.get(settings.ARITHMETIC, "pinned") == "pinned" and environ.get("MKL_CBWR") == BRANCH
    avx2 = machine["machine"] in ("x86_64", "AMD64") and {"avx2", "fma"} <= set(machine["flags"])
    return pinned and avx2 and machine["vendor"] != "GenuineIntel"


def _not_needed_because(machine: dict | None, environ: dict[str, str] | None) -> str:
    machine = cpu() if machine is None else machine
    environ = settings.environment() if environ is None else environ
    if environ.get(settings.ARITHMETIC, "pinned") != "pinned" or environ.get("MKL_CBWR") != BRANCH:
        return "the pins are not in force in this process"
    if machine["machine"] not in ("x86_64", "AMD64") or not {"avx2", "fma"} <= set(machine["flags"]):
        return "this CPU has no AVX2 and FMA, so MKL's AVX2 branch cannot run on it"
    return "an Intel CPU, where oneMKL honours MKL_CBWR=AVX2,STRICT itself"


def load_vendor_answer(machine: dict | None = None, environ: dict[str, str] | None = None,
                       library: str | os.PathLike | None = None) -> dict:  # fmt: skip
    """Load the vendor answer into this process's global symbol scope where it is needed, before torch is imported;
    the record of what was decided (also what :func:`vendor_answer` returns from then on):
    ``{"needed", "loaded", "library", "before_torch", "why"}``. Run by the ``.pth`` hook at every start of a Python
    process of the book's environment, and by ``tests/conftest.py`` after it pins a plain ``pytest``."""
    global _vendor_state
    import ctypes

    path = Path(library) if library is not None else vendor_library()
    state = {"needed": vendor_answer_needed(machine, environ), "loaded": False, "library": str(path),
             "before_torch": "torch" not in sys.modules, "why": ""}  # fmt: skip
    if not state["needed"]:
        state["why"] = "not needed: " + _not_needed_because(machine, environ)
    elif "torch" in sys.modules:
        state["why"] = ("torch was imported before the book's arithmetic could answer MKL's vendor check: start the "
                        "process in the book's .venv with the pins (python -m bookrun.arithmetic ...)")  # fmt: skip
    elif not path.is_file():
        state["why"] = (f"{path} is missing: make venv builds it with the system C compiler (apt-get install gcc, "
                        "then rm .venv/.installed && make venv)")  # fmt: skip
    else:
        try:
            ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
            state.update(loaded=True, why="loaded before torch: MKL's vendor check answers Intel")
        except OSError as exc:
            state["why"] = f"{path} cannot be loaded ({exc}): rm .venv/.installed && make venv rebuilds it"
    _vendor_state = state
    return dict(state)


def vendor_answer() -> dict:
    """What this process decided about the vendor answer (:func:`load_vendor_answer`'s record); where no hook ran at
    its start, what it would need and why it is not loaded."""
    if _vendor_state is not None:
        return dict(_vendor_state)
    state = {"needed": vendor_answer_needed(), "loaded": False, "library": str(vendor_library()), "before_torch": False}
    state["why"] = (
        f"the start-up hook ({VENDOR_HOOK}) did not run in this process: not the book's .venv, or make venv did not "
        "install it (rm .venv/.installed && make venv)"
        if state["needed"]
        else "not needed"
    )
    return state


def install_vendor_answer(prefix: str | os.PathLike | None = None, site_packages: str | os.PathLike | None = None,
                          compiler: str | None = None) -> str:  # fmt: skip
    """Build ``mkl_vendor.c`` with the system C compiler (``$CC``, else ``cc``) into :func:`vendor_library` and write
    the start-up hook into ``site_packages`` (default: this environment's); a sentence saying what was done. Without
    a compiler, nothing is built and the sentence says what is missing (the book builds as before; on a CPU that is
    not Intel's its arithmetic is then MKL's own, and :func:`departures` says so). Run by ``make venv``."""
    import shutil
    import subprocess
    import sysconfig
    import tempfile

    target = vendor_library(prefix)
    site = Path(site_packages or sysconfig.get_paths()["purelib"])
    cc = shutil.which(compiler or settings.variable("CC") or "cc")
    if cc is None:
        return (f"no C compiler ({compiler or settings.variable('CC') or 'cc'}): the vendor answer is not built; on an "
                "Intel CPU nothing changes, on another vendor's CPU MKL keeps its own dispatch and the build is not "
                "the book's arithmetic (apt-get install gcc, then rm .venv/.installed && make venv)")  # fmt: skip
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        built = Path(tmp) / VENDOR_LIBRARY
        done = subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", str(built), str(VENDOR_SOURCE)],
                              capture_output=True, text=True)  # fmt: skip
        if done.returncode:
            why = done.stderr.strip()[:300]
            return f"{cc} could not build {VENDOR_SOURCE.name} ({why}): the vendor answer is not built"
        os.replace(built, target)
    from lib.core.paths import atomic_write_bytes

    atomic_write_bytes(site / VENDOR_HOOK, HOOK_LINE.encode())
    hook = site / VENDOR_HOOK
    return f"vendor answer: {target} (loaded on x86-64 CPUs with AVX2 and FMA that are not Intel's), hook {hook}"


if __name__ == "__main__":
    if sys.argv[1:] == ["--install"]:  # make venv
        print(install_vendor_answer())
    else:
        print(vendor_answer())
