"""Best-response targets from a meta-game solution: the others' product mixture (PSRO), the conditional joint
(CCE-JPSRO) or one conditional per recommended policy (CE-JPSRO)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from psro.oracles.base import Target

__all__ = ["SUPPORT_TOL", "meta_targets"]


SUPPORT_TOL = 1e-12  # joint-target entries at or below this probability are dropped (solver round-off)


def meta_targets(solution, kind: str, populations: Sequence, payoffs: np.ndarray, player: int) -> list:
    """The best-response targets of ``player`` that a meta-game solution defines.

    Parameters
    ----------
    solution : solvers.Equilibrium
        The meta-strategy (``marginals`` for product kinds, ``joint`` for JPSRO).
    kind : {"product", "cce", "ce"}
        ``"product"``: one target, the others' marginals (Nash-style PSRO).
        ``"cce"``: one target, the joint's marginal over the others' profiles.
        ``"ce"``: one target per recommended policy ``i`` of ``player`` with
        positive mass: the others' profiles conditioned on ``player`` being
        recommended ``i``.
    populations : sequence of Population
    payoffs : ndarray, shape (num_players, k_1, ..., k_n)
        The meta-game payoffs (for each target's on-policy value).
    player : int

    Returns
    -------
    list of Target

    Examples
    --------
    >>> import numpy as np
    >>> from games import catalog
    >>> from solvers import make_equilibrium
    >>> game = catalog.matching_pennies()
    >>> eq = make_equilibrium(game, joint=np.array([[0.5, 0.0], [0.0, 0.5]]), concept="ce", method="example")
    >>> [(t.recommendation, t.mass, t.profiles.tolist(), t.on_policy_value)
    ...  for t in meta_targets(eq, "ce", [None, None], game.payoffs, 0)]
    [(0, 0.5, [[0, 0]], 1.0), (1, 0.5, [[1, 1]], 1.0)]
    """
    n = payoffs.shape[0]
    if kind == "product":
        return [Target(player=player, populations=populations, mixtures=tuple(solution.marginals),
                       on_policy_value=float(solution.values[player]))]
    joint = np.asarray(solution.joint, dtype=np.float64)
    if kind == "cce":
        others = joint.sum(axis=player, keepdims=True)          # shape 1 along the responder's axis
        return [_joint_target(player, populations, others, payoffs, mass=1.0, value=float(solution.values[player]))]
    if kind == "ce":
        masses = joint.sum(axis=tuple(q for q in range(n) if q != player))
        targets = []
        for i in np.flatnonzero(masses > SUPPORT_TOL):
            conditional = np.take(joint, [i], axis=player) / masses[i]
            value = float(np.sum(conditional * np.take(payoffs[player], [i], axis=player)))
            targets.append(_joint_target(player, populations, conditional, payoffs, mass=float(masses[i]),
                                         value=value, recommendation=int(i)))
        return targets
    raise ValueError(f"kind must be 'product', 'cce' or 'ce'; got {kind!r}.")


def _joint_target(player, populations, dist, payoffs, mass, value, recommendation=None) -> Target:
    """A joint target from a distribution with a length-1 responder axis; ``recommendation`` fills that column."""
    profiles = np.argwhere(dist > SUPPORT_TOL)
    weights = dist[tuple(profiles.T)]
    profiles[:, player] = 0 if recommendation is None else recommendation
    return Target(player=player, populations=populations, profiles=profiles, weights=weights / weights.sum(),
                  recommendation=recommendation, mass=mass, on_policy_value=value)
