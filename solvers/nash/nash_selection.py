"""Choosing one Nash equilibrium among several.

:func:`select_equilibrium` picks the first, the one with the largest total
payoff, or the one with the largest total entropy of the players' strategies;
:func:`equilibria_from_profiles` wraps the profiles an exact method lists as
:class:`~solvers.equilibrium.Equilibrium` objects. The methods that list
equilibria (:mod:`solvers.nash.support_enumeration`,
:func:`solvers.nash.nash_enumeration.all_equilibria`) import this module, never the
other way round.
"""

from __future__ import annotations

import logging

import numpy as np

from games.normal_form import NormalFormGame
from solvers.equilibrium import Equilibrium
from solvers.registry import make_equilibrium

__all__ = ["SELECTIONS", "select_equilibrium", "equilibria_from_profiles"]

logger = logging.getLogger(__name__)

SELECTIONS = ("first", "max_welfare", "max_entropy")


def equilibria_from_profiles(game: NormalFormGame, profiles: list, method: str) -> list:
    """Wrap ``(x, y)`` profiles as :class:`Equilibrium` objects (gap computed independently).

    Examples
    --------
    >>> from games import catalog
    >>> eqs = equilibria_from_profiles(catalog.prisoners_dilemma(), [(np.array([0, 1.0]),) * 2], "manual")
    >>> eqs[0].values.tolist()
    [-2.0, -2.0]
    """
    return [make_equilibrium(game, marginals=list(p), concept="nash", method=method,
                             info={"converged": True}) for p in profiles]


def _entropy(eq: Equilibrium) -> float:
    total = 0.0
    for m in eq.marginals:
        p = m[m > 0]
        total -= float(p @ np.log(p))
    return total


def select_equilibrium(equilibria: list, select: str = "first") -> Equilibrium:
    """Choose one equilibrium from a non-empty list; the full list goes to ``info["equilibria"]``.

    Parameters
    ----------
    equilibria : list of Equilibrium
    select : {"first", "max_welfare", "max_entropy"}
        ``"max_welfare"`` maximises the sum of the players' values,
        ``"max_entropy"`` the sum of the entropies of their strategies. Ties
        go to the earlier equilibrium.

    Examples
    --------
    >>> from games import catalog
    >>> game = catalog.stag_hunt()
    >>> pure = [np.array([1.0, 0.0]), np.array([0.0, 1.0])]
    >>> eqs = equilibria_from_profiles(game, [(pure[1], pure[1]), (pure[0], pure[0])], "manual")
    >>> select_equilibrium(eqs, "max_welfare").values.tolist()
    [4.0, 4.0]
    """
    if select not in SELECTIONS:
        raise ValueError(f"select must be one of {SELECTIONS}; got {select!r}.")
    if not equilibria:
        raise ValueError("equilibria is empty: there is nothing to select from.")
    if select == "first":
        idx = 0
    elif select == "max_welfare":
        scores = [float(np.sum(e.values)) for e in equilibria]
        idx = int(np.argmax(np.round(scores, 12)))
    else:
        scores = [_entropy(e) for e in equilibria]
        idx = int(np.argmax(np.round(scores, 12)))
    chosen = equilibria[idx]
    info = dict(chosen.info)
    info.update(select=select, equilibria=list(equilibria), num_equilibria=len(equilibria))
    return Equilibrium(joint=chosen.joint, marginals=chosen.marginals, concept=chosen.concept,
                       method=chosen.method, gap=chosen.gap, values=chosen.values, info=info)
