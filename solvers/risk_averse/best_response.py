"""Risk-adjusted best responses: the risk models (payoff variance, lower partial moments), each player's concave
risk-adjusted objective against the others' marginals, and its maximisation over the simplex.

A player's objective is ``R_i(pi_i) = pi_i^T u_i - gamma_i * risk_i(pi_i)`` given the others' marginals (see
:mod:`solvers.risk_averse.equilibria` for the two risk measures). It is maximised by accelerated projected gradient,
polished by a Newton / KKT solve on the identified support and certified by the Frank-Wolfe duality bound
(``error_bound``). :mod:`solvers.risk_averse.equilibria` builds the gaps and the equilibria on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from games.normal_form import as_game, product_distribution
from games.validation import check_int
from solvers.dynamics.common import PayoffOperator, project_to_simplex

__all__ = ["RiskAdjustedBestResponse", "risk_adjusted_best_response"]


# ----------------------------------------------------------------------------- risk model
@dataclass(frozen=True)
class _Risk:
    """Which risk measure: ``kind`` is "variance" or "downside"; ``target`` None means the mean.

    ``order`` is the lower partial moment's order (2 for the variance).
    """

    kind: str
    target: float | tuple | None = None
    order: float = 2.0

    def of_player(self, p: int) -> "_Risk":
        """The model of player ``p`` (a per-player target picked out)."""
        return _Risk(self.kind, self.target[p], self.order) if isinstance(self.target, tuple) else self


def _check_order(order) -> float:
    try:
        n = float("nan") if isinstance(order, (bool, np.bool_, str, bytes)) else float(order)
    except (TypeError, ValueError):
        n = float("nan")
    if not np.isfinite(n) or n < 2.0:
        raise ValueError(f"order must be a real number >= 2 (see the module docstring); got {order!r}.")
    return n


def _risk_model(risk: str, target, order=2) -> _Risk:
    if risk == "variance":
        return _Risk("variance")
    if risk == "downside":
        n = _check_order(order)
        if isinstance(target, str):
            if target != "mean":
                raise ValueError(f"target must be 'mean' or a number (a reference payoff); got {target!r}.")
            return _Risk("downside", None, n)
        if target is None:
            return _Risk("downside", None, n)
        if isinstance(target, (list, tuple, np.ndarray)):  # one reference payoff per player
            per = tuple(_risk_model("downside", t, n).target for t in target)
            if any(t is None for t in per):
                raise ValueError(f"target must be 'mean', a number or one number per player; got {target!r}.")
            return _Risk("downside", per, n)
        try:
            t = float(target)
        except (TypeError, ValueError):
            raise ValueError(f"target must be 'mean' or a number (a reference payoff); got {target!r}.") from None
        if not np.isfinite(t):
            raise ValueError(f"target must be finite; got {target!r}.")
        return _Risk("downside", t, n)
    raise ValueError(f"risk must be 'variance' or 'downside'; got {risk!r}.")


def _aversions(risk_aversion, n: int) -> np.ndarray:
    arr = np.asarray(risk_aversion, dtype=np.float64) if not isinstance(risk_aversion, str) else None
    if arr is None or arr.ndim > 1 or (arr.ndim == 1 and arr.shape[0] != n):
        raise ValueError(f"risk_aversion must be a number or one number per player ({n}); got {risk_aversion!r}.")
    arr = np.broadcast_to(arr, (n,)).astype(np.float64)
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"risk_aversion must be finite and >= 0 (0 gives Nash); got {risk_aversion!r}.")
    return arr


@dataclass(frozen=True, eq=False)
class _PlayerProblem:
    """Player p's payoffs against the others' joint profiles and their probabilities."""

    table: np.ndarray  # (k_p, m): U_p(a, s)
    weights: np.ndarray  # (m,): probability of s under the others' mixtures
    means: np.ndarray  # (k_p,): u_p(a) = E_s U_p(a, s)
    aversion: float
    risk: _Risk

    def objective(self, x: np.ndarray) -> float:
        return float(x @ self.means) - self.aversion * self.risk_of(x)

    @property
    def _quadratic(self) -> bool:
        """Whether the objective is piecewise quadratic (variance, or an order-2 LPM)."""
        return self.risk.kind == "variance" or self.risk.order == 2.0

    def _shortfall(self, z: np.ndarray) -> np.ndarray:
        """``max(0, tau - Z(s))`` for every ``s``, given ``z[s] = Z(s)``."""
        tau = z @ self.weights if self.risk.target is None else self.risk.target
        return np.maximum(tau - z, 0.0)

    def _tau_gradient(self) -> np.ndarray | float:
        """Gradient of the target in the player's own strategy."""
        return self.means if self.risk.target is None else 0.0

    def risk_of(self, x: np.ndarray) -> float:
        z = x @ self.table
        if self.risk.kind == "variance":
            c = z - z @ self.weights
            return float(self.weights @ (c * c))
        d = self._shortfall(z)
        return float(self.weights @ (d * d if self.risk.order == 2.0 else d ** self.risk.order))

    def risk_of_pure(self) -> np.ndarray:
        """The risk of every pure strategy at once."""
        if self.risk.kind == "variance":
            c = self.table - self.means[:, None]
            return (c * c) @ self.weights
        tau = self.means[:, None] if self.risk.target is None else self.risk.target
        d = np.maximum(tau - self.table, 0.0)
        return (d ** self.risk.order) @ self.weights

    def gradient(self, x: np.ndarray) -> np.ndarray:
        """Gradient of the risk-adjusted objective in the player's own strategy."""
        if self.aversion == 0.0:
            return self.means
        z = x @ self.table
        if self.risk.kind == "variance":
            g_risk = 2.0 * (self.table @ (self.weights * (z - z @ self.weights)))
        else:
            # d/dx E[D^n] = n E[D^(n-1) (grad tau - U(., s))], D = max(0, tau - Z)
            n = self.risk.order
            d = self._shortfall(z)
            wd = self.weights * (d if n == 2.0 else d ** (n - 1.0))
            g_risk = n * (wd.sum() * self._tau_gradient() - self.table @ wd)
        return self.means - self.aversion * g_risk

    def hessian(self, x: np.ndarray) -> np.ndarray:
        """The (positive semidefinite) Hessian of the negated objective at ``x``."""
        if self.aversion == 0.0:
            return np.zeros((self.means.size, self.means.size))
        if self.risk.kind == "variance":
            cen = self.table - self.means[:, None]
            return 2.0 * self.aversion * (cen * self.weights) @ cen.T
        n = self.risk.order
        d = self._shortfall(x @ self.table)
        v = self.table - (self.means[:, None] if self.risk.target is None else 0.0)
        active = d > 0
        dw = self.weights[active] * (1.0 if n == 2.0 else d[active] ** (n - 2.0))
        va = v[:, active]
        return self.aversion * n * (n - 1.0) * (va * dw) @ va.T

    def quadratic_piece(self, x: np.ndarray) -> tuple:
        """``(Q, c)`` with objective ``= c.y - y^T Q y / 2 + const`` on the piece containing ``x``.

        Only for the variance and the order-2 LPM.
        """
        table, w = self.table, self.weights
        if self.risk.kind == "variance":
            cen = table - self.means[:, None]
            return 2.0 * self.aversion * (cen * w) @ cen.T, self.means
        z = x @ table
        if self.risk.target is None:
            active = (z - z @ w) < 0
            cen = table[:, active] - self.means[:, None]
            return 2.0 * self.aversion * (cen * w[active]) @ cen.T, self.means
        active = (z - self.risk.target) < 0
        t, wa = table[:, active], w[active]
        q = 2.0 * self.aversion * (t * wa) @ t.T
        return q, self.means + 2.0 * self.aversion * self.risk.target * (t @ wa)

    def curvature_bound(self) -> float:
        """An upper bound on the largest eigenvalue of the objective's (negated) Hessian over the simplex."""
        if self.aversion == 0.0:
            return 0.0
        if self.risk.kind == "variance" or self.risk.target is None:
            cen = self.table - self.means[:, None]
        else:
            cen = self.table
        mat = 2.0 * self.aversion * (cen * self.weights) @ cen.T
        top = float(np.linalg.eigvalsh(mat)[-1]) if mat.shape[0] > 1 else float(mat[0, 0])
        n = self.risk.order
        if self.risk.kind == "variance" or n == 2.0:
            return top
        # Hessian = gamma n (n-1) E[D^(n-2) v v^T] <= (n (n-1) / 2) * Dmax^(n-2) * mat, where the
        # shortfall D is largest at a vertex of the simplex.
        if self.risk.target is None:
            dmax = float(np.max(self.means[:, None] - self.table))
        else:
            dmax = float(self.risk.target - self.table.min())
        return top * 0.5 * n * (n - 1.0) * max(dmax, 0.0) ** (n - 2.0)


