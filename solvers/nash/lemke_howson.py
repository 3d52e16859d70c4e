"""The Lemke-Howson algorithm for two-player general-sum games, robust to degeneracy.

With both payoff matrices made positive (``A, B`` in ``[1, 2]``), the best-
response polytopes are ``P = {x >= 0 : B^T x <= 1}`` and
``Q = {y >= 0 : A y <= 1}``. A vertex pair carries label ``i`` (a row) when
``x_i = 0`` or row ``i`` is a best response to ``y``, and label ``k1 + j``
when ``y_j = 0`` or column ``j`` is a best response to ``x``; the completely
labelled pairs other than ``(0, 0)`` are the Nash equilibria (rescaled).
Starting at ``(0, 0)`` and dropping one label, complementary pivoting
alternates between the two tableaux until the dropped label is picked up
again (Lemke and Howson 1964; von Stengel 2002, "Computing equilibria for
two-person games").

Degenerate games make the minimum-ratio test tie; ties are broken
lexicographically (the right-hand side followed by the columns of the initial
basis, i.e. a symbolic perturbation), which rules out cycling. The pivots run
in float64 on a tableau; the result is then re-solved exactly on its supports
and verified by its scale-aware NashConv.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from games.normal_form import NormalFormGame
from games.validation import check_int
from solvers.equilibrium import Equilibrium
from solvers.nash.bimatrix import (
    bimatrix_of,
    normalised,
    same_profile,
    scaled_regrets,
    solve_indifference,
)
from solvers.registry import check_tolerance, make_equilibrium, register

__all__ = ["LemkeHowsonPath", "lemke_howson_path", "lemke_howson_equilibria", "lemke_howson"]

logger = logging.getLogger(__name__)

_PIVOT_TOL = 1e-12  # entries below this (relative to the payoffs in [1, 2]) are not pivots
_TIE_TOL = 1e-10  # ratios within this are ties, decided by the next lexicographic column


@dataclass(frozen=True)
class LemkeHowsonPath:
    """The end of one Lemke-Howson path.

    Attributes
    ----------
    x, y : ndarray
        The row and column strategies found (exactly re-solved on their supports when that verifies).
    label : int
        The dropped label (``0..k1-1`` rows, ``k1..k1+k2-1`` columns).
    pivots : int
        Number of pivots made.
    regret : float
        Scale-aware NashConv: the sum of both players' best-deviation gains
        with each player's payoffs rescaled to ``[0, 1]``.
    completed : bool
        False when the path ran out of ``max_pivots`` or lost its pivot.
    """

    x: np.ndarray
    y: np.ndarray
    label: int
    pivots: int
    regret: float
    completed: bool


class _Tableau:
    """A dictionary ``basis_vars = rhs - ...`` stored as ``[M | rhs]`` in the current basis."""

    def __init__(self, matrix: np.ndarray, basis: np.ndarray, lex_cols: np.ndarray):
        rows = matrix.shape[0]
        self.t = np.hstack([matrix, np.ones((rows, 1))])
        self.basis = basis.copy()  # variable (= label) in the basis of each row
        self.lex_cols = lex_cols  # columns of the initial basis: the tie-breaking order after the rhs

    def pivot_in(self, entering: int) -> int | None:
        """Pivot ``entering`` into the basis; return the label that leaves, or None if no pivot."""
        col = self.t[:, entering]
        cand = np.flatnonzero(col > _PIVOT_TOL)
        if cand.size == 0:
            return None
        if cand.size > 1:
            keys = np.column_stack([self.t[cand, -1], self.t[np.ix_(cand, self.lex_cols)]]) / col[cand, None]
            for c in range(keys.shape[1]):
                vals = keys[:, c]
                keep = vals <= vals.min() + _TIE_TOL * max(1.0, abs(vals.min()))
                cand, keys = cand[keep], keys[keep]
                if cand.size == 1:
                    break
        row = int(cand[0])
        leaving = int(self.basis[row])
        self.t[row] /= self.t[row, entering]
        factor = self.t[:, entering].copy()
        factor[row] = 0.0
        self.t -= np.outer(factor, self.t[row])
        self.basis[row] = entering
        return leaving

    def values(self, variables: np.ndarray) -> np.ndarray:
        """Current values of ``variables`` (basic ones read off the rhs, others zero)."""
        out = np.zeros(len(variables))
        pos = {int(v): i for i, v in enumerate(variables)}
        for r, v in enumerate(self.basis):
            if int(v) in pos:
                out[pos[int(v)]] = max(self.t[r, -1], 0.0)
        return out


def lemke_howson_path(a, b, label: int = 0, max_pivots: int = 10_000) -> LemkeHowsonPath:
    """Follow the Lemke-Howson path of the bimatrix game ``(a, b)`` that drops ``label``.

    Parameters
    ----------
    a, b : array_like, shape (k1, k2)
        Row and column players' payoffs.
    label : int
        The dropped label: ``0..k1-1`` for rows, ``k1..k1+k2-1`` for columns.
    max_pivots : int
        Pivot budget; the path is reported incomplete when it runs out.

    Returns
    -------
    LemkeHowsonPath

    Examples
    --------
    >>> p = lemke_howson_path([[3, 0], [0, 2]], [[2, 0], [0, 3]], label=0)
    >>> p.x.tolist(), p.y.tolist(), p.completed
    ([1.0, 0.0], [1.0, 0.0], True)
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    k1, k2 = a.shape
    if not 0 <= label < k1 + k2:
        raise ValueError(f"label must be in 0..{k1 + k2 - 1} (rows first, then columns); got {label}.")
    an, bn = normalised(a), normalised(b)
    # P: B^T x + s = 1 over variables (x: labels 0..k1-1, s: labels k1..); Q: r + A y = 1 over (r, y).
    tab_p = _Tableau(np.hstack([bn.T + 1.0, np.eye(k2)]), np.arange(k1, k1 + k2), np.arange(k1, k1 + k2))
    tab_q = _Tableau(np.hstack([np.eye(k1), an + 1.0]), np.arange(k1), np.arange(k1))
    entering = label
    tab = tab_p if label < k1 else tab_q
    pivots = 0
    completed = False
    while pivots < max_pivots:
        leaving = tab.pivot_in(entering)
        pivots += 1
        if leaving is None:
            logger.debug("Lemke-Howson lost its pivot (no positive entry) after %d pivots", pivots)
            break
        if leaving == label:
            completed = True
            break
        entering = leaving
        tab = tab_q if tab is tab_p else tab_p
    x = tab_p.values(np.arange(k1))
    y = tab_q.values(np.arange(k1, k1 + k2))
    if x.sum() <= 0 or y.sum() <= 0:
        x, y = np.full(k1, 1.0 / k1), np.full(k2, 1.0 / k2)
        completed = False
    else:
        x, y = x / x.sum(), y / y.sum()
    x, y, regret = _polish(an, bn, x, y)
    return LemkeHowsonPath(x, y, label, pivots, regret, completed)


