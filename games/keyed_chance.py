"""Chance keyed by episode: common random numbers for batched environments.

An environment normally draws its chance outcomes from one generator, in the
order its envs happen to need them, so two runs of the same seed with
different policies soon deal different cards (one episode ends early and the
next deal goes to another env). With a :class:`KeyedChance` set as an env's
``chance_keys``, the ``m``-th chance draw of episode ``e`` is a function of
``(key, e, m)`` alone: every profile played with the same key sees the same
deals in the same episodes, whatever its actions, and the difference of two
profiles' returns loses the variance the deals bring (paired episodes, common
random numbers). :class:`games.openspiel_env.OpenSpielEnv` keys its chance
nodes, :class:`games.pettingzoo_env.PettingZooEnv` the seed of each episode's
``reset``. Games that draw chance inside ``apply_action`` are not keyed.
:func:`psro.evaluation.env_play.paired_returns` keys the uniform numbers its
policies sample their actions with the same way (by episode and decision).

The draws are a counter-based hash (SplitMix64's finalizer over the key, the
episode and the draw number), vectorized over the batch.
"""

from __future__ import annotations

import numpy as np

__all__ = ["KeyedChance", "keyed_uniform"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_DRAW = np.uint64(0xD1B54A32D192ED03)


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finalizer (wrapping uint64 arithmetic)."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _bits(key, episodes, draws) -> np.ndarray:
    episodes = np.asarray(episodes, dtype=np.uint64)
    draws = np.asarray(draws, dtype=np.uint64)
    with np.errstate(over="ignore"):
        x = _mix(np.asarray(key, dtype=np.uint64) ^ (episodes * _GOLDEN))
        return _mix(x + (draws + np.uint64(1)) * _DRAW)


def keyed_uniform(key, episodes, draws) -> np.ndarray:
    """Uniform draws in ``[0, 1)``, one per ``(episode, draw)`` pair (broadcast), each a function of ``key``, the
    episode number and the draw number only.

    Examples
    --------
    >>> u = keyed_uniform(7, np.arange(100_000), 0)
    >>> bool(0 <= u.min() and u.max() < 1), round(float(u.mean()), 2), round(float(u.var()), 3)
    (True, 0.5, 0.083)
    >>> bool(keyed_uniform(7, [5], [2])[0] == keyed_uniform(7, [9, 5], [0, 2])[1])   # no dependence on the batch
    True
    >>> bool(keyed_uniform(7, [5], [2])[0] != keyed_uniform(8, [5], [2])[0])
    True
    """
    return (_bits(key, episodes, draws) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


class KeyedChance:
    """The chance draws of a batch keyed by episode: env ``i``'s ``k``-th episode (``k`` from 1, the env's own
    ``episode`` counter) is episode ``first[i] + k - 1`` of the key.

    Parameters
    ----------
    key : int or array of int, shape (num_envs,)
        Any non-negative int below ``2 ** 64``; or one per env (envs that play different streams side by side, as
        :func:`psro.evaluation.env_play.sample_profiles` with ``keyed=True`` plays many profiles in one batch).
    first : array of int, shape (num_envs,)
        The key's episode number of each env's first episode.

    Examples
    --------
    >>> keys = KeyedChance(3, [0, 10])
    >>> a = keys.uniform(np.array([0, 1]), np.array([1, 1]), np.array([0, 0]))
    >>> b = KeyedChance(3, [10, 0]).uniform(np.array([1, 0]), np.array([1, 1]), np.array([0, 0]))
    >>> bool(np.array_equal(a, b))    # (episode 0 and episode 10 of key 3, whichever env plays them)
    True
    >>> keys.seeds(np.array([0, 1]), np.array([1, 1])).dtype
    dtype('int64')
    >>> per_env = KeyedChance([3, 4], [0, 10])   # env 1 plays key 4's stream
    >>> bool(per_env.uniform(np.array([1]), np.array([1]), np.array([0]))[0] == keyed_uniform(4, [10], [0])[0])
    True
    """

    def __init__(self, key, first):
        self.first = np.asarray(first, dtype=np.int64)
        if np.ndim(key) == 0:
            self.key = int(key) % 2 ** 64
        else:
            self.key = np.asarray(key, dtype=np.uint64)
            if self.key.shape != self.first.shape:
                raise ValueError(f"key must be an int or one per env ({self.first.size}); got shape "
                                 f"{self.key.shape}.")

    def __repr__(self) -> str:
        key = self.key if np.ndim(self.key) == 0 else "per env"
        return f"KeyedChance(key={key}, num_envs={self.first.size})"

    def _key(self, envs: np.ndarray):
        return self.key if np.ndim(self.key) == 0 else self.key[envs]

    def uniform(self, envs: np.ndarray, episodes: np.ndarray, draws: np.ndarray) -> np.ndarray:
        """The ``draws``-th uniform of the current episode (``episodes``, the env's counter) of each env."""
        return keyed_uniform(self._key(envs), self.first[envs] + episodes - 1, draws)

    def seeds(self, envs: np.ndarray, episodes: np.ndarray) -> np.ndarray:
        """A seed in ``[0, 2 ** 31)`` for the current episode of each env (an environment seeded at its reset)."""
        bits = _bits(self._key(envs), self.first[envs] + episodes - 1,
                     np.full(np.shape(envs), 2 ** 32, dtype=np.uint64))
        return (bits >> np.uint64(33)).astype(np.int64)