def _problems(op: PayoffOperator, marginals: Sequence[np.ndarray], aversions: np.ndarray, risk: _Risk) -> list:
    out = []
    for p in range(op.num_players):
        t = op.tensors[p]
        table = t.reshape(t.shape[0], -1)
        others = [marginals[q] for q in op.others[p]]
        w = product_distribution(others).reshape(-1) if others else np.ones(1)
        if isinstance(risk.target, tuple) and len(risk.target) != op.num_players:
            raise ValueError(f"target must hold one number per player ({op.num_players}); got {len(risk.target)}.")
        out.append(_PlayerProblem(table, w, table @ w, float(aversions[p]), risk.of_player(p)))
    return out


# ------------------------------------------------------------------------ best response
@dataclass(frozen=True, eq=False)
class RiskAdjustedBestResponse:
    """A player's best risk-adjusted deviation.

    Attributes
    ----------
    strategy : ndarray
        The maximising mixed strategy found.
    value : float
        Its risk-adjusted objective.
    error_bound : float
        Frank-Wolfe certificate: the true maximum is at most ``value + error_bound``.
    """

    strategy: np.ndarray
    value: float
    error_bound: float


def _fw_bound(prob: _PlayerProblem, x: np.ndarray) -> float:
    g = prob.gradient(x)
    return max(0.0, float(g.max() - g @ x))


