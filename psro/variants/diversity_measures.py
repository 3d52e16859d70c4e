"""The diversity measures of diversity-aware PSRO, as pure functions on arrays.

A population's *payoff vectors* are the rows of ``M`` (``k x K``): each member's expected payoff against each of
the opponent's ``K`` members. On them:

- :func:`expected_cardinality`: the expected size of a sample of the determinantal point process with L-ensemble
  ``L = M M^T`` (Perez-Nieves et al. 2021), ``trace(I - (L + I)^{-1})``; :func:`dpp_gain`: how much one more
  row raises it;
- :func:`hull_distance`: the squared Euclidean distance of a new payoff vector to the convex hull of the rows
  (Liu et al. 2021's response diversity);
- :func:`terminal_distributions` and :func:`total_variation`: a policy's distribution over the terminal histories
  of the game tree when it plays against a fixed opponent mixture (its occupancy measure over whole
  trajectories), and the total-variation distance between two of them (the behavioural diversity used here).

:func:`payoff_rows` computes payoff vectors exactly on a game tree from realization plans.
"""

from __future__ import annotations

import numpy as np

__all__ = ["expected_cardinality", "dpp_gain", "hull_distance", "total_variation", "payoff_rows",
           "terminal_distributions"]


def expected_cardinality(rows: np.ndarray) -> float:
    """``trace(I - (L + I)^{-1})`` with ``L = rows rows^T``: the expected cardinality of the DPP over the rows.

    Examples
    --------
    >>> round(expected_cardinality(np.array([[1.0, 0.0]])), 12)            # ||m||^2 / (1 + ||m||^2)
    0.5
    >>> round(expected_cardinality(np.array([[1.0, 0.0], [0.0, 1.0]])), 12)   # orthogonal: 1/2 + 1/2
    1.0
    >>> expected_cardinality(np.zeros((0, 3)))
    0.0
    """
    rows = np.asarray(rows, dtype=np.float64)
    k = rows.shape[0]
    if k == 0:
        return 0.0
    kernel = rows @ rows.T
    inverse = np.linalg.solve(kernel + np.eye(k), np.eye(k))
    return float(k - np.trace(inverse))


def dpp_gain(rows: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """Per candidate row, ``expected_cardinality(rows + [candidate]) - expected_cardinality(rows)``.

    Examples
    --------
    >>> dpp_gain(np.array([[1.0, 0.0]]), np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 0.0]])).round(6).tolist()
    [0.5, 0.166667, 0.0]
    """
    rows = np.asarray(rows, dtype=np.float64)
    base = expected_cardinality(rows)
    return np.array([expected_cardinality(np.vstack([rows, c[None]])) - base
                     for c in np.asarray(candidates, dtype=np.float64)])


def hull_distance(rows: np.ndarray, point: np.ndarray) -> float:
    """``min ||beta^T rows - point||^2`` over the probability simplex: the squared distance of ``point`` to the
    convex hull of the rows (0 inside it).

    The simplex-constrained least squares is solved as a non-negative least squares with the constraint
    ``sum(beta) = 1`` as a heavily weighted extra row; the weights found are renormalised, so the value is the
    squared distance to a point of the hull (an upper bound, accurate to ~1e-9 of the payoff scale).

    Examples
    --------
    >>> square = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> round(hull_distance(square, np.array([0.5, 0.5])), 9), round(hull_distance(square, np.array([2.0, 0.5])), 9)
    (0.0, 1.0)
    >>> round(hull_distance(np.array([[1.0, 0.0], [0.0, 1.0]]), np.zeros(2)), 9)   # to the segment's midpoint
    0.5
    """
    from scipy.optimize import nnls

    rows = np.asarray(rows, dtype=np.float64)
    point = np.asarray(point, dtype=np.float64)
    weight = 1e4 * (1.0 + float(np.abs(rows).max(initial=0.0)) + float(np.abs(point).max(initial=0.0)))
    system = np.vstack([rows.T, np.full((1, rows.shape[0]), weight)])
    beta, _ = nnls(system, np.append(point, weight), maxiter=50 * max(rows.shape[0], 10))
    beta = beta / beta.sum()
    return float(np.sum((beta @ rows - point) ** 2))


def total_variation(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Half the L1 distance between distributions along the last axis (broadcast).

    Examples
    --------
    >>> float(total_variation(np.array([1.0, 0.0]), np.array([0.5, 0.5])))
    0.5
    """
    return 0.5 * np.abs(np.asarray(p) - np.asarray(q)).sum(axis=-1)


def payoff_rows(tree, player: int, own_plans: np.ndarray, opponent_plans: np.ndarray) -> np.ndarray:
    """``rows[i, j]``: ``player``'s expected payoff when it plays realization plan ``own_plans[i]`` and its (one)
    opponent ``opponent_plans[j]``, chance included: ``sum_z c(z) u(z) x_i(s_p(z)) y_j(s_q(z))``.

    Examples
    --------
    >>> from games import catalog
    >>> from psro import PSRO
    >>> tree = PSRO(catalog.rock_paper_scissors(), progress=False).tree
    >>> from psro.policies import realization_plans
    >>> plans = [realization_plans(np.eye(3)[:, None, :], tree.infostates[p]) for p in range(2)]
    >>> payoff_rows(tree, 0, plans[0], plans[1]).tolist()      # rock, paper, scissors against each
    [[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]]
    """
    q = 1 - player
    weights = tree.terminal_chance * tree.terminal_returns[:, player]
    own = np.asarray(own_plans)[:, tree.terminal_sequence[player]] * weights
    return own @ np.asarray(opponent_plans)[:, tree.terminal_sequence[q]].T


def terminal_distributions(tree, player: int, own_plans: np.ndarray, opponent_plan: np.ndarray) -> np.ndarray:
    """Per own plan, the distribution over the tree's terminal histories when ``player`` plays it and the opponent
    plays the (mixed) realization plan ``opponent_plan``: ``c(z) x_i(s_p(z)) y(s_q(z))``.

    Examples
    --------
    >>> from games import catalog
    >>> from psro import PSRO
    >>> tree = PSRO(catalog.matching_pennies(), progress=False).tree
    >>> from psro.policies import realization_plans
    >>> x = realization_plans(np.eye(2)[:, None, :], tree.infostates[0])
    >>> y = realization_plans(np.full((1, 1, 2), 0.5), tree.infostates[1])[0]
    >>> terminal_distributions(tree, 0, x, y).sum(axis=1).tolist()
    [1.0, 1.0]
    """
    q = 1 - player
    opponent = tree.terminal_chance * np.asarray(opponent_plan)[tree.terminal_sequence[q]]
    return np.asarray(own_plans)[:, tree.terminal_sequence[player]] * opponent
