"""Small shared pieces for two-player (bimatrix) equilibrium solvers.

Payoff normalisation, the scale-aware regret check and the exact solve of the
indifference equations on given supports. Used by Lemke-Howson, support
enumeration and equilibrium selection.
"""

from __future__ import annotations

import numpy as np

from games.normal_form import NormalFormGame

__all__ = ["bimatrix_of", "normalised", "scaled_regrets", "solve_indifference", "same_profile"]


def bimatrix_of(game, argname: str = "game") -> tuple:
    """The row and column payoff matrices of a two-player game, with a clear error otherwise.

    Examples
    --------
    >>> from games import catalog
    >>> a, b = bimatrix_of(catalog.stag_hunt())
    >>> a.tolist(), b.tolist()
    ([[4.0, 0.0], [3.0, 2.0]], [[4.0, 3.0], [0.0, 2.0]])
    """
    if not isinstance(game, NormalFormGame):
        raise TypeError(f"{argname} must be a games.NormalFormGame; got {type(game).__name__}.")
    if game.num_players != 2:
        raise ValueError(
            f"{argname} has {game.num_players} players but this solver needs exactly two; "
            "use solvers.solve(game, 'nash') for n-player games."
        )
    return game.payoffs[0], game.payoffs[1]


def normalised(m: np.ndarray) -> np.ndarray:
    """``m`` affinely rescaled to ``[0, 1]`` (a constant matrix becomes zeros).

    Nash equilibria are invariant to a positive affine change of each player's
    payoffs, so every tolerance below is relative to the payoff range.

    Examples
    --------
    >>> normalised(np.array([[1e9, 3e9]])).tolist()
    [[0.0, 1.0]]
    """
    lo, hi = float(m.min()), float(m.max())
    if hi - lo <= 0:
        return np.zeros_like(m, dtype=np.float64)
    return (m - lo) / (hi - lo)


def scaled_regrets(a: np.ndarray, b: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Each player's best-deviation gain at ``(x, y)``, both matrices already normalised.

    Examples
    --------
    >>> scaled_regrets(np.eye(2), np.eye(2), np.array([1.0, 0]), np.array([0, 1.0])).tolist()
    [1.0, 1.0]
    """
    ay = a @ y
    xb = x @ b
    return np.array([max(0.0, float(ay.max() - x @ ay)), max(0.0, float(xb.max() - xb @ y))])


def solve_indifference(a: np.ndarray, b: np.ndarray, rows: np.ndarray, cols: np.ndarray):
    """Strategies on square supports that make the opponent indifferent, or ``None``.

    Solves ``a[rows, cols] y = u 1`` and ``x^T b[rows, cols] = v 1^T`` with both
    strategies summing to one.

    Examples
    --------
    >>> x, y = solve_indifference(np.array([[3.0, 0], [0, 2]]), np.array([[2.0, 0], [0, 3]]),
    ...                           np.array([0, 1]), np.array([0, 1]))
    >>> (x * 5).round(9).tolist(), (y * 5).round(9).tolist()
    ([3.0, 2.0], [2.0, 3.0])
    """
    m = len(rows)
    if m == 0 or m != len(cols):
        return None
    x = np.zeros(a.shape[0])
    y = np.zeros(a.shape[1])
    rhs = np.zeros(m + 1)
    rhs[m] = 1.0
    for mat, transpose, out, idx in ((a, False, y, cols), (b, True, x, rows)):
        sub = mat[np.ix_(rows, cols)]
        if transpose:
            sub = sub.T
        bordered = np.empty((m + 1, m + 1))
        bordered[:m, :m] = sub
        bordered[:m, m] = -1.0
        bordered[m, :m] = 1.0
        bordered[m, m] = 0.0
        try:
            sol = np.linalg.solve(bordered, rhs)
        except np.linalg.LinAlgError:
            return None
        if not np.all(np.isfinite(sol)):
            return None
        out[idx] = sol[:m]
    return x, y


def same_profile(p: tuple, q: tuple, atol: float = 1e-8) -> bool:
    """Whether two strategy profiles agree entry by entry within ``atol``.

    Examples
    --------
    >>> same_profile((np.array([1.0, 0]),), (np.array([1.0, 1e-12]),))
    True
    """
    return all(np.allclose(u, v, atol=atol, rtol=0) for u, v in zip(p, q))