def _kkt_polish(prob: _PlayerProblem, x: np.ndarray) -> np.ndarray | None:
    """Solve the stationarity system of the quadratic piece on the support of ``x``."""
    support = np.flatnonzero(x > 1e-12)
    q, c = prob.quadratic_piece(x)
    s = support.size
    kkt = np.zeros((s + 1, s + 1))
    kkt[:s, :s] = q[np.ix_(support, support)]
    kkt[:s, s] = 1.0
    kkt[s, :s] = 1.0
    rhs = np.concatenate([c[support], [1.0]])
    sol = np.linalg.lstsq(kkt, rhs, rcond=None)[0]
    y_s = sol[:s]
    if not np.all(np.isfinite(y_s)) or y_s.min() < -1e-12:
        return None
    y = np.zeros_like(x)
    y[support] = np.maximum(y_s, 0.0)
    return y / y.sum()


def _newton_polish(prob: _PlayerProblem, x: np.ndarray, steps: int = 30) -> np.ndarray | None:
    """Damped Newton steps on the face of the simplex spanned by the support of ``x``."""
    y, fy, improved = x.copy(), prob.objective(x), False
    for _ in range(steps):
        support = np.flatnonzero(y > 1e-12)
        s = support.size
        if s < 2:
            break
        kkt = np.zeros((s + 1, s + 1))
        kkt[:s, :s] = prob.hessian(y)[np.ix_(support, support)]
        kkt[:s, s] = 1.0
        kkt[s, :s] = 1.0
        rhs = np.concatenate([prob.gradient(y)[support], [0.0]])
        d = np.linalg.lstsq(kkt, rhs, rcond=None)[0][:s]
        if not np.all(np.isfinite(d)) or np.abs(d).max() <= 1e-15:
            break
        neg = d < 0
        t = min(1.0, float(np.min(-y[support][neg] / d[neg]))) if neg.any() else 1.0
        done = False
        fw_y = _fw_bound(prob, y)
        for _ in range(30):  # backtrack until the objective goes up (or, at round-off level, the bound down)
            cand = y.copy()
            cand[support] = np.maximum(y[support] + t * d, 0.0)
            cand /= cand.sum()
            f_cand = prob.objective(cand)
            flat = f_cand >= fy - 4e-16 * max(1.0, abs(fy))
            if f_cand > fy or (flat and _fw_bound(prob, cand) < fw_y):
                y, fy, improved = cand, f_cand, True
                break
            t *= 0.5
        else:
            done = True
        if done:
            break
    return y if improved else None


def _polish(prob: _PlayerProblem, x: np.ndarray) -> np.ndarray | None:
    return _kkt_polish(prob, x) if prob._quadratic else _newton_polish(prob, x)


