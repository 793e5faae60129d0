"""Bounded and contained (issue 50): no parameter or file can make a run exhaust the machine, hang, or write where it
does not belong. Each case is refused before anything executes (exit 2, one sentence naming the parameter, the
estimate and the machine's figure) or stopped where it happens (a cell past its time limit). Marked ``faults``."""

from __future__ import annotations

import http.server
import os
import socket
import subprocess
import sys
import threading
import zipfile

import numpy as np
import pytest

from bookrun import checks
from bookrun.checks import validation_cells
from bookrun.manifest import load_manifest
from bookrun.processes import kernel_env
from lib.core import budget, engine, settings
from tests.bookrun.test_checks_faults import _bookrun, _nothing_ran, _refused
from tests.bookrun.test_cli import ROOT
from tests.bookrun.test_manifest import HEADER

pytestmark = pytest.mark.faults


def _bomb(path, shape=(131072, 131072)):
    """A .npz whose header declares ``shape`` float64 (128 GiB for the default: its analysis would need over a TiB,
    beyond any machine this runs on) and holds 1 KiB: reading it would allocate the whole array; its header alone
    says so."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open("W_hh.npy", "w", force_zip64=True) as member:
            np.lib.format.write_array_header_2_0(member, {"descr": "<f8", "fortran_order": False, "shape": shape})
            member.write(bytes(1024))
    return path


#: (chapter, parameters, what the refusal names): every case planted together in one check (one process).
OUT_OF_REACH = {
    "copy-width": ("copy_task", {"n_hidden": 100000}, ["would need about", "lower n_hidden"]),
    "task-solutions": ("task_sine", {"solutions": 100000}, ["estimated at", "lower solutions", "--allow-long"]),
    "task-length": ("task_sine", {"task_params": {"length": 10**9}}, ["task_params={'length': 1000000000}",
                                                                      "alone is too large to draw"]),
    "sweep-widths": ("many_solutions", {"widths": [100000]}, ["would need about", "widths"]),
    "sweep-solutions": ("many_solutions", {"solutions": 100000}, ["estimated at", "--allow-long"]),
    "own-hidden": ("your_network", {"hidden": 100000}, ["would need about", "lower hidden"]),
    "own-zip-bomb": ("your_network", {"weights": "BOMB"}, ["would need about", "131,072³ units", "lower weights"]),
    "lenses-rows": ("two_lenses", {"probe_rows": 10**7}, ["would need about", "lower probe_rows"]),
    "open-draws": ("paper_a_open", {"draws": 10**7}, ["estimated at", "lower draws"]),
    "dependence-alphas": ("task_dependence", {"alpha_step": 1e-9}, ["would need about", "alpha_step"]),
    "annulus-steps": ("annulus", {"steps": 10**9}, ["estimated at", "lower steps"]),
    "at-scale-width": ("at_scale", {"width": 2048, "rings": 32, "angles": 128}, ["would need about", "lower rings"]),
    "hat-steps": ("mexican_hat", {"train_steps": 10**8}, ["estimated at", "lower train_steps"]),
}  # fmt: skip


def _check(cases: dict, tmp_path, env: dict | None = None) -> dict[str, str]:
    manifest = load_manifest(ROOT / "book")
    cells = {}
    for case, (stem, values, _) in cases.items():
        entry = manifest.entry(stem)
        values = {k: str(_bomb(tmp_path / "bomb.npz")) if v == "BOMB" else v for k, v in values.items()}
        cells[case] = validation_cells(entry["source"], {**entry["parameters"], **values})
    return checks.check_values(cells, {**kernel_env(), **(env or {})}, ROOT / "book")


@pytest.fixture(scope="module")
def refused(tmp_path_factory):
    return _check(OUT_OF_REACH, tmp_path_factory.mktemp("bounds"))


@pytest.mark.parametrize("case", list(OUT_OF_REACH))
def test_a_run_out_of_reach_is_refused_naming_the_parameter_and_the_estimate(refused, case):
    assert case in refused, f"{case} was not refused: {refused}"
    for fragment in OUT_OF_REACH[case][2]:
        assert fragment in refused[case], refused[case]
    if "would need about" in refused[case]:
        assert "this machine has" in refused[case] and "available" in refused[case], refused[case]


def test_the_book_s_own_values_pass_and_allow_long_lets_a_long_run_start(tmp_path, monkeypatch):
    monkeypatch.setenv("BOOK_BUILD_DIR", str(tmp_path / "_build"))
    book = {"book": ("task_sine", {}, []), "long": ("task_sine", {"solutions": 100000}, [])}
    assert _check(book, tmp_path, {settings.ALLOW_LONG: "1"}) == {}
    assert list(_check(book, tmp_path)) == ["long"]


def test_the_refusal_reaches_the_terminal_before_anything_runs(tmp_path):
    proc = _bookrun(tmp_path, "--only", "copy_task", "-p", "n_hidden", "100000")
    _refused(proc, "chapter 'copy_task' refuses its parameters", "would need about", "lower n_hidden")
    _nothing_ran(tmp_path)


def test_an_array_file_is_judged_by_its_headers_before_anything_is_read(tmp_path, monkeypatch):
    from lib.own_network import files

    bomb = _bomb(tmp_path / "bomb.npz", (32768, 32768))
    assert files.declared_arrays(bomb) == {"W_hh": ((32768, 32768), 8 * 32768**2)}
    monkeypatch.setattr(budget, "available_memory", lambda: 2**30)
    with pytest.raises(ValueError, match=r"declares 8 GiB of arrays \(the largest, 'W_hh'.*nothing was read"):
        files.read_file(bomb)


def test_a_pipe_named_npz_is_refused_as_what_it_is(tmp_path):
    from lib.own_network.chapter import OwnNetworkStudy

    fifo = tmp_path / "weights.npz"
    os.mkfifo(fifo)
    with pytest.raises(FileNotFoundError, match="is not a regular file"):
        OwnNetworkStudy(weights=str(fifo))


def test_a_task_folder_imports_its_task_modules_only(tmp_path):
    from lib.paper_a.tasks import load_task_modules

    marker = tmp_path / "ran"
    script = f"open({str(marker)!r}, 'w').write('imported')\n"
    (tmp_path / "script.py").write_text(script)
    with pytest.raises(FileNotFoundError, match=r"a folder with no task module .*\['script.py'\], none imported"):
        load_task_modules(tmp_path)
    (tmp_path / "fault_folder_task.py").write_text(
        "from lib.paper_a.tasks import as_batch, register_task, rng_for\n\n"
        '@register_task("fault_folder_task", n_inputs=1, n_outputs=1, defaults={})\n'
        "def generate(batch_size, *, seed):\n"
        "    x = rng_for(seed).standard_normal((batch_size, 5, 1))\n"
        "    return as_batch(x, x)\n"
    )
    assert load_task_modules(tmp_path) == ["fault_folder_task"]
    assert not marker.exists(), "an unrelated script in the folder was run"


@pytest.fixture
def http_port():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()


@pytest.fixture
def silent_port():
    """A TCP server that accepts and never says a word (a scheduler hung, or another service)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    yield sock.getsockname()[1]
    sock.close()


