"""MKL's vendor question answered (``lib/core/mkl_vendor.c``, ``lib.core.mkl_vendor.load_vendor_answer``): built by
``make venv``, loaded before torch only where the pins are in force on a non-Intel x86-64 CPU with AVX2 and FMA, and
what MKL then runs read from MKL, never assumed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from lib.core import arithmetic, mkl_vendor
from lib.core.paths import REPO_ROOT

HERE = mkl_vendor.cpu()
X86_AVX2 = HERE["machine"] in ("x86_64", "AMD64") and {"avx2", "fma"} <= set(HERE["flags"])
INTEL = {"machine": "x86_64", "model": "Intel Xeon", "vendor": "GenuineIntel", "flags": ["avx2", "fma", "avx512f"]}
AMD = {"machine": "x86_64", "model": "AMD EPYC", "vendor": "AuthenticAMD", "flags": ["avx2", "fma"]}
PINNED = dict(arithmetic.PINS)
CC = shutil.which(os.environ.get("CC") or "cc")
HOOK_INSTALLED = (Path(sysconfig.get_paths()["purelib"]) / mkl_vendor.VENDOR_HOOK).is_file()


def _pinned_state(**change) -> dict:
    state = {
        "mode": "pinned", "mkl_branch": "AVX2,STRICT", "aten_capability": "AVX2", "torch_threads": 1,
        "numpy_dispatch_off": ["AVX512_ICL", "AVX512_SPR", "X86_V4"], "numpy_x86_v3": True,
        "blas": [{"internal_api": "openblas", "prefix": "libscipy_openblas", "architecture": "Haswell",
                  "num_threads": 1}],
        "onednn_max_isa": "AVX2",
        "vendor_answer": {"needed": True, "loaded": True, "why": "loaded before torch"},
    }  # fmt: skip
    return {**state, **change}


def _python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=REPO_ROOT)


def _env(**extra) -> dict[str, str]:
    """This environment without the pins, with this checkout importable, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in arithmetic.PINS and k != arithmetic.MODE_ENV}
    return {**env, "PYTHONPATH": str(REPO_ROOT), **extra}


@pytest.fixture(scope="module")
def answers(tmp_path_factory) -> dict[str, Path]:
    """The book's answer built as ``make venv`` builds it, and its inverse (a function that says 'not Intel')."""
    if CC is None:
        pytest.skip("no C compiler (cc): the vendor answer cannot be built here")
    folder = tmp_path_factory.mktemp("vendor")
    said = mkl_vendor.install_vendor_answer(prefix=folder, site_packages=folder / "site")
    assert said.startswith("vendor answer:"), said
    inverse = folder / "libinverse.so"
    source = folder / "inverse.c"
    source.write_text("int mkl_serv_intel_cpu_true(void) { return 0; }\n")
    subprocess.run([CC, "-shared", "-fPIC", "-O2", "-o", str(inverse), str(source)], check=True)
    hook = folder / "site" / "book_mkl_vendor.pth"
    return {"answer": mkl_vendor.vendor_library(folder), "inverse": inverse, "hook": hook}


# ---------------------------------------------------------------------------------------------- where it is loaded


@pytest.mark.parametrize(
    ("machine", "environ", "needed"),
    [
        (AMD, PINNED, True),
        (INTEL, PINNED, False),  # oneMKL honours the branch on Intel's own CPUs
        ({**AMD, "flags": ["avx2"]}, PINNED, False),  # no FMA
        ({**AMD, "flags": ["sse4_2", "avx"]}, PINNED, False),  # no AVX2: the AVX2 code would not run
        ({**AMD, "machine": "aarch64"}, PINNED, False),
        (AMD, {**PINNED, arithmetic.MODE_ENV: "native"}, False),  # the pins are not in force
        (AMD, {k: v for k, v in PINNED.items() if k != "MKL_CBWR"}, False),
        (AMD, {**PINNED, "MKL_CBWR": "COMPATIBLE"}, False),
    ],
)  # fmt: skip
def test_the_answer_is_needed_only_where_the_pins_hold_on_another_vendors_avx2_cpu(machine, environ, needed):
    assert mkl_vendor.vendor_answer_needed(machine, environ) is needed