def _projected_step(x: np.ndarray, step: float, g: np.ndarray) -> np.ndarray:
    """``x + step * g`` projected onto the simplex, with the gradient centred first.

    A constant added to ``g`` does not move the projection; centring keeps ``x + step * g`` near the simplex when
    ``step * g`` is huge (a tiny curvature, or a step grown large), where adding and projecting huge numbers would
    lose the last digits of ``x`` (and of its sum, hence of its value, by up to ``step * |g| * eps``).

    Examples
    --------
    >>> _projected_step(np.array([0.5, 0.5]), 1e17, np.array([1.0, 1.0 + 4e-16])).tolist()
    [0.0, 1.0]
    >>> _projected_step(np.array([0.25, 0.75]), 1e8, np.array([2.0, 2.0])).tolist()
    [0.25, 0.75]
    """
    out = project_to_simplex(x + step * (g - g.max()))
    return out / out.sum()


def _best_response(prob: _PlayerProblem, start: np.ndarray, max_iter: int = 500) -> RiskAdjustedBestResponse:
    """Maximise the concave risk-adjusted objective over the simplex (see the module docstring)."""
    pure = prob.means - prob.aversion * prob.risk_of_pure()
    j = int(np.argmax(pure))
    x = np.zeros_like(start)
    x[j] = 1.0
    fx = float(pure[j])
    f_start = prob.objective(start)
    if f_start > fx:
        x, fx = start.copy(), f_start
    lip = prob.curvature_bound()
    scale = max(1.0, float(np.abs(prob.table).max()))
    eps = 1e-13 * scale
    if lip <= 0.0:  # linear objective: a pure strategy is optimal
        return RiskAdjustedBestResponse(x, fx, _fw_bound(prob, x))
    step = 1.0 / lip

    def ascend(z: np.ndarray) -> np.ndarray:
        return _projected_step(z, step, prob.gradient(z))

    bound = _fw_bound(prob, x)
    y, x_prev, momentum = x.copy(), x.copy(), 1.0
    it = 0
    while bound > eps and it < max_iter:
        it += 1
        x_new = ascend(y)
        f_new = prob.objective(x_new)
        if f_new < fx:  # restart the momentum when the objective goes down
            y, momentum = x.copy(), 1.0
            x_new = ascend(x)
            f_new = prob.objective(x_new)
        m_next = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * momentum * momentum))
        y = x_new + ((momentum - 1.0) / m_next) * (x_new - x_prev)
        momentum, x_prev = m_next, x_new
        if f_new >= fx:
            x, fx = x_new, f_new
        if it % 10 == 0 or it < 5:
            polished = _polish(prob, x)
            if polished is not None:
                f_pol = prob.objective(polished)
                if f_pol >= fx:
                    x, fx = polished, f_pol
            bound = _fw_bound(prob, x)
    return RiskAdjustedBestResponse(x, fx, bound)


def risk_adjusted_best_response(game, marginals, player: int, risk_aversion, risk: str = "variance",
                                target="mean", order=2) -> RiskAdjustedBestResponse:
    """Player ``player``'s best risk-adjusted mixed strategy against the others' mixtures.

    Parameters
    ----------
    game : NormalFormGame
    marginals : sequence of ndarray
        One mixed strategy per player (``player``'s own entry is the start).
    player : int
    risk_aversion : float or sequence of float
        ``gamma`` (one per player or shared).
    risk : {"variance", "downside"}
    target : "mean" or float
        The downside target (ignored for the variance).
    order : float
        The lower partial moment's order ``n >= 2`` (ignored for the variance).

    Examples
    --------
    >>> import numpy as np
    >>> from games import NormalFormGame
    >>> # a sure 2 against a lottery paying 1 or 5; gamma = 1 gives p(lottery) = 1 / (8 gamma)
    >>> g = NormalFormGame.from_bimatrix([[1.0, 5.0], [2.0, 2.0]], np.zeros((2, 2)))
    >>> br = risk_adjusted_best_response(g, [np.ones(2) / 2] * 2, 0, 1.0)
    >>> br.strategy.round(12).tolist(), round(br.value, 12)
    ([0.125, 0.875], 2.0625)
    """
    game = as_game(game)
    marginals = game.check_marginals(marginals)
    player = check_int(player, "player", minimum=0, maximum=game.num_players - 1)
    probs = _problems(PayoffOperator.from_game(game), marginals, _aversions(risk_aversion, game.num_players),
                      _risk_model(risk, target, order))
    return _best_response(probs[player], np.asarray(marginals[player], dtype=np.float64))
