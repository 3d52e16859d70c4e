"""Tests of solvers/risk_averse/robust_replicator.py: hand-checked interval games and hypothesis properties."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import NormalFormGame, catalog
from solvers.gaps import nash_conv_per_player
from solvers.risk_averse.robust_replicator import pessimistic_regret, robust_replicator

games_2x = st.tuples(st.integers(2, 4), st.integers(2, 4), st.integers(0, 10_000)).map(
    lambda t: np.random.default_rng(t[2]).normal(size=(2, t[0], t[1])))


def _random_marginals(shape, seed):
    rng = np.random.default_rng(seed)
    return [rng.dirichlet(np.ones(k)) for k in shape]


def test_pessimistic_regret_by_hand():
    # player 0 at (row 0 vs column mix [0.5, 0.5]): low value 0.5*1 + 0.5*0 = 0.5; high deviations: row 0 -> 1.5,
    # row 1 -> 2.5; regret 2.0. Player 1: constant 0 payoffs, regret 0.
    low = np.array([[[1.0, 0.0], [2.0, 2.0]], [[0.0, 0.0], [0.0, 0.0]]])
    high = low.copy()
    high[0] += 0.5
    x = [np.array([1.0, 0.0]), np.array([0.5, 0.5])]
    assert pessimistic_regret(low, high, x) == pytest.approx(2.0)


@settings(max_examples=25, deadline=None)
@given(games_2x, st.integers(0, 100))
def test_equals_ordinary_regret_when_exact(payoffs, seed):
    x = _random_marginals(payoffs.shape[1:], seed)
    expected = float(np.max(nash_conv_per_player(NormalFormGame(payoffs), x)))
    assert pessimistic_regret(payoffs, payoffs, x) == pytest.approx(expected, abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(games_2x, st.integers(0, 100), st.floats(0.0, 2.0))
def test_wider_intervals_never_lower_the_regret(payoffs, seed, width):
    x = _random_marginals(payoffs.shape[1:], seed)
    assert pessimistic_regret(payoffs - width, payoffs + width, x) >= pessimistic_regret(payoffs, payoffs, x) - 1e-12
    # widening by w on both sides raises every player's term by exactly 2w
    assert pessimistic_regret(payoffs - width, payoffs + width, x) == pytest.approx(
        pessimistic_regret(payoffs, payoffs, x) + 2 * width, abs=1e-9)


@settings(max_examples=15, deadline=None)
@given(games_2x, st.floats(0.0, 1.0), st.floats(-5.0, 5.0), st.floats(0.1, 10.0))
def test_invariant_to_offset_and_scale_per_player(payoffs, width, offset, scale):
    low, high = payoffs - width, payoffs + width
    base = robust_replicator(low, high, iterations=200)
    low2, high2 = low.copy(), high.copy()
    low2[1] = low2[1] * scale + offset
    high2[1] = high2[1] * scale + offset
    moved = robust_replicator(low2, high2, iterations=200)
    for a, b in zip(base.marginals, moved.marginals):
        np.testing.assert_allclose(a, b, atol=1e-7)
    np.testing.assert_allclose(base.regrets, moved.regrets, atol=1e-7)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000))
def test_duplicated_strategies_tie(seed):
    # a column repeated: the dynamics start uniform and treat the copies alike, so they end with equal weights
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(2, 3, 2))
    payoffs = np.concatenate([base, base[:, :, :1]], axis=2)
    result = robust_replicator(payoffs - 0.1, payoffs + 0.1, iterations=200)
    assert result.marginals[1][0] == pytest.approx(result.marginals[1][2], abs=1e-12)


def test_constant_game_keeps_the_uniform_start():
    payoffs = np.zeros((2, 3, 3))
    result = robust_replicator(payoffs, payoffs, iterations=20)
    assert result.best_iteration == 0 and result.regret == 0.0
    np.testing.assert_allclose(result.marginals[0], np.ones(3) / 3)


def test_finds_the_robust_equilibrium_of_an_exact_game():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(6, 6))
    payoffs = np.stack([a, -a])
    result = robust_replicator(payoffs, payoffs, iterations=3000)
    gains = nash_conv_per_player(NormalFormGame(payoffs), list(result.marginals))
    assert result.regret == pytest.approx(float(np.max(gains)))
    assert result.regret < 0.05 and result.regrets[result.best_iteration] == result.regrets.min()


def test_interval_uncertainty_changes_the_answer():
    # Row 0 pays 1 for sure; row 1 pays between -1 and 2: pessimistically (-1) the sure row is the robust one.
    low = np.array([[[1.0], [-1.0]], [[0.0], [0.0]]])
    high = np.array([[[1.0], [2.0]], [[0.0], [0.0]]])
    result = robust_replicator(low, high, iterations=500)
    assert result.marginals[0][0] > 0.99
    # its pessimistic regret: the optimistic deviation (2) minus the sure value (1)
    assert result.regret == pytest.approx(1.0, abs=0.02)
    assert pessimistic_regret(low, high, [np.array([0.0, 1.0]), np.ones(1)]) == pytest.approx(3.0)


@pytest.mark.parametrize("low, high, match", [
    (np.zeros((2, 2, 2)), np.zeros((2, 2, 3)), "same shape"),
    (np.ones((2, 2, 2)), np.zeros((2, 2, 2)), "low exceeds high"),
    (np.full((2, 2, 2), np.nan), np.zeros((2, 2, 2)), "non-finite"),
    (np.zeros((3, 2, 2)), np.zeros((3, 2, 2)), "num_players"),
])
def test_refuses_bad_interval_games(low, high, match):
    with pytest.raises(ValueError, match=match):
        robust_replicator(low, high)


def test_refuses_bad_options():
    rps = catalog.rock_paper_scissors().payoffs
    with pytest.raises(ValueError, match="iterations"):
        robust_replicator(rps, rps, iterations=0)
    with pytest.raises(ValueError, match="dt"):
        robust_replicator(rps, rps, dt=0.0)
