"""The neural best response (psro/oracles/learned/neural_br.py): the aggregated decision problem, fitted Q
iteration against exact best responses on Kuhn and Leduc poker, the registered oracle and its settings."""

import numpy as np
import pyspiel
import pytest

from psro.evaluation.exact import SequenceFormEvaluator
from psro.oracles import make_oracle, oracle_capabilities
from psro.oracles.exact import best_response
from psro.oracles.learned.decisions import sample_decisions
from psro.oracles.learned.env import OpponentMixture, VectorEnv
from psro.oracles.learned.model_based import solve_decisions
from psro.oracles.learned.networks import NeuralPolicy
from psro.oracles.learned.neural_br import NeuralBRConfig, pair_problem, train_neural_br
from psro.policies import random_policies, realization_plans
from psro.policies.acting import TabularStatePolicy, UniformPolicy
from psro.sequence_form.game_tree import build_game_tree


def _error(tree, player, policy, tables, weights) -> tuple:
    """The best response's value against the mixture, minus the response's exact value; and that value."""
    other = 1 - player
    mixed = weights @ realization_plans(tables, tree.infostates[other])
    plans = [mixed if q == other else None for q in range(2)]
    best = best_response(tree, player, plans).value
    plans[player] = realization_plans(policy.to_tabular(tree, player)[None], tree.infostates[player])
    plans[other] = mixed[None]
    value = float(SequenceFormEvaluator(tree).payoffs(plans).reshape(2)[player])
    return best - value, value


def _mixture(tree, player, rng, k=3):
    other = 1 - player
    tables = random_policies(tree.infostates[other], k, rng)
    weights = rng.dirichlet(np.ones(k))
    seats = [tuple(TabularStatePolicy(t, tree.infostates[other]) if q == other else None for q in range(2))
             for t in tables]
    return tables, weights, OpponentMixture(tuple(seats), weights)


def test_the_pair_targets_with_exact_values_are_the_tables_backward_induction():
    """Fed the table's state values, every pair's target is the table's Q: the aggregation loses nothing."""
    tree = build_game_tree(pyspiel.load_game("leduc_poker"))
    rng = np.random.default_rng(3)
    _, _, opponents = _mixture(tree, 0, rng)
    model = sample_decisions(VectorEnv(tree.game, 0, opponents, num_envs=256, rng=4), 40_000, max_states=10_000)
    q, v = solve_decisions(model)
    problem = pair_problem(model)
    assert problem.visits.sum() == model.state.size
    assert np.allclose(problem.targets(v), q[problem.state, problem.action], rtol=0, atol=1e-12)


@pytest.mark.parametrize("player", [0, 1])
def test_exact_best_response_on_kuhn(player):
    tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    tables, weights, opponents = _mixture(tree, player, np.random.default_rng(5 + player))
    result = train_neural_br(tree.game, player, opponents,
                             NeuralBRConfig(total_steps=60_000, hidden=(32,), eval_episodes=400, seed=1))
    assert isinstance(result.policy, NeuralPolicy) and result.policy.mode == "greedy"
    error, value = _error(tree, player, result.policy, tables, weights)
    assert error < 1e-9   # (measured: 0 for both seats: the best response itself)
    assert abs(result.evaluation.mean - value) < 4 * result.evaluation.stderr + 1e-9
    assert 60_000 <= result.training_steps < 1.1 * 60_000


@pytest.mark.slow
def test_close_to_a_best_response_on_leduc():
    # measured, defaults (300,000 decisions), one torch thread: error 0.015 here (the uniform policy misses by
    # 2.44); against random mixtures of tuning seeds 100-102, 0.028, 0.023, 0.008 at 6-8 CPU-seconds, where
    # model_br's table from the same budget misses by 0.020, 0.020, 0.006
    from psro.oracles.learned.oracle import isolated_torch

    tree = build_game_tree(pyspiel.load_game("leduc_poker"))
    tables, weights, opponents = _mixture(tree, 0, np.random.default_rng(7))
    with isolated_torch():
        result = train_neural_br(tree.game, 0, opponents, NeuralBRConfig(eval_episodes=100, seed=2))
    error, _ = _error(tree, 0, result.policy, tables, weights)
    assert error < 0.05


def test_oracle_registered():
    cap = oracle_capabilities("neural_br")
    assert cap.learned and not cap.needs_tree
    oracle = make_oracle("neural_br", None, game="kuhn_poker", total_steps=4000, eval_episodes=50, hidden=[8])
    from psro.oracles.base import Target
    from psro.policies.population import PolicyPopulation, Provenance

    pops = [PolicyPopulation(p, 2) for p in range(2)]
    for pop in pops:
        pop.add(UniformPolicy(2), Provenance(0, "initial"))
    br = oracle.respond(0, Target(player=0, populations=pops, mixtures=(np.ones(1), np.ones(1))), key=(1, 0))
    assert isinstance(br.policy, NeuralPolicy) and br.policy.provenance.oracle == "neural"
    assert br.training.training_steps >= 4000


@pytest.mark.parametrize("field, value", [("sweeps", 0), ("epochs", -1), ("explore", 1.5), ("learning_rate", 0.0),
                                          ("hidden", [0])])
def test_bad_settings_name_the_field(field, value):
    with pytest.raises((ValueError, TypeError), match=field):
        NeuralBRConfig(**{field: value})