def test_a_cpu_without_avx2_never_loads_it(answers):
    old_cpu = {**AMD, "flags": ["sse4_2", "avx"]}
    code = (f"import json; from lib.core import mkl_vendor as a; print(json.dumps(a.load_vendor_answer("
            f"machine={old_cpu!r}, environ={PINNED!r}, library={str(answers['answer'])!r})))")  # fmt: skip
    done = _python(code, _env(BOOK_ARITHMETIC="native"))
    state = json.loads(done.stdout)
    assert not state["needed"] and not state["loaded"], state


def test_it_loads_before_torch_and_says_why_not_after(answers):
    load = f"v.load_vendor_answer(machine={AMD!r}, environ={PINNED!r}, library={str(answers['answer'])!r})"
    before = _python(f"import json; from lib.core import mkl_vendor as v; print(json.dumps({load}))",
                     _env(BOOK_ARITHMETIC="native"))  # fmt: skip
    state = json.loads(before.stdout)
    assert state["needed"] and state["loaded"] and state["before_torch"], state
    after = _python(f"import json, torch; from lib.core import mkl_vendor as v; print(json.dumps({load}))",
                    _env(BOOK_ARITHMETIC="native"))  # fmt: skip
    state = json.loads(after.stdout)
    assert state["needed"] and not state["loaded"] and "torch was imported before" in state["why"], state


def test_a_missing_library_is_named_with_how_to_build_it(tmp_path):
    code = (f"import json; from lib.core import mkl_vendor as v; print(json.dumps(v.load_vendor_answer("
            f"machine={AMD!r}, environ={PINNED!r}, library={str(tmp_path / 'libbook_mkl_vendor.so')!r})))")  # fmt: skip
    state = json.loads(_python(code, _env(BOOK_ARITHMETIC="native")).stdout)
    assert not state["loaded"] and "is missing: make venv builds it with the system C compiler" in state["why"]


def test_make_venv_builds_the_answer_and_its_hook(answers):
    import ctypes

    assert ctypes.CDLL(str(answers["answer"])).mkl_serv_intel_cpu_true() == 1
    assert answers["hook"].read_text() == mkl_vendor.HOOK_LINE
    assert "$(PY) -m lib.core.mkl_vendor --install" in (REPO_ROOT / "Makefile").read_text()


def test_without_a_compiler_nothing_is_built_and_the_sentence_says_what_is_missing(tmp_path):
    said = mkl_vendor.install_vendor_answer(prefix=tmp_path, site_packages=tmp_path, compiler="no-such-cc-here")
    assert said.startswith("no C compiler (no-such-cc-here)") and "apt-get install gcc" in said
    assert not any(tmp_path.iterdir())


# ------------------------------------------------------------------------------------------- read from MKL


@pytest.mark.skipif(not X86_AVX2, reason="MKL's AVX2 branch needs an x86-64 CPU with AVX2 and FMA")
def test_what_mkl_runs_is_read_from_mkl_never_assumed(answers):
    """On any vendor's CPU: a library that answers 'not Intel', loaded before torch, makes MKL ignore
    MKL_CBWR=AVX2,STRICT (as it does on AMD without the book's answer), and ``in_force`` reports MKL's own AUTO branch;
    the book's answer makes it run AVX2,STRICT. (BOOK_ARITHMETIC=native keeps the start-up hook out of the way.)"""
    code = ("import ctypes, json, sys; ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL); "
            "from lib.core import arithmetic as a; s = a.in_force(); print(json.dumps([s['mkl_branch'], "
            "a.departures(s, {**a.cpu(), 'vendor': 'AuthenticAMD'})]))")  # fmt: skip
    env = _env(BOOK_ARITHMETIC="native", **PINNED)
    for library, branch in ((answers["inverse"], "AUTO,STRICT"), (answers["answer"], "AVX2,STRICT")):
        done = subprocess.run([sys.executable, "-c", code, str(library)], env=env, capture_output=True, text=True,
                              cwd=REPO_ROOT)  # fmt: skip
        assert done.returncode == 0, done.stderr
        found, gone = json.loads(done.stdout)
        assert found == branch
        named = [d for d in gone if "oneMKL honours its AVX2 branch" in d]
        assert bool(named) is (branch != "AVX2,STRICT"), gone  # the vendor is named only when the branch is not AVX2


