"""Ranking a finished PSRO population with alpha-Rank, and with Elo where Elo means something.

Agents are the ``(player, policy)`` pairs of the meta-game. alpha-Rank runs the
multi-population chain on the meta-game (one population per player) and
reports each policy's marginal mass; for the populations PSRO makes (463 x 463
policies on Leduc poker) the chain is held by blocks and solved matrix-free
(:func:`ranking.alpharank`), and this module logs what it ranks and how long
each step takes.

Elo is a model of win probabilities between two sides, so it is fitted only
where the meta-game is a two-player constant-sum game (zero-sum, or win/loss
payoffs that sum to a constant): each cross pair (a player-0 policy against a
player-1 policy) counts as ``matches_per_pair`` virtual matches that player 0
wins with probability ``(1 + v / scale) / 2``, where ``v = (u_0 - u_1) / 2`` is
player 0's centred payoff and ``scale`` its largest absolute value. Agents of
the same player never meet; their Elo ratings are comparable through the
common opponents. For more than two players, or a general-sum meta-game (such
as ``trade_comm``'s, where both players can gain together), a win probability
is not defined: the table has no Elo columns, and ``table.attrs["elo"]`` (also
logged) says why.
"""

from __future__ import annotations

import logging
import time

import numpy as np
import pandas as pd

from games.normal_form import NormalFormGame
from psro.errors import ConfigError
from ranking import alpharank, elo

__all__ = ["elo_defined", "rank_population"]

logger = logging.getLogger(__name__)


def elo_defined(meta_game: NormalFormGame) -> str | None:
    """Why Elo does not apply to ``meta_game``, or None where it does (two players, constant sum).

    Examples
    --------
    >>> from games import catalog
    >>> elo_defined(catalog.rock_paper_scissors()) is None
    True
    >>> elo_defined(catalog.prisoners_dilemma())
    'Elo left out: it needs a two-player constant-sum (win/loss) meta-game, and this one is general-sum'
    """
    if meta_game.num_players != 2:
        return (f"Elo left out: it needs a two-player constant-sum (win/loss) meta-game, and this one has "
                f"{meta_game.num_players} players")
    if not meta_game.is_constant_sum():
        return "Elo left out: it needs a two-player constant-sum (win/loss) meta-game, and this one is general-sum"
    return None


