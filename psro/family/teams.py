"""Team games: players that share a payoff, their team view, team exploitability and a decentralised team learner.

A *team game* is a game whose players form teams (``teams=[[0, 1, 2], [3, 4, 5]]``), every member of a team
getting the same payoff. Three things live here:

- :func:`psro.sequence_form.team_view.team_payoffs`: the **team view** of a normal-form team game,
  one player per team whose strategies are the team's joint pure actions (C order over its members: the last
  member's action varies fastest). A team's mixed strategy in the view may be correlated among its members; a
  product of the members' own mixed strategies is one of them. The self-play family (:mod:`psro.family`) trains
  on this view when ``teams`` is set, so its meta-game is the meta-game *between teams* (``k_A x k_B`` entries,
  not ``k^n``).
- :func:`team_exploitability`: the mean over teams of the best pure team deviation's gain, with the team's joint
  pure actions (normal form) or joint pure policies (small game trees) enumerated.
- :class:`psro.oracles.team_pg.TeamPolicyGradient`, oracle ``"team_pg"``: a team best response
  learned *jointly by the team's players*, each member its own learner (softmax policy gradient on its own logits,
  with the exact expected gradient of the shared team payoff) against the fixed opponents, from a random
  initialisation drawn from the seed (or from a warm start). Decentralised learners find local optima: that is what
  the FXP example shows.

Examples
--------
>>> from games import catalog
>>> game, teams = catalog.fxp_example(), catalog.fxp_teams(3)
>>> view = team_payoffs(game, teams)
>>> view.shape                                   # each team has 2^3 joint actions
(8, 8)
>>> all1, all0 = np.eye(8)[7], np.eye(8)[0]
>>> round(team_exploitability(game, [all1, all1], teams), 12)   # team A (or B) switching to all-0 gains C
0.1
>>> team_exploitability(game, [all0, all0], teams)              # all-0 against all-0: a team-level Nash
0.0
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from games.normal_form import NormalFormGame
from games.validation import check_int
from psro.deprecation import moved_names
from psro.errors import ConfigError
from psro.sequence_form.team_view import check_team_game, team_payoffs

__all__ = ["team_exploitability", "team_gains", "DEFAULT_MAX_DEVIATIONS"]

#: The most joint pure deviations :func:`team_exploitability` enumerates for one team.
DEFAULT_MAX_DEVIATIONS = 1 << 20


def _team_strategies(game: NormalFormGame, profile, teams) -> list:
    """Per team, its (flattened) distribution over joint actions: ``profile`` gives one per team, or one mixed
    strategy per player (then the members play independently)."""
    sizes = [math.prod(game.shape[p] for p in team) for team in teams]
    profile = [np.asarray(x, dtype=np.float64) for x in profile]
    if len(profile) == game.num_players and all(x.size == game.shape[p] for p, x in enumerate(profile)):
        joint = []
        for team in teams:
            x = np.ones(1)
            for p in team:
                x = np.multiply.outer(x, profile[p].ravel()).ravel()
            joint.append(x)
        profile = joint
    elif len(profile) != len(teams) or any(x.size != k for x, k in zip(profile, sizes)):
        raise ConfigError("profile", f"give one mixed strategy per player (sizes {list(game.shape)}) or one "
                          f"distribution per team over its joint actions (sizes {sizes}); got sizes "
                          f"{[x.size for x in profile]}.")
    for t, x in enumerate(profile):
        if np.any(x < -1e-12) or not np.isclose(x.sum(), 1.0, atol=1e-9):
            raise ConfigError("profile", f"team {t}'s strategy must be a probability vector; it sums to {x.sum():g}.")
    return [x.ravel() for x in profile]


def team_gains(game, profile, teams, *, max_deviations: int = DEFAULT_MAX_DEVIATIONS) -> np.ndarray:
    """Per team, the gain of its best pure team deviation from ``profile`` (the others fixed); see
    :func:`team_exploitability`, which is their mean.

    Examples
    --------
    >>> from games import catalog
    >>> game, teams = catalog.fxp_example(), catalog.fxp_teams(3)
    >>> # everyone uniform (value 0): all-1 gains 3 - E[b] - P(b=0) (3.03 + 0.07) = 3 - 1.5 - 3.1 / 8
    >>> team_gains(game, [np.full(2, 0.5)] * 6, teams).round(6).tolist()
    [1.1125, 1.1125]
    """
    if isinstance(game, NormalFormGame):
        teams = check_team_game(game, teams)
        view = team_payoffs(game, teams)
        strategies = _team_strategies(game, profile, teams)
        gains = []
        for t in range(len(teams)):
            values = view.payoffs[t]
            for s in reversed(range(len(teams))):   # contract the other teams' axes, last first
                if s != t:
                    values = np.tensordot(values, strategies[s], axes=([s], [0]))
            gains.append(float(values.max() - values @ strategies[t]))
        return np.maximum(np.array(gains), 0.0)
    return _tree_team_gains(game, profile, teams, max_deviations)


def team_exploitability(game, profile, teams, *, max_deviations: int = DEFAULT_MAX_DEVIATIONS) -> float:
    """Team exploitability: the mean over teams of the gain of the team's best pure joint deviation.

    With every other team's play fixed, a team's best deviation is found by enumerating its members' joint pure
    actions (a normal-form game: ``prod(k_m)`` of them) or joint pure policies (a game tree: the product over
    members of their pure policies, ``prod_m prod_I |A(I)|``). A correlated team strategy never does better than
    the best pure joint one, so this is the team's exact best-response gain. For teams of one player it is
    NashConv divided by the number of players.

    Parameters
    ----------
    game : games.NormalFormGame, pyspiel.Game or psro.sequence_form.game_tree.GameTree
        A normal-form team game, or a game whose tree is small enough to build and enumerate.
    profile : sequence of array_like
        Normal form: one mixed strategy per player (members independent), or one distribution per team over its
        joint actions (:func:`team_payoffs`' order; correlated members). A tree: one behaviour policy
        ``(num_infostates, num_actions)`` per player.
    teams : list of list of int
    max_deviations : int
        Game trees: the most joint pure policies enumerated for one team; past it, ``ValueError``. (A normal-form
        game is always enumerated: its payoff tensor already holds every joint action. Learned team deviations
        for trees too large to enumerate are not implemented.)

    Returns
    -------
    float

    Examples
    --------
    >>> from games import catalog
    >>> game, teams = catalog.fxp_example(), catalog.fxp_teams(3)
    >>> ones, zeros = [np.array([0.0, 1.0])] * 3, [np.array([1.0, 0.0])] * 3
    >>> round(team_exploitability(game, ones + ones, teams), 12)    # the all-1 local equilibrium
    0.1
    >>> round(team_exploitability(game, zeros + ones, teams), 12)   # A all-0, B all-1: B gains C + 0 (to all-0)
    0.05
    """
    check_int(max_deviations, "max_deviations", minimum=1)
    return float(np.mean(team_gains(game, profile, teams, max_deviations=max_deviations)))


def _pure_policies(infostates, limit: int) -> np.ndarray:
    """Every pure policy of one player, ``(k, num_infostates, num_actions)``; ``ValueError`` past ``limit``."""
    legal = [np.flatnonzero(row) for row in infostates.legal_mask]
    count = math.prod(len(actions) for actions in legal)
    if count > limit:
        raise ConfigError("max_deviations", f"a player has {count} pure policies, more than {limit}; the team's "
                          "deviations are too many to enumerate (raise max_deviations, or learn a team response).")
    pure = np.zeros((count, infostates.num_infostates, infostates.num_actions))
    for k, choice in enumerate(itertools.product(*legal)):
        pure[k, np.arange(len(choice)), list(choice)] = 1.0
    return pure


def _tree_team_gains(game, profile, teams, limit: int) -> np.ndarray:
    """:func:`team_gains` on a game tree: enumerate each team's joint pure policies in the sequence form."""
    from psro.config.model import check_teams
    from psro.policies import realization_plans
    from psro.sequence_form.game_tree import GameTree, build_game_tree

    tree = game if isinstance(game, GameTree) else build_game_tree(game)
    teams = check_teams(teams, tree.num_players)
    if len(profile) != tree.num_players:
        raise ConfigError("profile", f"give one behaviour policy per player ({tree.num_players}); got {len(profile)}.")
    plans = [realization_plans(np.asarray(policy, dtype=np.float64)[None], info)[0]
             for policy, info in zip(profile, tree.infostates)]
    gains = []
    for team in teams:
        returns = tree.terminal_returns[:, team]
        if not np.allclose(returns, returns[:, :1], rtol=0.0, atol=1e-12):
            raise ConfigError("teams", f"the members of team {team} do not share their returns.")
        weight = tree.terminal_chance * returns[:, 0]
        for q in range(tree.num_players):
            if q not in team:
                weight = weight * plans[q][tree.terminal_sequence[q]]
        current = weight * np.prod([plans[m][tree.terminal_sequence[m]] for m in team], axis=0)
        values, count = weight[None, :], 1
        for m in team:   # (joint deviations so far, Z) times member m's pure plans at every terminal
            pure = realization_plans(_pure_policies(tree.infostates[m], limit), tree.infostates[m])
            count *= len(pure)
            if count > limit:
                raise ConfigError("max_deviations", f"team {team} has more than {limit} joint pure policies; too many "
                                  "to enumerate (raise max_deviations, or learn a team response).")
            values = (values[:, None, :] * pure[:, tree.terminal_sequence[m]][None]).reshape(count, -1)
        gains.append(max(0.0, float(values.sum(axis=1).max() - current.sum())))
    return np.array(gains)


#: The names this module re-exported before, each resolved with a DeprecationWarning (CHANGELOG.md)
__getattr__ = moved_names(__name__, {
    "TeamPolicyGradient": "psro.oracles.team_pg",
    "member_marginals": "psro.oracles.team_pg",
    "team_config": "psro.sequence_form.team_view",
})
