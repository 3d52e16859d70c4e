"""Shared machinery of the learning dynamics: fast deviation payoffs, option checks, projections.

The dynamics themselves live in :mod:`solvers.dynamics.replicator` (``prd``),
:mod:`solvers.dynamics.regret_matching` (``regret_matching``) and
:mod:`solvers.dynamics.fictitious_play` (``fictitious_play``). They all run on a
:class:`PayoffOperator`, which holds each player's payoff tensor with that
player's axis first, so one iteration costs one chain of matrix-vector
products per player and no validation.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from games.normal_form import NormalFormGame
from games.validation import check_int, check_real
from solvers.equilibrium import Equilibrium
from solvers.gaps import deviation_gains, nash_conv
from solvers.registry import make_equilibrium

__all__ = [
    "FlatLayout",
    "PayoffOperator",
    "check_nonnegative_float",
    "check_positive_int",
    "initial_strategies",
    "nash_conv_from_deviations",
    "nash_result",
    "project_to_simplex",
]


@dataclass(frozen=True, eq=False)
class PayoffOperator:
    """Each player's payoff tensor with its own axis first, ready for repeated contractions.

    Attributes
    ----------
    tensors : tuple of ndarray
        ``tensors[p]`` has shape ``(k_p, k_0, ..., k_{p-1}, k_{p+1}, ..., k_{n-1})``.
    others : tuple of tuple of int
        ``others[p]`` lists the players other than ``p`` in axis order.

    Examples
    --------
    >>> from games import catalog
    >>> op = PayoffOperator.from_game(catalog.rock_paper_scissors())
    >>> op.deviation_payoffs([np.array([1.0, 0, 0]), np.ones(3) / 3])[0]
    array([0., 0., 0.])
    """

    tensors: tuple
    others: tuple

    @classmethod
    def from_game(cls, game: NormalFormGame) -> PayoffOperator:
        """Prepare the contiguous per-player tensors of ``game``."""
        n = game.num_players
        tensors, others = [], []
        for p in range(n):
            rest = tuple(q for q in range(n) if q != p)
            tensors.append(np.ascontiguousarray(np.transpose(game.payoffs[p], (p, *rest))))
            others.append(rest)
        return cls(tuple(tensors), tuple(others))

    @property
    def num_players(self) -> int:
        return len(self.tensors)

    def deviation_payoff(self, p: int, marginals: Sequence[np.ndarray]) -> np.ndarray:
        """Player ``p``'s expected payoff of each pure strategy against the others' mixtures."""
        out = self.tensors[p]
        for q in reversed(self.others[p]):  # contract the last axis first
            out = out @ marginals[q]
        return out

    def deviation_payoffs(self, marginals: Sequence[np.ndarray]) -> list:
        """:meth:`deviation_payoff` for every player (same result as ``game.deviation_payoffs``)."""
        return [self.deviation_payoff(p, marginals) for p in range(self.num_players)]


def nash_conv_from_deviations(deviations: Sequence[np.ndarray], marginals: Sequence[np.ndarray]) -> float:
    """NashConv from precomputed deviation payoffs: ``sum_p max(dev_p) - dev_p . x_p``.

    Examples
    --------
    >>> nash_conv_from_deviations([np.array([1.0, 0.0])], [np.array([0.5, 0.5])])
    0.5
    """
    return float(deviation_gains(deviations, marginals).sum())


def initial_strategies(game: NormalFormGame, initial: Sequence[np.ndarray] | None, argname: str = "initial") -> list:
    """Validated starting mixed strategies: uniform when ``initial`` is None.

    Examples
    --------
    >>> from games import catalog
    >>> initial_strategies(catalog.matching_pennies(), None)[0]
    array([0.5, 0.5])
    """
    if initial is None:
        return [np.full(k, 1.0 / k) for k in game.shape]
    checked = game.check_marginals(initial, argname=argname)
    return [np.array(m, dtype=np.float64) / float(np.sum(m)) for m in checked]


def check_positive_int(value, argname: str) -> int:
    """``value`` as an int >= 1, or a ``ValueError`` naming ``argname``.

    Examples
    --------
    >>> check_positive_int(10, "iterations")
    10
    """
    return check_int(value, argname, minimum=1)


def check_nonnegative_float(value, argname: str, positive: bool = False) -> float:
    """``value`` as a finite float >= 0 (> 0 when ``positive``), or a ``ValueError`` naming ``argname``.

    Examples
    --------
    >>> check_nonnegative_float(1e-3, "tol")
    0.001
    """
    return check_real(value, argname, minimum=0.0, strict=positive)


def project_to_simplex(v: np.ndarray, floor: float = 0.0) -> np.ndarray:
    """Euclidean projection of ``v`` onto ``{x : x_i >= floor, sum(x) = 1}``.

    Sort-based (Held, Wolfe and Crowder; Wang and Carreira-Perpinan 2013):
    ``x = max(v - tau, floor)`` with the threshold ``tau`` found from the sorted
    entries. Needs ``floor * len(v) <= 1``.

    Examples
    --------
    >>> project_to_simplex(np.array([0.4, 0.7, 0.6]), floor=0.2).round(6).tolist()
    [0.2, 0.45, 0.35]
    >>> project_to_simplex(np.array([2.0, 0.0])).tolist()
    [1.0, 0.0]
    """
    k = v.shape[0]
    shifted = v - floor
    mass = 1.0 - floor * k
    if mass <= 1e-15:   # the floor leaves no freedom: the only point is the uniform distribution
        return np.full(k, 1.0 / k)
    u = np.sort(shifted)[::-1]
    css = np.cumsum(u) - mass
    idx = np.arange(1, k + 1)
    rho = np.count_nonzero(u - css / idx > 0)
    tau = css[rho - 1] / rho
    return np.maximum(shifted - tau, 0.0) + floor


@dataclass(frozen=True, eq=False)
class FlatLayout:
    """Where each player's strategy lives in one concatenated vector of length ``sum(k_p)``.

    Lets the dynamics update every player's strategy with a handful of array
    operations instead of a Python loop per player.

    Examples
    --------
    >>> lay = FlatLayout.from_shape((2, 3))
    >>> lay.split(np.arange(5.0))[1].tolist()
    [2.0, 3.0, 4.0]
    >>> lay.player_sums(np.ones(5)).tolist()
    [2.0, 3.0]
    """

    sizes: np.ndarray
    offsets: np.ndarray

    @classmethod
    def from_shape(cls, shape: Sequence[int]) -> FlatLayout:
        sizes = np.asarray(shape, dtype=np.intp)
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.intp)
        return cls(sizes, offsets)

    def split(self, flat: np.ndarray) -> list:
        """Views of ``flat``, one per player."""
        return [flat[o:o + k] for o, k in zip(self.offsets, self.sizes)]

    def player_sums(self, flat: np.ndarray) -> np.ndarray:
        """Sum of ``flat`` over each player's block."""
        return np.add.reduceat(flat, self.offsets)

    def broadcast(self, per_player: np.ndarray) -> np.ndarray:
        """Repeat one value per player over that player's block."""
        return np.repeat(per_player, self.sizes)

    def concat(self, parts: Sequence[np.ndarray]) -> np.ndarray:
        return np.concatenate(parts)


