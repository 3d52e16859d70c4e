"""The contracts of games and environments: what a step returns, what a batched env and an environment game are.

Every environment of :mod:`games` (:class:`games.environment.OpenSpielEnv`, the
kernels of :mod:`games.kernels`, :class:`games.pettingzoo_env.PettingZooEnv`)
returns :class:`EnvStep` rows, follows :class:`BatchedEnv` and checks a step's
input with :func:`check_step`. A game that is only an environment (no game
tree: PettingZoo, an observation-tensor game, a user's own) follows
:class:`EnvironmentGame`; :func:`is_environment_game` is the one test for it.
The names are re-exported by :mod:`games.environment`, where they were first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["EnvStep", "BatchedEnv", "EnvironmentGame", "check_step", "is_environment_game"]


@dataclass(frozen=True, eq=False)
class EnvStep:
    """What a batched env's ``reset`` and ``step`` return: one row per env stepped.

    Attributes
    ----------
    envs : ndarray of int64, shape (b,)
        Which envs the rows are.
    player : ndarray of int64, shape (b,)
        The seat that must act next in each of them.
    obs : ndarray of float32, shape (b, obs_dim)
        That seat's observation (the information-state tensor, flattened).
    mask : ndarray of bool, shape (b, num_actions)
        Its legal actions.
    done : ndarray of bool, shape (b,)
        The episode ended with the action just applied; the row then already
        describes the first decision of the env's next episode.
    returns : ndarray of float64, shape (b, num_players)
        The finished episode's returns where ``done``, 0 elsewhere.
    episode : ndarray of int64, shape (b,)
        How many episodes the env has started (a driver draws a new opponent
        profile whenever it changes).
    """

    envs: np.ndarray
    player: np.ndarray
    obs: np.ndarray
    mask: np.ndarray
    done: np.ndarray
    returns: np.ndarray
    episode: np.ndarray


class BatchedEnv(Protocol):
    """``num_envs`` copies of a game stepped together (see :class:`games.environment.OpenSpielEnv`)."""

    num_envs: int
    num_players: int
    num_actions: int
    obs_dim: int

    def reset(self, rng=None) -> EnvStep:
        """Start a new episode in every env (``rng``: a generator or an int seed replacing the env's own)."""

    def step(self, envs: np.ndarray, actions: np.ndarray) -> EnvStep:
        """Apply one action per env listed, for the seat that was to act there."""


@runtime_checkable
class EnvironmentGame(Protocol):
    """A game that is only an environment: no game tree, played through :meth:`batched_env` (see
    :func:`games.make_env`); only learned oracles and sampled evaluation apply to it."""

    num_players: int
    num_actions: int
    obs_dim: int

    def batched_env(self, num_envs: int, rng=None, **options) -> BatchedEnv:
        """``num_envs`` copies of the game stepped together (``rng``: a generator or an int seed)."""


def is_environment_game(game) -> bool:
    """Whether ``game`` is played only as an environment: an object (not a class) with a callable ``batched_env``.

    Examples
    --------
    >>> from games.environment import ObservationGame
    >>> is_environment_game(ObservationGame("tic_tac_toe")), is_environment_game("kuhn_poker")
    (True, False)
    """
    return not isinstance(game, type) and callable(getattr(game, "batched_env", None))


def check_step(envs, actions, num_envs: int, num_actions: int, legal) -> tuple:
    """``envs`` and ``actions`` of a ``step`` call as int64 arrays, or a ``ValueError`` that says what is wrong.

    ``legal(envs, actions)`` says, for valid indices, which actions are legal
    where they are played. Every batched env of this package checks its input
    with this function, so that all give the same messages.

    Examples
    --------
    >>> check_step([1], [0], 2, 3, lambda e, a: np.ones(e.size, bool))
    (array([1]), array([0]))
    >>> check_step([1, 1], [0, 2], 2, 3, lambda e, a: np.ones(e.size, bool))
    Traceback (most recent call last):
    ...
    ValueError: envs must not repeat an env (one action per env and step).
    """
    envs, actions = np.asarray(envs), np.asarray(actions)
    if envs.ndim != 1 or not (envs.size == 0 or np.issubdtype(envs.dtype, np.integer)):
        raise ValueError(f"envs must be a 1-D array of env indices; got shape {envs.shape}, dtype {envs.dtype}.")
    if actions.shape != envs.shape or not (actions.size == 0 or np.issubdtype(actions.dtype, np.integer)):
        raise ValueError(f"actions must be integers, one per env in envs (shape {envs.shape}); "
                         f"got shape {actions.shape}, dtype {actions.dtype}.")
    envs, actions = envs.astype(np.int64, copy=False), actions.astype(np.int64, copy=False)
    if envs.size == 0:
        return envs, actions
    if envs.min() < 0 or envs.max() >= num_envs:
        raise ValueError(f"envs must lie in [0, {num_envs}); got {envs.min()}..{envs.max()}.")
    if np.bincount(envs, minlength=num_envs).max() > 1:
        raise ValueError("envs must not repeat an env (one action per env and step).")
    bad = (actions < 0) | (actions >= num_actions)
    if not bad.any():
        bad = ~legal(envs, actions)
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise ValueError(f"actions[{j}] = {int(actions[j])} is not legal in env {int(envs[j])}; "
                         "choose from the env's mask.")
    return envs, actions
