"""Robust regularised replicator dynamics over an interval game: the pessimistic-regret meta-solver.

An *interval game* gives every player ``p`` two payoff tensors of the same shape, ``low[p] <= high[p]``: what
its payoff at each pure profile is at worst and at best (for instance the minimum and maximum over an ensemble
of learned game models, COffeE-PSRO's meta-game). The **pessimistic regret** of a mixed profile ``x`` is

    max_p [ max_a U^high_p(a, x_-p) - U^low_p(x) ],

the most a player could gain by deviating when its deviation is valued optimistically (upper tensor) and the
profile pessimistically (lower tensor). With ``low == high`` it is the ordinary regret of ``x`` (the largest
player's deviation gain; NashConv sums the same gains).

:func:`robust_replicator` runs entropy-regularised replicator dynamics on the pessimistic payoffs,

    log x_p <- (1 - dt * tau_t) log x_p + dt * U^low_p(., x_-p)   (then normalised),

all players at once, with the regularisation ``tau_t`` annealed from ``tau`` to 0 over the iterations, and
returns the candidate whose pessimistic regret is lowest (ties: the earliest); the candidates are the iterates
and their running averages (which converge where the iterates cycle, as in zero-sum games). The dynamics run on
each player's payoffs rescaled by its own range over both tensors, so the chosen profile does not change when a
constant is added to, or a positive factor multiplies, one player's two tensors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from games.normal_form import NormalFormGame
from games.validation import check_int, check_real
from solvers.dynamics.common import PayoffOperator

__all__ = ["RobustReplicatorResult", "robust_replicator", "pessimistic_regret", "check_interval_game"]


@dataclass(frozen=True, eq=False)
class RobustReplicatorResult:
    """What :func:`robust_replicator` returns.

    Attributes
    ----------
    marginals : tuple of ndarray
        The iterate with the lowest pessimistic regret, one mixed strategy per player.
    regret : float
        Its pessimistic regret, in payoff units (:func:`pessimistic_regret`).
    regrets : ndarray
        At every step (the uniform start first), the lower pessimistic regret of the iterate and of the average
        of the iterates so far, relative to each player's payoff range (the unit the choice is made in).
    best_iteration : int
        Index of the chosen iterate in ``regrets``.
    iterations : int
        Steps run.
    """

    marginals: tuple
    regret: float
    regrets: np.ndarray
    best_iteration: int
    iterations: int


def check_interval_game(low, high) -> tuple:
    """``(low, high)`` as float arrays of one shape ``(n, k_1, ..., k_n)`` with ``low <= high``, or a
    ``ValueError`` naming the argument.

    Examples
    --------
    >>> low, high = check_interval_game([[[0.0]], [[1.0]]], [[[0.5]], [[1.0]]])
    >>> low.shape, high.dtype
    ((2, 1, 1), dtype('float64'))
    """
    low, high = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
    if low.shape != high.shape:
        raise ValueError(f"low and high need the same shape; got {low.shape} and {high.shape}.")
    if low.ndim < 2 or low.shape[0] != low.ndim - 1:
        raise ValueError(f"low: expected shape (num_players, k_1, ..., k_n) with num_players = n; got {low.shape}.")
    for name, arr in (("low", low), ("high", high)):
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} has non-finite payoffs; give finite payoff bounds.")
    if np.any(low > high + 1e-12 * np.maximum(1.0, np.abs(high))):
        where = tuple(int(i) for i in np.argwhere(low > high + 1e-12 * np.maximum(1.0, np.abs(high)))[0])
        raise ValueError(f"low exceeds high at index {where}; the lower payoff tensor must be <= the upper one.")
    return low, high


def _operators(low: np.ndarray, high: np.ndarray) -> tuple:
    return PayoffOperator.from_game(NormalFormGame(low)), PayoffOperator.from_game(NormalFormGame(high))


def _regrets(op_low, op_high, marginals) -> np.ndarray:
    """Per player: best optimistic deviation value minus the profile's pessimistic value."""
    out = np.empty(len(marginals))
    for p, x in enumerate(marginals):
        out[p] = float(np.max(op_high.deviation_payoff(p, marginals))) - float(op_low.deviation_payoff(p, marginals)
                                                                              @ x)
    return out


