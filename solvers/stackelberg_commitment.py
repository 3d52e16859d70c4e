"""Stackelberg equilibrium of a two-player game: the leader's optimal mixed commitment.

The leader commits to a mixed strategy ``x``; the follower sees it and best
responds. Conitzer and Sandholm (2006) compute the leader's optimal
commitment with one linear programme per follower action ``j``:

    max_x  x^T A[:, j]   s.t.  x^T B[:, j] >= x^T B[:, j']  for every j',
                               x >= 0, sum(x) = 1,

(``A`` the leader's, ``B`` the follower's payoffs), and take the best ``j``
among the feasible ones. This is the **strong** Stackelberg equilibrium: a
follower indifferent between actions breaks ties in the leader's favour.

Under **weak** tie-breaking the follower breaks ties against the leader. The
leader's best value is then a supremum that need not be attained, so the
programme for ``j`` asks the follower to *strictly* prefer ``j`` by a margin
``margin`` (relative to the follower's payoff range) over every action whose
column differs from ``j``'s; actions with the same column as ``j`` are tied
with it everywhere, and the leader is guaranteed the worst of them
(``max t`` with ``t <= x^T A[:, j']`` for each). The returned commitment
induces its follower response by that margin, so the pessimistic follower
really plays it; its value is within ``O(margin)`` of the supremum, which is
reported too (the same programmes with margin zero, over the actions that
can be induced strictly).
"""

from __future__ import annotations

import logging

import numpy as np
from scipy.optimize import linprog

from games.normal_form import NormalFormGame
from games.validation import check_int
from solvers.equilibrium import Equilibrium
from solvers.gaps import nash_conv_per_player
from solvers.nash.bimatrix import bimatrix_of, normalised
from solvers.registry import make_equilibrium

__all__ = ["TIE_BREAKING", "stackelberg"]

logger = logging.getLogger(__name__)

TIE_BREAKING = ("strong", "weak")
_TOL = 1e-9


def _commitment_lp(an: np.ndarray, bn: np.ndarray, j: int, tied: np.ndarray, margin: float):
    """Best commitment inducing follower action ``j``: returns ``(x, lp_value)`` or ``None``.

    ``tied`` are the follower actions the leader must guard against (the
    worst of their leader payoffs is maximised); the others must be worse for
    the follower than ``j`` by ``margin``.
    """
    k = an.shape[0]
    others = np.array([jj for jj in range(bn.shape[1]) if jj not in set(tied)], dtype=np.intp)
    # variables (x, t): max t  s.t.  t - x^T A[:, j'] <= 0 (j' tied),  x^T (B[:, j'] - B[:, j]) <= -margin
    c = np.zeros(k + 1)
    c[-1] = -1.0
    rows = [np.hstack([-an[:, tied].T, np.ones((len(tied), 1))])]
    rhs = [np.zeros(len(tied))]
    if len(others):
        rows.append(np.hstack([(bn[:, others] - bn[:, [j]]).T, np.zeros((len(others), 1))]))
        rhs.append(np.full(len(others), -margin))
    a_eq = np.append(np.ones(k), 0.0)[None, :]
    res = linprog(c, A_ub=np.vstack(rows), b_ub=np.concatenate(rhs), A_eq=a_eq, b_eq=[1.0],
                  bounds=[(0, None)] * k + [(None, None)], method="highs")
    if res.status != 0:
        if res.status != 2:
            logger.warning("stackelberg LP for follower action %d ended with status %d (%s)", j, res.status,
                           res.message)
        return None
    x = np.clip(res.x[:k], 0.0, None)
    return x / x.sum(), float(-res.fun)


