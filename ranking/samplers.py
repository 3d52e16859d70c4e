"""Payoff samplers for adaptive evaluation: draw noisy outcomes of pure profiles.

A sampler has a ``shape`` (strategies per player), a ``payoff_range`` ``(lo, hi)``
bounding every outcome, a flag ``binary`` (outcomes are always ``lo`` or ``hi``)
and ``draw(profiles, rng)``, which takes flat (C-order) profile indices and
returns one row of payoffs per index. Three kinds:

- :class:`BernoulliSampler`: each player wins (payoff ``hi``) with probability
  given by the mean payoff, vectorised; constant-sum games draw a single winner.
- :class:`FunctionSampler`: any ``f(profile, rng) -> payoffs``.
- :class:`OpenSpielSampler`: one episode of a ``pyspiel`` game played by a
  profile of per-player policies; the sample is the episode's returns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from games.normal_form import NormalFormGame

__all__ = ["BernoulliSampler", "FunctionSampler", "OpenSpielSampler", "as_sampler"]


class BernoulliSampler:
    """Bernoulli outcomes with given means.

    Parameters
    ----------
    means : NormalFormGame or array_like, shape (num_players, k_1, ..., k_n)
        Mean payoffs, inside ``payoff_range``.
    payoff_range : (float, float)
        Outcome values: a win pays ``hi``, a loss ``lo``.
    single_winner : bool, optional
        Draw exactly one winner per sample (player ``p`` with probability
        ``(mean_p - lo) / (hi - lo)``), as in a constant-sum win/loss game. By
        default it is used when those probabilities sum to one at every profile.

    Examples
    --------
    >>> s = BernoulliSampler(np.array([[[0.9, 0.2]], [[0.1, 0.8]]]))
    >>> s.single_winner, s.shape
    (True, (1, 2))
    >>> s.draw(np.array([0, 1]), np.random.default_rng(0)).sum(axis=1)
    array([1., 1.])
    """

    binary = True

    def __init__(self, means, payoff_range=(0.0, 1.0), single_winner: bool | None = None):
        arr = np.asarray(means.payoffs if isinstance(means, NormalFormGame) else means, dtype=float)
        if arr.ndim < 2 or arr.ndim != arr.shape[0] + 1:
            raise ValueError(
                f"means must have shape (num_players, k_1, ..., k_n); got {arr.shape}."
            )
        lo, hi = (float(x) for x in payoff_range)
        if not hi > lo:
            raise ValueError(f"payoff_range must satisfy lo < hi; got {payoff_range!r}.")
        if not np.all(np.isfinite(arr)) or arr.min() < lo - 1e-12 or arr.max() > hi + 1e-12:
            raise ValueError(
                f"means must be finite and inside payoff_range {payoff_range}; got values in "
                f"[{np.nanmin(arr)}, {np.nanmax(arr)}]. Pass payoff_range=(min, max) to rescale."
            )
        self.payoff_range = (lo, hi)
        self.shape = tuple(arr.shape[1:])
        self.means = arr
        self._p = np.clip((arr - lo) / (hi - lo), 0.0, 1.0).reshape(arr.shape[0], -1)
        sums_to_one = arr.shape[0] > 1 and bool(np.allclose(self._p.sum(axis=0), 1.0, atol=1e-9))
        if single_winner is None:
            single_winner = sums_to_one
        elif single_winner and not sums_to_one:
            raise ValueError("single_winner=True needs win probabilities that sum to one at every profile.")
        self.single_winner = bool(single_winner)
        self._cum = np.cumsum(self._p, axis=0)

    def draw(self, profiles: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Outcomes of the flat profile indices ``profiles``, shape ``(len(profiles), num_players)``."""
        lo, hi = self.payoff_range
        m = len(profiles)
        if self.single_winner:
            u = rng.random(m)
            winner = (u[None, :] >= self._cum[:, profiles]).sum(axis=0)
            winner = np.minimum(winner, self._p.shape[0] - 1)
            wins = np.zeros((m, self._p.shape[0]))
            wins[np.arange(m), winner] = 1.0
        else:
            wins = (rng.random((m, self._p.shape[0])) < self._p[:, profiles].T).astype(float)
        return lo + (hi - lo) * wins

    def __repr__(self) -> str:
        return f"BernoulliSampler(shape={self.shape}, single_winner={self.single_winner})"


