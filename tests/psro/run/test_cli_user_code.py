"""User code by name (issue 24): a user's oracle, evaluator, policy class and game, each in a module of a package
outside the library, named as ``module:name`` in a YAML config, run by ``psro run`` on a pool of two worker
processes, stopped, and resumed by ``psro resume`` (which imports them only when the user allows the module)."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from psro.run.cli import main

ROOT = Path(__file__).resolve().parents[3]

GAME = '''
"""Biased matching pennies played in turns; player 1 does not see player 0's coin. Player 0 gets
[[2, -1], [-1, 1]][a0][a1], player 1 the negative: both play heads (0) with probability 2/5, value 1/5."""
import numpy as np

from games import SequentialGame
from games.custom_sequential import TERMINAL

PAYOFF = [[2.0, -1.0], [-1.0, 1.0]]


class BiasedPennies(SequentialGame):
    name = "user_biased_pennies"
    num_distinct_actions = 2
    max_game_length = 2
    min_utility, max_utility = -2.0, 2.0
    information_state_tensor_shape = (2,)

    def initial_state(self):
        return ()

    def current_player(self, state):
        return TERMINAL if len(state) == 2 else len(state)

    def legal_actions(self, state):
        return [0, 1]

    def apply_action(self, state, action):
        return state + (action,)

    def returns(self, state):
        return [PAYOFF[state[0]][state[1]], -PAYOFF[state[0]][state[1]]]

    def information_state(self, state, player):
        return f"p{player}" + (f" {state[player]}" if len(state) > player else "")

    def information_state_tensor(self, state, player):
        return np.eye(2)[player]
'''

POLICIES = '''
"""A policy class of the user's: a table over information-state strings. It acts state by state and carries the
policy codec's methods (architecture, to_arrays, from_arrays), so it is saved and sent to workers as arrays."""
import numpy as np


class TablePolicy:
    def __init__(self, table, keys):
        self.table, self.keys = np.asarray(table, dtype=np.float64), list(keys)

    def action_probabilities(self, state, player):
        return self.table[self.keys.index(state.information_state_string(player))]

    def to_tabular(self, tree, player):
        return self.table[[self.keys.index(key) for key in tree.infostates[player].keys]]

    def architecture(self):
        return {"keys": self.keys}

    def to_arrays(self):
        return {"table": self.table}

    @classmethod
    def from_arrays(cls, architecture, arrays):
        return cls(arrays["table"], architecture["keys"])
'''

ORACLES = '''
"""The user's oracle: the exact best response, returned as the user's TablePolicy (so populations hold policy
objects: it registers as learned)."""
import os

import numpy as np

from psro.oracles import BestResponse, register_oracle
from psro.oracles.exact import best_response
from psro.policies import as_tabular, realization_plans
from user_pkg.policies import TablePolicy

@register_oracle("table_br", learned=True, needs_tree=True)
class TableBestResponse:
    learned = True

    def __init__(self, tree, seed=0):
        self.tree = tree

    def respond(self, player, target, *, key=None):
        plans = []
        for q, (pop, weights) in enumerate(zip(target.populations, target.mixtures)):
            tables = [as_tabular(policy, self.tree, q) for policy in pop.policies]
            plans.append(weights @ realization_plans(np.stack(tables), self.tree.infostates[q]))
        br = best_response(self.tree, player, plans)
        with open(os.environ["USER_PKG_LOG"], "a") as log:   # which process answered
            log.write(f"{os.getpid()}\\n")
        return BestResponse(player, TablePolicy(br.policy, self.tree.infostates[player].keys), br.value)
'''

EVALUATORS = '''
"""The user's evaluator: exact payoffs by walking the game with pyspiel states (no sequence form)."""
import itertools

import numpy as np

from psro.evaluation import register_evaluator
from psro.evaluation.base import block_done, record_exact_block


def _value(state, tables, infostates):
    if state.is_terminal():
        return np.asarray(state.returns())
    player = state.current_player()
    row = tables[player][infostates[player].keys.index(state.information_state_string(player))]
    return sum(row[a] * _value(state.child(a), tables, infostates) for a in state.legal_actions())


