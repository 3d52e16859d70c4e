"""Policies to and from OpenSpiel's TabularPolicy (psro/openspiel_policy.py and PSRO.openspiel_policy).

References: OpenSpiel's ``exploitability.nash_conv`` and ``expected_game_score``
on the exported policy against our exact gap and sequence-form payoffs.
"""

import numpy as np
import pyspiel
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from open_spiel.python.algorithms import exploitability
from open_spiel.python.algorithms.expected_game_score import policy_value
from open_spiel.python.policy import TabularPolicy, UniformRandomPolicy

from games import catalog
from psro import PSRO
from psro.evaluation import SequenceFormEvaluator
from psro.policies import realization_plans, to_openspiel_dict
from psro.policies.openspiel import from_openspiel_policy, to_openspiel_policy
from psro.sequence_form.game_tree import build_game_tree


def random_policy(info, rng, sparsity=0.0):
    """A random policy of one player: legal rows drawn from a Dirichlet, some entries zeroed."""
    raw = rng.dirichlet(np.ones(info.num_actions), size=info.num_infostates)
    raw = np.where(rng.random(raw.shape) < sparsity, 0.0, raw) * info.legal_mask
    raw[raw.sum(axis=1) == 0] = info.legal_mask[raw.sum(axis=1) == 0]
    return raw / raw.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("game, meta_solver", [("kuhn_poker", "nash"), ("kuhn_poker(players=3)", "prd")])
def test_exported_meta_strategy_has_our_gap_as_its_nash_conv(game, meta_solver):
    solver = PSRO(game, meta_solver=meta_solver, progress=False)
    for _ in range(4):
        solver.run(iterations=1)
        policy = solver.openspiel_policy()
        assert exploitability.nash_conv(solver.game, policy) == pytest.approx(solver.gap, abs=1e-12)
    assert solver.gap > 0   # still a non-trivial comparison at the last iteration


def test_exported_policy_of_a_matrix_game_has_our_gap_as_its_nash_conv():
    game = catalog.random_game((6, 5), rng=4)
    solver = PSRO(game, progress=False)
    solver.run(iterations=2)
    policy = solver.openspiel_policy()
    assert exploitability.nash_conv(solver.game, policy) == pytest.approx(solver.gap, abs=1e-12)
    # and each player's row is the meta-strategy's mixed strategy
    mixed = [pop.policies[:, 0, :k].T @ w for pop, w, k in zip(solver.populations, solver.meta_strategy.marginals,
                                                                 game.shape)]
    for p, x in enumerate(mixed):
        np.testing.assert_allclose(policy.policy_for_key(solver.tree.infostates[p].keys[0])[:game.shape[p]], x,
                                   atol=1e-12)


def test_exported_members_play_their_own_policies():
    solver = PSRO("kuhn_poker", progress=False)
    solver.run(iterations=3)
    policy = solver.openspiel_policy(members=[2, 1])
    imported = from_openspiel_policy(policy, solver.tree)
    np.testing.assert_array_equal(imported[0], solver.populations[0].policies[2])
    np.testing.assert_array_equal(imported[1], solver.populations[1].policies[1])
    # the value OpenSpiel computes for the two members is our sequence-form payoff of that profile
    values = policy_value(solver.game.new_initial_state(), [policy, policy])
    np.testing.assert_allclose(values, solver.meta_game.mean_game().payoffs[:, 2, 1], atol=1e-12)
    mixed = from_openspiel_policy(solver.openspiel_policy(members=[None, 0]), solver.tree)
    np.testing.assert_array_equal(mixed[0], solver.aggregate_policies()[0])


@settings(max_examples=25)
@given(seed=st.integers(0, 2**32 - 1), sparsity=st.sampled_from([0.0, 0.5, 0.9]),
       game=st.sampled_from(["kuhn_poker", "kuhn_poker(players=3)", "leduc_poker"]))
