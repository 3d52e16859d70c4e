"""Fictitious play (Brown 1951), n players, simultaneous updates.

Each player best-responds to the empirical average of the others' past plays
and the averages are returned. The averages converge to Nash equilibria in
two-player zero-sum games (Robinson 1951), potential games and 2x2 games, but
not in general: on Shapley's 3x3 game the play cycles with ever longer cycles
and the averages never settle, which the result reports as
``converged=False``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from games.normal_form import NormalFormGame, as_game
from solvers.dynamics.common import (
    PayoffOperator,
    check_nonnegative_float,
    check_positive_int,
    initial_strategies,
    nash_result,
)
from solvers.equilibrium import Equilibrium
from solvers.registry import register

__all__ = ["fictitious_play"]

logger = logging.getLogger(__name__)


@register("fictitious_play", concept="nash", tol_option="tol")
def fictitious_play(game: NormalFormGame, iterations: int = 10_000, tol: float = 1e-2,
                    initial: Sequence[np.ndarray] | None = None) -> Equilibrium:
    """Fictitious play with simultaneous best responses; returns the empirical averages.

    The initial strategies count as the first play. Best-response ties go to
    the lowest index. The NashConv of the averages is measured at every step
    at no extra cost (it uses the same deviation payoffs as the best
    responses).

    Parameters
    ----------
    game : NormalFormGame
        Any number of players.
    iterations : int
        Step budget.
    tol : float
        Stop as soon as the NashConv of the averages is ``<= tol``. Fictitious
        play converges slowly (roughly like ``1/sqrt(t)`` in zero-sum games), so
        small tolerances need large budgets.
    initial : sequence of ndarray, optional
        The first play; uniform by default.

    Returns
    -------
    Equilibrium
        Concept ``"nash"``; ``gap`` is the NashConv of the averages;
        ``info["converged"]`` says whether it is within ``tol``.

    Examples
    --------
    >>> from games import catalog
    >>> eq = fictitious_play(catalog.matching_pennies(), tol=0.05, initial=[np.array([1.0, 0]), np.array([1.0, 0])])
    >>> eq.converged, eq.gap <= 0.05, eq.marginals[0].round(1).tolist()
    (True, True, [0.5, 0.5])
    """
    game = as_game(game)
    iterations = check_positive_int(iterations, "iterations")
    tol = check_nonnegative_float(tol, "tol")
    op = PayoffOperator.from_game(game)
    n = game.num_players
    avg = initial_strategies(game, initial)
    done = 0
    for t in range(1, iterations + 1):
        dev = [op.deviation_payoff(p, avg) for p in range(n)]
        best = [int(np.argmax(d)) for d in dev]
        gap = sum(float(d[b] - d @ x) for d, b, x in zip(dev, best, avg))
        if gap <= tol:
            break
        step = 1.0 / (t + 1)
        for p in range(n):
            avg[p] *= 1.0 - step
            avg[p][best[p]] += step
        done = t
    return nash_result(game, "fictitious_play", avg, tol=tol, iterations=done, logger=logger)