def stackelberg(game: NormalFormGame, leader: int = 0, tie_breaking: str = "strong",
                margin: float = 1e-6) -> Equilibrium:
    """The leader's optimal mixed commitment and the follower's best response (Conitzer and Sandholm 2006).

    Parameters
    ----------
    game : NormalFormGame
        A two-player game.
    leader : {0, 1}
        Which player commits.
    tie_breaking : {"strong", "weak"}
        The follower breaks ties for (``"strong"``) or against (``"weak"``)
        the leader.
    margin : float
        Weak tie-breaking only: by how much (relative to the follower's
        payoff range) the follower must prefer its response.

    Returns
    -------
    Equilibrium
        Concept ``"stackelberg"``: ``marginals[leader]`` the commitment,
        ``marginals[follower]`` the follower's pure response, ``values`` both
        players' payoffs. ``gap`` is the follower's regret (zero: it best
        responds), recomputed from the payoffs. ``info`` holds ``leader``,
        ``follower_action``, ``tie_breaking``, ``leader_value``,
        ``follower_best_responses`` (the follower's best-response set at the
        commitment), ``lp_values`` (the programme's value per follower
        action, NaN when it cannot be induced), ``leader_value_supremum``
        (weak only), ``leader_nash_conv`` and ``converged``.

    Examples
    --------
    >>> from games import NormalFormGame
    >>> # Conitzer and Sandholm's example: committing to (1/2, 1/2) beats the Nash value 2.
    >>> g = NormalFormGame.from_bimatrix([[2, 4], [1, 3]], [[1, 0], [0, 1]])
    >>> eq = stackelberg(g)
    >>> eq.marginals[0].round(9).tolist(), eq.marginals[1].tolist(), eq.values.round(9).tolist()
    ([0.5, 0.5], [0.0, 1.0], [3.5, 0.5])
    >>> weak = stackelberg(g, tie_breaking="weak")
    >>> round(weak.info["leader_value_supremum"], 9), bool(weak.values[0] < 3.5), weak.info["follower_action"]
    (3.5, True, 1)
    """
    a, b = bimatrix_of(game)
    leader = check_int(leader, "leader (the committing player)", minimum=0, maximum=1)
    if tie_breaking not in TIE_BREAKING:
        raise ValueError(f"tie_breaking must be one of {TIE_BREAKING}; got {tie_breaking!r}.")
    margin = float(margin)
    if not np.isfinite(margin) or margin <= 0 or margin >= 1:
        raise ValueError(f"margin must be in (0, 1) (relative to the follower's payoff range); got {margin!r}.")
    follower = 1 - leader
    lead, foll = (a, b) if leader == 0 else (b.T, a.T)  # leader's actions as rows
    an, bn = normalised(lead), normalised(foll)
    k_f = lead.shape[1]
    lp_values = np.full(k_f, np.nan)
    best = None
    if tie_breaking == "strong":
        for j in range(k_f):
            sol = _commitment_lp(an, bn, j, np.array([j]), 0.0)
            if sol is not None:
                lp_values[j] = sol[1]
                if best is None or sol[1] > best[2] + _TOL:
                    best = (sol[0], j, sol[1])
        sup = None
    else:
        same = np.all(np.abs(bn[:, :, None] - bn[:, None, :]) <= _TOL, axis=0)  # identical follower columns
        sup = -np.inf
        for j in range(k_f):
            tied = np.flatnonzero(same[j])
            if tied[0] != j:  # each class of identical columns once
                continue
            sol = _commitment_lp(an, bn, j, tied, margin)
            if sol is None:
                continue
            x = sol[0]
            worst = tied[int(np.argmin(an[:, tied].T @ x))]
            lp_values[tied] = sol[1]
            limit = _commitment_lp(an, bn, j, tied, 0.0)
            sup = max(sup, limit[1] if limit is not None else sol[1])
            if best is None or sol[1] > best[2] + _TOL:
                best = (x, int(worst), sol[1])
    if best is None:  # cannot happen: some follower action is a best response to every x
        raise RuntimeError("stackelberg: no follower action could be induced; the LP solver failed.")
    x, j, _ = best
    y = np.zeros(k_f)
    y[j] = 1.0
    marginals = [x, y] if leader == 0 else [y, x]
    follower_pay = foll.T @ x
    frange = float(np.ptp(foll)) or 1.0
    brs = np.flatnonzero(follower_pay >= follower_pay.max() - min(1e-8, margin / 10) * frange)
    regrets = nash_conv_per_player(game, marginals)
    lrange = float(np.ptp(lead)) or 1.0
    info = {
        "leader": leader,
        "follower": follower,
        "follower_action": int(j),
        "tie_breaking": tie_breaking,
        "follower_best_responses": brs.tolist(),
        "lp_values": lp_values * lrange + float(lead.min()),
        "leader_nash_conv": float(regrets[leader]),
        "converged": bool(regrets[follower] <= 1e-7 * frange),
    }
    if tie_breaking == "weak":
        info["margin"] = margin
        info["leader_value_supremum"] = float(sup) * lrange + float(lead.min())
    eq = make_equilibrium(game, marginals=marginals, concept="stackelberg", method="stackelberg", info=info,
                          gap=float(regrets[follower]))
    eq.info["leader_value"] = float(eq.values[leader])
    return eq
