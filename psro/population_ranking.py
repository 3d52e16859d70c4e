"""Ranking a finished PSRO population with alpha-Rank and Elo.

Agents are the ``(player, policy)`` pairs of the meta-game. alpha-Rank runs the
multi-population chain on the meta-game (one population per player) and
reports each policy's marginal mass. Elo needs win probabilities between
agents: for a two-player meta-game, each cross pair (a player-0 policy against
a player-1 policy) counts as ``matches_per_pair`` virtual matches that player 0
wins with probability ``(1 + v / scale) / 2``, where ``v`` is player 0's
expected payoff and ``scale`` the largest absolute payoff of the meta-game
(exact for constant-sum meta-games centred on zero, such as poker's). Agents of
the same player never meet, and their Elo ratings are comparable through the
common opponents. Elo is left out (NaN) for games with more than two players.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from games.normal_form import NormalFormGame
from ranking import alpharank, elo

__all__ = ["rank_population"]


def rank_population(meta_game: NormalFormGame, alpha: float = 10.0, population_size: int = 50,
                    matches_per_pair: float = 100.0) -> pd.DataFrame:
    """alpha-Rank mass and Elo rating of every policy of a PSRO meta-game.

    Parameters
    ----------
    meta_game : NormalFormGame
        The meta-game (``EmpiricalGame.mean_game()``).
    alpha, population_size : float, int
        alpha-Rank's selection intensity and population size.
    matches_per_pair : float
        Virtual matches each cross pair stands for in the Elo fit.

    Returns
    -------
    DataFrame
        One row per ``(player, policy)``: ``alpharank_mass``, ``alpharank_rank``
        (1 = most mass within the player), ``elo`` and ``elo_rank``, sorted by
        player then alpha-Rank rank.

    Examples
    --------
    >>> from games import catalog
    >>> table = rank_population(catalog.biased_rock_paper_scissors())
    >>> table.columns.tolist()
    ['player', 'policy', 'alpharank_mass', 'alpharank_rank', 'elo', 'elo_rank']
    >>> len(table)
    6
    """
    if not isinstance(meta_game, NormalFormGame):
        raise TypeError(f"meta_game must be a games.NormalFormGame; got {type(meta_game).__name__}.")
    n = meta_game.num_players
    result = alpharank(meta_game, alpha=alpha, population_size=population_size, single_population=False)
    table = result.ranking.rename(columns={"population": "player", "strategy": "policy",
                                           "mass": "alpharank_mass", "rank": "alpharank_rank"})
    table["elo"] = np.nan
    if n == 2:
        ratings = _bipartite_elo(meta_game, matches_per_pair)
        keys = list(zip(table["player"], table["policy"]))
        table["elo"] = [ratings[k] for k in keys]
    table["elo_rank"] = table.groupby("player")["elo"].rank(ascending=False, method="min")
    return table[["player", "policy", "alpharank_mass", "alpharank_rank", "elo", "elo_rank"]].reset_index(drop=True)


def _bipartite_elo(meta_game: NormalFormGame, matches_per_pair: float) -> dict:
    k0, k1 = meta_game.shape
    u = meta_game.payoffs[0]
    scale = float(np.abs(meta_game.payoffs).max()) or 1.0
    p_win = np.clip((1.0 + u / scale) / 2.0, 0.0, 1.0)
    wins = np.zeros((k0 + k1, k0 + k1))
    wins[:k0, k0:] = matches_per_pair * p_win
    wins[k0:, :k0] = matches_per_pair * (1.0 - p_win).T
    ratings = elo(wins)["rating"].to_numpy()
    names = [(meta_game.player_names[0], s) for s in meta_game.strategy_names[0]]
    names += [(meta_game.player_names[1], s) for s in meta_game.strategy_names[1]]
    return dict(zip(names, ratings))
