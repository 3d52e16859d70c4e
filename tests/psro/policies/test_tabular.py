"""Policies as arrays: realization plans, aggregation, sequence-form payoffs and best responses.

References: OpenSpiel's policy_aggregator, pyspiel.expected_returns and
pyspiel.TabularBestResponse, and a hand-worked Kuhn example.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from open_spiel.python import policy as os_policy
from open_spiel.python.algorithms.policy_aggregator import PolicyAggregator

from psro.evaluation import SequenceFormEvaluator
from psro.oracles.exact import best_response
from psro.oracles.openspiel import OpenSpielBestResponse
from psro.policies import (
    aggregate,
    behaviour_from_plan,
    check_policy,
    own_reach,
    random_policies,
    realization_plans,
    uniform_policy,
)
from psro.policies.population import Population, Provenance, load_populations, save_populations


def os_tabular(game, tree, player, policy):
    """An OpenSpiel python TabularPolicy that plays ``policy`` at ``player``'s infostates."""
    tab = os_policy.TabularPolicy(game)
    for s, key in enumerate(tree.infostates[player].keys):
        tab.action_probability_array[tab.state_lookup[key]] = policy[s]
    return tab


def reach_by_walking(game, player, policy, info):
    """Own reach of every infostate of ``player`` by a plain recursive walk of the OpenSpiel tree."""
    reach = np.full(info.num_infostates, np.nan)

    def walk(state, r):
        if state.is_terminal():
            return
        if state.is_chance_node():
            for a, _ in state.chance_outcomes():
                walk(state.child(a), r)
            return
        if state.current_player() == player:
            s = info.index(state.information_state_string(player))
            reach[s] = r
            for a in state.legal_actions():
                walk(state.child(a), r * policy[s, a])
        else:
            for a in state.legal_actions():
                walk(state.child(a), r)

    walk(game.new_initial_state(), 1.0)
    return reach


# ------------------------------------------------------------------ the tree
def test_kuhn_tree_sizes_and_chance(kuhn):
    # 3 cards x {first move, after pass-bet} for player 0; 3 cards x {after pass, after bet} for player 1
    assert [i.num_infostates for i in kuhn.infostates] == [6, 6]
    assert kuhn.num_terminals == 30
    assert np.allclose(kuhn.terminal_chance, 1 / 6)
    assert kuhn.terminal_returns.sum(axis=1) == pytest.approx(np.zeros(30))


# ------------------------------------------------------------ reach and plans
@settings(max_examples=10)
@given(seed=st.integers(0, 2**32 - 1), sparsity=st.sampled_from([0.0, 0.5]))
def test_own_reach_equals_tree_walk(leduc, seed, sparsity):
    game = leduc.game
    rng = np.random.default_rng(seed)
    for p, info in enumerate(leduc.infostates):
        pols = random_policies(info, 2, rng, sparsity)
        reach = own_reach(realization_plans(pols, info), info)
        for i in range(2):
            assert np.allclose(reach[i], reach_by_walking(game, p, pols[i], info), atol=1e-14)


@given(seed=st.integers(0, 2**32 - 1))
def test_realization_plan_constraints(kuhn, seed):
    rng = np.random.default_rng(seed)
    for info in kuhn.infostates:
        x = realization_plans(random_policies(info, 3, rng, 0.3), info)
        body = x[:, :-1].reshape(3, info.num_infostates, info.num_actions)
        # flow conservation: what enters an infostate leaves through its actions
        assert np.allclose(body.sum(axis=2), x[:, info.parent], atol=1e-14)
        assert np.all(x[:, -1] == 1.0) and np.all(x >= 0)


def test_behaviour_from_plan_inverts_realization_plan(leduc):
    rng = np.random.default_rng(0)
    info = leduc.infostates[1]
    pol = random_policies(info, 1, rng)[0]
    assert np.allclose(behaviour_from_plan(realization_plans(pol[None], info)[0], info), pol, atol=1e-12)


# ---------------------------------------------------------------- aggregation
def test_aggregate_hand_example_kuhn(kuhn):
    """Two pure policies of player 0 in Kuhn, mixed 0.3 / 0.7.

    A passes everywhere at the first move and calls after pass-bet; B bets at
    the first move. At the first move the mixture passes with 0.3 and bets
    with 0.7. After pass-bet only A's histories remain (B never passes), so
    the aggregate calls with probability 1 whatever the weights.
    """
    info = kuhn.infostates[0]
    first = [info.index(c) for c in ("0", "1", "2")]
    after_pb = [info.index(c + "pb") for c in ("0", "1", "2")]
    a = np.zeros((6, 2))
    b = np.zeros((6, 2))
    a[first, 0] = 1.0   # pass
    a[after_pb, 1] = 1.0  # call
    b[first, 1] = 1.0   # bet
    b[after_pb, 0] = 1.0  # fold (never reached)
    agg = aggregate(realization_plans(np.stack([a, b]), info), [0.3, 0.7], info)
    assert np.allclose(agg[first], [[0.3, 0.7]] * 3)
    assert np.allclose(agg[after_pb], [[0.0, 1.0]] * 3)


