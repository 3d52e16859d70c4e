"""The whole principal branch of logit quantal response equilibria, traced from lambda = 0.

:func:`solvers.dynamics.qre.qre` returns the QRE at one rationality ``lambda``;
:func:`qre_branch` returns the branch itself, a table of ``(lambda, profile)``
from the uniform profile at ``lambda = 0`` up to ``lambda_max`` (or until the
profile is a Nash equilibrium to a tolerance). It uses the same equations in
log-probability coordinates (:class:`solvers.dynamics.qre._LogitSystem`),

    H(x, lambda) = x_p - log softmax(lambda * u_p(exp(x_-p))) = 0   for every p,

and follows the curve ``H = 0`` in ``(x, lambda)`` by pseudo-arclength
predictor-corrector continuation: the tangent is the null vector of the
augmented Jacobian ``[dH/dx, dH/dlambda]`` (oriented to continue the previous
direction), the predictor steps along it, and Newton's method corrects on the
hyperplane orthogonal to the tangent. Unlike stepping in ``lambda`` alone, this
passes turning points, where the branch bends back to smaller ``lambda``
(``dH/dlambda`` is ``-(u_p - s_p . u_p)``). Payoffs are divided by their
range while tracing, so the step sizes do not depend on the payoff scale;
the table reports ``lambda`` in the game's own units.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from games.normal_form import NormalFormGame, as_game
from solvers.dynamics.common import FlatLayout, PayoffOperator, check_nonnegative_float, check_positive_int
from solvers.dynamics.qre import _LogitSystem, qre_residual
from solvers.gaps import nash_conv_per_player

__all__ = ["qre_branch"]

logger = logging.getLogger(__name__)


def _lambda_derivative(system: _LogitSystem, sig: list, soft: list) -> np.ndarray:
    parts = []
    for p, s in enumerate(soft):
        u = system.op.deviation_payoff(p, sig)
        parts.append(-(u - s @ u))
    return np.concatenate(parts)


def _augmented(system: _LogitSystem, z: np.ndarray):
    """``H(z)`` and ``[dH/dx, dH/dlambda]`` at ``z = (x, lambda)``."""
    x, lam = z[:-1], float(z[-1])
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return _augmented_at(system, x, lam)


def _augmented_at(system: _LogitSystem, x: np.ndarray, lam: float):
    f, sig, soft = system.residual(x, lam)
    jac = np.hstack([system.jacobian(lam, sig, soft), _lambda_derivative(system, sig, soft)[:, None]])
    return f, jac


def _tangent(jac: np.ndarray, previous: np.ndarray) -> np.ndarray:
    t = np.linalg.svd(jac)[2][-1]
    return t if t @ previous >= 0 else -t


def _correct(system: _LogitSystem, z: np.ndarray, t: np.ndarray, tol: float, max_iter: int):
    """Newton on ``H(z) = 0`` with ``t . (z - z_pred) = 0``; returns ``(z, converged, iterations)``."""
    anchor = z.copy()
    for it in range(1, max_iter + 1):
        f, jac = _augmented(system, z)
        if not np.all(np.isfinite(f)):
            return z, False, it
        lhs = np.vstack([jac, t])
        rhs = -np.append(f, t @ (z - anchor))
        try:
            step = np.linalg.solve(lhs, rhs)
        except np.linalg.LinAlgError:
            return z, False, it
        z = z + step
        if np.abs(step).max() <= tol * max(1.0, np.abs(z).max()) and np.abs(f).max() <= 1e3 * tol:
            f = _augmented(system, z)[0]
            return z, bool(np.abs(f).max() <= tol), it
    return z, False, max_iter


def _column_names(game: NormalFormGame) -> list:
    names = [f"{pl}:{s}" for pl, strat in zip(game.player_names, game.strategy_names) for s in strat]
    if len(set(names)) == len(names) and "lambda" not in names and "residual" not in names:
        return names
    return [f"p{p}:s{a}" for p, k in enumerate(game.shape) for a in range(k)]


def qre_branch(game, lambda_max: float | None = None, nash_tol: float = 1e-6, tol: float = 1e-10,
               step: float = 0.1, max_step: float = 1e3, max_steps: int = 20_000,
               max_newton: int = 8) -> pd.DataFrame:
    """The principal branch of logit QRE from ``lambda = 0``, by predictor-corrector continuation.

    Parameters
    ----------
    game : NormalFormGame
        Any number of players.
    lambda_max : float, optional
        Trace up to this rationality (``>= 0``; the last row is at exactly
        ``lambda_max``). When omitted, trace until the profile is a Nash
        equilibrium to ``nash_tol``.
    nash_tol : float
        Without ``lambda_max``: stop once every player's best-deviation gain
        is at most ``nash_tol`` times the game's payoff range.
    tol : float
        Corrector target for ``||H||_inf`` at every point of the table.
    step, max_step : float
        First and largest arclength step (in range-scaled units). Steps grow
        after easy corrections and halve after failed ones.
    max_steps : int
        Budget of continuation steps.
    max_newton : int
        Newton iterations per correction.

    Returns
    -------
    pandas.DataFrame
        One row per point of the branch, in the order traced: ``lambda``, one
        column ``"<player>:<strategy>"`` per strategy (the profile) and
        ``residual`` (the QRE residual ``max_p ||sigma_p - softmax(lambda
        u_p)||_inf``, recomputed). ``lambda`` decreases where the branch
        turns back. ``df.attrs`` holds ``converged`` (the end was reached
        with every residual at most ``tol``), ``end`` (``"lambda_max"``,
        ``"nash"`` or ``"budget"``), ``turning_points`` and ``steps``.

    Examples
    --------
    >>> from games import catalog
    >>> df = qre_branch(catalog.prisoners_dilemma(), lambda_max=2.0)
    >>> df.columns.tolist()
    ['lambda', 'row:cooperate', 'row:defect', 'col:cooperate', 'col:defect', 'residual']
    >>> float(df["lambda"].iloc[-1]), round(float(df["row:defect"].iloc[-1]), 9)  # 1 / (1 + e^-2)
    (2.0, 0.880797078)
    >>> bool(df.attrs["converged"]), bool((df["residual"] <= 1e-10).all())
    (True, True)
    """
    game = as_game(game)
    if lambda_max is not None:
        lambda_max = check_nonnegative_float(lambda_max, "lambda_max")
    nash_tol = check_nonnegative_float(nash_tol, "nash_tol", positive=True)
    tol = check_nonnegative_float(tol, "tol", positive=True)
    step = check_nonnegative_float(step, "step", positive=True)
    max_step = check_nonnegative_float(max_step, "max_step", positive=True)
    max_steps = check_positive_int(max_steps, "max_steps")
    max_newton = check_positive_int(max_newton, "max_newton")
    spread = float(np.ptp(game.payoffs)) or 1.0
    scaled = game.with_payoffs((game.payoffs - game.payoffs.min()) / spread)
    layout = FlatLayout.from_shape(game.shape)
    system = _LogitSystem(scaled.payoffs, PayoffOperator.from_game(scaled), layout,
                          weights=np.ones(game.num_players))
    target = None if lambda_max is None else lambda_max * spread  # in scaled units

    z = np.append(np.concatenate([np.full(k, -np.log(k)) for k in game.shape]), 0.0)
    points = [z.copy()]
    direction = np.zeros_like(z)
    direction[-1] = 1.0
    h, steps, turning, end = step, 0, 0, "budget"
    while steps < max_steps:
        if target is not None and z[-1] >= target:
            end = "lambda_max"
            break
        if target is None and _is_nash(scaled, system, z, nash_tol):
            end = "nash"
            break
        steps += 1
        _, jac = _augmented(system, z)
        t = _tangent(jac, direction)
        z_new, ok, its = _correct(system, z + h * t, t, tol, max_newton)
        if ok:
            t_new = _tangent(_augmented(system, z_new)[1], t)
            ok = float(t_new @ t) >= 0.9  # a sharp bend means the step jumped: retry shorter
        if not ok:
            h *= 0.5
            if h < 1e-12:
                logger.warning("qre_branch: the step size collapsed at lambda=%.6g", z[-1] / spread)
                break
            continue
        if target is not None and z_new[-1] > target:
            # land exactly on lambda_max: Newton in x at the fixed target from the interpolated point
            w = (target - z[-1]) / (z_new[-1] - z[-1])
            x0 = (1 - w) * z[:-1] + w * z_new[:-1]
            x_end, norm, _ = system.newton(x0, target, tol, 50)
            if norm <= tol:
                z_new = np.append(x_end, target)
            else:
                h *= 0.5
                continue
        if (z_new[-1] - z[-1]) * direction[-1] < 0:
            turning += 1
        direction = z_new - z
        z = z_new
        points.append(z.copy())
        if its <= 3:
            h = min(2.0 * h, max_step)
    table = np.array(points)
    lam = table[:, -1] / spread
    probs = np.exp(table[:, :-1])
    rows = []
    for row, lm in zip(probs, lam):
        sig = [s / s.sum() for s in layout.split(row)]
        # the residual on the range-scaled game at lambda * range: the same number, without the
        # cancellation that large payoff offsets cause
        rows.append(np.concatenate(sig + [[qre_residual(scaled, sig, float(lm) * spread)]]))
    out = pd.DataFrame(np.column_stack([lam, np.array(rows)]), columns=["lambda"] + _column_names(game) + ["residual"])
    converged = end != "budget" and bool((out["residual"] <= tol).all())
    out.attrs.update(converged=converged, end=end, turning_points=turning, steps=steps, tol=tol)
    if not converged:
        logger.warning("qre_branch stopped at lambda=%.6g (%s) without meeting tol=%.3g", lam[-1], end, tol)
    return out


def _is_nash(scaled: NormalFormGame, system: _LogitSystem, z: np.ndarray, nash_tol: float) -> bool:
    sig = [s / s.sum() for s in system.split_probs(z[:-1])]
    return bool(nash_conv_per_player(scaled, sig).max() <= nash_tol)
