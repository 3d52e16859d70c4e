"""Importing the packages is cheap: heavy libraries load on first use, and every public name still resolves."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("solvers", "scipy.optimize", "torch", "pyspiel", "matplotlib", "cvxpy", "networkx", "ray", "pandas")


def modules_loaded_by(statement: str) -> set[str]:
    probe = f"{statement}\nimport json, sys\nprint(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    proc = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return set(json.loads(proc.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("statement, allowed", [
    ("import psro", set()),
    ("import games, ranking", set()),
    ("import solvers", {"solvers"}),
    # the solvers' modules load when the registry is first read
    ("from solvers import solve, nash_conv", {"solvers"}),
    ("from psro import PSRO", {"solvers"}),
    # what a worker process unpickling an oracle job imports
    ("import psro.oracles.jobs", set()),
    ("from games import NormalFormGame", set()),
    ("from ranking import elo", {"pandas"}),
])
def test_import_loads_no_heavy_library(statement, allowed):
    assert modules_loaded_by(statement) <= allowed


@pytest.mark.parametrize("package", ["games", "solvers", "ranking", "psro"])
def test_every_public_name_resolves(package):
    probe = (f"import {package}\nmissing = [n for n in {package}.__all__ if getattr({package}, n, None) is None]\n"
             f"assert not missing, missing\nassert set(dir({package})) >= set({package}.__all__)\n"
             f"from {package} import *")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_functions_named_like_their_module_stay_functions():
    # ranking.elo, ranking.alpharank and psro.double_oracle are functions, also after their modules were imported
    probe = ("import ranking.melo_ratings, ranking.elo_ratings\n"
             "import ranking.alpha_rank.alpharank_ranking, ranking.alpha_rank.alpharank_plots\n"
             "import psro.variants.double_oracle_search, inspect\n"
             "from ranking import elo, alpharank\nfrom psro import double_oracle\n"
             "assert all(inspect.isfunction(f) for f in (elo, alpharank, double_oracle)), (elo, alpharank)")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]


def _moved_psro_modules() -> list:
    import psro

    return sorted(psro.deprecation.MOVED.items())


@pytest.mark.parametrize("old, new", [
    ("solvers.moran", "solvers.dynamics.moran"),
    ("solvers.evolutionary_dynamics", "solvers.dynamics.evolutionary_dynamics"),
    ("ranking.alpharank_plots", "ranking.alpha_rank.alpharank_plots"),
] + _moved_psro_modules())
def test_an_old_import_path_warns_and_names_the_new_one(old, new, monkeypatch):
    import importlib

    parent, _, last = old.rpartition(".")
    package = importlib.import_module(parent)
    # the import runs again (and warns again); afterwards the module and the package's attribute are put back
    # together, so that no later test sees the package holding a second copy of the module
    monkeypatch.delitem(sys.modules, old, raising=False)
    if last in vars(package):
        monkeypatch.delattr(package, last)
    with pytest.warns(DeprecationWarning, match=f"import from {new}"):
        module = importlib.import_module(old)
    current = importlib.import_module(new)
    shared = [name for name in vars(module) if not name.startswith("_") and name != "warnings"]
    assert shared and all(getattr(module, name) is getattr(current, name) for name in shared)


def test_the_old_psro_paths_are_the_modules_themselves():
    # a psro module that left the root is its new module under the old name (one object, so monkeypatching either
    # name patches both), and every new path exists; the old names have no files left
    import psro

    for old, new in psro.deprecation.MOVED.items():
        assert importlib.util.find_spec(new) is not None, new
        assert not (ROOT / (old.replace(".", "/") + ".py")).exists(), old
    probe = ("import warnings, sys\nwarnings.simplefilter('ignore')\n"
             "import psro.game_tree, psro.sequence_form.game_tree\n"
             "assert sys.modules['psro.game_tree'] is sys.modules['psro.sequence_form.game_tree']\n"
             "from psro.state import LoopState\nfrom psro.loop.state import LoopState as Same\n"
             "assert LoopState is Same")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.mark.parametrize("module, name, home", [
    ("psro.measures.approximate_gap", "approx_gap_settings", "psro.measures.approx_gap_settings"),
    ("psro.measures.approximate_gap", "approx_gap_due", "psro.measures.approx_gap_schedule"),
    ("psro.oracles.learned.env", "UniformPolicy", "psro.policies.acting"),
    ("psro.family.teams", "TeamPolicyGradient", "psro.oracles.team_pg"),
    ("psro.run.checkpoint", "seal_document", "psro.run.document_seal"),
    ("psro.config", "RUN_FIELDS", "psro.config.model"),   # (a name of the module psro.config was)
    ("psro.loop", "logger", "psro.loop.psro_loop"),
])
def test_a_name_a_module_re_exported_before_warns_and_names_its_home(module, name, home):
    import importlib

    with pytest.warns(DeprecationWarning, match=f"import it from {home}"):
        value = getattr(importlib.import_module(module), name)
    assert value is getattr(importlib.import_module(home), name)
    with pytest.raises(AttributeError):
        getattr(importlib.import_module(module), "no_such_name")
