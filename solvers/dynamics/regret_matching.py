"""Regret matching (Hart and Mas-Colell 2000) and regret matching+ (Tammelin 2014), n players.

Each player keeps a cumulative regret ``r_p[a]`` for every pure strategy ``a``
(what it would have gained by always playing ``a`` instead of its mixtures) and
plays ``x_p = max(r_p, 0) / sum(max(r_p, 0))`` (uniform when no regret is
positive). The time-average of the strategies is returned. In two-player
zero-sum games the average converges to a Nash equilibrium; in general games
the empirical play converges to the coarse correlated equilibria only, so the
product of the average marginals need not approach a Nash equilibrium and the
result then says ``converged=False``.
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
)
from solvers.equilibrium import Equilibrium
from solvers.registry import register

__all__ = ["regret_matching"]

logger = logging.getLogger(__name__)


def _match(pos: np.ndarray, layout: FlatLayout) -> np.ndarray:
    """Normalise positive regrets per player; uniform for a player with none."""
    sums = layout.player_sums(pos)
    empty = sums <= 0
    sums_b = layout.broadcast(np.where(empty, 1.0, sums))
    out = pos / sums_b
    if empty.any():
        uniform = layout.broadcast(np.where(empty, 1.0 / layout.sizes, 0.0))
        out = np.where(layout.broadcast(empty), uniform, out)
    return out


@register("regret_matching", concept="nash", tol_option="tol")
def regret_matching(game: NormalFormGame, iterations: int = 10_000, tol: float = 1e-3, plus: bool = True,
                    check_every: int = 50, initial: Sequence[np.ndarray] | None = None) -> Equilibrium:
    """Regret matching (or regret matching+), n players; returns the average strategies.

    Parameters
    ----------
    game : NormalFormGame
        Any number of players.
    iterations : int
        Step budget.
    tol : float
        Stop as soon as the NashConv of the average strategies is ``<= tol``
        (checked every ``check_every`` steps).
    plus : bool
        ``True`` (default): regret matching+, i.e. regrets clipped at zero after
        every update, players updating in turn (alternation) and a linearly
        weighted average (iterate ``t`` has weight ``t``), which converges much
        faster in zero-sum games. ``False``: classic regret matching with
        simultaneous updates and a uniform average, as in OpenSpiel's
        ``regret_matching`` (whose ``gamma`` exploration is zero here).
    check_every : int
        How often to measure NashConv.
    initial : sequence of ndarray, optional
        The first strategies (uniform by default); included in the average.

    Returns
    -------
    Equilibrium
        Concept ``"nash"``; ``gap`` is the NashConv of the average;
        ``info["converged"]`` says whether it is within ``tol``.

    Examples
    --------
    >>> from games import catalog
    >>> eq = regret_matching(catalog.biased_rock_paper_scissors(), tol=1e-3)
    >>> eq.converged, (eq.marginals[0] * 16).round(1).tolist()
    (True, [1.0, 10.0, 5.0])
    """
    game = as_game(game)
    iterations = check_positive_int(iterations, "iterations")
    check_every = check_positive_int(check_every, "check_every")
    tol = check_nonnegative_float(tol, "tol")
    op = PayoffOperator.from_game(game)
    layout = FlatLayout.from_shape(game.shape)
    n = game.num_players
    flat = layout.concat(initial_strategies(game, initial))
    regrets = np.zeros_like(flat)
    total = flat.copy()
    weight_sum = 1.0
    done = 0
    for t in range(1, iterations + 1):
        if plus:
            x = layout.split(flat.copy())
            reg = layout.split(regrets)
            for p in range(n):  # alternating updates: later players see earlier players' new strategies
                d = op.deviation_payoff(p, x)
                r = np.maximum(reg[p] + d - d @ x[p], 0.0)
                reg[p][:] = r
                s = r.sum()
                x[p] = r / s if s > 0 else np.full(r.shape[0], 1.0 / r.shape[0])
            flat = layout.concat(x)
            total += t * flat
            weight_sum += t
        else:
            x = layout.split(flat)
            dev = np.concatenate([op.deviation_payoff(p, x) for p in range(n)])
            regrets += dev
            regrets -= np.repeat(np.add.reduceat(flat * dev, layout.offsets), layout.sizes)
            flat = _match(np.maximum(regrets, 0.0), layout)
            total += flat
            weight_sum += 1.0
        done = t
        if t % check_every == 0 or t == iterations:
            avg = layout.split(total / weight_sum)
            if nash_conv_from_deviations(op.deviation_payoffs(avg), avg) <= tol:
                break
    return nash_result(game, "regret_matching", layout.split(total / weight_sum), tol=tol, iterations=done,
                       info={"plus": bool(plus)}, logger=logger)
