"""The book's floating-point arithmetic: the pins that give its numbers the same bits on every Intel x86-64 CPU with
AVX2 (and MKL the same branch on another vendor's), what is in force in this process, and the provenance record of
a build.

Trained networks amplify rounding into different solutions, so the same code gives other numbers wherever a library
picks another instruction set, kernel or thread split. :data:`PINS` fixes each choice that was measured to move the
book's bits (``../shared/notes/arithmetic.md``; the evidence is in :data:`WHY`). Each is read when its library loads,
so it is set where processes start: ``bookrun`` puts it in every chapter kernel's environment (and so in their Dask
workers), the Makefile runs pytest and nbval through ``python -m bookrun.arithmetic``, and ``tests/conftest.py`` sets
it before the libraries load. A value already in the environment is kept (a machine that sets ``OPENBLAS_CORETYPE``
for its own reasons keeps it), and ``BOOK_ARITHMETIC=native`` turns the pins off; either way :func:`departures`
reports what is not as pinned, and the build then reports what moved against the published reference instead of
requiring the same bits.

Another vendor's CPU: oneMKL (inside torch) honours its instruction-set branches other than AUTO and COMPATIBLE only
where its own ``mkl_serv_intel_cpu_true()`` says the CPU is Intel's (oneMKL developer guide, *Specifying code
branches*); elsewhere it runs its own dispatch, so torch's BLAS and LAPACK would round as that CPU's native kernels
do. ``libtorch_cpu.so`` exports that function, so the book answers it (:mod:`lib.core.mkl_vendor`): one function that
returns 1, built by ``make venv`` into ``.venv/lib`` and loaded into the global symbol scope before torch by a ``.pth``
hook at the start of every Python process of the book's environment whose pins are in force (kernels and their Dask
workers, pytest and nbval, the benchmarks, ``python -m bookrun.arithmetic jupyter lab`` and its kernels, an external
``dask worker`` started the same way), only on an x86-64 CPU with AVX2 and FMA that is not Intel's; what is in force is
still read from MKL (:func:`in_force`), never assumed, and :func:`departures` names the vendor only when MKL does not
run ``AVX2,STRICT``. COMPATIBLE (SSE2) would also give the same bits on both vendors, at 2.3–3.8× the cost of the
book's training steps and Gram/eigh products (measured on an Intel Xeon, 2026-12-03).

This module imports only the standard library at load time: ``python3 lib/core/arithmetic.py --shell`` prints the pins
as shell assignments before any virtual environment exists.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import shlex
import sys
import warnings

from lib.core import settings
from lib.core.mkl_vendor import BRANCH, cpu, vendor_answer

#: Version of the pin set; part of :func:`signature` (and so of every cache key): a change retrains the models.
PIN_VERSION = "avx2-1"

#: The environment of every process that computes a number of the book.
PINS: dict[str, str] = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_CBWR": BRANCH,
    "ATEN_CPU_CAPABILITY": "avx2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "OPENBLAS_CORETYPE": "Haswell",
    "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
}

#: Why each pin is there: the measurement or test that showed it moves the book's bits (Intel Xeon with AVX-512,
#: ``../shared/tools/arithmetic_probe.py`` with each pin left out in turn, and the book's own tests).
WHY: dict[str, str] = {
    "OMP_NUM_THREADS": "a reduction or GEMM split over another number of threads sums in another order; the machines "
    "that build the book have 2 to many cores",
    "MKL_NUM_THREADS": "as OMP_NUM_THREADS, for MKL's own thread pool (torch's BLAS and LAPACK)",
    "OPENBLAS_NUM_THREADS": "as OMP_NUM_THREADS, for OpenBLAS (numpy's and scipy's BLAS and LAPACK)",
    "MKL_CBWR": "left out, 6 of the probe's 24 operations change (tanh recurrence, autograd, Adam, float64 Gram, "
    "SVD, eigh); without STRICT, 5 change (float32 GEMM among them); tests/paper_a/test_rnn.py's bitwise rollout fails "
    "without it on AVX-512 CPUs",
    "ATEN_CPU_CAPABILITY": "ATen's own vectorised kernels dispatch on the CPU (AVX-512 where present); no operation "
    "of the probe or of the hot paths moved with it here, so it is set for definiteness: an AVX2 CPU runs these "
    "kernels whatever the other CPU does",
    "ONEDNN_MAX_CPU_ISA": "oneDNN's JIT kernels (torch's mkldnn paths) capped at AVX2; no measured effect on the "
    "book's paths, set for definiteness like ATEN_CPU_CAPABILITY",
    "OPENBLAS_CORETYPE": "left out, 4 of 24 operations change (scipy's Schur form, numpy's SVD, eigh and GEMM): "
    "OpenBLAS picks SkylakeX kernels on AVX-512 CPUs, Haswell's on AVX2 ones",
    "NPY_DISABLE_CPU_FEATURES": "left out, numpy's exp and log1p (float64) and log1p (float32) change: numpy's own "
    "SIMD loops dispatch to AVX-512 where present",
}

#: ``BOOK_ARITHMETIC``: ``pinned`` (the default) or ``native`` (no pins: each library picks for this CPU).
MODE_ENV = settings.ARITHMETIC
MODES = ("pinned", "native")

#: MKL's CNR branch codes (``mkl_cbwr_get(MKL_CBWR_BRANCH)``), from ``mkl_cbwr.h``.
_MKL_BRANCHES = {0: "OFF", 1: "OFF", 2: "AUTO", 3: "COMPATIBLE", 4: "SSE2", 6: "SSSE3", 7: "SSE4_1",
                 8: "SSE4_2", 9: "AVX", 10: "AVX2", 11: "AVX512_MIC", 12: "AVX512", 13: "AVX512_MIC_E1",
                 14: "AVX512_E1"}  # fmt: skip
_MKL_STRICT = 0x10000
#: numpy's dispatch groups that must be off (absent or disabled) for numpy to run its AVX2 (X86_V3) loops.
_NUMPY_OFF = tuple(PINS["NPY_DISABLE_CPU_FEATURES"].split())


class ArithmeticWarning(UserWarning):
    """This process computes with unpinned arithmetic: its numbers may differ in the last bits from the book's."""


