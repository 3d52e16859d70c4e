"""Two-player zero-sum Nash equilibria: hand-worked values, an independent LP reference, properties."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import linprog

from games import NormalFormGame, catalog
from solvers import nash_conv, solve
from solvers.nash.matrix_game_ipm import solve_matrix_game, solve_matrix_game_ipm
from solvers.nash.zero_sum import LP_METHODS, nash_zero_sum, solve_zero_sum


def column_player_value(a: np.ndarray) -> float:
    """Independent reference: the column player's LP, min v s.t. a y <= v 1, y in the simplex."""
    k1, k2 = a.shape
    c = np.zeros(k2 + 1)
    c[-1] = 1.0
    a_ub = np.hstack([a, -np.ones((k1, 1))])
    a_eq = np.hstack([np.ones((1, k2)), np.zeros((1, 1))])
    res = linprog(c, A_ub=a_ub, b_ub=np.zeros(k1), A_eq=a_eq, b_eq=[1.0],
                  bounds=[(0, None)] * k2 + [(None, None)], method="highs")
    assert res.status == 0
    return float(res.x[-1])


def scaled_gap(a, x, y) -> float:
    span = max(float(np.ptp(a)), 1e-300)
    return float(((a @ y).max() - (x @ a).min()) / span)


def assert_distribution(p, k):
    assert p.shape == (k,)
    assert np.all(p >= 0)
    assert abs(p.sum() - 1.0) < 1e-12


@pytest.mark.parametrize("lp_method", LP_METHODS)
def test_matching_pennies_is_one_half_each(lp_method):
    x, y, v = solve_zero_sum(catalog.matching_pennies().payoffs[0], lp_method=lp_method)
    np.testing.assert_allclose(x, [0.5, 0.5], atol=1e-12)
    np.testing.assert_allclose(y, [0.5, 0.5], atol=1e-12)
    assert abs(v) < 1e-12


@pytest.mark.parametrize("lp_method", LP_METHODS)
def test_biased_rps_is_1_10_5_over_16(lp_method):
    # Indifference by hand: rows earn -0.5 p + s = 0.5 r - 0.1 s = -r + 0.1 p with r + p + s = 1,
    # so (r, p, s) = (1, 10, 5) / 16.
    eq = nash_zero_sum(catalog.biased_rock_paper_scissors(), lp_method=lp_method)
    np.testing.assert_allclose(eq.marginals[0], np.array([1, 10, 5]) / 16, atol=1e-10)
    np.testing.assert_allclose(eq.marginals[1], np.array([1, 10, 5]) / 16, atol=1e-10)
    assert abs(eq.info["value"]) < 1e-12
    assert eq.gap < 1e-12


def test_dominated_row_gets_no_weight():
    # Row 2 pays 0.2 against everything, less than the 0.5 the 2x2 block guarantees.
    sol = solve_zero_sum([[0.0, 1.0], [1.0, 0.0], [0.2, 0.2]])
    np.testing.assert_allclose(sol.x, [0.5, 0.5, 0.0], atol=1e-12)
    assert sol.value == pytest.approx(0.5, abs=1e-12)
    assert sol.certified


def test_solution_is_a_named_result_that_also_unpacks():
    sol = solve_zero_sum(catalog.rock_paper_scissors().payoffs[0])
    x, y, v = sol
    assert x is sol.x and y is sol.y and v == sol.value
    assert sol.certified and sol.method == "auto"


@pytest.mark.parametrize("scale", [1e-9, 1.0, 1e9])
def test_scale_of_payoffs_does_not_matter(scale):
    a = catalog.biased_rock_paper_scissors().payoffs[0] * scale
    x, y, v = solve_zero_sum(a)
    np.testing.assert_allclose(x, np.array([1, 10, 5]) / 16, atol=1e-10)
    assert abs(v) <= 1e-12 * scale
    assert scaled_gap(a, x, y) <= 1e-12


@pytest.mark.parametrize("a, value", [
    ([[2.0, 2.0], [2.0, 2.0]], 2.0),  # constant game
    ([[1.0, -2.0, 3.0]], -2.0),  # 1 x k: the column player picks the worst column for the row player
    ([[1.0], [-2.0], [3.0]], 3.0),  # k x 1
    ([[1.0, -1.0, 1.0], [-1.0, 1.0, -1.0], [1.0, -1.0, 1.0]], 0.0),  # duplicated rows and columns
    ([[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]], 0.0),
])
def test_degenerate_games(a, value):
    a = np.asarray(a)
    sol = solve_zero_sum(a)
    assert sol.value == pytest.approx(value, abs=1e-12)
    assert scaled_gap(a, sol.x, sol.y) <= 1e-10
    assert sol.certified
    assert_distribution(sol.x, a.shape[0])
    assert_distribution(sol.y, a.shape[1])


