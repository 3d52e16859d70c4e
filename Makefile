# The two commands of the README: `make run` (the main job) and `make test` (the tests).
# Each creates or reuses the virtual environment in .venv and installs what it needs.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# one BLAS thread: tests and benchmarks measure the code, not the BLAS thread pool
PINNED := OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1

.PHONY: run test install bench clean

$(STAMP): setup.cfg pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/python -m pip install -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/psro run experiments/configs/kuhn_poker.yaml

test: $(STAMP)
	$(BIN)/ruff check .
	$(PINNED) $(BIN)/python -m pytest

bench: $(STAMP)
	$(PINNED) $(BIN)/python experiments/benchmarks/solvers.py
	$(PINNED) $(BIN)/python experiments/benchmarks/ranking.py
	$(PINNED) $(BIN)/python experiments/benchmarks/ranking_ucb.py
	$(PINNED) $(BIN)/python experiments/benchmarks/psro_leduc.py
	$(PINNED) $(BIN)/python experiments/benchmarks/jpsro.py

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache .hypothesis