class FunctionSampler:
    """Outcomes from a function ``f(profile, rng) -> payoffs`` (one value per player).

    Parameters
    ----------
    fn : callable
        Called with a tuple of strategy indices and a ``numpy.random.Generator``.
    shape : sequence of int
        Strategies per player.
    payoff_range : (float, float)
        Bounds on every outcome (checked on each sample).
    binary : bool
        Whether every outcome is ``lo`` or ``hi`` (needed by Clopper-Pearson bounds).

    Examples
    --------
    >>> s = FunctionSampler(lambda prof, rng: [prof[0], 1 - prof[0]], shape=(2, 2))
    >>> s.draw(np.array([3, 0]), np.random.default_rng(0))
    array([[1., 0.],
           [0., 1.]])
    """

    def __init__(self, fn: Callable, shape: Sequence[int], payoff_range=(0.0, 1.0), binary: bool = False):
        if not callable(fn):
            raise TypeError(f"fn must be callable as fn(profile, rng); got {type(fn).__name__}.")
        self.fn = fn
        self.shape = tuple(int(k) for k in shape)
        if not self.shape or any(k < 1 for k in self.shape):
            raise ValueError(f"shape must list a positive number of strategies per player; got {shape!r}.")
        lo, hi = (float(x) for x in payoff_range)
        if not hi > lo:
            raise ValueError(f"payoff_range must satisfy lo < hi; got {payoff_range!r}.")
        self.payoff_range = (lo, hi)
        self.binary = bool(binary)

    def draw(self, profiles: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        n = len(self.shape)
        coords = np.unravel_index(np.asarray(profiles), self.shape)
        out = np.empty((len(profiles), n))
        for i in range(len(profiles)):
            profile = tuple(int(c[i]) for c in coords)
            out[i] = np.asarray(self.fn(profile, rng), dtype=float).reshape(n)
        lo, hi = self.payoff_range
        if not np.all(np.isfinite(out)) or out.min() < lo or out.max() > hi:
            raise ValueError(f"the sampler returned payoffs outside payoff_range {self.payoff_range} (or NaN).")
        if self.binary and not np.all((out == lo) | (out == hi)):
            raise ValueError(f"binary=True but the sampler returned payoffs other than {lo} and {hi}.")
        return out

    def __repr__(self) -> str:
        return f"FunctionSampler({getattr(self.fn, '__name__', 'fn')}, shape={self.shape})"


class OpenSpielSampler(FunctionSampler):
    """Live play: one episode of a ``pyspiel`` game per sample.

    Parameters
    ----------
    game : pyspiel.Game
        The game to play (turn-based or simultaneous-move).
    policies : sequence of sequences
        ``policies[p][i]`` is player ``p``'s strategy ``i``: an OpenSpiel
        ``Policy`` (with ``action_probabilities(state, player_id)``) or a callable
        ``(state, player_id) -> {action: probability}``.
    payoff_range : (float, float), optional
        Defaults to the game's ``(min_utility, max_utility)``.

    Examples
    --------
    >>> import pyspiel
    >>> from open_spiel.python import policy
    >>> g = pyspiel.load_game("kuhn_poker")
    >>> s = OpenSpielSampler(g, [[policy.UniformRandomPolicy(g)]] * 2)
    >>> s.shape, float(s.draw(np.array([0]), np.random.default_rng(0)).sum())   # zero-sum returns
    ((1, 1), 0.0)
    """

    def __init__(self, game, policies, payoff_range=None):
        if len(policies) != game.num_players():
            raise ValueError(f"policies must hold one list per player ({game.num_players()}); got {len(policies)}.")
        self.game = game
        self.policies = [list(p) for p in policies]
        if payoff_range is None:
            payoff_range = (game.min_utility(), game.max_utility())
        super().__init__(self._episode, [len(p) for p in self.policies], payoff_range)

    def _choose(self, policy, state, player: int, rng) -> int:
        if hasattr(policy, "action_probabilities"):
            probs = policy.action_probabilities(state, player)
        else:
            probs = policy(state, player)
        actions = list(probs.keys())
        p = np.fromiter(probs.values(), dtype=float, count=len(actions))
        return int(actions[rng.choice(len(actions), p=p / p.sum())])

    def _episode(self, profile, rng) -> np.ndarray:
        state = self.game.new_initial_state()
        pols = [self.policies[p][a] for p, a in enumerate(profile)]
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(int(outcomes[rng.choice(len(outcomes), p=np.asarray(probs))]))
            elif state.is_simultaneous_node():
                state.apply_actions([self._choose(pol, state, p, rng) for p, pol in enumerate(pols)])
            else:
                p = state.current_player()
                state.apply_action(self._choose(pols[p], state, p, rng))
        return np.asarray(state.returns(), dtype=float)


def as_sampler(source, *, shape=None, payoff_range=None):
    """A sampler from a game of means, a sampler, or a function ``f(profile, rng)``.

    Examples
    --------
    >>> as_sampler(np.full((2, 2, 2), 0.5)).single_winner
    True
    """
    if hasattr(source, "draw") and hasattr(source, "shape") and hasattr(source, "payoff_range"):
        return source
    if isinstance(source, (NormalFormGame, np.ndarray, list)):
        return BernoulliSampler(source, payoff_range=(0.0, 1.0) if payoff_range is None else payoff_range)
    if callable(source):
        if shape is None:
            raise ValueError("a function sampler needs shape=(k_1, ..., k_n), the strategies per player.")
        return FunctionSampler(source, shape, (0.0, 1.0) if payoff_range is None else payoff_range)
    raise TypeError(
        "sampler must be a NormalFormGame or array of mean payoffs (Bernoulli outcomes), a function "
        f"f(profile, rng) with shape=..., or a sampler object; got {type(source).__name__}."
    )
