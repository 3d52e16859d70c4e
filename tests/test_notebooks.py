"""End-to-end: every example notebook runs top to bottom without a cell error, on the venv's Python."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "experiments" / "notebooks").glob("*.ipynb"))
# the figures each notebook draws (one per plt.show()); their executed outputs must hold every one as a PNG
FIGURES = {"quickstart.ipynb": 3, "analyse_run.ipynb": 7, "compare_runs.ipynb": 1, "noisy_ranking.ipynb": 2,
           "dynamics.ipynb": 3}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_notebooks_carry_their_outputs(path):
    # make_notebooks.py executes each notebook and writes it with its outputs: a reader sees every figure
    nb = nbformat.read(path, as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert all(c.execution_count for c in nb.cells if c.cell_type == "code"), f"{path.name} was not executed"
    assert not any(o.get("output_type") == "error" for o in outputs)
    assert sum("image/png" in o.get("data", {}) for o in outputs) == FIGURES[path.name]


def test_all_three_notebooks_exist():
    assert {p.name for p in NOTEBOOKS} >= {"quickstart.ipynb", "analyse_run.ipynb", "noisy_ranking.ipynb"}


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, monkeypatch):
    monkeypatch.delenv("PSRO_RUN_DIR", raising=False)
    monkeypatch.delenv("PSRO_SWEEP_DIR", raising=False)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(var, os.environ.get(var, "1"))
    # no MPLBACKEND: the notebooks choose the inline backend themselves, and nothing they call may switch it
    monkeypatch.delenv("MPLBACKEND", raising=False)
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, kernel_name="python3", timeout=120,
                            resources={"metadata": {"path": str(ROOT)}})
    client.execute()   # raises CellExecutionError on any cell error
    # the first code cell prints the kernel's interpreter: it must be this venv's
    first = next(c for c in nb.cells if c.cell_type == "code")
    printed = "".join(o.get("text", "") for o in first.outputs if o.get("output_type") == "stream").strip()
    assert Path(printed).parent.resolve() == Path(sys.executable).parent.resolve(), printed
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not any(o.get("output_type") == "error" for o in outputs)
    # a clean notebook: no warnings or banners (tqdm's IProgress warning, HiGHS's banner from C++) in its outputs
    stderr = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream" and o["name"] == "stderr")
    assert not stderr, stderr
    printed = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    assert "HiGHS" not in printed, printed
    if path.name in FIGURES:
        images = sum("image/png" in o.get("data", {}) for o in outputs)
        assert images == FIGURES[path.name], f"{path.name} shows {images} figures, expected {FIGURES[path.name]}"