def mode(environ: dict[str, str] | None = None) -> str:
    """The validated ``$BOOK_ARITHMETIC`` (``pinned`` when unset)."""
    value = settings.arithmetic(environ)
    if value not in MODES:
        raise ValueError(f"{MODE_ENV}={value!r} is not allowed; allowed: {', '.join(MODES)}")
    return value


#: The pins that only fix the number of threads (safe on any CPU); the others select AVX2 kernels.
THREAD_PINS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def applicable_pins(machine: dict | None = None) -> dict[str, str]:
    """The pins this CPU can run: all of them on an x86-64 CPU with AVX2 and FMA, else only the thread counts (AVX2
    kernels forced onto a CPU without AVX2 would stop at their first instruction, and ATen warns about an instruction
    set it does not know on ARM)."""
    machine = cpu() if machine is None else machine
    avx2 = machine["machine"] in ("x86_64", "AMD64") and {"avx2", "fma"} <= set(machine["flags"])
    return dict(PINS) if avx2 else {k: PINS[k] for k in THREAD_PINS}


def pinned_environment(environ: dict[str, str]) -> dict[str, str]:
    """``environ`` with the pins this CPU can run added (values already there are kept); unchanged when
    ``BOOK_ARITHMETIC=native``."""
    env = dict(environ)
    if mode(env) == "pinned":
        for key, value in applicable_pins().items():
            env.setdefault(key, value)
    return env


def unset_pins(environ: dict[str, str] | None = None) -> list[str]:
    """The pins this CPU can run that ``environ`` (default: this process's) does not hold at their value."""
    environ = settings.environment() if environ is None else environ
    return [k for k, v in applicable_pins().items() if environ.get(k) != v]


def shell_assignments() -> str:
    """The pins as ``NAME=value`` words for ``env`` in a shell (what ``--shell`` prints)."""
    return " ".join(shlex.quote(f"{k}={v}") for k, v in PINS.items())


# ------------------------------------------------------------------------------------------------ in force


