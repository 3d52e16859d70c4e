"""All Nash equilibria of small two-player games by support enumeration.

For every pair of supports ``(I, J)`` of equal size ``s``, the indifference
equations ``A[I, J] y = u 1``, ``x^T B[I, J] = v 1^T`` (strategies summing to
one) are solved for all pairs of that size at once with batched LU
factorisations; the solutions with non-negative probabilities against which
no pure strategy does better are equilibria (Shoham and Leyton-Brown 2009,
section 4.2; nashpy's ``support_enumeration`` follows the same idea).

In a **nondegenerate** game (no mixed strategy with support size ``s`` has more
than ``s`` pure best responses) every equilibrium has equal-size supports with
a nonsingular system, so the list is complete. In a **degenerate** game the
equilibria may form continua; the enumeration then returns the equilibria
whose equal-size support system is nonsingular (vertices of those continua),
skips singular systems, and drops repeats. Nothing returned is unverified.
:func:`solvers.nash.nash_enumeration.all_equilibria` adds the Lemke-Howson
equilibria from every label, so that degenerate games always get at least one.
"""

from __future__ import annotations

import itertools
import logging
from math import comb

import numpy as np

from games.normal_form import NormalFormGame
from solvers.equilibrium import Equilibrium
from solvers.nash.bimatrix import bimatrix_of, normalised, same_profile
from solvers.nash.nash_selection import equilibria_from_profiles, select_equilibrium
from solvers.registry import check_tolerance, register

__all__ = ["support_pairs", "enumerate_supports", "support_enumeration", "DEFAULT_MAX_PAIRS"]

logger = logging.getLogger(__name__)

DEFAULT_MAX_PAIRS = 1_000_000
_CHUNK_ENTRIES = 2_000_000  # bound on the batched arrays' size (float64 entries) per chunk


def support_pairs(k1: int, k2: int) -> int:
    """Number of equal-size support pairs, ``sum_s C(k1, s) C(k2, s)``.

    Examples
    --------
    >>> support_pairs(2, 2), support_pairs(10, 10)
    (5, 184755)
    """
    return sum(comb(k1, s) * comb(k2, s) for s in range(1, min(k1, k2) + 1))


def _solve_batch(sub: np.ndarray):
    """Solve ``sub z = 1`` for a batch of square matrices; flag singular ones instead of failing."""
    rhs = np.ones(sub.shape[:2] + (1,))
    try:
        z = np.linalg.solve(sub, rhs)[..., 0]
        ok = np.ones(len(sub), dtype=bool)
    except np.linalg.LinAlgError:  # some matrix in the batch is singular: mask them and solve the rest
        sign, logdet = np.linalg.slogdet(sub)
        ok = (sign != 0) & (logdet > np.log(1e-12))
        sub = sub.copy()
        sub[~ok] = np.eye(sub.shape[-1])
        z = np.linalg.solve(sub, rhs)[..., 0]
    ok &= np.all(np.isfinite(z), axis=1)
    return z, ok


def _strategy_and_value(z: np.ndarray, ok: np.ndarray, tol: float):
    """From ``sub z = 1`` (positive payoffs): strategy ``z / sum(z)`` and value ``1 / sum(z)``, if valid."""
    total = z.sum(axis=1)
    ok = ok & (total > 0)
    total = np.where(ok, total, 1.0)
    p = z / total[:, None]
    ok &= p.min(axis=1) >= -tol
    return np.clip(p, 0.0, None), 1.0 / total, ok


