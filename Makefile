# Two commands do everything on a fresh machine:
#   make book   -> creates .venv, executes every chapter (papermill), renders _build/html/index.html
#   make test   -> creates .venv, executes every chapter (reusing up-to-date ones), renders the HTML and the PDF,
#                  runs unit tests, results tests (the papers' numbers), the browser test of every page (headless
#                  Chromium), nbval (re-execution must reproduce) and ruff
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
JOBS   ?= 2
# The book's arithmetic (lib/core/arithmetic.py: one thread, MKL, ATen, OpenBLAS and numpy on their AVX2 kernels) is
# set where each process starts: bookrun puts it in every chapter's kernel, and every other process that computes
# (pytest, nbval, the benchmarks) starts through $(PINNED). BOOK_ARITHMETIC=native turns it off.
PINNED := $(PY) -m bookrun.arithmetic --
export PYTHONHASHSEED  := 0
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: book html pdf dist test execute venv unit results faults browser nbval lint bench bench-book publish clean help

help:
	@sed -n '1,7p' Makefile

venv: $(STAMP)
$(STAMP): requirements.txt requirements-neurogym.txt pyproject.toml lib/core/mkl_vendor.c
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -r requirements-neurogym.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	@# MKL's vendor check answered on non-Intel AVX2 CPUs (lib/core/mkl_vendor.c, lib.core.mkl_vendor): built with the
	@# system C compiler into .venv/lib, loaded before torch by a .pth hook where the pins are in force
	$(PY) -m lib.core.mkl_vendor --install
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3" > /dev/null
	touch $@

execute: $(STAMP)
	$(PY) -m bookrun --jobs $(JOBS)

# Every tool runs as "$(PY) -m" or "$(PY) -c", never through a script of .venv/bin, whose first line names the absolute
# path of the interpreter it was installed with: a moved or copied checkout builds with its own environment.
JB     := $(PY) -c "import sys; from jupyter_book.cli.main import main; sys.exit(main())"
JB_BUILD = $(JB) build _build/executed --config "$(CURDIR)/_config.yml" \
	--toc "$(CURDIR)/_toc.yml" --path-output "$(CURDIR)" --warningiserror --keep-going

book: html
	@echo "open _build/html/index.html"

html: execute
	scripts/vendor_mathjax.sh _build/executed/_vendor/mathjax
	$(JB_BUILD)

# The whole book as one PDF: the one-page HTML build printed by headless Chromium (no LaTeX).
pdf: execute
	scripts/vendor_mathjax.sh _build/executed/_vendor/mathjax
	$(JB_BUILD) --builder singlehtml
	@# Sphinx's one-page build writes the page to book/intro.html but its asset paths relative to the root
	cp _build/singlehtml/book/intro.html _build/singlehtml/book.html
	$(PY) scripts/browser.py _build/singlehtml/book.html _build/pdf/book.pdf

# The built book as one archive for readers (bookrelease.dist): dist/<name>-<version>.tar.gz, the name and version of
# pyproject.toml, holding the HTML (its index.html opens offline), the PDF, claims.json, results.json, provenance.json,
# the scorecard as CSV and READ-ME-FIRST.txt. tests/browser/test_dist.py builds and opens one in make test.
dist: html pdf
	$(PY) -m bookrelease.dist --out dist

unit: $(STAMP)
	$(PINNED) $(PY) -m pytest -m "not results and not browser" tests

results: execute
	$(PINNED) $(PY) -m pytest -m results tests

# the fault-injection suite alone (a bad input or file planted, the refusal or recovery checked): about a minute
faults: $(STAMP)
	$(PINNED) $(PY) -m pytest -m faults -n $(JOBS) -p no:cacheprovider tests

# $(JOBS) notebooks at once, so one worker process each (lib.core.engine); no progress bars (BOOK_PROGRESS=off);
# the longest re-executions first (tests/nbval_order.py), so the two workers finish together
nbval: execute
	BOOK_PROGRESS=off BOOK_WORKERS=$${BOOK_WORKERS:-1} $(PINNED) $(PY) -m pytest -m "" --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg \
		-n $(JOBS) --dist loadfile --no-loadscope-reorder -p tests.nbval_order -p no:cacheprovider _build/executed/book

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

browser: html pdf
	$(PINNED) $(PY) -m pytest -m browser tests/browser

test: execute html
	@if command -v chromium >/dev/null; then $(MAKE) --no-print-directory pdf; \
	else echo "no chromium: the PDF and the browser test are skipped (apt-get install chromium poppler-utils)"; fi
	$(VENV)/bin/ruff check .
	$(PINNED) $(PY) -m pytest -m "" -n $(JOBS) tests
	$(MAKE) --no-print-directory nbval

# every benchmark but bench_book.py, which executes ten chapters cold and runs make test (make bench-book, ~20 min)
bench: $(STAMP)
	for b in benchmarks/bench_*.py; do [ $$b = benchmarks/bench_book.py ] || $(PINNED) $(PY) $$b || exit 1; done

bench-book: $(STAMP)
	$(PINNED) $(PY) benchmarks/bench_book.py

# the executed book's values, claims and provenance become the published reference (published/); refused unless the
# build is complete and pinned. Commit the result on its own, saying why the book's numbers changed; a change of a
# verdict needs WHY="..." (recorded in published/changes.json, shown on the page "Changes to the verdicts").
publish: execute
	$(PY) -m bookrelease.publish $(if $(WHY),--why "$(WHY)")

clean:
	rm -rf _build
