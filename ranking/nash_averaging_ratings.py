"""Nash averaging (Balduzzi et al. 2018, "Re-evaluating Evaluation"): agent-vs-agent and agent-vs-task.

Given an antisymmetric evaluation matrix ``A`` (``A[i, j]``: how much ``i`` beats
``j``; ``A = -A.T``), the symmetric zero-sum game with row payoffs ``A`` has
value 0 and its optimal strategies form the polytope

    {p >= 0, sum(p) = 1, A.T p >= 0}.

Nash averaging picks the maximum-entropy point ``p*`` of that polytope (unique,
as entropy is strictly concave) and rates agent ``i`` by ``(A p*)_i``, its payoff
against the Nash mixture: 0 on the support of the max-entropy Nash, negative
off it. Adding a copy of an agent leaves every rating unchanged.

Where ``A`` comes from:

* an antisymmetric matrix or a symmetric zero-sum two-player game: used as is;
* win probabilities ``P`` (``P + P.T = 1``), a constant-sum game of them, match
  records or win/draw counts (turned into ``P = (wins + draws/2 + s) / (games + 2s)``
  with smoothing ``s``): ``A = logit(P)`` as in the paper (``transform="logit"``),
  or ``A = P - 1/2`` (``transform="centered"``).

The exact solver works in two steps, both to machine precision:

1. One LP (HiGHS) finds an optimal ``p`` that is *strictly complementary*:
   every agent has either ``p_i > 0`` or ``(A.T p)_i > 0``. By Goldman-Tucker
   such a point exists, and it splits the agents into the essential set ``S``
   (in the support of some Nash) and the rest.
2. Every optimal ``p`` has ``(A.T p)_S = 0`` (complementary slackness), and the
   max-entropy one is positive on all of ``S``. So it is the max-entropy
   distribution on ``S`` subject to ``sum(p_S) = 1``, ``A_SS.T p_S = 0`` and
   ``A_S,rest.T p_S >= 0``. The smooth convex dual of that problem (bounded
   multipliers for the inequalities) tells which inequalities are active; the
   max-entropy problem with those as equalities is then solved by Newton's
   method on its dual, to machine precision.

``method="cvxpy"`` instead solves the convex program directly with an
exponential-cone solver (Clarabel), as OpenSpiel does.

Agent-vs-task (``mode="agent_vs_task"``, the paper's appendix D, OpenSpiel's
``a_v_a=False``): an agents x tasks score table ``S`` is a zero-sum game in
which agents maximise the score and tasks minimise it. Its max-entropy Nash is
the pair of max-entropy optimal strategies of the two sides. Both come from the
exact solver above, applied to the symmetrisation whose strategies are
(agent, task) pairs with payoff ``S[a, t'] - S[a', t]``: antisymmetric, value 0
exactly, and with the product of the two max-entropy strategies as its own
max-entropy Nash. Agents rate ``S y*`` (their score against the tasks' Nash),
tasks ``-x*.S`` (their difficulty for the agents' Nash).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy.optimize import linprog

from ranking.match_records import ScoreKind, as_match_counts

__all__ = ["AgentTaskNashAveraging", "agent_task_scores", "antisymmetric_payoffs", "max_entropy_nash",
           "nash_averaging"]

logger = logging.getLogger(__name__)

MatrixKind = Literal["auto", "antisymmetric", "win_probability", "wins"]


def _check_antisymmetric(a, argname: str = "a") -> np.ndarray:
    try:
        arr = np.asarray(a, dtype=np.float64)
    except (ValueError, TypeError):
        raise ValueError(f"{argname} must be a square matrix of numbers.") from None
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] < 1:
        raise ValueError(f"{argname} must be a square (n, n) matrix; got shape {arr.shape}.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{argname} contains NaN or inf; every pair needs a finite evaluation.")
    scale = max(1.0, float(np.abs(arr).max()))
    if np.abs(arr + arr.T).max() > 1e-9 * scale:
        raise ValueError(
            f"{argname} must be antisymmetric (a == -a.T): a[i, j] is how much i beats j. For win "
            "probabilities use nash_averaging(..., matrix='win_probability')."
        )
    return 0.5 * (arr - arr.T)


def _strictly_complementary_nash(a: np.ndarray) -> tuple:
    """An optimal ``p`` maximising the margin ``t`` in ``p + A.T p >= t``, by one LP."""
    n = a.shape[0]
    s = a / max(float(np.abs(a).max()), 1e-300)
    c = np.zeros(n + 1)
    c[-1] = -1.0  # maximise t
    a_ub = np.block([[-s.T, np.zeros((n, 1))], [-(np.eye(n) + s.T), np.ones((n, 1))]])
    a_eq = np.concatenate([np.ones(n), [0.0]])[None, :]
    res = linprog(c, A_ub=a_ub, b_ub=np.zeros(2 * n), A_eq=a_eq, b_eq=[1.0],
                  bounds=[(0, None)] * n + [(None, 1.0)], method="highs")
    if res.status != 0:
        raise RuntimeError(f"HiGHS failed on the Nash-averaging support LP: {res.message}")
    p = np.clip(res.x[:n], 0.0, None)
    return p / p.sum(), s.T @ p, float(res.x[-1])


def _orthonormal_constraints(rows: np.ndarray, rhs: np.ndarray) -> tuple:
    """Replace ``rows p = rhs`` by orthonormal rows ``q p = c`` with the same solutions (SVD)."""
    u, sv, vt = np.linalg.svd(rows, full_matrices=False)
    rank = int((sv > 1e-11 * sv[0]).sum())
    q, c = vt[:rank], (u[:, :rank].T @ rhs) / sv[:rank]
    if np.abs(rows @ (q.T @ c) - rhs).max() > 1e-9 * max(1.0, float(np.abs(rhs).max())):
        raise RuntimeError("inconsistent max-entropy Nash constraints; the support LP was inaccurate.")
    return q, c


def _max_entropy_affine(q: np.ndarray, c: np.ndarray, tol: float = 1e-14, max_iter: int = 200) -> np.ndarray:
    """argmax -sum p log p subject to ``q p = c`` (orthonormal rows), by Newton on the dual.

    The dual ``min_nu sum exp(q.T nu - 1) - c.T nu`` is smooth and strictly convex;
    its minimiser gives ``p = exp(q.T nu - 1)``.
    """
    nu = np.zeros(q.shape[0])

    def dual(v):
        return np.exp(q.T @ v - 1.0).sum() - c @ v

    f = dual(nu)
    for _ in range(max_iter):
        p = np.exp(q.T @ nu - 1.0)
        grad = q @ p - c
        if np.abs(grad).max() < tol:
            break
        step = np.linalg.solve((q * p) @ q.T, grad)
        t = 1.0
        while True:
            trial = nu - t * step
            f_trial = dual(trial)
            # Armijo, with a rounding allowance so that full steps are taken near the optimum
            # (where the dual's change falls below machine precision but the gradient's does not).
            if f_trial <= f - 1e-4 * t * (grad @ step) + 1e-12 * max(1.0, abs(f)) or t < 1e-12:
                break
            t *= 0.5
        nu, f = trial, f_trial
    return np.exp(q.T @ nu - 1.0)


def _max_entropy_polytope(eq: np.ndarray, b: np.ndarray, ineq: np.ndarray) -> np.ndarray:
    """argmax -sum p log p subject to ``eq p = b`` and ``ineq p >= 0`` (``p > 0`` implied).

    1. Make the equalities orthonormal, ``q p = c``, and split every inequality row
       into its part in the span of ``q`` (a constant on the feasible set) and the
       rest: ``g p >= h``.
    2. Find the active inequalities from the bound-constrained dual
       ``min sum exp(q.T nu + g.T mu - 1) - c.T nu - h.T mu`` over ``mu >= 0``
       (L-BFGS-B, which copes with the dual's flat directions).
    3. Polish: solve the max-entropy problem with the active rows as equalities
       by Newton's method, adding any inequality it violates, until none is.
    """
    from scipy.optimize import minimize

    q, c = _orthonormal_constraints(eq, b)
    inside = ineq @ q.T
    g = ineq - inside @ q
    h = -(inside @ c)
    keep = np.linalg.norm(g, axis=1) > 1e-11
    if np.any(h[~keep] > 1e-9):
        raise RuntimeError("infeasible max-entropy Nash constraints; the support LP was inaccurate.")
    g, h = g[keep], h[keep]
    if g.shape[0] == 0:
        return _max_entropy_affine(q, c)
    # Fast path: start with no active inequality and add violated ones; accept if the
    # multipliers of the added ones come out non-negative (the KKT conditions hold).
    active = np.zeros(g.shape[0], dtype=bool)
    p = _polish(q, c, g, h, active)
    if p is not None:
        return p
    # Otherwise find the active set from the bound-constrained dual (L-BFGS-B).

    k_mat = np.vstack([q, g])
    target = np.concatenate([c, h])

    def dual(x):
        z = np.exp(k_mat.T @ x - 1.0)
        return z.sum() - target @ x, k_mat @ z - target

    bounds = [(None, None)] * q.shape[0] + [(0.0, None)] * g.shape[0]
    res = minimize(dual, np.zeros(k_mat.shape[0]), jac=True, method="L-BFGS-B", bounds=bounds,
                   options={"maxiter": 2000, "gtol": 1e-12, "ftol": 1e-16})
    z = np.exp(k_mat.T @ res.x - 1.0)
    p = _polish(q, c, g, h, g @ z - h < 1e-8, check_multipliers=False)
    return p


def _polish(q, c, g, h, active, check_multipliers: bool = True):
    """Max entropy with the ``active`` inequalities as equalities, adding violated ones.

    Returns ``None`` when ``check_multipliers`` and some active inequality has a
    negative multiplier (so the guess of the active set was wrong).
    """
    active = active.copy()
    for _ in range(g.shape[0] + 1):
        q2, c2 = _orthonormal_constraints(np.vstack([q, g[active]]), np.concatenate([c, h[active]]))
        p = _max_entropy_affine(q2, c2)
        violated = (g @ p - h < -1e-12) & ~active
        if not violated.any():
            break
        active |= violated
    if check_multipliers and active.any():
        # p = exp(q.T nu + g_A.T mu - 1) with mu >= 0; g rows are orthogonal to q's span.
        z = np.log(p) + 1.0
        z -= q.T @ (q @ z)
        mu = np.linalg.lstsq(g[active].T, z, rcond=1e-12)[0]
        if mu.min() < -1e-9 * max(1.0, float(np.abs(mu).max())):
            return None
    return p


def max_entropy_nash(a, method: Literal["exact", "cvxpy"] = "exact") -> np.ndarray:
    """The maximum-entropy Nash equilibrium of the symmetric zero-sum game with payoffs ``a``.

    Parameters
    ----------
    a : array_like, shape (n, n)
        Antisymmetric row-player payoffs (``a == -a.T``).
    method : {"exact", "cvxpy"}
        ``"exact"``: one LP for the support, then Newton on the max-entropy dual
        (see the module docstring). ``"cvxpy"``: the convex program solved by
        Clarabel (accurate to about 1e-8).

    Returns
    -------
    ndarray, shape (n,)
        The max-entropy Nash distribution.

    Examples
    --------
    >>> rps = [[0, -1, 1], [1, 0, -1], [-1, 1, 0]]
    >>> max_entropy_nash(rps).round(12).tolist()
    [0.333333333333, 0.333333333333, 0.333333333333]
    >>> max_entropy_nash([[0, 1], [-1, 0]]).tolist()
    [1.0, 0.0]
    """
    a = _check_antisymmetric(a)
    n = a.shape[0]
    if method == "cvxpy":
        return _max_entropy_cvxpy(a)
    if method != "exact":
        raise ValueError(f"method must be 'exact' or 'cvxpy'; got {method!r}.")
    if n == 1 or not np.any(a):
        return np.full(n, 1.0 / n)
    p_lp, slack, margin = _strictly_complementary_nash(a)
    if margin < 1e-7:
        logger.warning("Nash-averaging support is nearly degenerate (margin %.3g); the result may be "
                       "inaccurate. method='cvxpy' is an alternative.", margin)
    support = p_lp > slack
    idx = np.flatnonzero(support)
    out = np.flatnonzero(~support)
    s = a / np.abs(a).max()
    # On S every optimal p has (A.T p)_S = 0 (complementary slackness); off S only >= 0.
    eq = np.vstack([np.ones(idx.size), s[np.ix_(idx, idx)].T])
    b = np.zeros(idx.size + 1)
    b[0] = 1.0
    p = np.zeros(n)
    p[idx] = _max_entropy_polytope(eq, b, s[np.ix_(idx, out)].T)
    p /= p.sum()
    violation = float(-(s.T @ p).min())
    if violation > 1e-8:
        logger.warning("exact max-entropy Nash violates optimality by %.3g; falling back to cvxpy.", violation)
        return _max_entropy_cvxpy(a)
    return p


def _max_entropy_cvxpy(a: np.ndarray) -> np.ndarray:
    import cvxpy as cp

    n = a.shape[0]
    s = a / max(float(np.abs(a).max()), 1e-300)
    x = cp.Variable(n)
    problem = cp.Problem(cp.Maximize(cp.sum(cp.entr(x))), [s.T @ x >= 0, x >= 0, cp.sum(x) == 1])
    problem.solve(solver=cp.CLARABEL)
    if problem.status not in ("optimal", "optimal_inaccurate") or x.value is None:
        raise RuntimeError(f"cvxpy could not solve the max-entropy Nash program (status {problem.status}).")
    p = np.clip(np.asarray(x.value, dtype=np.float64), 0.0, None)
    return p / p.sum()


def _logit(p: np.ndarray) -> np.ndarray:
    off = ~np.eye(p.shape[0], dtype=bool)
    if np.any((p[off] <= 0) | (p[off] >= 1)):
        raise ValueError(
            "win probabilities of exactly 0 or 1 have an infinite logit; use smoothing > 0 with counts, "
            "or transform='centered' (A = P - 1/2)."
        )
    with np.errstate(divide="ignore"):
        out = np.log(p) - np.log1p(-p)
    out[~off] = 0.0
    return out


def _from_win_probabilities(p: np.ndarray, transform: str) -> np.ndarray:
    off = ~np.eye(p.shape[0], dtype=bool)
    if not np.all(np.isfinite(p)) or p[off].min() < 0 or p[off].max() > 1 or not np.allclose(
            (p + p.T)[off], 1.0, atol=1e-9):
        raise ValueError("win probabilities must lie in [0, 1] with P[i, j] + P[j, i] == 1.")
    if transform == "logit":
        a = _logit(p)
    elif transform == "centered":
        a = p - 0.5
    else:
        raise ValueError(f"transform must be 'logit' or 'centered'; got {transform!r}.")
    np.fill_diagonal(a, 0.0)
    return 0.5 * (a - a.T)


def antisymmetric_payoffs(data, draws=None, *, matrix: MatrixKind = "auto", transform: str = "logit",
                          smoothing: float = 0.01, scores: ScoreKind = "auto",
                          agents: Sequence | None = None) -> tuple:
    """The agents and the antisymmetric evaluation matrix ``A`` that Nash averaging uses.

    See :func:`nash_averaging` for the parameters.

    Examples
    --------
    >>> agents, a = antisymmetric_payoffs([[0.5, 0.75], [0.25, 0.5]], transform="centered")
    >>> a.tolist()
    [[0.0, 0.25], [-0.25, 0.0]]
    """
    if matrix not in ("auto", "antisymmetric", "win_probability", "wins"):
        raise ValueError(f"matrix must be 'auto', 'antisymmetric', 'win_probability' or 'wins'; got {matrix!r}.")
    if hasattr(data, "mean_game"):
        data = data.mean_game()
    if hasattr(data, "payoffs"):  # NormalFormGame
        if data.num_players != 2 or data.shape[0] != data.shape[1]:
            raise ValueError(f"game must be a two-player game between the same agents; got shape {data.shape}.")
        u, v = data.payoffs
        names = data.strategy_names[0]
        if not np.allclose(v, u.T, atol=1e-9):
            raise ValueError("game must be symmetric (payoffs[1] == payoffs[0].T) for agent-vs-agent Nash averaging.")
        off = ~np.eye(u.shape[0], dtype=bool)
        if np.allclose(u + u.T, 0.0, atol=1e-9):
            a = _check_antisymmetric(u, "game.payoffs[0]")
        elif np.allclose((u + u.T)[off], 1.0, atol=1e-9) and u[off].min() >= 0 and u[off].max() <= 1:
            a = _from_win_probabilities(u, transform)
        else:
            raise ValueError(
                "game must be zero-sum (payoffs[0] antisymmetric) or hold win probabilities "
                "(payoffs[0] + payoffs[0].T == 1); rescale it, e.g. pass the antisymmetric part "
                "(U - U.T) / 2 as a matrix."
            )
    elif isinstance(data, pd.DataFrame) or matrix == "wins":
        if not (np.isfinite(smoothing) and smoothing >= 0):
            raise ValueError(f"smoothing must be a finite number >= 0; got {smoothing}.")
        counts = as_match_counts(data, draws, scores=scores, agents=agents, argname="data")
        names = counts.agents
        games = counts.games() + 2 * smoothing
        with np.errstate(invalid="ignore", divide="ignore"):
            p = (counts.scores() + smoothing) / games
        off = ~np.eye(len(names), dtype=bool)
        if np.any(games[off] == 0):
            raise ValueError("some pairs of agents never played; give every pair a match or use smoothing > 0.")
        np.fill_diagonal(p, 0.5)
        a = _from_win_probabilities(p, transform)
        return names, a
    else:
        try:
            arr = np.asarray(data, dtype=np.float64)
        except (ValueError, TypeError):
            raise TypeError(
                f"data must be an antisymmetric matrix, win probabilities, match records or a symmetric "
                f"game; got {type(data).__name__}."
            ) from None
        if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
            raise ValueError(f"data must be a square (n, n) matrix; got shape {arr.shape}.")
        if not np.all(np.isfinite(arr)):
            raise ValueError("data contains NaN or inf; every pair needs a finite evaluation.")
        names = tuple(range(arr.shape[0]))
        kind = matrix
        if kind == "auto":
            scale = max(1.0, float(np.abs(arr).max()))
            off = ~np.eye(arr.shape[0], dtype=bool)
            if np.abs(arr + arr.T).max() <= 1e-9 * scale:
                kind = "antisymmetric"
            elif np.allclose((arr + arr.T)[off], 1.0, atol=1e-9) and arr.min() >= 0 and arr.max() <= 1:
                kind = "win_probability"
            else:
                raise ValueError(
                    "data is neither antisymmetric (a == -a.T) nor win probabilities (P + P.T == 1). "
                    "For win counts pass matrix='wins' (and draws=...)."
                )
        a = _check_antisymmetric(arr, "data") if kind == "antisymmetric" else _from_win_probabilities(arr, transform)
    if agents is not None:
        if len(agents) != a.shape[0]:
            raise ValueError(f"agents has {len(agents)} labels but the matrix has {a.shape[0]} rows.")
        names = tuple(agents)
    return tuple(names), a


@dataclass(frozen=True, eq=False)
class AgentTaskNashAveraging:
    """Agent-versus-task Nash averaging: the agents' table and the tasks' table beside it.

    Attributes
    ----------
    agents : DataFrame
        Indexed by agent: ``nash`` (the max-entropy Nash mixture over agents) and
        ``rating`` (the agent's expected score against the tasks' Nash mixture).
    tasks : DataFrame
        Indexed by task: ``nash`` (the max-entropy Nash mixture over tasks) and
        ``rating`` (the task's difficulty: minus the Nash agents' expected score on it).
    value : float
        The value of the agents-versus-tasks game, ``x* . S y*``: every agent in
        the support rates ``value``, every task in the support rates ``-value``.
    scores : DataFrame
        The score table the game was solved on (after ``normalize``).
    """

    agents: pd.DataFrame
    tasks: pd.DataFrame
    value: float
    scores: pd.DataFrame


def agent_task_scores(data, *, normalize: Literal["per_task", "none"] = "per_task",
                      agents: Sequence | None = None, tasks: Sequence | None = None) -> pd.DataFrame:
    """The agents x tasks score table that agent-versus-task Nash averaging solves.

    Parameters
    ----------
    data : array_like (m, n), DataFrame, NormalFormGame or EmpiricalGame
        ``data[a, t]`` is agent ``a``'s score on task ``t`` (higher is better).
        A DataFrame gives the labels (index: agents, columns: tasks); a
        two-player zero-sum game gives ``payoffs[0]`` (the row player is the agents).
    normalize : {"per_task", "none"}
        ``"per_task"`` maps every task's scores to [0, 1] by its minimum and
        maximum over agents (as OpenSpiel does), so that no task weighs more by
        its units; ``"none"`` keeps the scores.
    agents, tasks : sequence, optional
        Labels (default: the DataFrame's, the game's strategy names or 0, 1, ...).

    Examples
    --------
    >>> agent_task_scores([[0.0, 10.0], [1.0, 20.0]]).to_numpy().tolist()
    [[0.0, 0.0], [1.0, 1.0]]
    """
    agent_names = task_names = None
    if hasattr(data, "mean_game"):
        data = data.mean_game()
    if hasattr(data, "payoffs"):  # NormalFormGame
        if data.num_players != 2:
            raise ValueError(f"game must have two players (agents, tasks); got {data.num_players}.")
        u, v = data.payoffs
        if not np.allclose(u + v, 0.0, atol=1e-9 * max(1.0, float(np.abs(u).max()))):
            raise ValueError("game must be zero-sum (payoffs[1] == -payoffs[0]): the tasks' payoff is minus the "
                             "agents' score. Pass the score table payoffs[0] instead.")
        arr = np.asarray(u, dtype=np.float64)
        agent_names, task_names = data.strategy_names
    elif isinstance(data, pd.DataFrame):
        try:
            arr = data.to_numpy(dtype=np.float64)
        except (ValueError, TypeError):
            raise TypeError("data must hold numeric scores (agents as rows, tasks as columns).") from None
        agent_names, task_names = tuple(data.index), tuple(data.columns)
    else:
        try:
            arr = np.asarray(data, dtype=np.float64)
        except (ValueError, TypeError):
            raise TypeError(f"data must be an (agents, tasks) table of scores; got {type(data).__name__}.") from None
    if arr.ndim != 2 or min(arr.shape) < 1:
        raise ValueError(f"data must be a 2-D (agents, tasks) score table; got shape {arr.shape}.")
    if not np.all(np.isfinite(arr)):
        raise ValueError("data contains NaN or inf; every agent needs a finite score on every task.")
    m, n = arr.shape
    agent_names = tuple(agents) if agents is not None else agent_names or tuple(range(m))
    task_names = tuple(tasks) if tasks is not None else task_names or tuple(range(n))
    if len(agent_names) != m or len(task_names) != n:
        raise ValueError(f"agents/tasks have {len(agent_names)}/{len(task_names)} labels but the table is {m} x {n}.")
    if normalize == "per_task":
        low, high = arr.min(axis=0), arr.max(axis=0)
        flat = np.flatnonzero(high - low <= 1e-12 * np.maximum(1.0, np.abs(high)))
        if flat.size:
            raise ValueError(
                f"task(s) {[task_names[t] for t in flat]} give every agent the same score, so per-task "
                "normalisation is undefined; drop them (they cannot tell agents apart) or pass normalize='none'."
            )
        arr = (arr - low) / (high - low)
    elif normalize != "none":
        raise ValueError(f"normalize must be 'per_task' or 'none'; got {normalize!r}.")
    return pd.DataFrame(arr, index=pd.Index(agent_names, name="agent"), columns=pd.Index(task_names, name="task"))


def _agent_task_nash(s: np.ndarray, method: str) -> tuple:
    """Max-entropy optimal strategies ``(x, y)`` of the zero-sum game where agents maximise ``s``.

    The symmetrisation whose strategies are (agent, task) pairs, with payoff
    ``s[a, t'] - s[a', t]`` of pair ``(a, t)`` against ``(a', t')``, is
    antisymmetric with value 0 exactly, and its optimal set is every ``p`` whose
    marginals are optimal for the two sides. Its max-entropy point is the
    product of the two sides' max-entropy optimal strategies, so they are its
    marginals.
    """
    m, n = s.shape
    pair = (s[:, None, None, :] - s.T[None, :, :, None]).reshape(m * n, m * n)  # [(a, t), (a', t')]
    p = max_entropy_nash(pair, method=method).reshape(m, n)
    return p.sum(axis=1), p.sum(axis=0)


def nash_averaging(
    data,
    draws=None,
    *,
    mode: Literal["agent_vs_agent", "agent_vs_task"] = "agent_vs_agent",
    normalize: Literal["per_task", "none"] = "per_task",
    tasks: Sequence | None = None,
    matrix: MatrixKind = "auto",
    transform: Literal["logit", "centered"] = "logit",
    smoothing: float = 0.01,
    method: Literal["exact", "cvxpy"] = "exact",
    scores: ScoreKind = "auto",
    agents: Sequence | None = None,
) -> pd.DataFrame:
    """Nash averaging: the max-entropy Nash of the evaluation game and each agent's payoff against it.

    Parameters
    ----------
    data : array_like (n, n), DataFrame, NormalFormGame or EmpiricalGame
        An antisymmetric matrix ``A`` (``A[i, j]``: how much ``i`` beats ``j``),
        win probabilities ``P`` (``P + P.T = 1``), win counts (``matrix="wins"``,
        with ``draws``), match records, or a symmetric two-player game (zero-sum:
        ``A = payoffs[0]``; win probabilities: transformed).
    draws : array_like (n, n), optional
        Symmetric draw counts, with win counts.
    matrix : {"auto", "antisymmetric", "win_probability", "wins"}
        How to read a square array; ``"auto"`` tells antisymmetric matrices and
        win probabilities apart (counts must be named with ``"wins"``).
    transform : {"logit", "centered"}
        ``A = logit(P)`` (the paper's choice) or ``A = P - 1/2``.
    smoothing : float
        Pseudo-wins per ordered pair when ``P`` is estimated from counts.
    method : {"exact", "cvxpy"}
        Solver for the max-entropy Nash; see :func:`max_entropy_nash`.
    scores, agents
        As in :func:`ranking.elo`.
    mode : {"agent_vs_agent", "agent_vs_task"}
        ``"agent_vs_task"`` (Balduzzi et al. 2018, appendix D; OpenSpiel's
        ``a_v_a=False``): ``data`` is an agents x tasks score table (see
        :func:`agent_task_scores`), agents maximise the score and tasks minimise
        it, and the result is the max-entropy Nash of that zero-sum game.
        ``draws``, ``matrix``, ``transform``, ``smoothing`` and ``scores`` do
        not apply. Its cost grows with ``(agents * tasks) ** 2``.
    normalize, tasks
        Agent-vs-task only: see :func:`agent_task_scores`.

    Returns
    -------
    DataFrame or AgentTaskNashAveraging
        Agent-vs-agent: indexed by agent, ``nash`` (the max-entropy Nash
        probability) and ``rating`` (``(A p)_i``, the Nash-averaged skill; 0 on
        the support). Agent-vs-task: an :class:`AgentTaskNashAveraging`, whose
        ``agents`` table has the same columns and whose ``tasks`` table is beside it.

    Examples
    --------
    >>> a = [[0, 1, 1], [-1, 0, 1], [-1, -1, 0]]  # transitive: 0 beats everyone
    >>> nash_averaging(a).round(9).values.tolist()
    [[1.0, 0.0], [0.0, -1.0], [0.0, -1.0]]

    Agents against tasks: each of two specialists solves one task; a third
    solves half of both. Every agent in the support rates the game's value.

    >>> avt = nash_averaging([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]], mode="agent_vs_task")
    >>> avt.agents.round(9).values.tolist()
    [[0.333333333, 0.5], [0.333333333, 0.5], [0.333333333, 0.5]]
    >>> avt.tasks["nash"].round(9).tolist(), round(avt.value, 9)
    ([0.5, 0.5], 0.5)
    """
    if mode == "agent_vs_task":
        if draws is not None:
            raise ValueError("draws does not apply to mode='agent_vs_task'; pass the score table alone.")
        table = agent_task_scores(data, normalize=normalize, agents=agents, tasks=tasks)
        s = table.to_numpy()
        x, y = _agent_task_nash(s, method)
        value = float(x @ s @ y)
        return AgentTaskNashAveraging(
            agents=pd.DataFrame({"nash": x, "rating": s @ y}, index=table.index),
            tasks=pd.DataFrame({"nash": y, "rating": -(x @ s)}, index=table.columns),
            value=value, scores=table)
    if mode != "agent_vs_agent":
        raise ValueError(f"mode must be 'agent_vs_agent' or 'agent_vs_task'; got {mode!r}.")
    names, a = antisymmetric_payoffs(data, draws, matrix=matrix, transform=transform, smoothing=smoothing,
                                     scores=scores, agents=agents)
    p = max_entropy_nash(a, method=method)
    return pd.DataFrame({"nash": p, "rating": a @ p}, index=pd.Index(names, name="agent"))
