"""Regret measures, computed independently of any solver.

All functions are vectorised over players and profiles and work for any
number of players.
"""

from __future__ import annotations

import numpy as np

from games.normal_form import NormalFormGame, as_game

__all__ = [
    "nash_conv",
    "nash_conv_per_player",
    "cce_gap",
    "cce_gains",
    "ce_gap",
    "ce_gains",
    "ce_gain_matrices",
]


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
    dev = game.deviation_payoffs(marginals)
    return np.array([max(0.0, float(d.max() - d @ m)) for d, m in zip(dev, marginals)])


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


def _moveaxis_payoff(game: NormalFormGame, p: int) -> np.ndarray:
    """Player p's payoff table with p's axis first, flattened to ``(k_p, prod(k_-p))``."""
    u = np.moveaxis(game.payoffs[p], p, 0)
    return u.reshape(u.shape[0], -1)


def ce_gain_matrices(game, joint) -> list:
    """``G[p][a, b]``: player p's gain from playing ``b`` whenever ``a`` is recommended.

    ``G[p][a, b] = sum_{s_-p} joint(a, s_-p) (u_p(b, s_-p) - u_p(a, s_-p))``.
    """
    game = as_game(game)
    joint = game.check_joint(joint)
    out = []
    for p in range(game.num_players):
        u = _moveaxis_payoff(game, p)  # (k, m)
        x = np.moveaxis(joint, p, 0).reshape(u.shape[0], -1)  # (k, m)
        # gains[a, b] = sum_s x[a, s] * (u[b, s] - u[a, s])
        gains = x @ u.T - (x * u).sum(axis=1)[:, None]
        out.append(gains)
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
    joint = game.check_joint(joint)
    out = np.empty(game.num_players)
    for p in range(game.num_players):
        u = _moveaxis_payoff(game, p)
        x = np.moveaxis(joint, p, 0).reshape(u.shape[0], -1)
        others = x.sum(axis=0)  # distribution over the others' profiles
        out[p] = max(0.0, float((u @ others).max() - (x * u).sum()))
    return out


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
