"""Logit quantal response equilibrium (McKelvey and Palfrey 1995), n players.

At rationality ``lambda >= 0`` (temperature ``1 / lambda``) a logit QRE is a
profile ``sigma`` with

    sigma_p = softmax(lambda * u_p(sigma_-p))   for every player p,

where ``u_p(sigma_-p)`` is the vector of player ``p``'s pure-strategy payoffs
against the others' mixtures. At ``lambda = 0`` it is uniform; as ``lambda``
grows the principal branch approaches a Nash equilibrium (the "tracing"
selection).

The solver follows the principal branch from ``lambda = 0`` with Newton's
method as the corrector, in log-probability coordinates
``x_p = log sigma_p``, solving

    F_p(x) = x_p - log softmax(lambda * u_p(exp(x_-p))) = 0,

whose Jacobian has identity diagonal blocks and off-diagonal blocks
``-lambda (I - 1 s_p^T) M_pq diag(sigma_q)``, with ``M_pq[a, b]`` player ``p``'s
expected payoff when ``p`` plays ``a`` and ``q`` plays ``b`` and ``s_p`` the
softmax. The step in ``lambda`` doubles after a success and halves after a
failure; a final Newton polish at the target brings the residual to ``tol``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from games.normal_form import NormalFormGame, as_game
from solvers.dynamics.common import FlatLayout, PayoffOperator, check_nonnegative_float, check_positive_int
from solvers.equilibrium import Equilibrium
from solvers.gaps import deviation_payoffs
from solvers.normalisation import relative_gains
from solvers.registry import Check, make_equilibrium, register

__all__ = ["logit_response", "qre", "qre_residual"]

logger = logging.getLogger(__name__)


def logit_response(game: NormalFormGame, marginals, rationality: float) -> list:
    """Each player's logit (softmax) response ``softmax(lambda * u_p(sigma_-p))``.

    Examples
    --------
    >>> from games import catalog
    >>> logit_response(catalog.matching_pennies(), [np.array([1.0, 0]), np.array([0.5, 0.5])], 1.0)[0]
    array([0.5, 0.5])
    """
    game = as_game(game)
    marginals = game.check_marginals(marginals)
    lams = np.broadcast_to(np.asarray(rationality, dtype=np.float64), (game.num_players,))
    out = []
    for lam, d in zip(lams, game.deviation_payoffs(marginals)):
        z = lam * d
        e = np.exp(z - z.max())
        out.append(e / e.sum())
    return out


def qre_residual(game: NormalFormGame, marginals, rationality: float) -> float:
    """``max_p || sigma_p - softmax(lambda * u_p(sigma_-p)) ||_inf``: zero exactly at a logit QRE.

    Examples
    --------
    >>> from games import catalog
    >>> qre_residual(catalog.rock_paper_scissors(), [np.ones(3) / 3] * 2, 5.0)
    0.0
    """
    game = as_game(game)
    marginals = game.check_marginals(marginals)
    resp = logit_response(game, marginals, rationality)
    return float(max(np.abs(m - r).max() for m, r in zip(marginals, resp)))


@dataclass(frozen=True, eq=False)
class _LogitSystem:
    """The QRE equations in log-probability coordinates for one game."""

    payoffs: np.ndarray
    op: PayoffOperator
    layout: FlatLayout
    weights: np.ndarray  # each player's rationality is lambda * weights[p]

    def split_probs(self, x: np.ndarray) -> list:
        return self.layout.split(np.exp(x))

    def residual(self, x: np.ndarray, lam: float) -> tuple:
        """``F(x)``, the probabilities and the softmax responses."""
        sig = self.split_probs(x)
        parts, soft = [], []
        for p, xp in enumerate(self.layout.split(x)):
            z = (lam * self.weights[p]) * self.op.deviation_payoff(p, sig)
            zmax = z.max()
            lse = zmax + np.log(np.exp(z - zmax).sum())
            parts.append(xp - (z - lse))
            soft.append(np.exp(z - lse))
        return np.concatenate(parts), sig, soft

    def jacobian(self, lam: float, sig: list, soft: list) -> np.ndarray:
        n = len(sig)
        size = int(self.layout.sizes.sum())
        jac = np.eye(size)
        letters = [chr(ord("a") + i) for i in range(n)]
        for p in range(n):
            op_, kp = self.layout.offsets[p], self.layout.sizes[p]
            proj = np.eye(kp) - np.outer(np.ones(kp), soft[p])
            for q in range(n):
                if q == p:
                    continue
                rest = [r for r in range(n) if r not in (p, q)]
                spec = "".join(letters) + "," + ",".join(letters[r] for r in rest) + "->" + letters[p] + letters[q]
                cross = np.einsum(spec, self.payoffs[p], *[sig[r] for r in rest]) if rest else (
                    self.payoffs[p] if p < q else self.payoffs[p].T)
                oq, kq = self.layout.offsets[q], self.layout.sizes[q]
                jac[op_:op_ + kp, oq:oq + kq] = -(lam * self.weights[p]) * (proj @ (cross * sig[q][None, :]))
        return jac

    def newton(self, x: np.ndarray, lam: float, tol: float, max_iter: int) -> tuple:
        """Damped Newton on ``F(x) = 0``; returns (x, ||F||_inf, iterations)."""
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return self._newton(x, lam, tol, max_iter)

    def _newton(self, x: np.ndarray, lam: float, tol: float, max_iter: int) -> tuple:
        f, sig, soft = self.residual(x, lam)
        norm = float(np.abs(f).max())
        it = 0
        while norm > tol and it < max_iter:
            it += 1
            jac = self.jacobian(lam, sig, soft)
            try:
                step = np.linalg.solve(jac, -f)
            except np.linalg.LinAlgError:
                step = np.linalg.lstsq(jac, -f, rcond=None)[0]
            t = 1.0
            base = float(f @ f)
            while True:
                x_new = x + t * step
                f_new, sig_new, soft_new = self.residual(x_new, lam)
                val = float(f_new @ f_new)
                if np.isfinite(val) and val <= (1.0 - 1e-4 * t) * base:
                    break
                t *= 0.5
                if t < 1e-8:
                    return x, norm, it
            x, f, sig, soft = x_new, f_new, sig_new, soft_new
            norm = float(np.abs(f).max())
        return x, norm, it


def _fixed_point(system: _LogitSystem, x: np.ndarray, lam: float, iterations: int, damping: float) -> np.ndarray:
    """Damped fixed-point iteration ``sigma <- (1 - a) sigma + a softmax(lambda u(sigma))`` (a fallback)."""
    sig = system.layout.concat(system.split_probs(x))
    for _ in range(iterations):
        _, _, soft = system.residual(np.log(np.maximum(sig, 1e-300)), lam)
        sig = (1.0 - damping) * sig + damping * system.layout.concat(soft)
    return np.log(np.maximum(sig, 1e-300))


_NEWTON_BUDGET = 5_000  # Newton iterations of the whole continuation before it goes straight to the target


def _rationalities(num_players: int, rationality, temperature) -> np.ndarray:
    """Each player's ``lambda`` from ``rationality`` or ``temperature`` (one value or one per player)."""
    if temperature is not None:
        name, value = "temperature", temperature
    else:
        name, value = "rationality", 10.0 if rationality is None else rationality
    values = np.atleast_1d(np.asarray(value, dtype=object))
    if values.ndim != 1 or values.size not in (1, num_players):
        raise ValueError(f"{name} must be a number or one number per player ({num_players}); got {value!r}.")
    checked = np.array([check_nonnegative_float(v, name, positive=temperature is not None) for v in values])
    lams = 1.0 / checked if temperature is not None else checked
    return np.broadcast_to(lams, (num_players,)).astype(np.float64)