def test_a_scheduler_address_is_accepted_only_after_a_dask_handshake(http_port, silent_port):
    with pytest.raises(ConnectionError, match="answers HTTP: this is not a Dask scheduler"):
        engine.handshake(f"tcp://127.0.0.1:{http_port}", timeout=2)
    with pytest.raises(ConnectionError, match="is not a Dask scheduler: it answered nothing"):
        engine.handshake(f"tcp://127.0.0.1:{silent_port}", timeout=2)
    with pytest.raises(ConnectionError, match="is not a scheduler address; give tcp://host:port"):
        engine.handshake("garbage")


@pytest.mark.parametrize("where", ["environment", "parameter"])
def test_a_dashboard_given_as_the_scheduler_is_refused_without_a_traceback(tmp_path, http_port, where):
    address = f"tcp://127.0.0.1:{http_port}"
    if where == "environment":
        proc = _bookrun(tmp_path, "--only", "schur_coordinates", env={settings.SCHEDULER: address})
    else:
        proc = _bookrun(tmp_path, "--only", "many_solutions", "-p", "scheduler", address)
    _refused(proc, "answers HTTP: this is not a Dask scheduler")
    _nothing_ran(tmp_path)


def test_a_garbage_scheduler_is_refused_in_one_sentence(tmp_path):
    proc = _bookrun(tmp_path, "--only", "schur_coordinates", env={settings.SCHEDULER: "garbage"})
    _refused(proc, "$BOOK_SCHEDULER='garbage' is not a scheduler address")
    assert proc.stderr.count("\n") <= 2, proc.stderr