@settings(max_examples=40)
@given(arrays(np.float64, st.tuples(st.integers(1, 9), st.integers(1, 9)),
              elements=st.floats(-10, 10, allow_nan=False, width=32)))
def test_value_matches_independent_lp_and_nash_conv_is_tiny(a):
    sol = solve_zero_sum(a)
    assert_distribution(sol.x, a.shape[0])
    assert_distribution(sol.y, a.shape[1])
    span = max(float(np.ptp(a)), 1.0)
    assert sol.value == pytest.approx(column_player_value(a), abs=1e-9 * span)
    game = NormalFormGame.from_bimatrix(a)
    assert nash_conv(game, [sol.x, sol.y]) <= 1e-8 * span


@settings(max_examples=15)
@given(st.integers(0, 2**32 - 1), st.integers(1, 5), st.integers(1, 5))
def test_small_integer_games_are_degenerate_but_still_exact(seed, k1, k2):
    # Few distinct payoffs make ties, duplicate strategies and equilibrium continua common.
    a = np.random.default_rng(seed).integers(-2, 3, size=(k1, k2)).astype(float)
    for method in ("auto", "highs-ds"):
        x, y, v = solve_zero_sum(a, lp_method=method)
        assert v == pytest.approx(column_player_value(a), abs=1e-9)
        assert scaled_gap(a, x, y) <= 1e-9


def test_large_game_uses_constraint_generation_and_stays_exact():
    a = np.random.default_rng(5).uniform(-1, 1, (260, 240))
    s = (a - a.min()) / np.ptp(a)
    sol = solve_matrix_game(s)  # 62,400 entries: above restrict_above, so the subgame path runs
    assert sol.certified
    assert (s @ sol.y).max() - (sol.x @ s).min() <= 1e-11
    assert solve_zero_sum(a).value == pytest.approx(column_player_value(a), abs=1e-9)


def test_duplicated_strategies_are_solved_without_the_simplex_fallback():
    b = np.random.default_rng(3).uniform(-1, 1, (12, 9))
    a = np.kron(b, np.ones((2, 3)))  # every row twice, every column three times
    sol = solve_zero_sum(a)
    assert sol.method == "auto" and sol.certified
    assert sol.value == pytest.approx(column_player_value(b), abs=1e-12)
    assert scaled_gap(a, sol.x, sol.y) <= 1e-12


def test_interior_point_alone_agrees_with_its_transpose():
    s = np.random.default_rng(1).uniform(0, 1, (7, 30))
    wide = solve_matrix_game_ipm(s)
    tall = solve_matrix_game_ipm(1.0 - s.T)  # the same game seen by the other player
    assert wide.certified and tall.certified
    assert wide.value == pytest.approx(1.0 - tall.value, abs=1e-12)
    np.testing.assert_allclose(wide.x, tall.y, atol=1e-10)


def test_constant_sum_game_is_accepted():
    a = catalog.matching_pennies().payoffs[0]
    game = NormalFormGame.from_bimatrix(a + 3.0, 5.0 - a)  # sums to 8 everywhere
    eq = solve(game, "nash_zero_sum")
    np.testing.assert_allclose(eq.marginals[0], [0.5, 0.5], atol=1e-12)
    assert eq.values.tolist() == pytest.approx([3.0, 5.0])


def test_general_sum_game_is_rejected_naming_the_game():
    with pytest.raises(ValueError, match="game"):
        nash_zero_sum(catalog.prisoners_dilemma())
    with pytest.raises(ValueError, match="zero-sum"):
        solve(catalog.prisoners_dilemma(), "nash_zero_sum")


def test_bad_matrix_and_method_are_rejected():
    with pytest.raises(ValueError, match="^a "):
        solve_zero_sum([[1.0, np.nan], [0.0, 1.0]])
    with pytest.raises(ValueError, match="^a "):
        solve_zero_sum([1.0, 2.0])
    with pytest.raises(ValueError, match="lp_method"):
        solve_zero_sum([[1.0]], lp_method="simplex")
    with pytest.raises(ValueError, match="payoffs"):
        NormalFormGame.from_bimatrix([[1.0, np.nan], [0.0, 1.0]])


def test_a_payoff_difference_near_highs_default_tolerance_is_not_a_tie():
    # row 2 beats row 0 by 5.96e-8 (under 1e-8 of the range): with HiGHS's default 1e-7 feasibility tolerances
    # the column player was left at column 0, giving the value 5.96e-8; the value is 0 (row 2 against column 1)
    a = np.array([[0, -1], [-2, -1], [5.96e-08, 0], [-1, -1]])
    for method in ("auto", "highs-ds"):
        sol = solve_zero_sum(a, lp_method=method)
        assert sol.value == pytest.approx(column_player_value(a), abs=1e-12)
        assert sol.value == pytest.approx(0.0, abs=1e-12)
        assert sol.certified
