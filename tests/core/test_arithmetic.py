"""The book's arithmetic (``lib.core.arithmetic``, ``bookrun.arithmetic``): what the pins set, where they take effect,
what is reported when they cannot hold. Its published reference (``lib.core.reference``) is tested in
``tests/core/test_reference.py``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from lib.core import arithmetic
from lib.core.paths import REPO_ROOT

INTEL_AVX2 = arithmetic.cpu()["vendor"] == "GenuineIntel" and {"avx2", "fma"} <= set(arithmetic.cpu()["flags"])


def _pinned_state() -> dict:
    """What a pinned process reports (``in_force``), as plain data."""
    return {
        "mode": "pinned", "mkl_branch": "AVX2,STRICT", "aten_capability": "AVX2", "torch_threads": 1,
        "numpy_dispatch_off": ["AVX512_ICL", "AVX512_SPR", "X86_V4"], "numpy_x86_v3": True,
        "blas": [{"internal_api": "openblas", "prefix": "libscipy_openblas", "architecture": "Haswell",
                  "num_threads": 1}],
        "onednn_max_isa": "AVX2",
    }  # fmt: skip


INTEL = {"machine": "x86_64", "model": "Intel Xeon", "vendor": "GenuineIntel", "flags": ["avx2", "fma", "avx512f"]}


def test_pins_are_added_without_overriding_what_the_environment_sets():
    env = arithmetic.pinned_environment({"OPENBLAS_CORETYPE": "Zen", "PATH": "/bin"})
    assert env["OPENBLAS_CORETYPE"] == "Zen" and env["PATH"] == "/bin"
    assert {k: env[k] for k in arithmetic.PINS if k != "OPENBLAS_CORETYPE"} == {
        k: v for k, v in arithmetic.PINS.items() if k != "OPENBLAS_CORETYPE"
    }
    assert arithmetic.pinned_environment({"BOOK_ARITHMETIC": "native"}) == {"BOOK_ARITHMETIC": "native"}


def test_a_bad_mode_is_refused_naming_the_variable_and_the_choices():
    with pytest.raises(ValueError, match=r"BOOK_ARITHMETIC='avx512' is not allowed; allowed: pinned, native"):
        arithmetic.pinned_environment({"BOOK_ARITHMETIC": "avx512"})


def test_every_pin_says_why_it_is_needed():
    assert set(arithmetic.WHY) == set(arithmetic.PINS)


def test_a_pinned_state_on_an_intel_avx2_cpu_has_no_departures():
    assert arithmetic.departures(_pinned_state(), INTEL) == []


@pytest.mark.parametrize(
    ("change", "machine", "says"),
    [
        ({"mkl_branch": "AVX512"}, INTEL, r"MKL runs its reproducibility branch AVX512, not AVX2,STRICT"),
        ({"aten_capability": "AVX512"}, INTEL, r"ATen dispatches to AVX512"),
        ({"numpy_dispatch_off": ["AVX512_SPR"]}, INTEL, r"numpy dispatches to AVX512_ICL, X86_V4"),
        ({"torch_threads": 2}, INTEL, r"torch runs 2 threads"),
        ({"mode": "native"}, INTEL, r"BOOK_ARITHMETIC=native"),
        ({"mkl_branch": "AUTO"}, {**INTEL, "vendor": "AuthenticAMD"}, r"Intel CPUs only.*AuthenticAMD.*AUTO"),
        ({}, {**INTEL, "machine": "aarch64"}, r"aarch64 CPU, not x86-64"),
        ({}, {**INTEL, "flags": ["sse4_2", "avx"]}, r"lacks AVX2/FMA"),
    ],
)
def test_each_departure_from_the_pinned_arithmetic_is_named(change, machine, says):
    found = arithmetic.departures({**_pinned_state(), **change}, machine)
    assert any(re.search(says, line) for line in found), found


def test_an_openblas_on_other_kernels_is_named():
    state = _pinned_state()
    state["blas"] = [{**state["blas"][0], "architecture": "SkylakeX"}]
    assert any("SkylakeX kernels, not Haswell's" in d for d in arithmetic.departures(state, INTEL))


@pytest.mark.skipif(not INTEL_AVX2, reason="the AVX2 pins hold on Intel CPUs with AVX2 (oneMKL's CNR)")
def test_this_test_process_computes_with_the_pinned_arithmetic():
    assert arithmetic.departures() == [], "pytest runs unpinned: tests/conftest.py or the Makefile did not pin it"
    assert arithmetic.signature() == f"pinned-{arithmetic.PIN_VERSION}"


def _unpinned_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in arithmetic.PINS and k != arithmetic.MODE_ENV}
    return {**env, "PYTHONPATH": str(REPO_ROOT), **extra}


@pytest.mark.skipif(not INTEL_AVX2, reason="the AVX2 pins hold on Intel CPUs with AVX2 (oneMKL's CNR)")
def test_the_wrapper_pins_a_process_started_without_the_pins():
    done = subprocess.run([sys.executable, "-m", "bookrun.arithmetic"], env=_unpinned_env(), capture_output=True,
                          text=True, cwd=REPO_ROOT)  # fmt: skip
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["pinned"] and record["in_force"]["mkl_branch"] == "AVX2,STRICT"


def test_the_wrapper_reports_a_native_process_as_not_pinned():
    done = subprocess.run([sys.executable, "-m", "bookrun.arithmetic"], env=_unpinned_env(BOOK_ARITHMETIC="native"),
                          capture_output=True, text=True, cwd=REPO_ROOT)  # fmt: skip
    assert done.returncode == 3 and "not pinned: BOOK_ARITHMETIC=native" in done.stderr


def test_a_jupyter_kernel_without_the_pins_warns_once_naming_them():
    code = "import sys, types, warnings; sys.modules['ipykernel'] = types.ModuleType('ipykernel'); " \
           "warnings.simplefilter('always'); import lib; import lib.core.cache"  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], env=_unpinned_env(), capture_output=True, text=True,
                          cwd=REPO_ROOT)  # fmt: skip
    assert done.returncode == 0, done.stderr
    first = next(iter(arithmetic.applicable_pins()))  # MKL_CBWR's name comes after the threads' on an AVX2 CPU
    assert done.stderr.count("ArithmeticWarning") == 1 and first in done.stderr, done.stderr
    assert not INTEL_AVX2 or "MKL_CBWR" in done.stderr
    pinned = subprocess.run([sys.executable, "-c", code], env=arithmetic.pinned_environment(_unpinned_env()),
                            capture_output=True, text=True, cwd=REPO_ROOT)  # fmt: skip
    assert "ArithmeticWarning" not in pinned.stderr, pinned.stderr


def test_every_make_recipe_that_computes_starts_through_the_pins():
    recipes = [ln for ln in (REPO_ROOT / "Makefile").read_text().splitlines() if ln.startswith("\t")]
    computing = [ln for ln in recipes if re.search(r"-m pytest|benchmarks/bench", ln)]
    assert computing and all("$(PINNED)" in ln for ln in computing), [ln for ln in computing if "$(PINNED)" not in ln]


def test_a_model_cached_under_one_arithmetic_is_not_reused_under_another(monkeypatch):
    from lib.core import cache

    pinned = cache.entry_path("paper_a_rnn", {"seed": 0}, code="c")
    monkeypatch.setattr(arithmetic, "signature", lambda: "native-0123456789ab")
    assert cache.entry_path("paper_a_rnn", {"seed": 0}, code="c") != pinned


def test_a_cpu_without_avx2_gets_only_the_thread_pins():
    arm = {**INTEL, "machine": "aarch64", "flags": []}
    assert set(arithmetic.applicable_pins(arm)) == set(arithmetic.THREAD_PINS)
    assert set(arithmetic.applicable_pins({**INTEL, "flags": ["avx"]})) == set(arithmetic.THREAD_PINS)
    assert arithmetic.applicable_pins(INTEL) == arithmetic.PINS


def test_a_chapter_executed_under_another_arithmetic_executes_again(tmp_path, monkeypatch):
    from bookrun import fingerprints

    source = tmp_path / "chapter.md"
    source.write_text("# a chapter\n")
    monkeypatch.delenv(arithmetic.MODE_ENV, raising=False)
    record = fingerprints.make_record(source, {}, [], {})
    assert fingerprints.why_stale(record, source, {}) is None
    monkeypatch.setenv(arithmetic.MODE_ENV, "native")
    assert "the arithmetic changed" in fingerprints.why_stale(record, source, {})


def test_a_native_signature_does_not_depend_on_the_order_the_libraries_were_loaded(monkeypatch):
    """threadpoolctl lists the BLAS libraries in load order: a kernel that imports torch before numpy lists libgomp
    first, a test process the other way round. The signature (part of every cache key) must be the same in both, or
    the results tests look for models under keys the chapters never wrote (seen on an AMD CPU, where the build is
    native)."""
    amd = {**INTEL, "model": "AMD EPYC", "vendor": "AuthenticAMD"}
    gomp = {"internal_api": "openmp", "prefix": "libgomp", "architecture": None, "num_threads": 1}
    state = {**_pinned_state(), "mkl_branch": "AUTO,STRICT"}
    signatures = set()
    for blas in ([*state["blas"], gomp, *state["blas"]], [gomp, *state["blas"], *state["blas"]]):
        monkeypatch.setattr(arithmetic, "in_force", lambda blas=blas: {**state, "blas": blas})
        monkeypatch.setattr(arithmetic, "cpu", lambda: amd)
        arithmetic.signature.cache_clear()
        signatures.add(arithmetic.signature())
    arithmetic.signature.cache_clear()
    assert len(signatures) == 1 and next(iter(signatures)).startswith("native-"), signatures
