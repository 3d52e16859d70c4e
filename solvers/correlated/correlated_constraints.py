"""CE and CCE constraint systems of an n-player game as sparse matrices.

A joint distribution ``x`` over the pure profiles (flattened in C order) is an
epsilon-correlated equilibrium when ``A @ x <= epsilon`` for the rows ``A`` built
here (Marris et al. 2021, "Multi-Agent Training beyond Zero-Sum with Correlated
Equilibrium Meta-Solvers"):

- CE, one row per player ``p``, recommended ``a`` and deviation ``b != a``:
  ``sum_{s_-p} x(a, s_-p) (u_p(b, s_-p) - u_p(a, s_-p)) <= epsilon``;
- CCE, one row per player ``p`` and deviation ``b``:
  ``sum_s x(s) (u_p(b, s_-p) - u_p(s)) <= epsilon``.

The matrices are assembled with array operations (a loop over players only).
Deviation targets with identical payoff rows give identical constraint rows,
so each player's strategies are merged into payoff-equivalence classes first;
rows that are identically zero (a deviation to a duplicate strategy, or a
constant game) are dropped. Each player's gains are divided by that player's
largest gain (``row_scale``), so that payoffs of any magnitude, and players
whose payoff scales differ by any factor, give a well-conditioned system in
which every player's rows count.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from games.normal_form import NormalFormGame, as_game

__all__ = ["CorrelatedConstraints", "ce_constraints", "cce_constraints", "correlated_constraints"]

CONCEPTS = ("ce", "cce")


@dataclass(frozen=True, eq=False)
class CorrelatedConstraints:
    """The rows ``matrix @ x <= epsilon / row_scale`` of a CE or CCE polytope.

    Attributes
    ----------
    matrix : scipy.sparse.csr_matrix, shape (num_rows, num_profiles)
        Deviation gains divided by ``row_scale``; columns are pure profiles in C order.
    player : ndarray of int, shape (num_rows,)
        The deviating player of each row.
    recommended : ndarray of int, shape (num_rows,)
        The recommended strategy of each row (``-1`` for CCE rows).
    deviation : ndarray of int, shape (num_rows,)
        The deviation strategy of each row (a representative of its
        payoff-equivalence class).
    scale : float
        The largest absolute gain of the game (1.0 when every gain is zero).
    row_scale : ndarray, shape (num_rows,)
        The largest absolute gain of each row's player: row ``r`` in payoff
        units is ``matrix[r] * row_scale[r]``.
    concept : str
        ``"ce"`` or ``"cce"``.
    shape : tuple of int
        The game's shape ``(k_1, ..., k_n)``.
    row_max : ndarray, shape (num_rows,)
        The largest entry of each row (at least 0): a row holds for every
        distribution when ``row_max <= epsilon / row_scale``.
    """

    matrix: sp.csr_matrix
    player: np.ndarray
    recommended: np.ndarray
    deviation: np.ndarray
    scale: float
    concept: str
    shape: tuple
    row_max: np.ndarray
    row_scale: np.ndarray

    def rhs(self, epsilon: float) -> np.ndarray:
        """The right-hand side ``epsilon / row_scale`` of every row, for ``epsilon`` in payoff units."""
        return float(epsilon) / self.row_scale

    @property
    def num_rows(self) -> int:
        """Number of (non-zero, de-duplicated) constraint rows."""
        return int(self.matrix.shape[0])

    @property
    def num_profiles(self) -> int:
        """Number of pure joint profiles (columns)."""
        return int(self.matrix.shape[1])

    def violations(self, joint, epsilon: float = 0.0) -> np.ndarray:
        """``A x - epsilon`` in payoff units, one entry per row (positive means violated).

        Examples
        --------
        >>> from games import catalog
        >>> c = ce_constraints(catalog.chicken())
        >>> j = np.array([[0.0, 0.25], [0.25, 0.5]])
        >>> bool(c.violations(j).max() <= 1e-12)
        True
        """
        x = np.asarray(joint, dtype=np.float64).reshape(-1)
        if x.size != self.num_profiles:
            raise ValueError(f"joint has {x.size} entries but the game has {self.num_profiles} profiles.")
        return (self.matrix @ x) * self.row_scale - float(epsilon)


def _equivalence_representatives(u: np.ndarray) -> np.ndarray:
    """Indices (ascending) of one strategy per class of identical payoff rows of ``u`` (shape ``(k, m)``).

    Rows are hashed by a fixed random projection and the classes verified exactly,
    so this costs O(k m) instead of a lexicographic sort of the rows.
    """
    key = u @ np.cos(np.arange(u.shape[1]) * 0.7548776662 + 0.5698402910)  # fixed pseudo-random weights
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    if first.size == u.shape[0]:  # distinct keys: distinct rows
        return np.arange(u.shape[0])
    if not np.array_equal(u, u[first[inverse.ravel()]]):  # a key collision between different rows
        _, first = np.unique(u, axis=0, return_index=True)
    return np.sort(first)


def _player_tables(game: NormalFormGame, p: int):
    """Player p's payoffs and profile indices with p's axis first, as ``(k_p, m)`` arrays."""
    n = game.num_profiles
    u = np.moveaxis(game.payoffs[p], p, 0)
    k = u.shape[0]
    idx = np.moveaxis(np.arange(n).reshape(game.shape), p, 0).reshape(k, -1)
    return u.reshape(k, -1), idx


def _gain_scales(game: NormalFormGame) -> np.ndarray:
    """Each player's largest absolute deviation gain over fixed opponents (1.0 when it has none)."""
    scales = np.ones(game.num_players)
    for p in range(game.num_players):
        u = game.payoffs[p]
        top = float(np.abs(u).max())
        if top == 0:
            continue
        e = int(np.frexp(top)[1])  # scale by an exact power of two first, so the spread cannot overflow
        spread = float(np.ptp(np.ldexp(u, -e), axis=p).max())
        if spread > 0:
            scales[p] = float(np.ldexp(spread, e)) if np.isfinite(np.ldexp(spread, e)) else np.finfo(float).max
    return scales


