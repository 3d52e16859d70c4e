"""Nash equilibria of general-sum games: Lemke-Howson, support enumeration, selection, n players, dispatch."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from games import NormalFormGame, catalog
from solvers import nash_conv, solve
from solvers.nash.dispatch import nash
from solvers.nash.lemke_howson import lemke_howson, lemke_howson_equilibria, lemke_howson_path
from solvers.nash.nash_enumeration import all_equilibria
from solvers.nash.nash_n_player import nash_n_player, pure_equilibria
from solvers.nash.nash_selection import select_equilibrium
from solvers.nash.support_enumeration import enumerate_supports, support_enumeration


def scaled_nash_conv(game: NormalFormGame, marginals) -> float:
    """NashConv with each player's payoffs rescaled to [0, 1], computed by solvers.gaps."""
    u = game.payoffs
    n = u.shape[0]
    flat = u.reshape(n, -1)
    span = np.ptp(flat, axis=1)
    span = np.where(span > 0, span, 1.0)
    scaled = (u - flat.min(axis=1).reshape((n,) + (1,) * n)) / span.reshape((n,) + (1,) * n)
    return nash_conv(NormalFormGame(scaled), marginals)


def profiles(eqs):
    return [tuple(np.round(m, 9).tolist() for m in e.marginals) for e in eqs]


def assert_valid(eq, game):
    for m, k in zip(eq.marginals, game.shape):
        assert m.shape == (k,) and np.all(m >= 0) and abs(m.sum() - 1) < 1e-12


# ------------------------------------------------------------------ reference values worked by hand


def test_bach_or_stravinsky_has_three_equilibria():
    # Mixed: the column player is indifferent when 2p = 3(1-p) -> p = 3/5; the row player when 3q = 2(1-q) -> q = 2/5.
    eqs = all_equilibria(catalog.bach_or_stravinsky(), method="support_enumeration")
    assert profiles(eqs) == [([1.0, 0.0], [1.0, 0.0]), ([0.0, 1.0], [0.0, 1.0]), ([0.6, 0.4], [0.4, 0.6])]
    np.testing.assert_allclose(eqs[2].values, [6 / 5, 6 / 5], atol=1e-12)
    assert all(e.gap < 1e-12 for e in eqs)


def test_stag_hunt_equilibria_and_selection():
    # Mixed: 4p = 3p + 2(1-p) -> p = 2/3, paying 8/3.
    game = catalog.stag_hunt()
    eqs = all_equilibria(game)
    got = sorted(profiles(eqs))
    assert got == sorted([([1.0, 0.0], [1.0, 0.0]), ([0.0, 1.0], [0.0, 1.0]),
                          (np.round([2 / 3, 1 / 3], 9).tolist(),) * 2])
    welfare = select_equilibrium(eqs, "max_welfare")
    assert welfare.marginals[0].tolist() == [1.0, 0.0] and welfare.values.tolist() == [4.0, 4.0]
    entropy = select_equilibrium(eqs, "max_entropy")
    np.testing.assert_allclose(entropy.marginals[0], [2 / 3, 1 / 3], atol=1e-12)
    np.testing.assert_allclose(entropy.values, [8 / 3, 8 / 3], atol=1e-12)
    assert len(entropy.info["equilibria"]) == 3
    eq = solve(game, "nash", select="max_entropy")
    np.testing.assert_allclose(eq.marginals[1], [2 / 3, 1 / 3], atol=1e-12)


def test_shapley_game_unique_equilibrium_is_uniform():
    game = catalog.shapley_game()
    for eq in (lemke_howson(game), support_enumeration(game), nash(game)):
        np.testing.assert_allclose(eq.marginals[0], np.ones(3) / 3, atol=1e-12)
        np.testing.assert_allclose(eq.marginals[1], np.ones(3) / 3, atol=1e-12)
    assert len(all_equilibria(game)) == 1


def test_prisoners_dilemma_is_defect_defect():
    game = catalog.prisoners_dilemma()
    for eq in (lemke_howson(game), support_enumeration(game), nash(game)):
        assert eq.marginals[0].tolist() == [0.0, 1.0] and eq.marginals[1].tolist() == [0.0, 1.0]
        assert eq.values.tolist() == [-2.0, -2.0]


def test_chicken_mixed_equilibrium():
    # Dare with probability q: 7(1-q) = 2q + 6(1-q) -> q = 1/3, payoff 14/3.
    eq = support_enumeration(catalog.chicken(), select="max_entropy")
    np.testing.assert_allclose(eq.marginals[0], [1 / 3, 2 / 3], atol=1e-12)
    np.testing.assert_allclose(eq.values, [14 / 3, 14 / 3], atol=1e-12)


def test_three_player_matching_pennies_is_uniform():
    eq = nash_n_player(catalog.three_player_matching_pennies(), rng=0)
    for m in eq.marginals:
        np.testing.assert_allclose(m, [0.5, 0.5], atol=1e-10)
    assert eq.info["converged"] and eq.gap <= 1e-9