def _rescale_rationality(norm, options: dict) -> dict:
    """``lambda_p * range_p`` for every player: the same logit responses on the normalised game."""
    lams = _rationalities(norm.game.num_players, options.get("rationality"), options.get("temperature"))
    with np.errstate(over="ignore"):
        # beyond ~1e200 per payoff range the logit response is the best response to double precision
        options["rationality"] = np.minimum(lams * norm.scales, 1e200).tolist()
    options["temperature"] = None
    return options


def _check_logit(norm, eq: Equilibrium, options: dict) -> Check:
    """The QRE residual of ``eq`` recomputed in extended precision on the normalised game.

    The verified measure adds the residual's sensitivity to the payoffs' round-off: the normalised
    payoffs are exact only to a few units in the last place, and the logit response moves by up to
    ``lambda * that``, so at a huge ``lambda * range`` (where near-ties decide the answer) the residual
    cannot verify.
    """
    lams = np.asarray(options["rationality"], dtype=np.longdouble)
    marginals = [np.asarray(m, dtype=np.longdouble) / np.sum(m, dtype=np.longdouble) for m in eq.marginals]
    residual = 0.0
    for lam, m, d in zip(lams, marginals, deviation_payoffs(norm.game.payoffs.astype(np.longdouble), marginals)):
        z = lam * d
        e = np.exp(z - z.max())
        residual = max(residual, float(np.abs(m - e / e.sum()).max()))
    gains = relative_gains(norm, "nash", eq.joint, eq.marginals)
    user = np.asarray(options["rationality"], dtype=np.float64) / norm.scales
    rounding = 16.0 * np.finfo(float).eps * float(np.max(np.asarray(options["rationality"], dtype=np.float64)))
    return Check(gains, residual + rounding, float(options["tol"]),
                 {"residual": residual, "rationality": float(user[0]) if np.ptp(user) == 0 else user.tolist()})