def rank_population(meta_game: NormalFormGame, alpha: float = 10.0, population_size: int = 50,
                    matches_per_pair: float = 100.0, progress: bool | None = None,
                    single_population: bool = False) -> pd.DataFrame:
    """alpha-Rank mass of every policy of a PSRO meta-game, and its Elo rating where Elo is defined.

    Parameters
    ----------
    meta_game : NormalFormGame
        The meta-game (``EmpiricalGame.mean_game()``).
    alpha, population_size : float, int
        alpha-Rank's selection intensity and population size.
    matches_per_pair : float
        Virtual matches each cross pair stands for in the Elo fit.
    progress : bool, optional
        alpha-Rank's progress bar on long solves (``None``: on a terminal only).
    single_population : bool
        The meta-game of a symmetric run (``symmetric=True``: one population in every seat): alpha-Rank's
        single-population chain and, for two players, Elo from the round robin of the members; the table has one
        row per member (``player`` is ``"population"``). The meta-game is symmetrised first (each payoff averaged
        over the permutations of the seats: a sampled meta-game is symmetric only up to its noise).

    Returns
    -------
    DataFrame
        One row per ``(player, policy)``: ``alpharank_mass``, ``alpharank_rank``
        (1 = most mass within the player) and, for two-player constant-sum
        meta-games, ``elo`` and ``elo_rank``; sorted by player then alpha-Rank
        rank. ``attrs["elo"]`` is None where Elo was fitted, else the reason it
        was left out; ``attrs["alpharank"]`` holds alpha-Rank's ``info``.

    Examples
    --------
    >>> from games import catalog
    >>> table = rank_population(catalog.biased_rock_paper_scissors())
    >>> table.columns.tolist()
    ['player', 'policy', 'alpharank_mass', 'alpharank_rank', 'elo', 'elo_rank']
    >>> len(table)
    6
    >>> rank_population(catalog.three_player_matching_pennies()).columns.tolist()
    ['player', 'policy', 'alpharank_mass', 'alpharank_rank']
    >>> one = rank_population(catalog.biased_rock_paper_scissors(), single_population=True)
    >>> one[["player", "policy", "alpharank_rank"]].values.tolist()
    [['population', 'paper', 1], ['population', 'rock', 2], ['population', 'scissors', 3]]
    """
    if not isinstance(meta_game, NormalFormGame):
        raise TypeError(f"meta_game must be a games.NormalFormGame; got {type(meta_game).__name__}.")
    if single_population:
        if len(set(meta_game.shape)) != 1:
            raise ConfigError("single_population", f"a {'x'.join(map(str, meta_game.shape))} meta-game has no one "
                              "population; rank it with single_population=False (one population per player).")
        from psro.meta.symmetric import symmetrised

        meta_game = symmetrised(meta_game)   # (a sampled meta-game is symmetric only up to its noise)
    shape = "x".join(map(str, meta_game.shape))
    logger.info("ranking the %s population (%d joint profiles) with alpha-Rank (alpha=%g, m=%d)", shape,
                int(np.prod(meta_game.shape)), alpha, population_size)
    start = time.perf_counter()
    result = alpharank(meta_game, alpha=alpha, population_size=population_size,
                       single_population=bool(single_population), progress=progress)
    logger.info("alpha-Rank of the %s population took %.1f s (solver %s, residual %.1e)", shape,
                time.perf_counter() - start, result.info.get("solver"), result.info.get("residual", np.nan))
    table = result.ranking.rename(columns={"population": "player", "strategy": "policy",
                                           "mass": "alpharank_mass", "rank": "alpharank_rank"})
    columns = ["player", "policy", "alpharank_mass", "alpharank_rank"]
    why_not = elo_defined(meta_game)
    if why_not is None:
        start = time.perf_counter()
        ratings = (_round_robin_elo if single_population else _bipartite_elo)(meta_game, matches_per_pair)
        table["elo"] = [ratings[k] for k in zip(table["player"], table["policy"])]
        table["elo_rank"] = table.groupby("player")["elo"].rank(ascending=False, method="min")
        columns += ["elo", "elo_rank"]
        logger.info("Elo of the %s population took %.1f s", shape, time.perf_counter() - start)
    else:
        logger.info("%s", why_not)
    table = table[columns].reset_index(drop=True)
    table.attrs["elo"] = why_not
    table.attrs["alpharank"] = dict(result.info)
    return table


def _win_probabilities(meta_game: NormalFormGame) -> np.ndarray:
    """Player 0's probability of winning each cross pair: ``(1 + v / scale) / 2`` (module docstring)."""
    v = (meta_game.payoffs[0] - meta_game.payoffs[1]) / 2.0  # player 0's payoff, centred (constant sum)
    scale = float(np.abs(v).max()) or 1.0
    return np.clip((1.0 + v / scale) / 2.0, 0.0, 1.0)


def _round_robin_elo(meta_game: NormalFormGame, matches_per_pair: float) -> dict:
    """Elo of the members of a symmetric meta-game's one population, from their matches against each other."""
    wins = matches_per_pair * _win_probabilities(meta_game)
    np.fill_diagonal(wins, 0.0)   # (a member against itself says nothing about ratings)
    ratings = elo(wins)["rating"].to_numpy()
    return {("population", s): r for s, r in zip(meta_game.strategy_names[0], ratings)}


def _bipartite_elo(meta_game: NormalFormGame, matches_per_pair: float) -> dict:
    k0, k1 = meta_game.shape
    p_win = _win_probabilities(meta_game)
    wins = np.zeros((k0 + k1, k0 + k1))
    wins[:k0, k0:] = matches_per_pair * p_win
    wins[k0:, :k0] = matches_per_pair * (1.0 - p_win).T
    ratings = elo(wins)["rating"].to_numpy()
    names = [(meta_game.player_names[0], s) for s in meta_game.strategy_names[0]]
    names += [(meta_game.player_names[1], s) for s in meta_game.strategy_names[1]]
    return dict(zip(names, ratings))