def enumerate_supports(a, b, max_pairs: int = DEFAULT_MAX_PAIRS, tol: float = 1e-9) -> list:
    """Every equilibrium of ``(a, b)`` with equal-size supports and a nonsingular indifference system.

    Parameters
    ----------
    a, b : array_like, shape (k1, k2)
        Row and column players' payoffs.
    max_pairs : int
        Refuse (``ValueError``) when there are more support pairs than this.
    tol : float
        Tolerance, relative to each player's payoff range, for probabilities
        and best-response checks.

    Returns
    -------
    list of (x, y) tuples
        Ordered by support size, then by the supports in lexicographic order.

    Examples
    --------
    >>> eqs = enumerate_supports([[3, 0], [0, 2]], [[2, 0], [0, 3]])
    >>> [(x.round(3).tolist(), y.round(3).tolist()) for x, y in eqs]
    [([1.0, 0.0], [1.0, 0.0]), ([0.0, 1.0], [0.0, 1.0]), ([0.6, 0.4], [0.4, 0.6])]
    """
    # Shifted to [1, 2]: every support matrix is positive, so values are positive and
    # "sub y = u 1, sum(y) = 1" becomes "sub z = 1" with y = z / sum(z), u = 1 / sum(z).
    an = normalised(np.asarray(a, dtype=np.float64)) + 1.0
    bn = normalised(np.asarray(b, dtype=np.float64)) + 1.0
    k1, k2 = an.shape
    pairs = support_pairs(k1, k2)
    if pairs > max_pairs:
        raise ValueError(
            f"game: support enumeration of a {k1}x{k2} game needs {pairs:,} support pairs, more than "
            f"max_pairs={max_pairs:,}. Use 'lemke_howson' (one equilibrium) or raise max_pairs."
        )
    found = []
    for s in range(1, min(k1, k2) + 1):
        rows_all = np.array(list(itertools.combinations(range(k1), s)), dtype=np.intp)
        cols_all = np.array(list(itertools.combinations(range(k2), s)), dtype=np.intp)
        n2 = len(cols_all)
        chunk = max(1, _CHUNK_ENTRIES // (n2 * (max(k1, k2) * s + s * s)))
        for start in range(0, len(rows_all), chunk):
            rows = rows_all[start:start + chunk]
            ri = np.repeat(rows, n2, axis=0)  # (batch, s): one row support per pair
            ci = np.tile(cols_all, (len(rows), 1))  # (batch, s): one column support per pair
            # Column strategy first: it must be a valid distribution against which no row does better.
            z, ok = _solve_batch(an[ri[:, :, None], ci[:, None, :]])
            y, u, ok = _strategy_and_value(z, ok, tol)
            ri, ci, y, u = ri[ok], ci[ok], y[ok], u[ok]
            if len(ri) == 0:
                continue
            row_pay = np.einsum("bis,bs->bi", an[:, ci].transpose(1, 0, 2), y)  # (batch, k1)
            keep = row_pay.max(axis=1) <= u + tol
            ri, ci, y = ri[keep], ci[keep], y[keep]
            if len(ri) == 0:
                continue
            z, ok = _solve_batch(np.swapaxes(bn[ri[:, :, None], ci[:, None, :]], 1, 2))
            x, v, ok = _strategy_and_value(z, ok, tol)
            col_pay = np.einsum("bsj,bs->bj", bn[ri, :], x)  # (batch, k2)
            ok &= col_pay.max(axis=1) <= v + tol
            for idx in np.flatnonzero(ok):
                xf = np.zeros(k1)
                yf = np.zeros(k2)
                xf[ri[idx]] = x[idx]
                yf[ci[idx]] = y[idx]
                xf /= xf.sum()
                yf /= yf.sum()
                if not any(same_profile((xf, yf), p) for p in found):
                    found.append((xf, yf))
    return found


@register("support_enumeration", concept="nash", min_players=2, max_players=2, tol_option="tol")
def support_enumeration(game: NormalFormGame, select: str = "first", max_pairs: int = DEFAULT_MAX_PAIRS,
                        tol: float = 1e-9) -> Equilibrium:
    """One Nash equilibrium of a small two-player game chosen among all found by support enumeration.

    Parameters
    ----------
    game : NormalFormGame
        A two-player game.
    select : {"first", "max_welfare", "max_entropy"}
        Which equilibrium to return (see :func:`solvers.nash.nash_selection.select_equilibrium`).
    max_pairs : int
        Guard against combinatorial explosion (``ValueError`` above it).
    tol : float
        Scale-aware verification tolerance.

    Returns
    -------
    Equilibrium
        ``info["equilibria"]`` lists every equilibrium found, as ``Equilibrium`` objects.

    Examples
    --------
    >>> from games import catalog
    >>> eq = support_enumeration(catalog.bach_or_stravinsky(), select="max_entropy")
    >>> eq.marginals[0].round(6).tolist(), len(eq.info["equilibria"])
    ([0.6, 0.4], 3)
    """
    a, b = bimatrix_of(game)
    tol = check_tolerance(tol)
    profiles = enumerate_supports(a, b, max_pairs=max_pairs, tol=tol)
    if not profiles:  # only possible in degenerate games: fall back on Lemke-Howson's vertices
        from solvers.nash.lemke_howson import lemke_howson_equilibria

        profiles = [(p.x, p.y) for p in lemke_howson_equilibria(a, b, tol=tol)]
    eqs = equilibria_from_profiles(game, profiles, method="support_enumeration")
    return select_equilibrium(eqs, select)
