"""Listing the Nash equilibria of a two-player game.

:func:`all_equilibria` uses support enumeration when the game is small enough,
and the Lemke-Howson equilibria from every starting label otherwise (or in
addition, which covers degenerate games);
:func:`solvers.nash.nash_selection.select_equilibrium` then chooses one of them.
"""

from __future__ import annotations

from games.normal_form import NormalFormGame
from solvers.nash.bimatrix import bimatrix_of, same_profile
from solvers.nash.lemke_howson import lemke_howson_equilibria
from solvers.nash.support_enumeration import DEFAULT_MAX_PAIRS, enumerate_supports, support_pairs
from solvers.registry import make_equilibrium

__all__ = ["all_equilibria"]


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
        :data:`solvers.nash.support_enumeration.DEFAULT_MAX_PAIRS`).
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
