"""The team view of a team game: players that share a payoff played as one player per team.

A *team game* is a normal-form game whose players form teams (``teams=[[0, 1, 2], [3, 4, 5]]``), every member of
a team getting the same payoff. Its team view (:func:`team_payoffs`) has one player per team whose strategies are
the team's joint pure actions; a run with ``teams`` set plays that view (:func:`team_config`). Team
exploitability and the self-play family's use of it: :mod:`psro.family.teams`.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from games.normal_form import NormalFormGame
from psro.errors import ConfigError, with_field

__all__ = ["check_team_game", "team_payoffs", "team_config"]


def check_team_game(game: NormalFormGame, teams) -> list:
    """``teams`` checked against ``game``: they cover every player once, and every member of a team has the same
    payoffs as the team's first member. Returns the teams as lists of ints; ``ValueError`` naming ``teams``.

    Examples
    --------
    >>> from games import catalog
    >>> check_team_game(catalog.fxp_example(team_size=2), [[0, 1], [2, 3]])
    [[0, 1], [2, 3]]
    >>> check_team_game(catalog.fxp_example(team_size=2), [[0, 2], [1, 3]])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: teams: player 2 does not share the payoffs of player 0, its team's first member; ...
    """
    from psro.config.model import check_teams

    if not isinstance(game, NormalFormGame):
        raise TypeError(f"game must be a games.NormalFormGame; got {type(game).__name__}.")
    teams = with_field("teams", check_teams, teams, game.num_players)
    for team in teams:
        for member in team[1:]:
            if not np.allclose(game.payoffs[member], game.payoffs[team[0]], rtol=0.0, atol=1e-12):
                raise ConfigError("teams", f"player {member} does not share the payoffs of player {team[0]}, its "
                                  "team's first member; a team's players must get the same payoff at every profile.")
    return teams


def team_payoffs(game: NormalFormGame, teams) -> NormalFormGame:
    """The team view of a normal-form team game: one player per team, its strategies the team's joint pure actions.

    Parameters
    ----------
    game : games.NormalFormGame
        ``n`` players; the members of a team share their payoffs (:func:`check_team_game`).
    teams : list of list of int
        The teams, covering every player once, e.g. ``[[0, 1, 2], [3, 4, 5]]``.

    Returns
    -------
    games.NormalFormGame
        ``len(teams)`` players; team ``T`` has ``prod(k_m for m in T)`` strategies, its joint actions in C order
        over the members as listed (named like ``"0,1,0"``), and ``payoffs[T][j_1, ..., j_K]`` is the payoff of
        ``T``'s members when every team ``S`` plays its joint action ``j_S``.

    Examples
    --------
    >>> from games import catalog
    >>> view = team_payoffs(catalog.fxp_example(), catalog.fxp_teams(3))
    >>> view.strategy_names[0][:3]
    ('0,0,0', '0,0,1', '0,1,0')
    >>> round(float(view.payoffs[0][0, 7]), 12), round(float(view.payoffs[1][0, 7]), 12)   # A all-0, B all-1
    (0.1, -0.1)
    """
    teams = check_team_game(game, teams)
    order = [p for team in teams for p in team]
    sizes = [math.prod(game.shape[p] for p in team) for team in teams]
    payoffs = np.stack([np.transpose(game.payoffs[team[0]], order).reshape(sizes) for team in teams])
    names = [tuple(",".join(joint) for joint in itertools.product(*(game.strategy_names[p] for p in team)))
             for team in teams]
    players = ["+".join(game.player_names[p] for p in team) for team in teams]
    return NormalFormGame(payoffs, player_names=players, strategy_names=names, name=f"teams of {game.name}")


def team_config(config):
    """A :class:`psro.config.PSROConfig` with its team game made its team view: ``teams`` set on a
    :class:`games.NormalFormGame` gives the game of :func:`team_payoffs` (and ``teams`` null); an oracle that
    declares ``teams`` (:func:`psro.oracles.oracle_capabilities`; ``team_pg``) gets its ``members``. A config
    without teams is returned as it is.

    Examples
    --------
    >>> from games import catalog
    >>> from psro.config.model import PSROConfig
    >>> config = PSROConfig(game=catalog.fxp_example(), teams=catalog.fxp_teams(3), oracle="team_pg")
    >>> view = team_config(config)
    >>> view.game.shape, view.teams, view.oracle_options
    ((8, 8), None, {'members': [[2, 2, 2], [2, 2, 2]]})
    """
    if config.teams is None:
        return config
    from psro.errors import ConfigError, with_field
    from psro.oracles import oracle_capabilities
    from psro.sequence_form.matrix_game import resolve_game

    game = with_field("game", resolve_game, config.game)[1]   # (the normal form, None for an OpenSpiel game)
    if game is None:
        raise ConfigError("teams", f"a team game is played on its team view, which needs the game as a "
                          f"games.NormalFormGame; got game={config.game!r}. Drop teams, or give the normal form.")
    teams = check_team_game(game, config.teams)
    options = dict(config.oracle_options or {})
    if with_field("oracle", oracle_capabilities, config.oracle).teams:
        options.setdefault("members", [[int(game.shape[p]) for p in team] for team in teams])
    return config.replace(game=team_payoffs(game, teams), teams=None, oracle_options=options or None)
