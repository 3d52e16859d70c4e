"""The double oracle on normal-form games: exact Nash for zero-sum, equilibria of the full game otherwise."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import NormalFormGame, catalog
from psro import double_oracle
from psro.variants.double_oracle_search import DoubleOracleResult
from solvers import nash_conv
from solvers.nash.zero_sum import solve_zero_sum


def test_rock_paper_scissors_hand_values():
    res = double_oracle(catalog.rock_paper_scissors())
    assert isinstance(res, DoubleOracleResult)
    assert res.converged
    # starting from rock: paper is the best response, then scissors; the unique equilibrium is uniform
    assert [s.tolist() for s in res.supports[1]] == [[0, 1], [0, 1]]
    np.testing.assert_allclose(res.equilibrium.marginals[0], np.ones(3) / 3, atol=1e-9)
    np.testing.assert_allclose(res.equilibrium.marginals[1], np.ones(3) / 3, atol=1e-9)
    assert abs(res.equilibrium.values[0]) <= 1e-12
    assert res.equilibrium.gap <= 1e-9
    assert res.history["nash_conv"].iloc[0] == pytest.approx(2.0)   # rock vs rock: each gains 1 with paper


def test_matching_pennies_from_the_second_strategy():
    res = double_oracle(catalog.matching_pennies(), initial=[[1], [1]])
    np.testing.assert_allclose(res.equilibrium.marginals[0], [0.5, 0.5], atol=1e-9)
    assert res.converged and res.equilibrium.gap <= 1e-9


@settings(max_examples=15)
@given(seed=st.integers(0, 2**32 - 1), rows=st.integers(1, 25), cols=st.integers(1, 25))
def test_random_zero_sum_games_match_the_lp(seed, rows, cols):
    game = catalog.random_game((rows, cols), kind="zero_sum", rng=seed)
    res = double_oracle(game)
    lp = solve_zero_sum(game.payoffs[0])
    assert res.converged
    assert res.equilibrium.values[0] == pytest.approx(lp.value, abs=1e-9)
    assert nash_conv(game, res.equilibrium.marginals) <= 1e-9
    assert res.history["nash_conv"].iloc[-1] <= 1e-9
    # the restricted sets only ever grow, by at most one strategy per player and iteration
    sizes = res.history[["size_0", "size_1"]].to_numpy()
    assert np.all(np.diff(sizes, axis=0) >= 0) and np.all(np.diff(sizes, axis=0) <= 1)


def test_dominant_pure_strategy_stops_with_a_small_restricted_set():
    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, size=(50, 50))
    a[17, :] = a.max() + 1.0 + rng.uniform(0, 0.5, size=50)   # row 17 strictly dominates every other row
    game = NormalFormGame.from_bimatrix(a)
    res = double_oracle(game)
    assert res.converged
    col = int(a[17].argmin())          # the column player's best reply to row 17
    assert res.equilibrium.marginals[0][17] == pytest.approx(1.0)
    assert res.equilibrium.marginals[1][col] == pytest.approx(1.0)
    assert res.equilibrium.values[0] == pytest.approx(a[17, col])
    assert all(len(s) <= 3 for s in res.restricted_sets)
    assert res.iterations <= 3


@settings(max_examples=10)
@given(seed=st.integers(0, 2**32 - 1))
def test_general_sum_stops_at_an_equilibrium_of_the_full_game(seed):
    game = catalog.random_game((6, 7), rng=seed)
    res = double_oracle(game)
    assert res.converged
    assert nash_conv(game, res.equilibrium.marginals) <= 1e-8
    for m, k in zip(res.equilibrium.marginals, game.shape):
        assert m.shape == (k,) and np.all(m >= 0) and m.sum() == pytest.approx(1.0)


def test_three_players():
    res = double_oracle(catalog.three_player_matching_pennies())
    assert res.converged
    assert nash_conv(catalog.three_player_matching_pennies(), res.equilibrium.marginals) <= 1e-6


def test_prisoners_dilemma_needs_one_response():
    res = double_oracle(catalog.prisoners_dilemma())   # strategy 1 (defect) is dominant for both
    assert [s.tolist() for s in res.restricted_sets] == [[0, 1], [0, 1]]
    assert res.equilibrium.marginals[0].tolist() == [0.0, 1.0]


def test_max_iterations_limits_the_run():
    game = catalog.random_game((30, 30), kind="zero_sum", rng=1)
    res = double_oracle(game, max_iterations=2)
    assert res.iterations == 2 and not res.converged


def test_meta_solver_callable_and_name():
    from solvers import solve

    game = catalog.random_game((6, 6), kind="zero_sum", rng=4)
    a = double_oracle(game, meta_solver="nash_zero_sum")
    b = double_oracle(game, meta_solver=lambda g: solve(g, "nash_zero_sum"))
    np.testing.assert_allclose(a.equilibrium.marginals[0], b.equilibrium.marginals[0], atol=1e-12)


@pytest.mark.parametrize("kwargs, match", [
    ({"meta_solver": "cce"}, "product solver"),
    ({"meta_solver": "nashh"}, "unknown solver"),
    ({"initial": [[5], [0]]}, r"initial\[0\]"),
    ({"initial": [[0]]}, "one list of strategy indices per player"),
    ({"max_iterations": 0}, "max_iterations"),
    ({"tol": -1.0}, "tol"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        double_oracle(catalog.matching_pennies(), **kwargs)
