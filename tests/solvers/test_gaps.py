"""NashConv, CE and CCE gaps: hand-derived values and brute-force references."""

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from games import catalog
from solvers import cce_gains, cce_gap, ce_gains, ce_gap, nash_conv, nash_conv_per_player


def brute_ce_gains(game, joint):
    n = game.num_players
    out = np.zeros(n)
    for p in range(n):
        total = 0.0
        for a in range(game.shape[p]):
            best = 0.0
            for b in range(game.shape[p]):
                gain = 0.0
                for prof in itertools.product(*[range(k) for k in game.shape]):
                    if prof[p] != a:
                        continue
                    dev = list(prof)
                    dev[p] = b
                    gain += joint[prof] * (game.payoffs[(p, *dev)] - game.payoffs[(p, *prof)])
                best = max(best, gain)
            total += best
        out[p] = total
    return out


def brute_cce_gains(game, joint):
    n = game.num_players
    out = np.zeros(n)
    for p in range(n):
        profiles = list(itertools.product(*[range(k) for k in game.shape]))
        value = sum(joint[prof] * game.payoffs[(p, *prof)] for prof in profiles)
        best = value
        for b in range(game.shape[p]):
            dev_value = 0.0
            for prof in itertools.product(*[range(k) for k in game.shape]):
                dev = list(prof)
                dev[p] = b
                dev_value += joint[prof] * game.payoffs[(p, *dev)]
            best = max(best, dev_value)
        out[p] = best - value
    return out


def test_nash_conv_by_hand():
    g = catalog.matching_pennies()
    # both play heads: row matches (no gain); column gains 2 by switching to tails
    assert nash_conv_per_player(g, [np.array([1.0, 0]), np.array([1.0, 0])]).tolist() == [0.0, 2.0]
    # prisoner's dilemma at (C, C): each gains 1 by defecting
    pd = catalog.prisoners_dilemma()
    assert nash_conv(pd, [np.array([1.0, 0]), np.array([1.0, 0])]) == 2.0


def test_ce_and_cce_gap_by_hand_on_chicken():
    g = catalog.chicken()
    # all mass on (dare, dare): each player gains 2 by swerving
    j = np.zeros((2, 2))
    j[0, 0] = 1
    assert ce_gains(g, j).tolist() == [2.0, 2.0]
    assert cce_gains(g, j).tolist() == [2.0, 2.0]
    # the traffic-light CE 1/2 on (D,S) and (S,D) is a CE: gap 0
    j = np.array([[0, 0.5], [0.5, 0]])
    assert ce_gap(g, j) == 0.0
    # uniform joint: CCE gain for player 0 = max(dare 3.5, swerve 4) - 3.75 = 0.25
    u = np.full((2, 2), 0.25)
    np.testing.assert_allclose(cce_gains(g, u), [0.25, 0.25])
    # CE: recommended dare -> swerve gains .25*(2-0)+.25*(6-7)=0.25; recommended swerve -> dare loses
    np.testing.assert_allclose(ce_gains(g, u), [0.25, 0.25])


@st.composite
def game_and_joint(draw):
    n = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=n, max_size=n)))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    game = catalog.random_game(shape, rng=rng)
    joint = rng.dirichlet(np.ones(int(np.prod(shape)))).reshape(shape)
    return game, joint


@given(game_and_joint())
def test_gaps_match_brute_force(gj):
    game, joint = gj
    np.testing.assert_allclose(ce_gains(game, joint), brute_ce_gains(game, joint), atol=1e-12)
    np.testing.assert_allclose(cce_gains(game, joint), brute_cce_gains(game, joint), atol=1e-12)
    # every coarse deviation is a swap deviation, so the CE gap bounds the CCE gap
    assert np.all(ce_gains(game, joint) >= cce_gains(game, joint) - 1e-12)


@given(game_and_joint())
def test_nash_conv_of_product_equals_cce_gap_of_product(gj):
    game, joint = gj
    n = game.num_players
    marg = [joint.sum(axis=tuple(q for q in range(n) if q != p)) for p in range(n)]
    prod = game.joint_from_marginals(marg)
    np.testing.assert_allclose(nash_conv_per_player(game, marg), cce_gains(game, prod), atol=1e-12)


def test_gap_input_errors():
    g = catalog.chicken()
    with pytest.raises(ValueError, match="joint has shape"):
        ce_gap(g, np.ones(3) / 3)
    with pytest.raises(ValueError, match="sums to"):
        cce_gap(g, np.ones((2, 2)))
    with pytest.raises(TypeError, match="game must be"):
        nash_conv("chicken", [np.ones(2) / 2] * 2)
