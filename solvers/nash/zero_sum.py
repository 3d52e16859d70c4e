"""Two-player zero-sum Nash equilibria, exact, by linear programming.

The default (``lp_method="auto"``) solves the game with the dense interior
point of :mod:`solvers.nash.matrix_game_ipm` (with constraint generation on large
games), finishes with an exact solve on the support and checks the result
against every pure strategy; if that check fails it falls back to HiGHS's dual
simplex through scipy. ``experiments/benchmarks/zero_sum_lp.py`` compares the
variants with OpenSpiel's LP.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

from games.normal_form import NormalFormGame
from solvers.equilibrium import Equilibrium
from solvers.nash.matrix_game_ipm import (
    solve_matrix_game,
    solve_matrix_game_ipm,
    verify_matrix_game_solution,
)
from solvers.registry import make_equilibrium, register

__all__ = ["ZeroSumSolution", "solve_zero_sum", "nash_zero_sum", "LP_METHODS"]

logger = logging.getLogger(__name__)

LP_METHODS = ("auto", "dense-ipm", "highs-ds", "highs-ipm", "highs")


@dataclass(frozen=True)
class ZeroSumSolution:
    """Maximin strategies and value of a matrix game.

    Unpacks like a tuple, ``x, y, value = solve_zero_sum(a)``.

    Attributes
    ----------
    x, y : ndarray
        The row player's maximin and the column player's minimax strategy.
    value : float
        The row player's value ``x @ a @ y``.
    method : str
        The LP method that produced the answer (after any fallback).
    certified : bool
        Whether the answer passed the check against every pure strategy
        (exact up to 1e-11 of the payoff range); always checked.
    """

    x: np.ndarray
    y: np.ndarray
    value: float
    method: str
    certified: bool

    def __iter__(self):
        return iter((self.x, self.y, self.value))


def _check_matrix(a) -> np.ndarray:
    try:
        a = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("a must be a numeric matrix (the row player's payoffs).") from None
    if a.ndim != 2 or a.shape[0] < 1 or a.shape[1] < 1:
        raise ValueError(
            f"a must be a non-empty 2-D matrix of the row player's payoffs; got shape {a.shape}.")
    if not np.all(np.isfinite(a)):
        raise ValueError(
            "a contains NaN or inf; replace them (e.g. with np.nan_to_num) before solving.")
    return a


_TIGHT_HIGHS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


def _solve_highs(s: np.ndarray, lp_method: str):
    """The textbook LP (value variable, simplex equality) with scipy's HiGHS."""
    k1, k2 = s.shape
    c = np.zeros(k1 + 1)
    c[-1] = -1.0
    a_ub = np.hstack([-s.T, np.ones((k2, 1))])
    a_eq = np.zeros((1, k1 + 1))
    a_eq[0, :k1] = 1.0
    bounds = [(0, None)] * k1 + [(None, None)]
    # HiGHS's default feasibility tolerances (1e-7) let a payoff difference of ~1e-7 of the range pass for
    # a tie, which picks a wrong best reply (e.g. a row worth 6e-8 more); ask for 1e-10 instead
    res = linprog(c, A_ub=a_ub, b_ub=np.zeros(k2), A_eq=a_eq, b_eq=[1.0], bounds=bounds,
                  method=lp_method, options=_TIGHT_HIGHS)
    if res.status != 0:
        raise RuntimeError(f"HiGHS failed on the zero-sum LP: {res.message}")
    x = np.clip(res.x[:k1], 0, None)
    y = np.clip(-res.ineqlin.marginals, 0, None)
    return x / x.sum(), y / y.sum()