@pytest.mark.parametrize("game_name", ["kuhn_poker", "leduc_poker"])
def test_aggregate_matches_openspiel_policy_aggregator(game_name, kuhn, leduc):
    tree = kuhn if game_name == "kuhn_poker" else leduc
    game = tree.game
    rng = np.random.default_rng(1)
    k = 3
    pols = [random_policies(info, k, rng) for info in tree.infostates]
    weights = [rng.dirichlet(np.ones(k)) for _ in range(2)]
    os_pols = [[os_tabular(game, tree, p, pols[p][i]) for i in range(k)] for p in range(2)]
    for p, info in enumerate(tree.infostates):
        ours = aggregate(realization_plans(pols[p], info), weights[p], info)
        theirs = PolicyAggregator(game).aggregate([p], os_pols, [list(w) for w in weights]).policy[0]
        for s, key in enumerate(info.keys):
            expected = np.zeros(info.num_actions)
            for a, prob in theirs[key].items():
                expected[a] = prob
            assert np.allclose(ours[s], expected, atol=1e-12), key


# ------------------------------------------------------------- best responses
@settings(max_examples=6)
@given(seed=st.integers(0, 2**32 - 1), game_name=st.sampled_from(["kuhn_poker", "leduc_poker"]))
def test_best_response_equals_pyspiel_tabular_best_response(kuhn, leduc, seed, game_name):
    tree = kuhn if game_name == "kuhn_poker" else leduc
    rng = np.random.default_rng(seed)
    pols = [random_policies(info, 1, rng, 0.3)[0] for info in tree.infostates]
    plans = [realization_plans(p[None], i)[0] for p, i in zip(pols, tree.infostates)]
    evaluator = SequenceFormEvaluator(tree)
    reference = OpenSpielBestResponse(tree)
    for p in range(2):
        ours = best_response(tree, p, plans)
        assert ours.value == pytest.approx(reference(p, pols).value, abs=1e-12)
        # the returned policy is deterministic, legal, and attains the value
        check_policy(ours.policy, tree.infostates[p])
        assert set(np.unique(ours.policy)) <= {0.0, 1.0}
        profile = list(plans)
        profile[p] = realization_plans(ours.policy[None], tree.infostates[p])[0]
        achieved = evaluator.payoffs([x[None] for x in profile]).reshape(2)[p]
        assert achieved == pytest.approx(ours.value, abs=1e-12)


def test_best_response_to_uniform_kuhn_by_hand(kuhn):
    """Against a uniform player 1, player 0's best response earns 1/2 (worked out by hand).

    Antes of 1; player 1 bets or passes, calls or folds with probability 1/2.
    K: betting earns 1/2 * 1 + 1/2 * 2 = 1.5. Q (opponent J or K): betting earns
    1/2 * 1 + 1/2 * (1/2 * 2 - 1/2 * 2) = 0.5, passing at most 0. J: betting
    earns 1/2 * 1 - 1/2 * 2 = -0.5, passing -1. Mean over the three cards: 0.5.
    """
    plans = [realization_plans(uniform_policy(i)[None], i)[0] for i in kuhn.infostates]
    assert best_response(kuhn, 0, plans).value == pytest.approx(0.5, abs=1e-15)


# ----------------------------------------------------------------- validation
def test_check_policy_rejects_bad_input(kuhn):
    info = kuhn.infostates[0]
    with pytest.raises(ValueError, match="shape"):
        check_policy(np.ones((5, 2)) / 2, info)
    bad = uniform_policy(info)
    bad[0] = [0.9, 0.3]
    with pytest.raises(ValueError, match="sum to one"):
        check_policy(bad, info)
    with pytest.raises(ValueError, match="weights"):
        aggregate(realization_plans(uniform_policy(info)[None], info), [0.5, 0.5], info)


def test_population_roundtrip(tmp_path, kuhn):
    pops = [Population(info, capacity=1) for info in kuhn.infostates]
    rng = np.random.default_rng(5)
    for it in range(3):  # grows past its capacity
        for pop in pops:
            pop.add(random_policies(pop.infostates, 1, rng), Provenance(it, "random", "nash", 0.5))
    save_populations(tmp_path / "pop.npz", pops)
    data = load_populations(tmp_path / "pop.npz")
    assert np.array_equal(data["policies_1"], pops[1].policies)
    assert data["iteration_0"].tolist() == [0, 1, 2]
    assert data["infostates_0"].tolist() == list(kuhn.infostates[0].keys)
    assert np.allclose(pops[0].plans, realization_plans(np.asarray(pops[0].policies), kuhn.infostates[0]))


# ----------------------------------------------------------------- the Policy protocol
def test_as_tabular_reads_arrays_and_policy_objects_and_checks_them(kuhn):
    from psro.policies import Policy, as_tabular

    class Fixed:   # a Policy of its own (what a neural policy will be): its tabular form over the infostates
        def __init__(self, table):
            self.table = table

        def to_tabular(self, tree, player):
            return self.table

    table = random_policies(kuhn.infostates[0], 1, np.random.default_rng(1))[0]
    assert isinstance(Fixed(table), Policy) and not isinstance(table, Policy)
    np.testing.assert_array_equal(as_tabular(Fixed(table), kuhn, 0), table)
    np.testing.assert_array_equal(as_tabular(table, kuhn, 0), table)
    with pytest.raises(ValueError):
        as_tabular(Fixed(table * 2.0), kuhn, 0)   # rows that do not sum to one are refused
