"""The ``"nash"`` solver: picks the right Nash method for the game in front of it.

- one player: the best pure strategy (the first one on ties);
- two players, constant-sum: the exact LP (:func:`solvers.nash.zero_sum.nash_zero_sum`);
- two players, general-sum: Lemke-Howson, falling back to support enumeration
  when no path verifies; with ``select="max_welfare"`` or ``"max_entropy"``,
  the chosen one among :func:`solvers.nash.nash_enumeration.all_equilibria`;
- three or more players: :func:`solvers.nash.nash_n_player.nash_n_player`.
"""

from __future__ import annotations

import dataclasses
import logging

import numpy as np

from games.normal_form import NormalFormGame
from solvers.equilibrium import Equilibrium
from solvers.nash.lemke_howson import lemke_howson
from solvers.nash.nash_enumeration import all_equilibria
from solvers.nash.nash_n_player import nash_n_player
from solvers.nash.nash_selection import SELECTIONS, select_equilibrium
from solvers.nash.support_enumeration import DEFAULT_MAX_PAIRS, support_enumeration, support_pairs
from solvers.nash.zero_sum import nash_zero_sum
from solvers.registry import check_tolerance, make_equilibrium, register

__all__ = ["nash"]

logger = logging.getLogger(__name__)


def _as_nash(eq: Equilibrium, via: str) -> Equilibrium:
    info = dict(eq.info)
    info["via"] = via
    return dataclasses.replace(eq, method="nash", info=info)


@register("nash", concept="nash", tol_option="tol")
def nash(game: NormalFormGame, select: str = "first", tol: float = 1e-9, rng=None, max_restarts: int = 10,
         lp_method: str = "auto") -> Equilibrium:
    """A Nash equilibrium of any normal-form game, by the method that fits it.

    Parameters
    ----------
    game : NormalFormGame
        The game.
    select : {"first", "max_welfare", "max_entropy"}
        Two-player general-sum games only: which equilibrium to return among
        all those found (``info["equilibria"]`` lists them). In constant-sum
        games all equilibria share the value, and the LP's is returned.
    tol : float
        Scale-aware NashConv tolerance for the verification (two players) or the
        search (three or more players).
    rng : numpy.random.Generator or int, optional
        Randomness of the n-player search.
    max_restarts : int
        Restarts of the n-player search.
    lp_method : str
        LP method of the zero-sum solver (see :func:`solvers.nash.zero_sum.solve_zero_sum`).

    Returns
    -------
    Equilibrium
        ``method == "nash"``; ``info["via"]`` names the method used.

    Examples
    --------
    >>> from games import catalog
    >>> nash(catalog.matching_pennies()).info["via"]
    'nash_zero_sum'
    >>> eq = nash(catalog.stag_hunt(), select="max_welfare")
    >>> eq.marginals[0].tolist(), eq.info["via"]
    ([1.0, 0.0], 'all_equilibria')
    """
    if not isinstance(game, NormalFormGame):
        raise TypeError(f"game must be a games.NormalFormGame; got {type(game).__name__}.")
    tol = check_tolerance(tol)
    if select not in SELECTIONS:
        raise ValueError(f"select must be one of {SELECTIONS}; got {select!r}.")
    n = game.num_players
    if n == 1:
        best = int(np.argmax(game.payoffs[0]))
        sigma = np.zeros(game.shape[0])
        sigma[best] = 1.0
        eq = make_equilibrium(game, marginals=[sigma], concept="nash", method="nash",
                              info={"converged": True, "via": "best_response"})
        return eq
    if n == 2 and game.is_constant_sum():
        return _as_nash(nash_zero_sum(game, lp_method=lp_method), "nash_zero_sum")
    if n == 2:
        if select != "first":
            return _as_nash(select_equilibrium(all_equilibria(game, tol=tol), select), "all_equilibria")
        eq = lemke_howson(game, tol=tol)
        if eq.info["converged"]:
            return _as_nash(eq, "lemke_howson")
        if support_pairs(*game.shape) <= DEFAULT_MAX_PAIRS:
            logger.info("Lemke-Howson did not verify; falling back to support enumeration")
            return _as_nash(support_enumeration(game, tol=tol), "support_enumeration")
        return _as_nash(eq, "lemke_howson")
    return _as_nash(nash_n_player(game, tol=tol, rng=rng, max_restarts=max_restarts), "nash_n_player")