def _assemble(blocks, game: NormalFormGame, scales: np.ndarray, concept: str,
              zero_tol: float) -> CorrelatedConstraints:
    """Stack per-player blocks into one CSR matrix.

    Each block is ``(player, values, columns, recommended, deviation)`` with
    ``values`` and ``columns`` of shape ``(rows, length)`` and the columns of
    every row in increasing order, so the CSR arrays are written directly.
    """
    n = game.num_profiles
    data, cols, counts, players, recs, devs, row_max = [], [], [], [], [], [], []
    for p, vals, col, rec, dev in blocks:
        vals = vals / scales[p]
        keep = np.abs(vals) > zero_tol
        row_count = keep.sum(axis=1)
        nonzero_row = row_count > 0
        data.append(vals[keep])
        cols.append(np.broadcast_to(col, vals.shape)[keep])
        counts.append(row_count[nonzero_row])
        players.append(np.full(int(nonzero_row.sum()), p, dtype=np.int64))
        recs.append(np.asarray(rec)[nonzero_row])
        devs.append(np.asarray(dev)[nonzero_row])
        # every row also has implicit zeros (profiles where p plays another strategy or the deviation itself)
        row_max.append(np.maximum(vals[nonzero_row].max(axis=1), 0.0) if vals.size else np.zeros(0))
    if not blocks or sum(c.size for c in counts) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return CorrelatedConstraints(sp.csr_matrix((0, n)), empty, empty, empty.copy(), float(scales.max()),
                                     concept, game.shape, np.zeros(0), np.zeros(0))
    counts = np.concatenate(counts)
    indptr = np.concatenate([[0], np.cumsum(counts)])
    matrix = sp.csr_matrix((np.concatenate(data), np.concatenate(cols), indptr), shape=(counts.size, n))
    players = np.concatenate(players)
    return CorrelatedConstraints(matrix, players, np.concatenate(recs).astype(np.int64),
                                 np.concatenate(devs).astype(np.int64), float(scales.max()), concept, game.shape,
                                 np.concatenate(row_max), scales[players])