def nash_result(game: NormalFormGame, method: str, marginals: Sequence[np.ndarray], *, tol: float,
                iterations: int, info: dict | None = None, logger: logging.Logger | None = None) -> Equilibrium:
    """Package the output of a dynamic as a ``"nash"`` :class:`Equilibrium`.

    The gap is NashConv, recomputed by :func:`solvers.nash_conv` on the returned
    strategies; ``info["converged"]`` says whether it is within ``tol``. When it
    is not and a ``logger`` is given, an info message says where ``method`` stopped.

    Examples
    --------
    >>> from games import catalog
    >>> eq = nash_result(catalog.matching_pennies(), "example", [np.ones(2) / 2] * 2, tol=1e-9, iterations=0)
    >>> eq.gap, eq.info["converged"]
    (0.0, True)
    """
    marginals = [np.asarray(m, dtype=np.float64) / float(np.sum(m)) for m in marginals]
    gap = nash_conv(game, marginals)
    full = {"iterations": int(iterations), "tol": float(tol), "converged": bool(gap <= tol)}
    full.update(info or {})
    full["nash_conv"] = gap
    if logger is not None and not full["converged"]:
        logger.info("%s stopped after %d iterations with NashConv %.3g > tol %.3g", method, iterations, gap, tol)
    return make_equilibrium(game, marginals=marginals, concept="nash", method=method, info=full, gap=gap)
