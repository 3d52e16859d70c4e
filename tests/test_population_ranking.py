"""Ranking a PSRO population: alpha-Rank marginals and bipartite Elo."""

import numpy as np
import pytest

from games import NormalFormGame, catalog
from psro.population_ranking import rank_population
from ranking import alpharank


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


def test_no_elo_beyond_two_players():
    table = rank_population(catalog.three_player_matching_pennies())
    assert table["elo"].isna().all()
    assert len(table) == 6


def test_bad_input():
    with pytest.raises(TypeError, match="meta_game"):
        rank_population(np.zeros((2, 2, 2)))