def ce_constraints(game, zero_tol: float = 1e-13) -> CorrelatedConstraints:
    """The correlated-equilibrium constraint rows of ``game``.

    Parameters
    ----------
    game : NormalFormGame or array_like
        The game.
    zero_tol : float
        Scaled gains with magnitude at most this are treated as zero.

    Returns
    -------
    CorrelatedConstraints
        At most ``sum_p k_p (k_p - 1)`` rows; row ``(p, a, b)`` has non-zeros
        only on profiles where ``p`` plays ``a``.

    Examples
    --------
    >>> from games import catalog
    >>> c = ce_constraints(catalog.chicken())
    >>> c.num_rows, c.scale
    (4, 2.0)
    >>> (c.matrix.toarray() * c.scale).tolist()[0]
    [2.0, -1.0, 0.0, 0.0]
    """
    game = as_game(game)
    scales = _gain_scales(game)
    blocks = []
    for p in range(game.num_players):
        u, idx = _player_tables(game, p)
        k = u.shape[0]
        targets = _equivalence_representatives(u)
        # gains[a, j, s] = u[targets[j], s] - u[a, s], non-zero only on profiles (a, s)
        gains = u[targets][None, :, :] - u[:, None, :]
        rec = np.repeat(np.arange(k), targets.size)
        dev = np.tile(targets, k)
        col = np.repeat(idx, targets.size, axis=0)
        blocks.append((p, gains.reshape(-1, u.shape[1]), col, rec, dev))
    return _assemble(blocks, game, scales, "ce", zero_tol)


def cce_constraints(game, zero_tol: float = 1e-13) -> CorrelatedConstraints:
    """The coarse-correlated-equilibrium constraint rows of ``game``.

    Parameters
    ----------
    game : NormalFormGame or array_like
        The game.
    zero_tol : float
        Scaled gains with magnitude at most this are treated as zero.

    Returns
    -------
    CorrelatedConstraints
        At most ``sum_p k_p`` rows; row ``(p, b)`` is player ``p``'s gain from
        always playing ``b``.

    Examples
    --------
    >>> from games import catalog
    >>> c = cce_constraints(catalog.prisoners_dilemma())
    >>> c.num_rows
    4
    >>> (c.matrix.toarray() * c.scale)[c.deviation == 1][0].tolist()  # player 0 always defects
    [1.0, 1.0, 0.0, 0.0]
    """
    game = as_game(game)
    scales = _gain_scales(game)
    blocks = []
    for p in range(game.num_players):
        targets = _equivalence_representatives(_player_tables(game, p)[0])
        # gains[j, s] = u_p(targets[j], s_-p) - u_p(s), laid out in profile (C) order
        table = game.payoffs[p]
        deviated = np.moveaxis(np.take(table, targets, axis=p), p, 0)  # (targets, k_-p...)
        gains = np.expand_dims(deviated, axis=p + 1) - table[None]
        blocks.append((p, gains.reshape(targets.size, -1), np.arange(game.num_profiles)[None, :],
                       np.full(targets.size, -1), targets))
    return _assemble(blocks, game, scales, "cce", zero_tol)


def correlated_constraints(game, concept: str, zero_tol: float = 1e-13) -> CorrelatedConstraints:
    """:func:`ce_constraints` or :func:`cce_constraints` by concept name.

    Examples
    --------
    >>> from games import catalog
    >>> correlated_constraints(catalog.matching_pennies(), "cce").num_rows
    4
    """
    if concept == "ce":
        return ce_constraints(game, zero_tol)
    if concept == "cce":
        return cce_constraints(game, zero_tol)
    raise ValueError(f"concept must be one of {CONCEPTS}; got {concept!r}.")