def solve_zero_sum(a, lp_method: str = "auto") -> ZeroSumSolution:
    """Maximin strategies and the value of the zero-sum matrix game ``a`` (row player maximises).

    Parameters
    ----------
    a : array_like, shape (k_1, k_2)
        Row player's payoffs (the column player gets ``-a``).
    lp_method : {"auto", "dense-ipm", "highs-ds", "highs-ipm", "highs"}
        ``"auto"``: dense interior point with an exact support solve (and
        constraint generation on large games), falling back to HiGHS dual
        simplex if the answer cannot be certified. ``"dense-ipm"``: the
        interior point on the whole game, same fallback. The ``"highs*"``
        values run scipy's HiGHS on the textbook LP.

    Returns
    -------
    ZeroSumSolution
        ``x``, ``y``, ``value`` (unpacks as that triple), ``method``, ``certified``.

    Raises
    ------
    ValueError
        If ``a`` is not a finite 2-D matrix or ``lp_method`` is unknown.

    Examples
    --------
    >>> x, y, v = solve_zero_sum([[1, -1], [-1, 1]])
    >>> x.tolist(), y.tolist(), v
    ([0.5, 0.5], [0.5, 0.5], 0.0)
    >>> solve_zero_sum([[0, -1, 1], [1, 0, -1], [-1, 1, 0]], lp_method="highs-ds").certified
    True
    """
    if lp_method not in LP_METHODS:
        raise ValueError(f"lp_method must be one of {LP_METHODS}; got {lp_method!r}.")
    a = _check_matrix(a)
    k1, k2 = a.shape
    lo, hi = float(a.min()), float(a.max())
    if hi - lo <= 0:  # constant game: every profile is an equilibrium
        return ZeroSumSolution(np.ones(k1) / k1, np.ones(k2) / k2, lo, lp_method, True)
    s = (a - lo) / (hi - lo)  # rescaled to [0, 1]: the LP is equally well conditioned at any payoff scale
    method = lp_method
    if lp_method in ("auto", "dense-ipm"):
        # Duplicated strategies (common in meta-games) make the LP degenerate: solve without them.
        rows = np.sort(np.unique(s, axis=0, return_index=True)[1])
        cols = np.sort(np.unique(s[rows], axis=1, return_index=True)[1])
        reduced = s[np.ix_(rows, cols)]
        sol = solve_matrix_game(reduced) if lp_method == "auto" else solve_matrix_game_ipm(reduced)
        x, y = np.zeros(k1), np.zeros(k2)
        x[rows], y[cols] = sol.x, sol.y
        certified = sol.certified and verify_matrix_game_solution(s, x, y)
        if not certified:
            logger.info("interior point could not certify the %dx%d game; "
                        "falling back to HiGHS dual simplex", k1, k2)
            method = "highs-ds"
    if method.startswith("highs"):
        x, y = _solve_highs(s, method)
        certified = verify_matrix_game_solution(s, x, y, tol=1e-9)
    value = float(x @ a @ y)
    return ZeroSumSolution(x, y, value, method, bool(certified))


@register("nash_zero_sum", concept="nash", min_players=2, max_players=2, zero_sum_only=True)
def nash_zero_sum(game: NormalFormGame, lp_method: str = "auto") -> Equilibrium:
    """Nash equilibrium of a two-player zero-sum (or constant-sum) game by linear programming.

    Parameters
    ----------
    game : NormalFormGame
        A two-player constant-sum game.
    lp_method : str
        See :func:`solve_zero_sum`.

    Raises
    ------
    ValueError
        If the game does not have two players or its payoffs do not sum to a constant.

    Examples
    --------
    >>> from games import catalog
    >>> eq = nash_zero_sum(catalog.biased_rock_paper_scissors())
    >>> (eq.marginals[0] * 16).round(6).tolist()
    [1.0, 10.0, 5.0]
    """
    if not isinstance(game, NormalFormGame):
        raise TypeError(f"game must be a games.NormalFormGame; got {type(game).__name__}.")
    if game.num_players != 2 or not game.is_constant_sum():
        raise ValueError(
            "game must be a two-player zero-sum (or constant-sum) game; use 'lemke_howson' or 'nash' "
            "for general-sum games."
        )
    sol = solve_zero_sum(game.payoffs[0], lp_method=lp_method)
    info = {"value": sol.value, "lp_method": sol.method, "converged": sol.certified}
    return make_equilibrium(game, marginals=[sol.x, sol.y], concept="nash", method="nash_zero_sum",
                            info=info)
