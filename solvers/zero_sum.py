"""Two-player zero-sum Nash equilibria by linear programming (HiGHS through scipy)."""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog

from games.normal_form import NormalFormGame
from solvers.equilibrium import Equilibrium
from solvers.registry import make_equilibrium, register

__all__ = ["solve_zero_sum", "nash_zero_sum"]

LP_METHODS = ("highs", "highs-ipm", "highs-ds")


def solve_zero_sum(a, lp_method: str = "highs-ds"):
    """Maximin strategies and the value of the zero-sum matrix game ``a`` (row player maximises).

    Solves ``max_x min_j (x^T a)_j`` with one LP; the column player's minimax
    strategy is read from the LP's dual values.

    Parameters
    ----------
    a : array_like, shape (k_1, k_2)
        Row player's payoffs.
    lp_method : {"highs-ds", "highs-ipm", "highs"}
        scipy's HiGHS variant.

    Returns
    -------
    x, y : ndarray
        Row and column strategies.
    value : float
        The row player's value.

    Examples
    --------
    >>> x, y, v = solve_zero_sum([[1, -1], [-1, 1]])
    >>> x.tolist(), y.tolist(), v
    ([0.5, 0.5], [0.5, 0.5], 0.0)
    """
    a = np.asarray(a, dtype=np.float64)
    if lp_method not in LP_METHODS:
        raise ValueError(f"lp_method must be one of {LP_METHODS}; got {lp_method!r}.")
    k1, k2 = a.shape
    lo, hi = float(a.min()), float(a.max())
    if hi - lo <= 0:  # constant game: everything is an equilibrium
        return np.ones(k1) / k1, np.ones(k2) / k2, lo
    s = (a - lo) / (hi - lo)  # rescale to [0, 1] so the LP is well conditioned at any payoff scale
    c = np.zeros(k1 + 1)
    c[-1] = -1.0
    a_ub = np.hstack([-s.T, np.ones((k2, 1))])
    a_eq = np.zeros((1, k1 + 1))
    a_eq[0, :k1] = 1.0
    bounds = [(0, None)] * k1 + [(None, None)]
    res = linprog(c, A_ub=a_ub, b_ub=np.zeros(k2), A_eq=a_eq, b_eq=[1.0], bounds=bounds, method=lp_method)
    if res.status != 0:
        raise RuntimeError(f"HiGHS failed on the zero-sum LP: {res.message}")
    x = np.clip(res.x[:k1], 0, None)
    x /= x.sum()
    y = np.clip(-res.ineqlin.marginals, 0, None)
    y /= y.sum()
    value = float(x @ a @ y)
    return x, y, value


@register("nash_zero_sum", concept="nash", min_players=2, max_players=2, zero_sum_only=True)
def nash_zero_sum(game: NormalFormGame, lp_method: str = "highs-ds") -> Equilibrium:
    """Nash equilibrium of a two-player zero-sum (or constant-sum) game by one HiGHS LP.

    Examples
    --------
    >>> from games import catalog
    >>> eq = nash_zero_sum(catalog.biased_rock_paper_scissors())
    >>> (eq.marginals[0] * 16).round(6).tolist()
    [1.0, 10.0, 5.0]
    """
    x, y, value = solve_zero_sum(game.payoffs[0], lp_method=lp_method)
    return make_equilibrium(game, marginals=[x, y], concept="nash", method="nash_zero_sum",
                            info={"value": value, "lp_method": lp_method, "converged": True})