def _mkl_branch() -> str | None:
    """The CNR branch MKL (inside torch) runs, e.g. ``"AVX2,STRICT"`` (None where torch has no MKL to ask)."""
    import ctypes

    import torch

    lib = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
    try:
        get = ctypes.CDLL(lib).mkl_serv_cbwr_get
    except (OSError, AttributeError):
        return None
    torch.ones(2, 2) @ torch.ones(2, 2)  # MKL reads MKL_CBWR when it is first used
    code = int(get(0xFFFFFFFF))
    name = _MKL_BRANCHES.get(code & 0xFFFF, f"code {code & 0xFFFF}")
    return f"{name},STRICT" if code & _MKL_STRICT else name


def _blas_libraries() -> list[dict]:
    """numpy's and scipy's BLAS as threadpoolctl sees them: library, version, kernel (core type) and threads."""
    import numpy  # noqa: F401 - loads numpy's OpenBLAS
    import scipy.linalg  # noqa: F401 - loads scipy's
    from threadpoolctl import threadpool_info

    keep = ("internal_api", "prefix", "version", "architecture", "num_threads", "threading_layer")
    return [{k: pool.get(k) for k in keep} for pool in threadpool_info()]


def in_force() -> dict:
    """What the libraries of this process actually run with (imports torch, numpy and scipy)."""
    import numpy as np
    import torch
    from numpy._core._multiarray_umath import __cpu_features__

    return {
        "mode": mode(),
        "mkl_branch": _mkl_branch(),
        "aten_capability": torch.backends.cpu.get_cpu_capability(),
        "torch_threads": torch.get_num_threads(),
        "numpy_dispatch_off": sorted(g for g in _NUMPY_OFF if not __cpu_features__.get(g, False)),
        "numpy_x86_v3": bool(__cpu_features__.get("X86_V3", False)),
        "blas": _blas_libraries(),
        "onednn_max_isa": settings.variable("ONEDNN_MAX_CPU_ISA"),
        "environment": {k: settings.variable(k) for k in (*PINS, "OPENBLAS_L2_SIZE", MODE_ENV)},
        "numpy": np.__version__,
        "vendor_answer": vendor_answer(),
    }


def departures(state: dict | None = None, machine: dict | None = None) -> list[str]:
    """What keeps this process from the book's arithmetic, one sentence each; empty when it computes pinned."""
    state = in_force() if state is None else state
    machine = cpu() if machine is None else machine
    out = []
    if state["mode"] == "native":
        out.append(f"{MODE_ENV}=native: no pins were set")
    if machine["machine"] not in ("x86_64", "AMD64"):
        return [*out, f"this is a {machine['machine']} CPU, not x86-64: every library runs its own kernels here"]
    if not {"avx2", "fma"} <= set(machine["flags"]):
        return [*out, f"this CPU ({machine['model']}) lacks AVX2/FMA: the pinned AVX2 kernels cannot run"]
    if state["mkl_branch"] != PINS["MKL_CBWR"] and machine["vendor"] != "GenuineIntel":
        answer = state.get("vendor_answer") or {}
        said = ("was loaded, but this torch's MKL does not take it" if answer.get("loaded")
                else f"is not loaded: {answer.get('why', 'no record')}")  # fmt: skip
        out.append(f"oneMKL honours its AVX2 branch on Intel CPUs only unless its vendor check is answered, and on "
                   f"this {machine['vendor']} CPU the book's answer {said}; torch's BLAS and LAPACK run MKL's own "
                   f"dispatch (branch in force: {state['mkl_branch']})")  # fmt: skip
    elif state["mkl_branch"] != PINS["MKL_CBWR"]:
        out.append(f"MKL runs its reproducibility branch {state['mkl_branch']}, not {PINS['MKL_CBWR']} (MKL_CBWR)")
    if str(state["aten_capability"]).upper() != PINS["ATEN_CPU_CAPABILITY"].upper():
        out.append(f"ATen dispatches to {state['aten_capability']}, not AVX2 (ATEN_CPU_CAPABILITY)")
    if state["onednn_max_isa"] != PINS["ONEDNN_MAX_CPU_ISA"]:
        out.append(f"oneDNN's ISA is not capped at AVX2 (ONEDNN_MAX_CPU_ISA={state['onednn_max_isa']})")
    if set(state["numpy_dispatch_off"]) != set(_NUMPY_OFF) or not state["numpy_x86_v3"]:
        on = sorted(set(_NUMPY_OFF) - set(state["numpy_dispatch_off"]))
        out.append(f"numpy dispatches to {', '.join(on) or 'below X86_V3'} (NPY_DISABLE_CPU_FEATURES)")
    for pool in state["blas"]:
        if pool["internal_api"] == "openblas" and pool["architecture"] != PINS["OPENBLAS_CORETYPE"]:
            out.append(f"OpenBLAS ({pool['prefix']}) runs {pool['architecture']} kernels, not Haswell's "
                       "(OPENBLAS_CORETYPE)")  # fmt: skip
        if pool["num_threads"] != 1:
            out.append(f"{pool['prefix']} runs {pool['num_threads']} threads, not 1")
    if state["torch_threads"] != 1:
        out.append(f"torch runs {state['torch_threads']} threads, not 1 (OMP_NUM_THREADS)")
    return list(dict.fromkeys(out))  # numpy and scipy each load an OpenBLAS of the same name