def test_von_stengel_example_has_three_equilibria():
    # von Stengel (2002), "Computing equilibria for two-person games", the 3x2 example of section 2.
    game = NormalFormGame.from_bimatrix([[3, 3], [2, 5], [0, 6]], [[3, 2], [2, 6], [3, 1]])
    got = sorted(profiles(all_equilibria(game, method="support_enumeration")))
    want = sorted([([1.0, 0.0, 0.0], [1.0, 0.0]),
                   (np.round([4 / 5, 1 / 5, 0], 9).tolist(), np.round([2 / 3, 1 / 3], 9).tolist()),
                   (np.round([0, 1 / 3, 2 / 3], 9).tolist(), np.round([1 / 3, 2 / 3], 9).tolist())])
    assert got == want


def test_every_lemke_howson_label_ends_at_an_equilibrium_of_bach_or_stravinsky():
    game = catalog.bach_or_stravinsky()
    known = profiles(all_equilibria(game, method="support_enumeration"))
    for label in range(4):
        eq = lemke_howson(game, initial_label=label)
        assert eq.info["converged"]
        assert profiles([eq])[0] in known


# ------------------------------------------------------------------------------- robustness


def test_thirty_random_20x20_games_all_verify():
    rng = np.random.default_rng(2024)
    for _ in range(30):
        game = NormalFormGame(rng.uniform(0, 1, (2, 20, 20)))
        eq = lemke_howson(game, initial_label=0)
        assert eq.info["converged"], eq.info
        assert scaled_nash_conv(game, eq.marginals) <= 1e-9


def test_every_label_of_random_20x20_games_verifies():
    rng = np.random.default_rng(7)
    for _ in range(2):
        a, b = rng.uniform(0, 1, (2, 20, 20))
        for label in range(40):
            path = lemke_howson_path(a, b, label)
            assert path.completed and path.regret <= 1e-9


@pytest.mark.parametrize("a, b", [
    (np.zeros((3, 3)), np.zeros((3, 3))),  # constant game: everything ties
    (np.ones((2, 4)), np.eye(2, 4)),  # the row player is indifferent everywhere
    (np.kron(np.eye(2), np.ones((2, 2))), np.kron(np.eye(2), np.ones((2, 2)))),  # duplicated strategies
    (np.array([[1.0, 1.0], [1.0, 1.0], [0.0, 2.0]]), np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])),
    (np.array([[0.0, 1.0, 2.0]]), np.array([[3.0, 3.0, 1.0]])),  # 1 x k with a tie
])
def test_degenerate_games_get_verified_equilibria(a, b):
    game = NormalFormGame.from_bimatrix(a, b)
    for label in range(sum(a.shape)):
        path = lemke_howson_path(a, b, label)
        assert path.regret <= 1e-12
    for eq in [lemke_howson(game), support_enumeration(game), nash(game)] + all_equilibria(game):
        assert eq.gap <= 1e-12
        assert_valid(eq, game)


@pytest.mark.parametrize("scale", [1e-9, 1e9])
def test_payoff_magnitude_does_not_matter(scale):
    game = catalog.bach_or_stravinsky()
    scaled = game.with_payoffs(game.payoffs * scale)
    assert profiles(all_equilibria(scaled)) == profiles(all_equilibria(game))
    eq = lemke_howson(scaled)
    assert eq.gap <= 1e-12 * scale
    g3 = catalog.three_player_matching_pennies()
    eq3 = nash_n_player(g3.with_payoffs(g3.payoffs * scale), rng=1)
    assert eq3.info["converged"]
    for m in eq3.marginals:
        np.testing.assert_allclose(m, [0.5, 0.5], atol=1e-9)


def test_four_player_game_with_a_unique_mixed_equilibrium():
    # Cyclic matching pennies among four players: each wants to match the next one, the last to mismatch the first.
    a = np.indices((2, 2, 2, 2))
    u = np.stack([np.where(a[p] == a[(p + 1) % 4], 1.0, -1.0) for p in range(3)]
                 + [np.where(a[3] != a[0], 1.0, -1.0)])
    game = NormalFormGame(u)
    assert len(pure_equilibria(u)) == 0
    eq = nash(game, rng=3)
    assert eq.info["via"] == "nash_n_player" and eq.info["converged"]
    assert scaled_nash_conv(game, eq.marginals) <= 1e-9


def test_n_player_reports_convergence_honestly():
    # A 3-player 5-strategy game without pure equilibria, with far too small a budget for tol=1e-14.
    game = next(g for g in (catalog.random_game((5, 5, 5), rng=s) for s in range(100))
                if len(pure_equilibria(g.payoffs)) == 0)
    eq = nash_n_player(game, tol=1e-14, max_restarts=1, max_iter=1, max_supports=0, rng=0)
    assert eq.info["converged"] is False
    assert eq.info["scaled_nash_conv"] > 1e-14
    assert scaled_nash_conv(game, eq.marginals) == pytest.approx(eq.info["scaled_nash_conv"], rel=1e-9)
    assert eq.gap > 0