@register("qre", concept="qre", rescale=_rescale_rationality, check=_check_logit)
def qre(game: NormalFormGame, rationality: float | None = None, temperature: float | None = None,
        tol: float = 1e-10, max_newton: int = 30, max_steps: int = 10_000) -> Equilibrium:
    """Logit quantal response equilibrium on the principal branch, by Newton continuation in lambda.

    Parameters
    ----------
    game : NormalFormGame
        Any number of players.
    rationality : float or sequence of float, optional
        ``lambda >= 0`` (or one per player); 10 when neither it nor
        ``temperature`` is given. In 1 / payoff units: ``lambda * payoff`` is
        what matters, so :func:`solvers.solve` gives each player
        ``lambda * range_p`` on the normalised game.
    temperature : float or sequence of float, optional
        ``1 / lambda`` (> 0); give this or ``rationality``, not both.
    tol : float
        Target for the QRE residual
        ``max_p ||sigma_p - softmax(lambda u_p(sigma_-p))||_inf``.
    max_newton : int
        Newton iterations per continuation step.
    max_steps : int
        Budget of continuation steps (the continuation also stops after 5,000
        Newton iterations in all, as happens only at huge ``lambda * payoff``;
        it then goes straight to the target, and the residual says how well).

    Returns
    -------
    Equilibrium
        Concept ``"qre"``. ``gap`` is the NashConv of the QRE (not zero at a
        finite lambda); ``info`` holds ``residual``, ``converged``
        (``residual <= tol``), ``rationality``, ``continuation_steps`` and
        ``newton_iterations``.

    Examples
    --------
    >>> from games import catalog
    >>> eq = qre(catalog.matching_pennies(), rationality=50.0)
    >>> eq.marginals[0].tolist(), eq.info["residual"] <= 1e-10
    ([0.5, 0.5], True)
    >>> qre(catalog.prisoners_dilemma(), rationality=0.0).marginals[0].tolist()
    [0.5, 0.5]
    """
    game = as_game(game)
    if rationality is not None and temperature is not None:
        raise ValueError("give rationality or temperature (= 1 / rationality), not both.")
    lams = _rationalities(game.num_players, rationality, temperature)
    lam = float(lams.max())
    weights = lams / lam if lam > 0 else np.ones_like(lams)
    tol = check_nonnegative_float(tol, "tol", positive=True)
    max_newton = check_positive_int(max_newton, "max_newton")
    max_steps = check_positive_int(max_steps, "max_steps")
    layout = FlatLayout.from_shape(game.shape)
    system = _LogitSystem(game.payoffs, PayoffOperator.from_game(game), layout, weights)
    x = np.concatenate([np.full(k, -np.log(k)) for k in game.shape])  # exact solution at lambda = 0
    spread = float(np.max(np.ptp(game.payoffs.reshape(game.num_players, -1), axis=1) * weights)) or 1.0
    inner = max(tol, 1e-9)
    cur, h, steps, newton_its, failed = 0.0, min(lam, 1.0 / spread), 0, 0, False
    while cur < lam and steps < max_steps and newton_its < _NEWTON_BUDGET:
        steps += 1
        target = min(lam, cur + h)
        x_try, norm, its = system.newton(x, target, inner, max_newton)
        newton_its += its
        if norm <= inner:
            x, cur, h = x_try, target, 2.0 * h
        else:
            h *= 0.5
            if h <= 1e-12 * max(lam, 1.0):
                failed = True
                break
    if cur < lam:  # the branch turned back or the budget ran out: try directly at the target
        logger.info("qre continuation stopped at lambda=%.6g of %.6g; trying fixed-point + Newton", cur, lam)
        with np.errstate(over="ignore", invalid="ignore"):
            tried = _fixed_point(system, x, lam, 2000, 0.1)
        x = tried if np.all(np.isfinite(tried)) else x  # an overflow keeps the continuation's point
    x, norm, its = system.newton(x, lam, tol * 1e-2, max_newton)
    newton_its += its
    # normalise in log space: far from the branch the log-probabilities can be huge in magnitude
    sig = [np.exp(xp - xp.max()) for xp in layout.split(x)]
    sig = [s / s.sum() for s in sig]
    residual = qre_residual(game, sig, lams)
    info = {"rationality": lam if np.ptp(lams) == 0 else lams.tolist(), "residual": residual, "tol": tol,
            "converged": bool(residual <= tol),
            "continuation_steps": steps, "newton_iterations": newton_its, "iterations": newton_its,
            "reached_lambda": min(lam, cur), "continuation_failed": failed}
    eq = make_equilibrium(game, marginals=sig, concept="qre", method="qre", info=info)
    eq.info["nash_conv"] = eq.gap
    if not eq.converged:
        logger.warning("qre did not converge: residual %.3g > tol %.3g at lambda=%.6g", residual, tol, lam)
    return eq
