"""All extreme Nash equilibria of a bimatrix game, by vertex enumeration.

With both payoff matrices rescaled to ``[1, 2]`` (equilibria do not change
under a positive affine map of each player's payoffs), the best-response
polytopes are

    P = {x in R^m : x >= 0, B^T x <= 1},     Q = {y in R^n : A y <= 1, y >= 0}.

A point of ``P`` has label ``i`` (a row) when ``x_i = 0`` and label ``m + j``
(a column) when ``(B^T x)_j = 1``; a point of ``Q`` has label ``i`` when
``(A y)_i = 1`` and ``m + j`` when ``y_j = 0``. A pair ``(x, y) != (0, 0)``
whose labels cover all ``m + n`` is an equilibrium after normalising
``x / sum(x)``, ``y / sum(y)``; the *extreme* equilibria (the vertices of the
maximal Nash subsets, the ones that generate every equilibrium of a
degenerate game as convex combinations) are exactly the completely labelled
pairs of vertices (Avis, Rosenberg, Savani and von Stengel 2010). Unlike
support enumeration, this finds the vertices of equilibrium components with
supports of unequal size.

Vertices are found by solving, for every choice of ``m`` (resp. ``n``) of the
``m + n`` inequalities, the system that makes them tight (batched LU
factorisations); the feasible solutions, without repeats, are the vertices.
The work grows as ``C(m + n, m)``; ``max_bases`` guards it.
"""

from __future__ import annotations

import itertools
import logging
from math import comb

import numpy as np

from games.normal_form import NormalFormGame
from solvers.nash.bimatrix import bimatrix_of, normalised, same_profile, scaled_regrets
from solvers.rational import DEFAULT_MAX_DENOMINATOR, verified
from solvers.registry import make_equilibrium

__all__ = ["DEFAULT_MAX_BASES", "polytope_vertices", "vertex_enumeration"]

logger = logging.getLogger(__name__)

DEFAULT_MAX_BASES = 2_000_000
_CHUNK = 20_000  # bases solved per batch
_TOL = 1e-9  # feasibility and tightness, in the rescaled payoffs' units


def polytope_vertices(g: np.ndarray, h: np.ndarray, tol: float = _TOL) -> np.ndarray:
    """The vertices of the bounded polytope ``{z : g z <= h}`` (each once), in enumeration order.

    Parameters
    ----------
    g : ndarray, shape (c, d)
        Constraint matrix (``c >= d`` inequalities).
    h : ndarray, shape (c,)
        Right-hand sides.
    tol : float
        Feasibility tolerance.

    Returns
    -------
    ndarray, shape (num_vertices, d)

    Examples
    --------
    >>> # the unit square 0 <= z <= 1
    >>> g = np.array([[-1.0, 0], [0, -1], [1, 0], [0, 1]])
    >>> polytope_vertices(g, np.array([0.0, 0, 1, 1])).tolist()
    [[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]
    """
    c, d = g.shape
    bases = itertools.combinations(range(c), d)
    found = []
    while True:
        chunk = np.array(list(itertools.islice(bases, _CHUNK)), dtype=np.intp)
        if len(chunk) == 0:
            break
        sub = g[chunk]  # (batch, d, d)
        rhs = h[chunk][..., None]  # (batch, d, 1)
        try:
            z = np.linalg.solve(sub, rhs)[..., 0]
        except np.linalg.LinAlgError:  # an exactly singular basis in the batch: solve the others
            keep = np.linalg.slogdet(sub)[0] != 0
            sub, rhs = sub[keep], rhs[keep]
            z = np.linalg.solve(sub, rhs)[..., 0] if keep.any() else np.zeros((0, d))
        feasible = np.all(np.isfinite(z), axis=1)
        feasible[feasible] = np.all(z[feasible] @ g.T <= h + tol, axis=1)
        found.append(z[feasible])
    if not found:
        return np.zeros((0, d))
    verts = np.concatenate(found)
    _, first = np.unique(np.round(verts, 9), axis=0, return_index=True)
    verts = verts[np.sort(first)]
    # A point is a vertex when its tight constraints have full rank; this drops the points that a
    # nearly singular basis put on a face (numpy's rank tolerance, relative to the largest singular value).
    tight = np.abs(verts @ g.T - h) <= tol
    full_rank = np.array([np.linalg.matrix_rank(g[t]) == d for t in tight], dtype=bool)
    return verts[full_rank] + 0.0  # no negative zeros


def _label_masks(g: np.ndarray, h: np.ndarray, verts: np.ndarray, label_of_row: np.ndarray,
                 tol: float) -> np.ndarray:
    """Each vertex's labels as a bit mask (``label_of_row[r]`` is constraint r's label)."""
    tight = np.abs(verts @ g.T - h) <= tol  # (v, c)
    weights = np.left_shift(np.uint64(1), label_of_row.astype(np.uint64))
    return (tight * weights[None, :]).sum(axis=1, dtype=np.uint64)