def test_the_vendor_is_named_only_when_the_branch_in_force_is_not_avx2_strict():
    assert arithmetic.departures(_pinned_state(), AMD) == []
    missing = {"needed": True, "loaded": False, "why": "/x/libbook_mkl_vendor.so is missing: make venv builds it"}
    gone = arithmetic.departures(_pinned_state(mkl_branch="AUTO,STRICT", vendor_answer=missing), AMD)
    assert any("AuthenticAMD" in d and "is missing: make venv builds it" in d and "AUTO,STRICT" in d for d in gone)
    ignored = arithmetic.departures(_pinned_state(mkl_branch="AUTO,STRICT"), AMD)
    assert any("was loaded, but this torch's MKL does not take it" in d for d in ignored), ignored


@pytest.mark.skipif(HERE["vendor"] == "GenuineIntel" or not X86_AVX2,
                    reason="shows the answer on a CPU that is not Intel's, with AVX2 and FMA")  # fmt: skip
def test_on_another_vendors_avx2_cpu_the_pinned_process_runs_avx2_strict():
    done = subprocess.run([sys.executable, "-m", "bookrun.arithmetic"], env=_env(), capture_output=True, text=True,
                          cwd=REPO_ROOT)  # fmt: skip
    record = json.loads(done.stdout)
    assert record["in_force"]["vendor_answer"]["loaded"], record["in_force"]["vendor_answer"]
    assert record["in_force"]["mkl_branch"] == "AVX2,STRICT" and record["pinned"], record["departures"]
    # without the answer (the hook stays out under BOOK_ARITHMETIC=native) the same pins do not hold on this CPU
    code = "from lib.core import arithmetic as a; print(a.in_force()['mkl_branch'])"
    assert _python(code, _env(BOOK_ARITHMETIC="native", **PINNED)).stdout.strip() != "AVX2,STRICT"


# ------------------------------------------------------------------------------------------- which processes


def _decided_at_start(state: dict) -> bool:
    """The hook ran at the start of the process that reported ``state`` (before torch), whatever it decided."""
    return state["before_torch"] and "did not run" not in state["why"]


@pytest.mark.skipif(not HOOK_INSTALLED, reason="this environment was not made by make venv (no start-up hook)")
def test_a_process_started_through_the_pins_decides_at_its_start():
    """pytest, nbval, the benchmarks, ``jupyter lab`` and an external ``dask worker`` all start this way."""
    code = "import json; from lib.core import mkl_vendor as v; print(json.dumps(v.vendor_answer()))"
    done = subprocess.run([sys.executable, "-m", "bookrun.arithmetic", sys.executable, "-c", code], env=_env(),
                          capture_output=True, text=True, cwd=REPO_ROOT)  # fmt: skip
    state = json.loads(done.stdout)
    assert _decided_at_start(state) and state["needed"] is mkl_vendor.vendor_answer_needed(HERE, PINNED), state
    assert state["loaded"] is state["needed"], state


@pytest.mark.skipif(not HOOK_INSTALLED, reason="this environment was not made by make venv (no start-up hook)")
def test_a_chapter_kernel_and_its_dask_workers_decide_at_their_start():
    from jupyter_client.manager import start_new_kernel

    from bookrun.processes import kernel_env

    job = "from lib.core import mkl_vendor as v, engine as e; print(json.dumps([v.vendor_answer(), " \
          "*e.run_jobs(v.vendor_answer, [{}, {}], workers=2, progress=False)]))"  # fmt: skip
    km, kc = start_new_kernel(kernel_name="python3", env=kernel_env(workers=2), cwd=str(REPO_ROOT))
    try:
        out = []
        kc.execute_interactive(f"import json\n{job}", timeout=120,
                               output_hook=lambda m: out.append(m["content"].get("text", "")))  # fmt: skip
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    states = json.loads("".join(out).strip().splitlines()[-1])
    assert len(states) == 3 and all(_decided_at_start(s) for s in states), states
    assert all(s["loaded"] is mkl_vendor.vendor_answer_needed(HERE, PINNED) for s in states), states