@register_evaluator("exact_walk", needs_tree=True)
class ExactWalk:
    name, exact = "exact_walk", True

    def __init__(self, tree):
        self.tree = tree

    def evaluate(self, populations, indices, *, meta_game=None, on_batch=None):
        infostates = self.tree.infostates
        payoffs = np.zeros((len(populations), *map(len, indices)))
        for cell in itertools.product(*[range(len(i)) for i in indices]):
            tables = [pop.policies[list(ix)[c]] for pop, ix, c in zip(populations, indices, cell)]
            payoffs[(slice(None), *cell)] = _value(self.tree.game.new_initial_state(), tables, infostates)
        return record_exact_block(payoffs, indices, meta_game, on_batch)

    def done(self, meta_game, indices):
        return block_done(meta_game, indices, 1)
'''

CONFIG = {"name": "user_code", "game": "user_pkg.games:BiasedPennies", "oracle": "user_pkg.oracles:table_br",
          "evaluator": "user_pkg.evaluators:exact_walk", "meta_solver": "nash",
          "oracle_dispatch": "executor", "approx_gap_every": None, "seed": 0, "progress": False}


@pytest.fixture(scope="module")
def user_package(tmp_path_factory):
    """``user_pkg`` (games, policies, oracles, evaluators) in a folder outside the library, and a config naming
    its code."""
    folder = tmp_path_factory.mktemp("user")
    package = folder / "user_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name, text in (("games", GAME), ("policies", POLICIES), ("oracles", ORACLES), ("evaluators", EVALUATORS)):
        (package / f"{name}.py").write_text(textwrap.dedent(text))
    config = folder / "config.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    return folder, config


def psro(folder: Path, *args, timeout=180):
    env = {key: value for key, value in os.environ.items() if key != "PSRO_IMPORT"}
    env.update(PYTHONPATH=f"{ROOT}{os.pathsep}{folder}", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MPLBACKEND="Agg", USER_PKG_LOG=str(folder / "oracle_pids.log"))
    return subprocess.run([sys.executable, "-m", "psro.run.cli", *map(str, args)], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
def test_user_code_runs_on_workers_checkpoints_and_resumes(user_package, tmp_path, monkeypatch, capsys):
    folder, config = user_package
    stopped = tmp_path / "stopped"
    first = psro(folder, "run", config, "--executor", 2, "--out", stopped, "--iterations", 1)   # stops after it. 1
    assert first.returncode == 0, first.stderr
    pids = {int(line) for line in (folder / "oracle_pids.log").read_text().split()}
    assert os.getpid() not in pids and len(pids) >= 1   # the oracle ran in worker processes, which imported user_pkg

    # the run directory names user code; resuming it imports that code only when the user allows the module
    monkeypatch.delenv("PSRO_IMPORT", raising=False)   # (refused before anything is imported: in process)
    assert main(["resume", str(stopped), "--iterations", "5"]) == 2
    assert "--import user_pkg" in capsys.readouterr().err
    resumed = psro(folder, "resume", stopped, "--iterations", 5, "--import", "user_pkg")
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming {stopped} at iteration 1" in resumed.stdout

    # NashConv by hand: both uniform, each gains 1/4 (0.5); the meta-Nash (uniform, tails) of {U, heads} x {U, tails}
    # lets player 0 gain 1 by tails (1.0); then player 0 has both coins and player 1 mixes U and tails to heads 2/5:
    # solved (0), a fixed point where the run stops
    history = pd.read_csv(stopped / "history.csv")
    assert history["iteration"].tolist() == [0, 1, 2]
    np.testing.assert_allclose(history["gap"], [0.5, 1.0, 0.0], atol=1e-9)
    strategy = json.loads((stopped / "meta_strategy.json").read_text())
    with np.load(stopped / "population.npz", allow_pickle=False) as population:
        kinds = [json.loads(str(a))["kind"] for a in population["architecture_0"]]
    assert kinds[0] == "uniform" and set(kinds[1:]) == {"user_pkg.policies:TablePolicy"}
    # the meta-strategy's mixture of the members plays heads with probability 2/5 for both players
    heads = []
    for p in range(2):
        with np.load(stopped / "population.npz", allow_pickle=False) as population:
            rows = [np.full(2, 0.5) if json.loads(str(a))["kind"] == "uniform"
                    else population[f"member_{p}_{k}__table"][0] for k, a in enumerate(population[f"architecture_{p}"])]
        heads.append(float(np.asarray(strategy["marginals"][p]) @ np.array(rows)[:, 0]))
    assert heads == pytest.approx([0.4, 0.4], abs=1e-9)