def test_out_is_gone_and_list_names_its_checkout(tmp_path):
    proc = _bookrun(tmp_path, "--only", "schur_coordinates", "--out", str(tmp_path / "alt"))
    _refused(proc, "--out=", "is gone", "BOOK_BUILD_DIR=DIR")
    assert not (tmp_path / "results.json").exists() and not (tmp_path / "alt").exists()
    listed = subprocess.run([sys.executable, "-m", "bookrun", "--list"], capture_output=True, text=True,
                            cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)  # fmt: skip
    first = listed.stdout.splitlines()[:2]
    assert listed.returncode == 0 and first[0] == f"running the book of the checkout {ROOT} (started from {tmp_path})"
    assert first[1].startswith(f"chapters of the checkout {ROOT}"), first


def test_a_cell_past_its_time_limit_stops_the_run_naming_the_cell(tmp_path):
    book = tmp_path / "book"
    book.mkdir()
    sleeper = "\n```{code-cell} ipython3\nimport time\ntime.sleep(120)\n```\n"
    (book / "slow.md").write_text(HEADER.format(body="n = int(n)") + sleeper)
    (book / "chapters.yml").write_text("slow: {}\n")
    proc = _bookrun(tmp_path, "--book-dir", str(book), "--toc", "/none", "--cell-timeout", "3")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    message = "CellTimeout: code cell 3 of 3 (it starts: import time) ran past the limit of 3 s per cell"
    assert message in proc.stdout and "--cell-timeout SECONDS raises it" in proc.stdout, proc.stdout


def test_a_bad_cell_timeout_is_refused(tmp_path, monkeypatch):
    proc = _bookrun(tmp_path, "--only", "schur_coordinates", "--cell-timeout", "-1")
    _refused(proc, "--cell-timeout=-1 must be a positive number of seconds")
    monkeypatch.setenv(settings.CELL_TIMEOUT, "soon")
    with pytest.raises(ValueError, match="BOOK_CELL_TIMEOUT='soon' is not allowed"):
        settings.cell_timeout()


def test_a_kernel_cannot_allocate_past_its_cap():
    """The cap every kernel inherits (:func:`lib.core.budget.cap_memory`): past it, MemoryError in that process."""
    code = ("from lib.core import budget\nimport numpy as np\nbudget.cap_memory(2**30)\n"
            "try:\n    np.ones(2**31 // 8)\nexcept MemoryError:\n    print('refused')\n")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.stdout.strip() == "refused", out.stdout + out.stderr


@pytest.mark.parametrize("chapter", list(budget.REFERENCE_SIZES))
def test_the_reference_sizes_are_the_chapters_values(chapter):
    """A chapter whose settings are notebook cells is measured against the sizes its reference time was taken at;
    a changed default there must come with a new measurement (budget.REFERENCE_SECONDS and REFERENCE_SIZES)."""
    from bookrun.manifest import notebook_parameters

    defaults = {k: v["default"] for k, v in notebook_parameters(ROOT / "book" / f"{chapter}.md").items()}
    assert {k: int(defaults[k]) for k in budget.REFERENCE_SIZES[chapter]} == budget.REFERENCE_SIZES[chapter]
