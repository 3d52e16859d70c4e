"""Projected replicator dynamics (PRD), the meta-solver of Lanctot et al. 2017 (PSRO).

Every player's mixed strategy follows the discretised replicator equation

    x_p <- Proj_gamma( x_p + dt * x_p * (u_p(x_-p) - x_p . u_p(x_-p)) ),

all players at once, where ``u_p(x_-p)`` is the vector of player ``p``'s pure
strategy payoffs against the others' current mixtures and ``Proj_gamma`` is
the Euclidean projection onto the simplex with every probability at least
``gamma`` (the "gamma-exploratory" simplex of the paper).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from games.normal_form import NormalFormGame, as_game
from solvers.dynamics.common import (
    FlatLayout,
    PayoffOperator,
    check_nonnegative_float,
    check_positive_int,
    initial_strategies,
    nash_conv_from_deviations,
    nash_result,
    project_to_simplex,
)
from solvers.equilibrium import Equilibrium
from solvers.registry import register

__all__ = ["prd"]

logger = logging.getLogger(__name__)


@register("prd", concept="nash", tol_option="tol")
def prd(game: NormalFormGame, iterations: int = 5_000, dt: float = 2e-2, gamma: float = 1e-6,
        average: bool = True, tol: float = 1e-2, check_every: int = 100,
        initial: Sequence[np.ndarray] | None = None) -> Equilibrium:
    """Projected replicator dynamics (Lanctot et al. 2017), n players; returns the average or last iterate.

    Parameters
    ----------
    game : NormalFormGame
        Any number of players.
    iterations : int
        Step budget.
    dt : float
        Step size of the discretised replicator equation (> 0).
    gamma : float
        Floor on every probability after each step (``gamma * k_p <= 1``).
        OpenSpiel's ``prd_gamma``.
    average : bool
        Return the average of all iterates (including the start), as OpenSpiel
        does, instead of the last iterate.
    tol : float
        Stop as soon as the NashConv of the returned strategies is ``<= tol``
        (checked every ``check_every`` steps).
    check_every : int
        How often to measure NashConv.
    initial : sequence of ndarray, optional
        Starting mixed strategies; uniform by default.

    Returns
    -------
    Equilibrium
        Concept ``"nash"``; ``gap`` is NashConv; ``info`` holds ``iterations``,
        ``converged`` (NashConv ``<= tol``), ``tol`` and ``nash_conv``.

    Examples
    --------
    >>> from games import catalog
    >>> eq = prd(catalog.prisoners_dilemma(), average=False, tol=1e-4)
    >>> eq.converged, eq.marginals[0].round(3).tolist()
    (True, [0.0, 1.0])
    """
    game = as_game(game)
    iterations = check_positive_int(iterations, "iterations")
    check_every = check_positive_int(check_every, "check_every")
    dt = check_nonnegative_float(dt, "dt", positive=True)
    gamma = check_nonnegative_float(gamma, "gamma")
    tol = check_nonnegative_float(tol, "tol")
    if gamma * max(game.shape) > 1.0:
        raise ValueError(f"gamma={gamma} is too large: gamma * k must be <= 1 for every player "
                         f"(largest k is {max(game.shape)}). Use gamma <= {1.0 / max(game.shape):.3g}.")
    op = PayoffOperator.from_game(game)
    layout = FlatLayout.from_shape(game.shape)
    flat = layout.concat(initial_strategies(game, initial))
    views = layout.split(flat)  # updated in place, so these views stay valid
    dev = np.empty_like(flat)
    dev_views = layout.split(dev)
    scratch = np.empty_like(flat)
    total = flat.copy()
    offsets, sizes = layout.offsets, layout.sizes
    players = range(game.num_players)
    done = 0
    for t in range(1, iterations + 1):
        for p in players:
            dev_views[p][...] = op.deviation_payoff(p, views)
        np.multiply(flat, dev, out=scratch)
        dev -= np.repeat(np.add.reduceat(scratch, offsets), sizes)
        dev *= flat
        dev *= dt
        flat += dev
        if flat.min() < gamma:  # project only when a floor is crossed ...
            for v in views:
                v[...] = project_to_simplex(v, gamma)
        else:  # ... otherwise just cancel the round-off drift of the sums, which the step amplifies
            flat /= np.repeat(np.add.reduceat(flat, offsets), sizes)
        total += flat
        done = t
        if t % check_every == 0 or t == iterations:
            out = layout.split(total / (t + 1)) if average else views
            if nash_conv_from_deviations(op.deviation_payoffs(out), out) <= tol:
                break
    out = layout.split(total / (done + 1) if average else flat)
    return nash_result(game, "prd", out, tol=tol, iterations=done,
                       info={"dt": dt, "gamma": gamma, "average": bool(average)}, logger=logger)
