"""A dense interior-point method for matrix games, finished by an exact solve on the support.

The row player of a matrix game ``s`` with entries in ``[0, 1]`` faces the
packing LP on the shifted matrix ``g = s + 1`` (entries in ``[1, 2]``)::

    max 1^T w   subject to   g w + r = 1,   w, r >= 0            (column player, y = w / sum(w))
    min 1^T u   subject to   g^T u - z = 1, u, z >= 0            (row player,    x = u / sum(u))

Both LPs have obvious strictly feasible starting points, no equality on a
probability simplex and no free value variable. Mehrotra's predictor-corrector
solves them with dense normal equations ``g D g^T + E`` of the smaller side
(one matrix product and one Cholesky factorisation per iteration, all in BLAS),
which is what a dense payoff matrix needs; general sparse LP codes pay for
fill-in instead.

An interior point converges to the analytic centre of the optimal face, so the
supports can be read off once the gap is small (``u_i > r_i`` and
``w_j > z_j``). When both supports have the same size, one LU factorisation of
the bordered support matrix gives both strategies and the value to machine
precision; :func:`verify_matrix_game_solution` then checks them against every
pure strategy. A failed check means "iterate further"; the caller falls back to
a simplex LP when the interior point cannot certify its answer.
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg

__all__ = [
    "MatrixGameSolution",
    "solve_matrix_game",
    "solve_matrix_game_ipm",
    "solve_on_support",
    "verify_matrix_game_solution",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class MatrixGameSolution:
    """Maximin strategies of a matrix game.

    Attributes
    ----------
    x, y : ndarray
        The row player's maximin and the column player's minimax strategy.
    value : float
        The game's value for the row player, ``x @ s @ y``.
    iterations : int
        Interior-point iterations used.
    certified : bool
        Whether the exact support solve passed the check against every pure strategy.
    """

    x: np.ndarray
    y: np.ndarray
    value: float
    iterations: int
    certified: bool


def solve_on_support(s: np.ndarray, rows: np.ndarray, cols: np.ndarray):
    """Equalising strategies on square supports ``rows`` x ``cols`` of ``s``, or ``None``.

    Solves ``s[rows, cols] y = v 1``, ``sum(y) = 1`` and ``x^T s[rows, cols] = v 1^T``,
    ``sum(x) = 1`` with one LU factorisation of the bordered matrix.

    Returns
    -------
    tuple of (x, y, v) with full-length ``x`` and ``y``, or ``None`` when the
    supports differ in size or the support matrix is singular.

    Examples
    --------
    >>> x, y, v = solve_on_support(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([0, 1]), np.array([0, 1]))
    >>> x.tolist(), y.tolist(), v
    ([0.5, 0.5], [0.5, 0.5], 0.5)
    """
    m = len(rows)
    if m == 0 or m != len(cols):
        return None
    bordered = np.empty((m + 1, m + 1))
    bordered[:m, :m] = s[np.ix_(rows, cols)]
    bordered[:m, m] = -1.0
    bordered[m, :m] = 1.0
    bordered[m, m] = 0.0
    rhs = np.zeros(m + 1)
    rhs[m] = 1.0
    try:
        with warnings.catch_warnings():  # a singular support matrix is an expected outcome, tested below
            warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
            lu = scipy.linalg.lu_factor(bordered, check_finite=False)
    except (ValueError, np.linalg.LinAlgError):
        return None
    pivots = np.abs(np.diag(lu[0]))
    if not np.all(np.isfinite(lu[0])) or pivots.min() < 1e-13 * max(1.0, np.abs(lu[0]).max()):
        return None
    yv = scipy.linalg.lu_solve(lu, rhs, check_finite=False)
    # bordered^T = [[s^T, 1], [-1^T, 0]]: solving with right-hand side (0, -1) gives s^T x = -t 1, sum(x) = 1.
    rhs[m] = -1.0
    xt = scipy.linalg.lu_solve(lu, rhs, trans=1, check_finite=False)
    x = np.zeros(s.shape[0])
    y = np.zeros(s.shape[1])
    x[rows] = xt[:m]
    y[cols] = yv[:m]
    return x, y, float(yv[m])


def verify_matrix_game_solution(s: np.ndarray, x: np.ndarray, y: np.ndarray,
                                tol: float = 1e-11) -> bool:
    """Whether ``(x, y)`` is an equilibrium of ``s`` up to ``tol`` (both strategies valid, gap <= tol).

    Examples
    --------
    >>> verify_matrix_game_solution(np.eye(2), np.array([0.5, 0.5]), np.array([0.5, 0.5]))
    True
    """
    if x.min() < -tol or y.min() < -tol:
        return False
    return bool((s @ y).max() - (x @ s).min() <= tol)


def _step_length(v: np.ndarray, dv: np.ndarray) -> float:
    """Largest alpha in (0, 1] with v + alpha dv >= 0."""
    neg = dv < 0
    if not np.any(neg):
        return 1.0
    return float(min(1.0, np.min(-v[neg] / dv[neg])))


def _newton_direction(state: tuple, cw: np.ndarray, cr: np.ndarray) -> tuple:
    """Newton direction towards the complementarity targets ``w z = cw``, ``r u = cr``.

    Unknowns ``dw, dr, du, dz`` solve ``g dw + dr = rp``, ``g^T du - dz = rd``,
    ``z dw + w dz = cw - w z`` and ``u dr + r du = cr - r u``; eliminating
    ``dz``, ``dw`` and ``dr`` leaves the normal equations in ``du``, whose
    Cholesky factor ``chol`` is given.
    """
    g, chol, w, r, u, z, rp, rd = state
    hw = (cw - w * z + w * rd) / z
    hr = (cr - r * u) / u
    du = scipy.linalg.cho_solve(chol, -(rp - g @ hw - hr), check_finite=False)
    dz = g.T @ du - rd
    dw = hw - (w / z) * (g.T @ du)
    dr = hr - (r / u) * du
    return dw, dr, du, dz


def solve_matrix_game_ipm(s: np.ndarray, max_iter: int = 60, tol: float = 1e-11) -> MatrixGameSolution:
    """Solve the matrix game ``s`` (entries in [0, 1], row player maximises) by a dense interior point.

    Parameters
    ----------
    s : ndarray, shape (k1, k2)
        Payoffs rescaled to ``[0, 1]``. The normal equations have the size of
        the smaller side, so pass whichever orientation you like.
    max_iter : int
        Iteration budget of the interior point.
    tol : float
        Tolerance of the final check against every pure strategy.

    Returns
    -------
    MatrixGameSolution
        ``certified`` is False when no exact support solve passed the check;
        the strategies are then the interior point's best (approximate) ones.

    Examples
    --------
    >>> sol = solve_matrix_game_ipm(np.array([[1.0, 0.0], [0.0, 1.0]]))
    >>> sol.x.round(12).tolist(), sol.value, sol.certified
    ([0.5, 0.5], 0.5, True)
    """
    s = np.asarray(s, dtype=np.float64)
    if s.shape[0] > s.shape[1]:
        # Normal equations live on the row side: keep it the smaller one by solving the transposed game.
        t = solve_matrix_game_ipm(1.0 - s.T, max_iter=max_iter, tol=tol)
        return MatrixGameSolution(t.y, t.x, 1.0 - t.value, t.iterations, t.certified)
    k1, k2 = s.shape
    g = s + 1.0
    # Strictly feasible start: g w <= 1/2 and g^T u >= 2.
    w = np.full(k2, 0.5 / g.sum(axis=1).max())
    r = 1.0 - g @ w
    u = np.full(k1, 2.0 / g.sum(axis=0).min())
    z = g.T @ u - 1.0
    best = None
    tried = None
    it = 0
    for it in range(1, max_iter + 1):
        rp = 1.0 - g @ w - r  # primal residual
        rd = 1.0 - g.T @ u + z  # dual residual of g^T u - z = 1
        mu = (w @ z + r @ u) / (k1 + k2)
        # Normal equations in du: (g (W/Z) g^T + R/U) du = ...
        dw_ = w / z
        dr_ = r / u
        # Only the upper triangle of g D g^T is formed (BLAS syrk: half the flops of a product).
        normal = scipy.linalg.blas.dsyrk(1.0, g * np.sqrt(dw_)[None, :])
        normal[np.diag_indices(k1)] += dr_
        try:
            chol = (scipy.linalg.cholesky(normal, lower=False, overwrite_a=True, check_finite=False), False)
        except np.linalg.LinAlgError:
            logger.debug("normal equations lost definiteness at iteration %d", it)
            break

        # Predictor (affine scaling) then Mehrotra's corrector.
        state = (g, chol, w, r, u, z, rp, rd)
        dw, dr, du, dz = _newton_direction(state, np.zeros(k2), np.zeros(k1))
        ap = min(_step_length(w, dw), _step_length(r, dr))
        ad = min(_step_length(u, du), _step_length(z, dz))
        mu_aff = ((w + ap * dw) @ (z + ad * dz) + (r + ap * dr) @ (u + ad * du)) / (k1 + k2)
        sigma = (mu_aff / mu) ** 3
        dw, dr, du, dz = _newton_direction(state, sigma * mu - dw * dz, sigma * mu - dr * du)
        eta = 0.9995
        ap = min(1.0, eta * min(_step_length(w, dw), _step_length(r, dr)))
        ad = min(1.0, eta * min(_step_length(u, du), _step_length(z, dz)))
        w, r = w + ap * dw, r + ap * dr
        u, z = u + ad * du, z + ad * dz
        w_sum, u_sum = w.sum(), u.sum()
        rel_gap = abs(u_sum - w_sum) / max(u_sum, w_sum)
        rows = np.flatnonzero(u > r)
        cols = np.flatnonzero(w > z)
        fresh = tried is None or not (np.array_equal(rows, tried[0]) and np.array_equal(cols, tried[1]))
        if rel_gap < 1e-5 and fresh:
            tried = (rows, cols)
            exact = solve_on_support(s, rows, cols)
            if exact is not None:
                x, y, v = exact
                if verify_matrix_game_solution(s, x, y, tol):
                    x = np.clip(x, 0.0, None)
                    y = np.clip(y, 0.0, None)
                    return MatrixGameSolution(x / x.sum(), y / y.sum(), float(v), it, True)
        best = (u / u_sum, w / w_sum)
        if rel_gap < 1e-15:
            break
    if best is None:
        best = (np.ones(k1) / k1, np.ones(k2) / k2)
    x, y = best
    logger.debug("interior point could not certify an exact solution after %d iterations", it)
    return MatrixGameSolution(x, y, float(x @ s @ y), it, False)


def _regret_matching_average(s: np.ndarray, iterations: int):
    """Linearly averaged strategies of predictive regret matching+ with alternating updates."""
    k1, k2 = s.shape
    rx, ry = np.zeros(k1), np.zeros(k2)
    x, y = np.full(k1, 1.0 / k1), np.full(k2, 1.0 / k2)
    xs, ys = np.zeros(k1), np.zeros(k2)
    for t in range(1, iterations + 1):
        gain = s @ y
        gain -= x @ gain
        rx = np.maximum(rx + gain, 0.0)
        px = np.maximum(rx + gain, 0.0)
        total = px.sum()
        x = px / total if total > 0 else np.full(k1, 1.0 / k1)
        loss = x @ s
        gain = y @ loss - loss
        ry = np.maximum(ry + gain, 0.0)
        py = np.maximum(ry + gain, 0.0)
        total = py.sum()
        y = py / total if total > 0 else np.full(k2, 1.0 / k2)
        xs += t * x
        ys += t * y
    return xs / xs.sum(), ys / ys.sum()


def solve_matrix_game(s: np.ndarray, tol: float = 1e-11, warm_iterations: int = 100, max_rounds: int = 8,
                      restrict_above: int = 40_000) -> MatrixGameSolution:
    """Solve the matrix game ``s`` (entries in [0, 1]) exactly: interior point plus constraint generation.

    Games with more than ``restrict_above`` entries are first played for
    ``warm_iterations`` rounds of predictive regret matching+; the interior
    point then solves the subgame of the strategies within a few duality gaps of
    a best response, and strategies of the full game that beat the subgame's
    solution are added until none does. Smaller games go to the interior point
    directly.

    Examples
    --------
    >>> sol = solve_matrix_game(np.array([[0.0, 1.0], [1.0, 0.0], [0.2, 0.2]]))
    >>> sol.x.round(12).tolist(), sol.y.round(12).tolist(), sol.value, sol.certified
    ([0.5, 0.5, 0.0], [0.5, 0.5], 0.5, True)
    """
    s = np.asarray(s, dtype=np.float64)
    k1, k2 = s.shape
    if s.size <= restrict_above:
        return solve_matrix_game_ipm(s, tol=tol)
    xb, yb = _regret_matching_average(s, warm_iterations)
    row_pay, col_pay = s @ yb, xb @ s
    gap = row_pay.max() - col_pay.min()
    rows = np.flatnonzero(row_pay >= row_pay.max() - 8.0 * gap)
    cols = np.flatnonzero(col_pay <= col_pay.min() + 8.0 * gap)
    iterations = 0
    for round_ in range(max_rounds):
        sub = solve_matrix_game_ipm(s[np.ix_(rows, cols)], tol=tol)
        iterations += sub.iterations
        if not sub.certified:  # degenerate subgame: leave it to the caller's simplex fallback
            logger.debug("subgame %dx%d not certified; giving up constraint generation", len(rows), len(cols))
            x, y = np.zeros(k1), np.zeros(k2)
            x[rows], y[cols] = sub.x, sub.y
            return MatrixGameSolution(x, y, float(x @ s @ y), iterations, False)
        x = np.zeros(k1)
        y = np.zeros(k2)
        x[rows] = sub.x
        y[cols] = sub.y
        row_pay, col_pay = s @ y, x @ s
        new_rows = np.setdiff1d(np.flatnonzero(row_pay > sub.value + tol), rows)
        new_cols = np.setdiff1d(np.flatnonzero(col_pay < sub.value - tol), cols)
        logger.debug("constraint generation round %d: subgame %dx%d, adding %d rows and %d columns",
                      round_, len(rows), len(cols), len(new_rows), len(new_cols))
        if len(new_rows) == 0 and len(new_cols) == 0:
            certified = sub.certified and verify_matrix_game_solution(s, x, y, tol)
            return MatrixGameSolution(x, y, float(x @ s @ y), iterations, certified)
        rows = np.union1d(rows, new_rows)
        cols = np.union1d(cols, new_cols)
    else:
        logger.debug("constraint generation did not settle in %d rounds; solving the whole game",
                     max_rounds)
    full = solve_matrix_game_ipm(s, tol=tol)
    return MatrixGameSolution(full.x, full.y, full.value, iterations + full.iterations, full.certified)