@functools.lru_cache(maxsize=1)
def signature() -> str:
    """Which arithmetic this process computes with: ``pinned-<version>``, or ``native-<hash>`` of the CPU and the
    libraries' state. Part of every cache key, so a model trained under one arithmetic is never reused under another."""
    state = in_force()
    if not departures(state):
        return f"pinned-{PIN_VERSION}"
    relevant = {k: state[k] for k in ("mkl_branch", "aten_capability", "numpy_dispatch_off", "torch_threads")}
    # as a sorted set: threadpoolctl lists the libraries in the order they were loaded, which is the order of the
    # process's imports (a kernel that imports torch first lists libgomp first), not a property of the arithmetic
    blas = {(p["internal_api"], p["architecture"], p["num_threads"]) for p in state["blas"]}
    relevant["blas"] = sorted(blas, key=str)
    relevant["cpu"] = cpu()
    return "native-" + hashlib.sha256(json.dumps(relevant, sort_keys=True).encode()).hexdigest()[:12]


def provenance() -> dict:
    """The record of ``_build/provenance.json``: CPU, library versions and BLAS backends, the pins requested and in
    force, and whether this build's bits are the book's (``pinned``)."""
    import numpy as np
    import scipy
    import torch

    state = in_force()
    gone = departures(state)
    return {
        "cpu": cpu(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "versions": {"torch": torch.__version__, "numpy": np.__version__, "scipy": scipy.__version__},
        "torch_blas": _torch_blas(),
        "pins": dict(PINS),
        "pin_version": PIN_VERSION,
        "in_force": state,
        "pinned": not gone,
        "departures": gone,
        "signature": signature(),
    }


def _torch_blas() -> str:
    import torch

    config = torch.__config__.show()
    return next((ln.strip(" -") for ln in config.splitlines() if "Math Kernel Library" in ln), "see torch.__config__")


def warn_if_unpinned(stacklevel: int = 2) -> bool:
    """One :class:`ArithmeticWarning` naming the pins missing from this process's environment; True if it warned.

    Called when ``lib`` is imported in a Jupyter kernel: a chapter opened in the reader's own Jupyter computes with the
    CPU's native arithmetic unless it was started through ``python -m bookrun.arithmetic jupyter lab``."""
    if mode() == "native":
        return False
    missing = unset_pins()
    if not missing:
        return False
    warnings.warn(
        f"unpinned arithmetic: {', '.join(missing)} not set as the book sets them, so this kernel's numbers may differ "
        "in the last bits from the book's (and trained networks amplify that). Start Jupyter with "
        "`python -m bookrun.arithmetic jupyter lab` (or run the chapter with `python -m bookrun --only <chapter>`).",
        ArithmeticWarning,
        stacklevel=stacklevel,
    )
    return True


if __name__ == "__main__":
    if sys.argv[1:] == ["--shell"]:
        print(shell_assignments())
    else:
        print(json.dumps(provenance(), indent=1))