def pessimistic_regret(low, high, marginals: Sequence) -> float:
    """The pessimistic regret ``max_p [max_a U^high_p(a, x_-p) - U^low_p(x)]`` of the mixed profile ``marginals``.

    Examples
    --------
    >>> pennies = np.array([[[1.0, -1.0], [-1.0, 1.0]], [[-1.0, 1.0], [1.0, -1.0]]])
    >>> half = [np.array([0.5, 0.5])] * 2
    >>> pessimistic_regret(pennies, pennies, half)   # the equilibrium: no regret
    0.0
    >>> pessimistic_regret(pennies - 0.25, pennies + 0.25, half)   # 0.25 above 0, minus 0.25 below 0
    0.5
    """
    low, high = check_interval_game(low, high)
    marginals = [np.asarray(m, dtype=np.float64) for m in marginals]
    if [m.shape[0] for m in marginals] != list(low.shape[1:]):
        raise ValueError(f"marginals: one mixed strategy per player of lengths {list(low.shape[1:])}; got "
                         f"{[m.shape[0] for m in marginals]}.")
    op_low, op_high = _operators(low, high)
    return float(np.max(_regrets(op_low, op_high, marginals)))


def robust_replicator(low, high, iterations: int = 2000, dt: float = 0.5, tau: float = 0.2,
                      anneal: float = 0.75) -> RobustReplicatorResult:
    """Entropy-regularised replicator dynamics on the pessimistic payoffs, regularisation annealed to 0; the
    iterate with the lowest pessimistic regret.

    Parameters
    ----------
    low, high : array_like, shape (num_players, k_1, ..., k_n)
        The lower and upper payoff tensors (``low <= high``).
    iterations : int
        Steps (>= 1).
    dt : float
        Step size (> 0) on payoffs rescaled to each player's range [0, 1].
    tau : float
        Initial entropy regularisation (>= 0); it falls linearly to 0 at ``anneal * iterations`` and stays 0.
    anneal : float
        Fraction of the steps over which ``tau`` is annealed, in (0, 1].

    Returns
    -------
    RobustReplicatorResult

    Examples
    --------
    Rock-paper-scissors known exactly: the uniform start is the equilibrium, regret 0.

    >>> from games import catalog
    >>> rps = catalog.rock_paper_scissors().payoffs
    >>> result = robust_replicator(rps, rps, iterations=50)
    >>> result.regret, result.best_iteration
    (0.0, 0)

    A prisoner's dilemma whose cooperation payoff is uncertain: defecting is still the only robust answer.

    >>> pd = catalog.prisoners_dilemma().payoffs
    >>> result = robust_replicator(pd - 0.5, pd + 0.5, iterations=300)
    >>> [m.round(2).tolist() for m in result.marginals], round(result.regret, 6)
    ([[0.0, 1.0], [0.0, 1.0]], 1.0)
    """
    low, high = check_interval_game(low, high)
    iterations = check_int(iterations, "iterations", minimum=1)
    dt = check_real(dt, "dt", minimum=0.0, strict=True)
    tau = check_real(tau, "tau", minimum=0.0)
    anneal = check_real(anneal, "anneal", minimum=0.0, strict=True, maximum=1.0)
    n = low.shape[0]
    axes = tuple(range(1, n + 1))
    offset = np.minimum(low.min(axis=axes), high.min(axis=axes))
    scale = np.maximum(low.max(axis=axes), high.max(axis=axes)) - offset
    scale = np.where(scale > 0, scale, 1.0)
    shape = (n,) + (1,) * n
    op_low, op_high = _operators((low - offset.reshape(shape)) / scale.reshape(shape),
                                 (high - offset.reshape(shape)) / scale.reshape(shape))
    logits = [np.zeros(k) for k in low.shape[1:]]
    x = [np.full(k, 1.0 / k) for k in low.shape[1:]]
    regrets = np.empty(iterations + 1)
    regrets[0] = np.max(_regrets(op_low, op_high, x))
    best, best_x = 0, [m.copy() for m in x]
    total = [m.copy() for m in x]   # the running average is a candidate too (it converges where iterates cycle)
    horizon = anneal * iterations
    for t in range(1, iterations + 1):
        tau_t = tau * max(0.0, 1.0 - (t - 1) / horizon)
        decay = max(0.0, 1.0 - dt * tau_t)
        payoffs = op_low.deviation_payoffs(x)
        for p in range(n):
            logits[p] = decay * logits[p] + dt * payoffs[p]
            z = np.exp(logits[p] - logits[p].max())
            x[p] = z / z.sum()
            total[p] += x[p]
        regrets[t] = np.max(_regrets(op_low, op_high, x))
        if regrets[t] < regrets[best] - 1e-12:
            best, best_x = t, [m.copy() for m in x]
        mean = [m / (t + 1) for m in total]
        mean_regret = float(np.max(_regrets(op_low, op_high, mean)))
        if mean_regret < min(regrets[t], regrets[best]) - 1e-12:
            regrets[t], best, best_x = mean_regret, t, mean
    regret = pessimistic_regret(low, high, best_x)
    return RobustReplicatorResult(tuple(best_x), regret, regrets, best, iterations)
