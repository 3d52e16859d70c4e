"""Per-player affine normalisation of a game's payoffs, and the gaps relative to each player's range.

Every registered solver runs through :func:`solvers.solve` on the normalised
game, where each player's payoffs are ``(u_p - min u_p) / (max u_p - min u_p)``
and so lie in ``[0, 1]`` whatever their offset or magnitude (``1e-300`` or
``1e300``). Equilibria of every concept here are invariant to such a map, so
the strategies carry over unchanged and only quantities in payoff units are
mapped back. A player whose payoffs are constant gets all-zero payoffs and a
scale of 1.

The scaling goes through an exact power of two first, so nothing overflows
(``max - min`` of payoffs near ``1e308`` would) and tiny payoffs lose no bits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from games.normal_form import NormalFormGame
from solvers.gaps import player_gains

__all__ = ["Normalisation", "normalise", "relative_gains"]


@dataclass(frozen=True, eq=False)
class Normalisation:
    """A game with each player's payoffs mapped affinely onto ``[0, 1]``, and the map.

    Attributes
    ----------
    game : NormalFormGame
        The normalised game (same names as the original).
    offsets : ndarray, shape (num_players,)
        Each player's smallest payoff.
    mantissas, exponents : ndarray, shape (num_players,)
        Each player's payoff range is ``mantissas * 2 ** exponents`` (kept
        apart so that a range beyond the float64 maximum still maps back).
    """

    game: NormalFormGame
    offsets: np.ndarray
    mantissas: np.ndarray
    exponents: np.ndarray

    @property
    def scales(self) -> np.ndarray:
        """Each player's payoff range ``max u_p - min u_p`` (1.0 for a constant player)."""
        with np.errstate(over="ignore"):
            return np.ldexp(self.mantissas, self.exponents)

    def to_payoff_units(self, relative, player: int | None = None) -> np.ndarray:
        """Per-player amounts in units of the payoff range (gains, regrets) as payoff amounts.

        ``relative`` holds one amount per player, or one amount of ``player``.
        """
        rel = np.asarray(relative, dtype=np.longdouble)
        sl = slice(None) if player is None else player
        with np.errstate(over="ignore"):
            return np.ldexp((rel * self.mantissas[sl]).astype(np.float64), self.exponents[sl])

    def to_payoffs(self, normalised_values) -> np.ndarray:
        """Per-player expected payoffs of the normalised game as payoffs of the original game."""
        return self.offsets + self.to_payoff_units(normalised_values)


def normalise(game: NormalFormGame) -> Normalisation:
    """Map each player's payoffs affinely onto ``[0, 1]``.

    Examples
    --------
    >>> from games import NormalFormGame
    >>> g = NormalFormGame.from_bimatrix([[1e12 + 1, 1e12], [1e12, 1e12 + 2]], [[2e-300, 0], [0, 1e-300]])
    >>> norm = normalise(g)
    >>> norm.game.payoffs.tolist()
    [[[0.5, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 0.5]]]
    >>> norm.offsets.tolist(), norm.scales.tolist()
    ([1000000000000.0, 0.0], [2.0, 2e-300])
    """
    if not isinstance(game, NormalFormGame):
        raise TypeError(f"game must be a games.NormalFormGame; got {type(game).__name__}.")
    n = game.num_players
    out = np.empty_like(game.payoffs)
    offsets, mantissas, exponents = np.empty(n), np.ones(n), np.zeros(n, dtype=np.int64)
    for p in range(n):
        u = game.payoffs[p]
        lo, hi = float(u.min()), float(u.max())
        offsets[p] = lo
        if hi == lo:
            out[p] = 0.0
            continue
        e = int(np.frexp(max(abs(lo), abs(hi)))[1])
        v = np.ldexp(u, -e)  # exact: |v| < 1
        v_lo, v_hi = float(v.min()), float(v.max())
        span = v_hi - v_lo
        out[p] = np.clip((v - v_lo) / span, 0.0, 1.0)
        mantissas[p], exponents[p] = span, e
    return Normalisation(game.with_payoffs(out), offsets, mantissas, exponents)


def relative_gains(norm: Normalisation, concept: str, joint, marginals=None) -> np.ndarray:
    """Each player's regret under ``concept`` in units of its payoff range, in extended precision.

    The measure is the one :func:`solvers.gaps.player_gains` names: swap
    deviations for ``"ce"``, coarse ones for ``"cce"``, best deviations
    against the marginals otherwise. It is computed from the strategies
    alone, in ``np.longdouble``, independently of any solver.

    Examples
    --------
    >>> import numpy as np
    >>> from games import catalog
    >>> norm = normalise(catalog.matching_pennies().with_payoffs(catalog.matching_pennies().payoffs * 1e200))
    >>> relative_gains(norm, "nash", np.array([[1.0, 0], [0, 0]])).tolist()
    [0.0, 1.0]
    """
    payoffs = norm.game.payoffs.astype(np.longdouble)
    joint = np.asarray(joint, dtype=np.longdouble)
    joint = joint / joint.sum()
    if marginals is not None:
        marginals = [np.asarray(m, dtype=np.longdouble) / np.sum(m, dtype=np.longdouble) for m in marginals]
    return player_gains(payoffs, concept, joint, marginals).astype(np.float64)
