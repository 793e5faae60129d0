# Two commands do everything on a fresh machine:
#   make book   -> creates .venv, executes every chapter (papermill), renders _build/html/index.html
#   make test   -> creates .venv, executes every chapter (reusing up-to-date ones), runs unit tests,
#                  results tests (the papers' numbers), nbval (re-execution must reproduce) and ruff
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
JOBS   ?= 2
# One thread per chapter: reproducible numbers, and two chapters run side by side on two cores.
export OMP_NUM_THREADS := 1
export MKL_NUM_THREADS := 1
export PYTHONHASHSEED  := 0
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: book test execute venv unit results nbval lint bench clean help

help:
	@sed -n '1,6p' Makefile

venv: $(STAMP)
$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3" > /dev/null
	touch $@

execute: $(STAMP)
	$(PY) scripts/execute_book.py --jobs $(JOBS)

book: execute
	scripts/vendor_mathjax.sh _build/executed/_vendor/mathjax
	$(VENV)/bin/jupyter-book build _build/executed --config "$(CURDIR)/_config.yml" --toc "$(CURDIR)/_toc.yml" \
		--path-output "$(CURDIR)" --warningiserror --keep-going
	@echo "open _build/html/index.html"

unit: $(STAMP)
	$(VENV)/bin/pytest -m "not results" tests

results: execute
	$(VENV)/bin/pytest -m results tests

nbval: execute  # $(JOBS) notebooks at once, so one worker process each (lib.parallel)
	BOOK_WORKERS=$${BOOK_WORKERS:-1} $(VENV)/bin/pytest -m "" --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg \
		-n $(JOBS) --dist loadfile -p no:cacheprovider _build/executed/book

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

test: execute
	$(VENV)/bin/ruff check .
	$(VENV)/bin/pytest -m "" -n $(JOBS) tests
	$(MAKE) --no-print-directory nbval

bench: $(STAMP)
	for b in benchmarks/bench_*.py; do $(PY) $$b || exit 1; done

clean:
	rm -rf _build