def test_one_player_game_takes_the_best_pure_strategy():
    eq = solve(NormalFormGame(np.array([[0.5, 2.0, 2.0, -1.0]])), "nash")
    assert eq.marginals[0].tolist() == [0.0, 1.0, 0.0, 0.0]
    assert eq.values.tolist() == [2.0] and eq.gap == 0.0


def test_dispatcher_routes_by_game():
    assert nash(catalog.rock_paper_scissors()).info["via"] == "nash_zero_sum"
    assert nash(catalog.prisoners_dilemma()).info["via"] == "lemke_howson"
    assert nash(catalog.three_player_matching_pennies(), rng=0).info["via"] == "nash_n_player"
    eq = solve(catalog.biased_rock_paper_scissors(), "nash")
    assert eq.method == "nash"
    np.testing.assert_allclose(eq.marginals[0], np.array([1, 10, 5]) / 16, atol=1e-10)


# ------------------------------------------------------------------------------- properties


def bimatrices(max_k=8):
    return st.integers(1, max_k).flatmap(lambda k1: st.integers(1, max_k).flatmap(
        lambda k2: arrays(np.float64, (2, k1, k2), elements=st.floats(-100, 100, allow_nan=False, width=32))))


@settings(max_examples=40)
@given(bimatrices())
def test_lemke_howson_verifies_on_random_games(payoffs):
    game = NormalFormGame(payoffs)
    eq = lemke_howson(game)
    assert_valid(eq, game)
    assert eq.info["converged"]
    assert scaled_nash_conv(game, eq.marginals) <= 1e-9


@settings(max_examples=40)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(1, 6))
def test_every_label_completes_on_highly_degenerate_games(seed, k1, k2):
    # Payoffs in {0, 1, 2}: ties in the ratio test are the rule; lexicographic pivoting must not cycle.
    a, b = np.random.default_rng(seed).integers(0, 3, (2, k1, k2)).astype(float)
    for label in range(k1 + k2):
        path = lemke_howson_path(a, b, label)
        assert path.completed
        assert path.regret <= 1e-9
        assert np.all(path.x >= 0) and np.all(path.y >= 0)


@settings(max_examples=25)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(1, 6))
def test_support_enumeration_contains_every_lemke_howson_equilibrium(seed, k1, k2):
    # Continuous random payoffs: nondegenerate with probability one, so enumeration is complete.
    game = catalog.random_game((k1, k2), rng=seed)
    found = enumerate_supports(game.payoffs[0], game.payoffs[1])
    assert len(found) % 2 == 1  # nondegenerate games have an odd number of equilibria
    for x, y in found:
        assert scaled_nash_conv(game, [x, y]) <= 1e-9
    for path in lemke_howson_equilibria(game.payoffs[0], game.payoffs[1]):
        assert any(np.allclose(path.x, x, atol=1e-9) and np.allclose(path.y, y, atol=1e-9) for x, y in found)


@settings(max_examples=12)
@given(st.integers(0, 2**32 - 1), st.sampled_from([(2, 2, 2), (3, 3, 3), (2, 3, 2), (2, 2, 2, 2), (3, 2, 3, 2)]))
def test_n_player_meets_its_tolerance(seed, shape):
    rng = np.random.default_rng(seed)
    game = NormalFormGame(rng.uniform(-1, 1, (len(shape), *shape)))
    eq = nash_n_player(game, tol=1e-9, rng=seed)
    assert_valid(eq, game)
    assert eq.info["converged"]
    assert scaled_nash_conv(game, eq.marginals) <= 1e-9


# ------------------------------------------------------------------------------- bad input


def test_bad_input_raises_naming_the_argument():
    three = catalog.three_player_matching_pennies()
    with pytest.raises(ValueError, match="game"):
        lemke_howson(three)
    with pytest.raises(ValueError, match="game"):
        support_enumeration(three)
    with pytest.raises(ValueError, match="at most 2"):
        solve(three, "lemke_howson")
    with pytest.raises(ValueError, match="payoffs"):
        NormalFormGame(np.array([[[np.nan, 1.0]], [[0.0, 1.0]]]))
    with pytest.raises(ValueError, match="initial_label"):
        lemke_howson(catalog.stag_hunt(), initial_label=4)
    with pytest.raises(ValueError, match="max_pivots"):
        lemke_howson(catalog.stag_hunt(), max_pivots=0)
    with pytest.raises(ValueError, match="select"):
        nash(catalog.stag_hunt(), select="best")
    with pytest.raises(ValueError, match="max_pairs"):
        support_enumeration(catalog.random_game((14, 14), rng=0))
    with pytest.raises(ValueError, match="tol"):
        nash_n_player(three, tol=0.0)
    with pytest.raises(ValueError, match="max_restarts"):
        nash_n_player(three, max_restarts=0)
    with pytest.raises(TypeError, match="game"):
        lemke_howson(np.zeros((2, 2, 2)))