def vertex_enumeration(game: NormalFormGame, verify: str | None = None, payoffs=None,
                       max_denominator: int = DEFAULT_MAX_DENOMINATOR,
                       max_bases: int = DEFAULT_MAX_BASES) -> list:
    """Every extreme Nash equilibrium of a two-player game, degenerate games included.

    Parameters
    ----------
    game : NormalFormGame
        A two-player game.
    verify : {None, "exact"}
        ``"exact"``: certify each equilibrium in rational arithmetic
        (:func:`solvers.rational.verified`; integer or rational payoffs).
        ``info["certificate"]`` then holds the exact profile and its exact
        regrets (zero), and ``info["certified"]`` the verdict.
    payoffs : array_like, optional
        Exact payoffs for ``verify="exact"`` when the floats are not exact.
    max_denominator : int
        For reading float payoffs as fractions under ``verify="exact"``.
    max_bases : int
        Refuse (``ValueError``) games needing more than this many bases
        (``C(m + n, m)`` per polytope).

    Returns
    -------
    list of Equilibrium
        Concept ``"nash"``, method ``"vertex_enumeration"``, ordered by the
        total support size, then lexicographically with larger probabilities
        on earlier strategies first.

    Examples
    --------
    >>> from games import NormalFormGame
    >>> # Gambit's e02.nfg (Selten 1975, figure 2): a continuum with two extreme points
    >>> g = NormalFormGame.from_bimatrix([[1, 1], [0, 0], [0, 2]], [[1, 1], [2, 3], [2, 0]])
    >>> eqs = vertex_enumeration(g, verify="exact")
    >>> [[str(p) for m in e.info["certificate"].marginals for p in m] for e in eqs]
    [['1', '0', '0', '1', '0'], ['1', '0', '0', '1/2', '1/2']]
    """
    a, b = bimatrix_of(game)
    if verify not in (None, "exact"):
        raise ValueError(f"verify must be None or 'exact'; got {verify!r}.")
    m, n = a.shape
    bases = comb(m + n, m)
    if bases > max_bases:
        raise ValueError(
            f"game: vertex enumeration of a {m}x{n} game solves {bases:,} bases per polytope, more than "
            f"max_bases={max_bases:,}. Use 'lemke_howson' (one equilibrium) or raise max_bases.")
    an = normalised(a) + 1.0
    bn = normalised(b) + 1.0
    labels = np.arange(m + n)
    # P: x >= 0 (labels 0..m-1), B^T x <= 1 (labels m..m+n-1)
    gp = np.vstack([-np.eye(m), bn.T])
    hp = np.concatenate([np.zeros(m), np.ones(n)])
    # Q: A y <= 1 (labels 0..m-1), y >= 0 (labels m..m+n-1)
    gq = np.vstack([an, -np.eye(n)])
    hq = np.concatenate([np.ones(m), np.zeros(n)])
    vp = polytope_vertices(gp, hp)
    vq = polytope_vertices(gq, hq)
    vp = vp[vp.sum(axis=1) > _TOL]  # drop the origin (the artificial pair (0, 0))
    vq = vq[vq.sum(axis=1) > _TOL]
    lp = _label_masks(gp, hp, vp, labels, _TOL)
    lq = _label_masks(gq, hq, vq, labels, _TOL)
    full = np.uint64((1 << (m + n)) - 1)
    pairs = np.argwhere(np.bitwise_or.outer(lp, lq) == full)
    profiles = []
    for i, j in pairs:
        x = np.clip(vp[i], 0.0, None)
        y = np.clip(vq[j], 0.0, None)
        xy = (x / x.sum(), y / y.sum())
        if not any(same_profile(xy, other) for other in profiles):  # one vertex reached from two bases
            profiles.append(xy)
    profiles.sort(key=lambda xy: (int((xy[0] > _TOL).sum() + (xy[1] > _TOL).sum()),
                                  tuple(-np.round(np.concatenate(xy), 9))))
    out = []
    for x, y in profiles:
        regret = float(scaled_regrets(normalised(a), normalised(b), x, y).max())
        info = {"converged": bool(regret <= 1e-8), "scaled_regret": regret}
        eq = make_equilibrium(game, marginals=[x, y], concept="nash", method="vertex_enumeration", info=info)
        if verify == "exact":
            eq = verified(game, eq, payoffs=payoffs, max_denominator=max_denominator)
            if not eq.info["certified"]:
                logger.warning("vertex_enumeration: an equilibrium failed exact certification (%s)",
                               eq.info["certificate"].reason)
        out.append(eq)
    return out
