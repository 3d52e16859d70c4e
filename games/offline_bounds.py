"""The intervals of an offline game model (:mod:`games.offline_model`, where the bounds are explained): the result
types :class:`PayoffInterval` and :class:`Deviation`, and :class:`CountBounds`, the count-based confidence bounds
(the L1 radii of chance histories, the widths along the way to each node, robust values) that
:class:`games.offline_model.GameModel` has."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from games.offline_tree import CHANCE_NODE as _CHANCE
from games.offline_tree import DECISION_NODE as _DECISION
from games.offline_tree import TERMINAL_NODE as _TERMINAL
from games.offline_tree import NodeCounts

__all__ = ["PayoffInterval", "Deviation", "CountBounds"]


@dataclass(frozen=True)
class PayoffInterval:
    """An interval of expected payoffs, one entry per player; unpacks as ``low, high``.

    Attributes
    ----------
    low, high : numpy.ndarray
        Lower and upper ends, shape ``(num_players,)``.
    values : numpy.ndarray
        What the interval is made from: ``(members + 1, num_players)`` expected
        payoffs (the members, then the count-based model) for
        :meth:`games.offline_model.GameModel.payoff_interval`; ``(1, num_players)`` the count-based
        model's for :meth:`games.offline_model.GameModel.count_interval`.
    """

    low: np.ndarray
    high: np.ndarray
    values: np.ndarray

    def __iter__(self):
        return iter((self.low, self.high))

    @property
    def width(self) -> np.ndarray:
        """``high - low`` per player."""
        return self.high - self.low


@dataclass(frozen=True)
class Deviation:
    """A best response computed exactly on the model's tree.

    Attributes
    ----------
    player : int
        The deviating player.
    value : float
        Its expected payoff (under the ``bound`` it maximised), averaged over
        the opponents' mixture.
    policy : dict
        ``{infostate: one-hot probabilities over num_actions}`` for every
        infostate of ``player`` in the model.
    bound : str
        ``"mean"``, ``"lower"`` or ``"upper"``.
    """

    player: int
    value: float
    policy: dict = field(repr=False)
    bound: str = "mean"


class CountBounds:
    """The count-based confidence bounds of :class:`games.offline_model.GameModel` (a base class: they read the
    model's tree, counts, utility range, leaves and reach probabilities)."""

    def _confidence(self, counts: NodeCounts, delta: float) -> tuple[np.ndarray, np.ndarray]:
        """Per node: the L1 radius ``eps`` at visited chance histories, the Hoeffding width at noisy terminals."""
        t = self._tree
        chance = np.flatnonzero((t.kind == _CHANCE) & (counts.count > 0))
        noisy = np.flatnonzero(counts.return_spread & (counts.count > 0))
        m = max(1, len(chance) + len(noisy))  # the union bound
        k = np.array([len(t.legal[n]) for n in chance], dtype=np.float64)
        safe = np.maximum(k, 2.0)
        log_outcomes = safe * math.log(2.0) + np.log1p(-(2.0 ** (1.0 - safe)))  # ln(2**k - 2), no overflow
        eps = np.zeros(len(t.kind))
        radius = np.sqrt(2.0 * (log_outcomes + math.log(m / delta)) / counts.count[chance])
        eps[chance] = np.where(k >= 2, np.minimum(radius, 2.0), 0.0)
        own = np.zeros(len(t.kind))
        span = self.max_utility - self.min_utility
        own[noisy] = span * np.sqrt(math.log(2 * m / delta) / (2 * counts.count[noisy]))
        return eps, own

    def _widths(self, counts: NodeCounts, delta: float) -> np.ndarray:
        """Accumulated confidence widths along the way to each node (chance L1 and noisy terminals)."""
        t = self._tree
        eps, own = self._confidence(counts, delta)
        width = eps * (self.max_utility - self.min_utility) / 2.0  # paid by every node below a chance history
        acc = np.zeros(len(t.kind))
        for level in t.levels[1:]:
            acc[level] = acc[t.parent[level]] + width[t.parent[level]]
        return acc + own

    def _robust(self, mixture: list, player: int, bound: str, delta: float, deviator: int | None = None) -> float:
        """The robust bound of ``player``'s value: every chance history's distribution at its worst (or best)
        within its L1 ball, untried actions and unseen outcomes at the utility bound.

        ``deviator``: that player instead picks, at each of its histories, the action best for the bound
        (``bound="upper"``: an upper bound of any policy's value, as if it saw the whole history)."""
        t = self._tree
        counts = self._counts
        sign = 1.0 if bound == "upper" else -1.0
        edge = self._bound_value(bound)
        eps, own = self._confidence(counts, delta)
        leaf = self._leaves(counts)
        rho = np.zeros(len(t.kind))  # non-chance reach of the mixture (the deviator's edges at 1)
        for weight, profile in mixture:
            pe = self._edge_probs(profile, counts, skip=deviator)
            chance_child = np.r_[False, t.kind[t.parent[1:]] == _CHANCE]
            pe[chance_child] = (counts.count[chance_child] > 0).astype(float)
            rho += weight * self._reach(pe)
        w = np.zeros(len(t.kind))
        values = self._leaf_values(counts, "mean")
        terminal = leaf & (t.kind == _TERMINAL) & (counts.count > 0)
        w[terminal] = rho[terminal] * (values[terminal, player] + sign * own[terminal])
        unknown = leaf & ~terminal
        w[unknown] = rho[unknown] * edge
        for level in reversed(t.levels[1:]):
            parents = t.parent[level]
            active = counts.count[parents] > 0
            decision = active & (t.kind[parents] == _DECISION)
            mine = decision & (t.player[parents] == deviator) if deviator is not None else np.zeros_like(decision)
            plain = decision & ~mine
            np.add.at(w, parents[plain], w[level[plain]])
            if mine.any():
                best = np.full(len(t.kind), -np.inf if sign > 0 else np.inf)
                (np.maximum if sign > 0 else np.minimum).at(best, parents[mine], w[level[mine]])
                touched = np.unique(parents[mine])
                w[touched] = best[touched]
            chance = active & (t.kind[parents] == _CHANCE)
            if chance.any():
                groups: dict[int, list[int]] = {}
                for c, h in zip(level[chance].tolist(), parents[chance].tolist()):
                    groups.setdefault(h, []).append(c)
                for h, children in groups.items():
                    w[h] = self._robust_chance(h, children, w, rho[h] * edge, eps[h], sign)
        return float(w[0])

    def _robust_chance(self, h: int, children: list, w: np.ndarray, unseen: float, eps: float, sign: float) -> float:
        """The extreme of ``sum_o p_o w_o`` over distributions within L1 distance ``eps`` of the empirical one."""
        t, counts = self._tree, self._counts
        seen = [c for c in children if counts.count[c] > 0]
        p = counts.count[seen] / counts.count[h]
        v = w[seen]
        if len(seen) < len(t.legal[h]):  # outcomes never observed: worth the bound
            p, v = np.r_[p, 0.0], np.r_[v, unseen]
        order = np.argsort(-sign * v, kind="stable")  # best first for the bound
        target = order[0]
        move = min(eps / 2.0, 1.0 - p[target])
        q = p.copy()
        q[target] += move
        for j in order[::-1]:  # take the mass from the worst outcomes
            if move <= 0 or j == target:
                continue
            d = min(move, q[j])
            q[j] -= d
            move -= d
        return float(q @ v)

    def _bound_value(self, bound: str) -> float:
        return self.max_utility if bound == "upper" else self.min_utility
