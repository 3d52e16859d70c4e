"""Regret measures, computed independently of any solver.

All functions are vectorised over players and profiles and work for any
number of players.
"""

from __future__ import annotations

import numpy as np

from games.normal_form import as_game

__all__ = [
    "nash_conv",
    "nash_conv_per_player",
    "cce_gap",
    "cce_gains",
    "ce_gap",
    "ce_gains",
    "ce_gain_matrices",
    "player_gains",
    "deviation_payoffs",
    "deviation_gains",
]


def deviation_gains(deviations, marginals) -> np.ndarray:
    """Each player's best-deviation gain from their deviation payoffs: ``max(0, max_a d_p[a] - d_p . x_p)``.

    The one place the NashConv terms are computed: :func:`nash_conv_per_player`,
    :func:`player_gains` and the solvers that already hold deviation payoffs
    (dynamics, the n-player Nash search) all call it. The array keeps the
    precision of the deviations (``longdouble`` stays ``longdouble``).

    Examples
    --------
    >>> deviation_gains([np.array([1.0, 0.0]), np.array([2.0, 2.0])], [np.array([0.5, 0.5]), np.array([1.0, 0.0])])
    array([0.5, 0. ])
    """
    dtype = np.result_type(np.float64, *deviations)
    return np.array([max(0.0, d.max() - d @ x) for d, x in zip(deviations, marginals)], dtype=dtype)


def nash_conv_per_player(game, marginals) -> np.ndarray:
    """Each player's best-deviation gain against the others' mixed strategies.

    Examples
    --------
    >>> import numpy as np
    >>> from games import catalog
    >>> nash_conv_per_player(catalog.matching_pennies(), [np.array([1.0, 0]), np.array([1.0, 0])])
    array([0., 2.])
    """
    game = as_game(game)
    marginals = game.check_marginals(marginals)
    return deviation_gains(game.deviation_payoffs(marginals), marginals)


def nash_conv(game, marginals) -> float:
    """NashConv: the sum over players of the best-deviation gains.

    Zero exactly at a Nash equilibrium.

    Examples
    --------
    >>> import numpy as np
    >>> from games import catalog
    >>> nash_conv(catalog.rock_paper_scissors(), [np.ones(3) / 3] * 2)
    0.0
    """
    return float(nash_conv_per_player(game, marginals).sum())


def _own_axis_first(table: np.ndarray, p: int) -> np.ndarray:
    """Player p's payoff table with p's axis first, flattened to ``(k_p, prod(k_-p))``."""
    u = np.moveaxis(table, p, 0)
    return u.reshape(u.shape[0], -1)


def _gain_matrices(payoffs: np.ndarray, joint: np.ndarray) -> list:
    """:func:`ce_gain_matrices` on raw arrays, in the arrays' own precision."""
    out = []
    for p in range(payoffs.shape[0]):
        u = _own_axis_first(payoffs[p], p)  # (k, m)
        x = np.moveaxis(joint, p, 0).reshape(u.shape[0], -1)  # (k, m)
        # gains[a, b] = sum_s x[a, s] * (u[b, s] - u[a, s])
        out.append(x @ u.T - (x * u).sum(axis=1)[:, None])
    return out


def ce_gain_matrices(game, joint) -> list:
    """``G[p][a, b]``: player p's gain from playing ``b`` whenever ``a`` is recommended.

    ``G[p][a, b] = sum_{s_-p} joint(a, s_-p) (u_p(b, s_-p) - u_p(a, s_-p))``.
    """
    game = as_game(game)
    return _gain_matrices(game.payoffs, game.check_joint(joint))