def _polish(an: np.ndarray, bn: np.ndarray, x: np.ndarray, y: np.ndarray):
    """Re-solve exactly on the supports of ``(x, y)``; keep whichever has the smaller regret."""
    regret = float(scaled_regrets(an, bn, x, y).sum())
    rows = np.flatnonzero(x > 1e-12)
    cols = np.flatnonzero(y > 1e-12)
    exact = solve_indifference(an, bn, rows, cols)
    if exact is not None:
        ex, ey = exact
        if ex.min() >= -1e-13 and ey.min() >= -1e-13:
            ex, ey = np.clip(ex, 0, None), np.clip(ey, 0, None)
            ex, ey = ex / ex.sum(), ey / ey.sum()
            exact_regret = float(scaled_regrets(an, bn, ex, ey).sum())
            if exact_regret <= regret:
                return ex, ey, exact_regret
    return x, y, regret


def lemke_howson_equilibria(a, b, max_pivots: int = 10_000, tol: float = 1e-9) -> list:
    """The distinct verified equilibria reached from every starting label.

    Returns
    -------
    list of LemkeHowsonPath
        One per distinct equilibrium (the first label that reached it), in label order.

    Examples
    --------
    >>> eqs = lemke_howson_equilibria([[4, 0], [3, 2]], [[4, 3], [0, 2]])
    >>> sorted(tuple(p.x.round(6).tolist()) for p in eqs)
    [(0.0, 1.0), (1.0, 0.0)]
    """
    a = np.asarray(a, dtype=np.float64)
    found = []
    for label in range(a.shape[0] + a.shape[1]):
        path = lemke_howson_path(a, b, label, max_pivots)
        if path.regret <= tol and not any(same_profile((path.x, path.y), (q.x, q.y)) for q in found):
            found.append(path)
    return found


@register("lemke_howson", concept="nash", min_players=2, max_players=2, tol_option="tol")
def lemke_howson(game: NormalFormGame, initial_label: int | None = None, max_pivots: int = 10_000,
                 tol: float = 1e-9) -> Equilibrium:
    """A Nash equilibrium of a two-player game by Lemke-Howson, verified.

    Parameters
    ----------
    game : NormalFormGame
        A two-player game.
    initial_label : int, optional
        The label to drop (``0..k1-1`` rows, ``k1..k1+k2-1`` columns). None
        tries the labels in order and returns the first verified equilibrium.
    max_pivots : int
        Pivot budget per path.
    tol : float
        Verification tolerance on the scale-aware NashConv (each player's
        payoffs rescaled to ``[0, 1]``).

    Returns
    -------
    Equilibrium
        ``info`` holds ``label``, ``pivots``, ``scaled_nash_conv``, ``converged``
        and ``labels_tried``. When no label verifies, the best path is returned
        with ``converged=False``.

    Raises
    ------
    ValueError
        If the game does not have two players, or ``initial_label``/``max_pivots`` are out of range.

    Examples
    --------
    >>> from games import catalog
    >>> eq = lemke_howson(catalog.prisoners_dilemma())
    >>> eq.marginals[0].tolist(), eq.marginals[1].tolist()
    ([0.0, 1.0], [0.0, 1.0])
    """
    a, b = bimatrix_of(game)
    tol = check_tolerance(tol)
    k1, k2 = a.shape
    check_int(initial_label, "initial_label", minimum=0, maximum=k1 + k2 - 1, none_ok=True)
    check_int(max_pivots, "max_pivots", minimum=1)
    labels = range(k1 + k2) if initial_label is None else [int(initial_label)]
    best = None
    tried = 0
    for label in labels:
        tried += 1
        path = lemke_howson_path(a, b, label, max_pivots)
        if best is None or path.regret < best.regret:
            best = path
        if path.regret <= tol:
            break
    converged = best.regret <= tol
    if not converged:
        logger.info("Lemke-Howson could not verify an equilibrium (best scaled NashConv %.3g)", best.regret)
    return make_equilibrium(game, marginals=[best.x, best.y], concept="nash", method="lemke_howson",
                            info={"label": best.label, "pivots": best.pivots, "scaled_nash_conv": best.regret,
                                  "converged": converged, "labels_tried": tried})
