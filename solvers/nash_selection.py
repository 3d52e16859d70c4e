"""Listing the Nash equilibria of a two-player game and choosing one of them.

:func:`all_equilibria` uses support enumeration when the game is small enough,
and the Lemke-Howson equilibria from every starting label otherwise (or in
addition, which covers degenerate games). :func:`select_equilibrium` picks
the first, the one with the largest total payoff, or the one with the largest
total entropy of the players' strategies.
"""

from __future__ import annotations

import logging

import numpy as np

from games.normal_form import NormalFormGame
from solvers.bimatrix import bimatrix_of, same_profile
from solvers.equilibrium import Equilibrium
from solvers.registry import make_equilibrium

__all__ = ["SELECTIONS", "all_equilibria", "select_equilibrium", "equilibria_from_profiles"]

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
    >>> eqs = all_equilibria(catalog.stag_hunt())
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


def all_equilibria(game: NormalFormGame, method: str = "auto", max_pairs: int | None = None,
                   tol: float = 1e-9) -> list:
    """The Nash equilibria of a two-player game that the exact methods find.

    Parameters
    ----------
    game : NormalFormGame
        A two-player game.
    method : {"auto", "support_enumeration", "lemke_howson"}
        ``"auto"``: support enumeration when the number of support pairs is at
        most ``max_pairs``, followed by the Lemke-Howson equilibria from every
        label that it did not already list (these matter only in degenerate
        games); otherwise Lemke-Howson alone.
    max_pairs : int, optional
        Support-pair limit of the enumeration (default
        :data:`solvers.support_enumeration.DEFAULT_MAX_PAIRS`).
    tol : float
        Scale-aware verification tolerance.

    Returns
    -------
    list of Equilibrium
        All equilibria of a nondegenerate game when enumerated; with
        Lemke-Howson, those reachable from the ``k1 + k2`` starting labels.

    Examples
    --------
    >>> from games import catalog
    >>> eqs = all_equilibria(catalog.bach_or_stravinsky())
    >>> [e.values.round(6).tolist() for e in eqs]
    [[3.0, 2.0], [2.0, 3.0], [1.2, 1.2]]
    """
    from solvers.lemke_howson import lemke_howson_equilibria
    from solvers.support_enumeration import DEFAULT_MAX_PAIRS, enumerate_supports, support_pairs

    if method not in ("auto", "support_enumeration", "lemke_howson"):
        raise ValueError(f"method must be 'auto', 'support_enumeration' or 'lemke_howson'; got {method!r}.")
    a, b = bimatrix_of(game)
    max_pairs = DEFAULT_MAX_PAIRS if max_pairs is None else int(max_pairs)
    enumerate_ = method == "support_enumeration" or (
        method == "auto" and support_pairs(*a.shape) <= max_pairs)
    profiles, origin = [], []
    if enumerate_:
        profiles = enumerate_supports(a, b, max_pairs=max_pairs, tol=tol)
        origin = ["support_enumeration"] * len(profiles)
    if method != "support_enumeration" or not profiles:
        for path in lemke_howson_equilibria(a, b, tol=tol):
            if not any(same_profile((path.x, path.y), p) for p in profiles):
                profiles.append((path.x, path.y))
                origin.append("lemke_howson")
    return [make_equilibrium(game, marginals=list(p), concept="nash", method=m, info={"converged": True})
            for p, m in zip(profiles, origin)]