def player_gains(payoffs: np.ndarray, concept: str, joint: np.ndarray, marginals=None) -> np.ndarray:
    """Each player's regret under ``concept``, on raw arrays and in their own precision.

    The dtype of ``payoffs`` decides the arithmetic, so ``np.longdouble``
    inputs give an extended-precision check; nothing is validated here.

    Parameters
    ----------
    payoffs : ndarray, shape (num_players, k_1, ..., k_n)
    concept : str
        ``"ce"`` (swap deviations), ``"cce"`` (coarse deviations) or anything
        else (best-deviation gains against the marginals, as in NashConv).
    joint : ndarray, shape (k_1, ..., k_n)
    marginals : sequence of ndarray, optional
        Used by the product measure; the marginals of ``joint`` by default.

    Examples
    --------
    >>> import numpy as np
    >>> u = np.array([[[1.0, -1], [-1, 1]], [[-1.0, 1], [1, -1]]])   # matching pennies
    >>> player_gains(u, "nash", np.array([[1.0, 0], [0, 0]])).tolist()
    [0.0, 2.0]
    >>> player_gains(u.astype(np.longdouble), "cce", np.full((2, 2), 0.25)).tolist()
    [0.0, 0.0]
    """
    n = payoffs.shape[0]
    if concept == "ce":
        return np.array([np.maximum(g.max(axis=1), 0).sum() for g in _gain_matrices(payoffs, joint)])
    if concept == "cce":
        out = []
        for p in range(n):
            u = _own_axis_first(payoffs[p], p)
            x = np.moveaxis(joint, p, 0).reshape(u.shape[0], -1)
            out.append(max((u @ x.sum(axis=0)).max() - (x * u).sum(), 0))
        return np.array(out)
    if marginals is None:
        marginals = [joint.sum(axis=tuple(q for q in range(n) if q != p)) for p in range(n)]
    return deviation_gains(deviation_payoffs(payoffs, marginals), marginals)


def deviation_payoffs(payoffs: np.ndarray, marginals) -> list:
    """``out[p][a]``: player p's payoff for ``a`` against the others' mixtures, in the arrays' precision.

    Examples
    --------
    >>> import numpy as np
    >>> u = np.array([[[1.0, -1], [-1, 1]], [[-1.0, 1], [1, -1]]])
    >>> deviation_payoffs(u, [np.array([1.0, 0]), np.array([0.25, 0.75])])[0].tolist()
    [-0.5, 0.5]
    """
    out = []
    n = payoffs.shape[0]
    for p in range(n):
        d = payoffs[p]
        for q in range(n - 1, -1, -1):  # contract every other player's axis, the last first
            if q != p:
                d = np.tensordot(d, marginals[q], axes=([q], [0]))
        out.append(d)
    return out


def ce_gains(game, joint) -> np.ndarray:
    """Each player's best swap-deviation gain: ``sum_a max(0, max_b G[p][a, b])``."""
    return np.array([float(np.maximum(g.max(axis=1), 0.0).sum()) for g in ce_gain_matrices(game, joint)])


def ce_gap(game, joint) -> float:
    """The correlated-equilibrium gap: the sum over players of :func:`ce_gains`.

    Each player's term is its largest gain under the CE deviation model (one
    deviation per recommended strategy). This is the sum of per-recommendation
    best-response gaps that JPSRO reports. Zero exactly at a CE.

    Examples
    --------
    >>> import numpy as np
    >>> from games import catalog
    >>> j = np.array([[0.0, 0.25], [0.25, 0.5]])  # the max-welfare CE of chicken
    >>> ce_gap(catalog.chicken(), j)
    0.0
    """
    return float(ce_gains(game, joint).sum())


def cce_gains(game, joint) -> np.ndarray:
    """Each player's best coarse-deviation gain: ``max(0, max_b u_p(b, joint_-p) - u_p(joint))``."""
    game = as_game(game)
    return player_gains(game.payoffs, "cce", game.check_joint(joint)).astype(np.float64)


def cce_gap(game, joint) -> float:
    """The coarse-correlated-equilibrium gap: the sum over players of :func:`cce_gains`.

    Examples
    --------
    >>> import numpy as np
    >>> from games import catalog
    >>> cce_gap(catalog.matching_pennies(), np.full((2, 2), 0.25))
    0.0
    """
    return float(cce_gains(game, joint).sum())
