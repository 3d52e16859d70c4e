"""Ranking a PSRO population: alpha-Rank marginals, and bipartite Elo only where Elo is defined."""

import logging

import numpy as np
import pytest

from games import NormalFormGame, catalog
from psro.run.population_ranking import elo_defined, rank_population
from ranking import alpharank, elo


def test_alpharank_masses_are_the_per_player_marginals():
    game = catalog.random_game((3, 4), kind="zero_sum", rng=1)
    table = rank_population(game, alpha=5.0)
    pi = alpharank(game, alpha=5.0, single_population=False).pi.reshape(game.shape)
    for p, axis in ((0, 1), (1, 0)):
        rows = table[table["player"] == game.player_names[p]].set_index("policy")
        marginal = pi.sum(axis=axis)
        np.testing.assert_allclose(rows.loc[list(game.strategy_names[p]), "alpharank_mass"], marginal, atol=1e-12)


def test_elo_orders_a_transitive_population():
    # player 0's policy i beats player 1's policy j by (i - j) / 4: later policies are stronger on both sides
    k = 4
    i, j = np.indices((k, k))
    a = (i - j) / 4.0
    table = rank_population(NormalFormGame.from_bimatrix(a, -a))
    for player in ("p0", "p1"):
        rows = table[table["player"] == player].sort_values("policy")
        assert rows["elo"].is_monotonic_increasing
        assert rows["elo_rank"].tolist() == [4, 3, 2, 1]


def test_a_symmetric_meta_game_is_ranked_as_one_population():
    # the transitive game above is skew-symmetric: one population, member i beats member j by (i - j) / 4
    k = 4
    i, j = np.indices((k, k))
    a = (i - j) / 4.0
    table = rank_population(NormalFormGame.from_bimatrix(a, a.T), single_population=True)
    assert len(table) == k and set(table["player"]) == {"population"}
    rows = table.sort_values("policy")
    assert rows["elo"].is_monotonic_increasing and rows["elo_rank"].tolist() == [4, 3, 2, 1]
    assert rows["alpharank_rank"].iloc[-1] == 1 and rows["alpharank_mass"].iloc[-1] > 0.99   # the strongest fixates
    assert rows["alpharank_mass"].sum() == pytest.approx(1.0)
    # a sampled meta-game of a symmetric run is symmetric up to its noise (here on the diagonal): same ranking
    noisy = NormalFormGame.from_bimatrix(a + np.diag([0.01, -0.02, 0.0, 0.03]), a.T)
    assert rank_population(noisy, single_population=True)["policy"].tolist() == table["policy"].tolist()
    with pytest.raises(ValueError, match="single_population: a 4x3 meta-game has no one population"):
        rank_population(NormalFormGame.from_bimatrix(a[:, :3], -a[:, :3]), single_population=True)


def test_no_elo_beyond_two_players(caplog):
    with caplog.at_level(logging.INFO, logger="psro.run.population_ranking"):
        table = rank_population(catalog.three_player_matching_pennies())
    assert "elo" not in table.columns and "elo_rank" not in table.columns  # no all-NaN columns
    assert "3 players" in table.attrs["elo"]
    assert "3 players" in caplog.text
    assert len(table) == 6


def test_no_elo_for_a_general_sum_meta_game():
    # trade_comm-like: both players gain together at (1, 1), so "winning" is not defined
    a = np.array([[1.0, 0.0], [0.0, 3.0]])
    table = rank_population(NormalFormGame.from_bimatrix(a, a))
    assert "elo" not in table.columns
    assert "general-sum" in table.attrs["elo"]
    assert elo_defined(NormalFormGame.from_bimatrix(a, a)) == table.attrs["elo"]
    top = table[table["alpharank_rank"] == 1]
    assert top["policy"].tolist() == ["s1", "s1"]  # the payoff-dominant profile holds the mass


def test_elo_of_a_win_loss_meta_game_uses_the_win_probabilities():
    # constant-sum with u_0 + u_1 = 1: u_0 is player 0's win probability, and with some sure
    # wins and losses (|u_0 - 1/2| reaches 1/2) the virtual matches are exactly those probabilities
    win = np.array([[0.5, 1.0, 0.2], [0.0, 0.7, 0.4]])
    game = NormalFormGame.from_bimatrix(win, 1.0 - win)
    table = rank_population(game, matches_per_pair=100.0)
    assert table.attrs["elo"] is None
    wins = np.zeros((5, 5))
    wins[:2, 2:] = 100.0 * win
    wins[2:, :2] = 100.0 * (1.0 - win).T
    expected = elo(wins)["rating"].to_numpy()
    got = table.set_index(["player", "policy"])["elo"]
    order = [("p0", "s0"), ("p0", "s1"), ("p1", "s0"), ("p1", "s1"), ("p1", "s2")]
    np.testing.assert_allclose(got.loc[order].to_numpy(), expected, rtol=0, atol=1e-9)
    # the same game shifted to zero sum gives the same ratings
    zero_sum = rank_population(NormalFormGame.from_bimatrix(win - 0.5, 0.5 - win))
    np.testing.assert_allclose(zero_sum.set_index(["player", "policy"])["elo"].loc[order].to_numpy(),
                               expected, rtol=0, atol=1e-9)


def test_large_population_is_ranked_by_blocks_and_logged(caplog):
    # 80 x 80 policies: 6400 joint profiles, more than alpha-Rank lists move by move
    game = catalog.random_game((80, 80), kind="zero_sum", rng=2)
    with caplog.at_level(logging.INFO):
        table = rank_population(game, alpha=10.0, progress=False)
    info = table.attrs["alpharank"]
    assert info["solver"] == "gmres-blocks" and info["residual"] <= 1e-9 and info["stationary"] == "unique"
    assert "ranking the 80x80 population (6400 joint profiles)" in caplog.text
    assert "alpha-Rank of the 80x80 population took" in caplog.text
    for player in game.player_names:
        assert abs(table.loc[table["player"] == player, "alpharank_mass"].sum() - 1.0) < 1e-12


def test_bad_input():
    with pytest.raises(TypeError, match="meta_game"):
        rank_population(np.zeros((2, 2, 2)))


def test_rank_population_is_public_api():
    # issue 36 item 2: the two-population ranking was reachable only as psro.run.population_ranking.rank_population
    import psro
    from psro.run.population_ranking import rank_population

    assert psro.rank_population is rank_population and "rank_population" in psro.__all__