def test_round_trip_is_exact(seed, sparsity, game):
    tree = TREES[game]
    rng = np.random.default_rng(seed)
    policies = [random_policy(info, rng, sparsity) for info in tree.infostates]
    exported = to_openspiel_policy(policies, tree)
    back = from_openspiel_policy(exported, tree)
    for ours, theirs in zip(policies, back):
        assert theirs.dtype == np.float64 and np.array_equal(ours, theirs)
    # the exported rows are the ones to_openspiel_dict lists, and export(import(q)) == q for OpenSpiel's side
    for p, info in enumerate(tree.infostates):
        listed = to_openspiel_dict(policies[p], info)
        key = info.keys[int(rng.integers(info.num_infostates))]
        assert [(a, exported.policy_for_key(key)[a]) for a, _ in listed[key]] == listed[key]
    again = to_openspiel_policy(back, tree)
    assert np.array_equal(again.action_probability_array, exported.action_probability_array)


TREES = {name: build_game_tree(pyspiel.load_game(name))
         for name in ["kuhn_poker", "kuhn_poker(players=3)", "leduc_poker"]}


def test_expected_returns_match_the_sequence_form(kuhn):
    rng = np.random.default_rng(0)
    policies = [random_policy(info, rng) for info in kuhn.infostates]
    exported = to_openspiel_policy(policies, kuhn)
    plans = [realization_plans(p[None], info) for p, info in zip(policies, kuhn.infostates)]
    ours = SequenceFormEvaluator(kuhn).payoffs(plans).reshape(2)
    theirs = policy_value(kuhn.game.new_initial_state(), [exported, exported])
    np.testing.assert_allclose(theirs, ours, atol=1e-12)


def test_none_leaves_a_player_uniform(kuhn):
    pure = np.zeros((kuhn.infostates[0].num_infostates, 2))
    pure[:, 1] = 1.0
    back = from_openspiel_policy(to_openspiel_policy([pure, None], kuhn), kuhn)
    np.testing.assert_array_equal(back[0], pure)
    np.testing.assert_array_equal(back[1], np.full((kuhn.infostates[1].num_infostates, 2), 0.5))


def test_bad_input_is_named(kuhn):
    uniform = [np.full((info.num_infostates, 2), 0.5) for info in kuhn.infostates]
    with pytest.raises(ValueError, match="one entry per player"):
        to_openspiel_policy(uniform[:1], kuhn)
    with pytest.raises(ValueError, match=r"policies\[1\] must be one policy"):
        to_openspiel_policy([uniform[0], np.stack([uniform[1]] * 2)], kuhn)
    with pytest.raises(ValueError, match=r"every row of policies\[0\] must sum to one"):
        to_openspiel_policy([uniform[0] * 0.9, None], kuhn)
    with pytest.raises(ValueError, match=r"policies\[0\] must have shape"):
        to_openspiel_policy([uniform[0][:3], None], kuhn)
    with pytest.raises(TypeError, match="TabularPolicy"):
        from_openspiel_policy(UniformRandomPolicy(kuhn.game), kuhn)
    with pytest.raises(ValueError, match="3 actions per state"):
        from_openspiel_policy(TabularPolicy(pyspiel.load_game("leduc_poker")), kuhn)
    with pytest.raises(ValueError, match="3-player game"):
        from_openspiel_policy(TabularPolicy(pyspiel.load_game("kuhn_poker(players=3)")), kuhn)
    with pytest.raises(ValueError, match="no row for player 0"):   # kuhn's player 1 states only
        from_openspiel_policy(TabularPolicy(kuhn.game, players=[1]), kuhn)
    other_rules = TabularPolicy(kuhn.game)
    other_rules.legal_actions_mask[other_rules.state_lookup[kuhn.infostates[1].keys[2]]] = [1, 0]
    with pytest.raises(ValueError, match="legal actions differ .* player 1"):
        from_openspiel_policy(other_rules, kuhn)
    broken = TabularPolicy(kuhn.game)
    broken.action_probability_array[0] = [1.5, -0.5]
    with pytest.raises(ValueError, match="non-negative"):
        from_openspiel_policy(broken, kuhn)
    solver = PSRO("kuhn_poker", progress=False)
    with pytest.raises(ValueError, match="run"):
        solver.openspiel_policy()
    solver.run(iterations=1)
    with pytest.raises(ValueError, match=r"members\[1\] must be None or a member index in \[0, 2\)"):
        solver.openspiel_policy(members=[0, 2])
    with pytest.raises(ValueError, match="one entry per player"):
        solver.openspiel_policy(members=[0])


def test_public_names():
    import psro

    assert psro.to_openspiel_policy is to_openspiel_policy and psro.from_openspiel_policy is from_openspiel_policy
