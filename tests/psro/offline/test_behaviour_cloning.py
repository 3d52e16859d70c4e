"""Tests of psro/offline/behaviour_cloning.py: counts by hand, unseen infostates, OpenSpiel agreement."""

import numpy as np
import pandas as pd
import pyspiel
import pytest

from games.datasets import collect
from psro.measures.metrics import nash_conv
from psro.offline.behaviour_cloning import clone_behaviour, policy_on_tree
from psro.sequence_form.game_tree import build_game_tree


def _table(actions):
    """Kuhn-like episodes: chance deals card 0, player 0 at infostate "0" plays the given action, then ends."""
    rows = []
    for e, a in enumerate(actions):
        rows.append(dict(episode=e, step=0, player=-1, infostate="", history="", legal_actions="0 1 2", action=0,
                         reward="0 0", done=False))
        rows.append(dict(episode=e, step=1, player=0, infostate="0", history="0", legal_actions="0 1", action=a,
                         reward="1 -1", done=True))
    return pd.DataFrame(rows)


def test_frequencies_by_hand():
    data = _table([0, 0, 1])
    raw = clone_behaviour(data, smoothing=0.0)
    np.testing.assert_allclose(raw.probabilities(0, "0"), [2 / 3, 1 / 3])
    laplace = clone_behaviour(data, smoothing=1.0)
    np.testing.assert_allclose(laplace.probabilities(0, "0"), [3 / 5, 2 / 5])   # (2 + 1) / 5, (1 + 1) / 5
    assert raw.num_players == 2 and raw.num_actions == 2


def test_unseen_infostates_are_uniform_over_their_legal_actions():
    game = pyspiel.load_game("kuhn_poker")
    tree = build_game_tree(game)
    cloned = clone_behaviour(_table([1, 1]), smoothing=0.0, num_actions=2)
    tables = cloned.tabular(tree)
    seen = tree.infostates[0].index("0")
    np.testing.assert_allclose(tables[0][seen], [0.0, 1.0])
    others = np.delete(tables[0], seen, axis=0)
    np.testing.assert_allclose(others, 0.5)
    np.testing.assert_allclose(tables[1], 0.5)
    with pytest.raises(ValueError, match="legal_mask"):
        cloned.probabilities(1, "never seen")


def test_clones_a_deterministic_behaviour_exactly():
    # a behaviour that always plays the last legal action: with no smoothing its clone is that policy where seen
    game = pyspiel.load_game("kuhn_poker")
    tree = build_game_tree(game)

    def last_action(state, player):
        probs = np.zeros(game.num_distinct_actions())
        probs[state.legal_actions(player)[-1]] = 1.0
        return probs

    cloned = clone_behaviour(collect(game, last_action, episodes=300, seed=1), smoothing=0.0)
    for p, policy in enumerate(cloned.tabular(tree)):
        for key in cloned.counts[p]:
            assert policy[tree.infostates[p].index(key)].tolist() == [0.0, 1.0]


def test_uniform_data_clones_close_to_uniform_and_matches_its_nash_conv():
    game = pyspiel.load_game("kuhn_poker")
    tree = build_game_tree(game)
    cloned = clone_behaviour(collect(game, pyspiel.UniformRandomPolicy(game), episodes=3000, seed=0))
    policies = cloned.tabular(tree)
    assert max(np.abs(pol - 0.5).max() for pol in policies) < 0.1
    # OpenSpiel's NashConv of the same policy, through the behaviour-policy interface
    from open_spiel.python.algorithms import exploitability
    from open_spiel.python.policy import tabular_policy_from_callable

    tabular = tabular_policy_from_callable(game, lambda state: dict(enumerate(cloned.action_probabilities(state))))
    assert nash_conv(tree, policies) == pytest.approx(exploitability.nash_conv(game, tabular), abs=1e-9)


def test_policy_on_tree_renormalises_over_legal_actions():
    tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    key = tree.infostates[1].keys[2]
    assert policy_on_tree({key: [2.0, 6.0]}, tree, 1)[2].tolist() == [0.25, 0.75]
    assert policy_on_tree({key: [0.0, 0.0]}, tree, 1)[2].tolist() == [0.5, 0.5]


def test_refuses_bad_input():
    with pytest.raises(ValueError, match="smoothing"):
        clone_behaviour(_table([0]), smoothing=-1.0)
    with pytest.raises(ValueError, match="column 'action'"):
        clone_behaviour(_table([0]).assign(action=[0, 5]))
    with pytest.raises(ValueError, match="num_players"):
        clone_behaviour(_table([0]), num_players=0)
