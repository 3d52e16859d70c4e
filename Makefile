# The two commands of the README: `make run` (the main job) and `make test` (the tests), plus `make docs` (the
# documentation: tutorials, reference, results and the API reference) and `make bench` (the quick form of every
# benchmark).
# Each creates or reuses the virtual environment in .venv and installs what it needs, with the versions pinned in
# constraints.txt (setup.cfg keeps the ranges a library user gets). Extra pip options: make install PIP_ARGS="...".
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DOCS_STAMP := $(VENV)/.installed-docs
PIP_ARGS ?=
PIP := $(BIN)/python -m pip install -c constraints.txt $(PIP_ARGS)
# one BLAS thread: tests and benchmarks measure the code, not the BLAS thread pool
PINNED := OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1

.PHONY: run test test-slow install docs fuzz bench clean

$(STAMP): setup.cfg pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip
	$(PIP) -e '.[dev]'
	# the exact evaluator's numba kernels compiled into numba's cache once here, not in the first measure
	$(BIN)/python -c 'from psro.measures.exact import compile_walks; compile_walks()'
	touch $(STAMP)

$(DOCS_STAMP): $(STAMP)
	$(PIP) -e '.[dev,docs]'
	touch $(DOCS_STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/psro run experiments/configs/kuhn_poker.yaml

# The suite in two tiers: `make test` every test not marked slow, `make test-slow` the others (the whole
# reproductions, the notebooks and the longest end-to-end runs, each a second check of what the first tier covers at
# smaller scale); CI runs both, and `.venv/bin/python -m pytest` alone runs both in one process.
# One pytest worker per core (pytest-xdist); bytecode written even where the environment sets
# PYTHONDONTWRITEBYTECODE: the suite's subprocesses, pool and Ray workers and notebook kernels then load the package
# compiled once instead of compiling it each.
test: $(STAMP)
	$(BIN)/ruff check .
	$(PINNED) PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n auto --dist worksteal --durations=15 -m "not slow"

test-slow: $(STAMP)
	$(PINNED) PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n auto --dist worksteal --durations=15 -m slow

# The documentation (MkDocs): the tutorials, reference and results pages of docs/ and the API reference from the
# numpy docstrings (mkdocstrings); any warning fails the build. Output: site/.
docs: $(DOCS_STAMP)
	$(BIN)/mkdocs build --strict

# The large fuzz of every registered solver (tests/solvers/test_fuzz.py): 10,000 generated games, every call
# recorded; the counts go to runs/fuzz-report.json. Hours on 2 cores, so no per-test time limit here.
FUZZ_EXAMPLES ?= 10000
fuzz: $(STAMP)
	mkdir -p runs
	$(PINNED) FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) FUZZ_REPORT=runs/fuzz-report.json \
		$(BIN)/python -m pytest tests/solvers/test_fuzz.py -q --timeout=0

# The quick form (`--quick`) of every benchmark that `python -m experiments.index --benchmarks` lists, one after
# another, stopping at the first failure: small sizes and budgets, written under runs/ (or nowhere), never over the
# committed results. The full runs are the commands of experiments/INDEX.md, without --quick.
bench: $(STAMP)
	set -e; modules=$$($(BIN)/python -m experiments.index --benchmarks); \
	for module in $$modules; do \
		echo "== $$module --quick"; \
		$(PINNED) $(BIN)/python -m $$module --quick; \
	done

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache .hypothesis site build dist
