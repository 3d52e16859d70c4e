"""The environment of a learned best response: one learner against a fixed mixture of opponents.

The learner sits in seat ``player`` of an OpenSpiel game. Everything else
(chance and the other seats) is part of the environment: at the start of each
episode an opponent profile is drawn from an :class:`OpponentMixture`, and its
policies play the other seats until the learner has to move again or the game
ends. The only reward is the learner's return at the end of the game.

:class:`VectorEnv` steps ``num_envs`` such games side by side so that the
learner's network sees one batch per step; finished games restart at once
(the observation returned for them is the first one of the next episode).
The Python loop per game is kept to the pyspiel calls it needs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from games.validation import is_integer
from psro.game_tree import PlayerInfostates
from psro.policies import check_policy

__all__ = [
    "EpisodeStats",
    "OpponentMixture",
    "StatePolicy",
    "Step",
    "TabularStatePolicy",
    "VectorEnv",
    "play_episodes",
]


class StatePolicy(Protocol):
    """Anything that gives action probabilities at a pyspiel state: tabular or neural policies."""

    def action_probabilities(self, state, player: int) -> np.ndarray:
        """Probabilities over all ``num_distinct_actions`` (zero on illegal ones)."""


class TabularStatePolicy:
    """A tabular policy array ``(num_infostates, num_actions)`` looked up by information-state string.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.game_tree import build_game_tree
    >>> from psro.policies import uniform_policy
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> policy = TabularStatePolicy(uniform_policy(tree.infostates[1]), tree.infostates[1])
    >>> state = tree.game.new_initial_state(); state.apply_action(0); state.apply_action(1); state.apply_action(0)
    >>> policy.action_probabilities(state, 1).tolist()
    [0.5, 0.5]
    """

    def __init__(self, policy: np.ndarray, infostates: PlayerInfostates):
        table = check_policy(policy, infostates, argname="policy")[0]
        self.policy = table
        self.infostates = infostates
        self._rows = dict(zip(infostates.keys, table))

    def action_probabilities(self, state, player: int) -> np.ndarray:
        """The row of the infostate of ``player`` at ``state``."""
        key = state.information_state_string(player)
        try:
            return self._rows[key]
        except KeyError:
            raise ValueError(f"infostate {key!r} of player {player} is not in this policy's table; "
                             "was it built for another game?") from None


@dataclass(frozen=True, eq=False)
class OpponentMixture:
    """A distribution over profiles of the other players' policies.

    Attributes
    ----------
    profiles : tuple of tuple
        Each profile has one :class:`StatePolicy` per seat (``None`` at the
        learner's seat and wherever it is never needed).
    weights : ndarray
        A probability vector, one entry per profile.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.game_tree import build_game_tree
    >>> from psro.policies import uniform_policy
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> u = TabularStatePolicy(uniform_policy(tree.infostates[1]), tree.infostates[1])
    >>> OpponentMixture.single([None, u]).weights.tolist()
    [1.0]
    """

    profiles: tuple
    weights: np.ndarray

    def __post_init__(self):
        w = np.asarray(self.weights, dtype=np.float64).reshape(-1)
        if len(self.profiles) != w.size or w.size == 0:
            raise ValueError(f"weights needs one entry per profile ({len(self.profiles)}); got {w.size}.")
        if not np.all(np.isfinite(w)) or np.any(w < 0) or not math.isclose(w.sum(), 1.0, abs_tol=1e-6):
            raise ValueError("weights must be a probability vector (non-negative, summing to one).")
        object.__setattr__(self, "profiles", tuple(tuple(p) for p in self.profiles))
        object.__setattr__(self, "weights", w / w.sum())
        object.__setattr__(self, "_cumulative", np.cumsum(self.weights))

    @classmethod
    def single(cls, profile: Sequence) -> OpponentMixture:
        """One fixed profile, e.g. the aggregated behaviour policies of a meta-strategy.

        Examples
        --------
        See :class:`OpponentMixture`.
        """
        return cls((tuple(profile),), np.ones(1))

    @classmethod
    def from_populations(cls, player: int, populations: Sequence, marginals: Sequence,
                         infostates: Sequence[PlayerInfostates]) -> OpponentMixture:
        """Independent mixtures over tabular populations ``(k_q, I_q, A)``: one profile per joint support point.

        Examples
        --------
        >>> import pyspiel
        >>> from psro.game_tree import build_game_tree
        >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
        >>> pure = np.zeros((2, 6, 2)); pure[0, :, 0] = 1; pure[1, :, 1] = 1
        >>> mix = OpponentMixture.from_populations(0, [None, pure], [None, [0.25, 0.75]], tree.infostates)
        >>> len(mix.profiles), mix.weights.tolist()
        (2, [0.25, 0.75])
        """
        n = len(infostates)
        if len(populations) != n or len(marginals) != n:
            raise ValueError(f"populations and marginals need one entry per player ({n}).")
        seats = []
        for q in range(n):
            if q == player:
                seats.append([(None, 1.0)])
                continue
            w = np.asarray(marginals[q], dtype=np.float64)
            pols = np.asarray(populations[q], dtype=np.float64)
            if pols.ndim != 3 or w.shape != (pols.shape[0],):
                raise ValueError(f"marginals[{q}] must have one weight per policy of populations[{q}] "
                                 f"({pols.shape[0] if pols.ndim == 3 else '?'}); got shape {w.shape}.")
            seats.append([(TabularStatePolicy(pols[i], infostates[q]), w[i]) for i in np.flatnonzero(w > 0)])
        profiles, weights = [()], [1.0]
        for seat in seats:
            profiles = [prof + (pol,) for prof in profiles for pol, _ in seat]
            weights = [wt * w for wt in weights for _, w in seat]
        return cls(tuple(profiles), np.array(weights) / np.sum(weights))

    def sample(self, rng: np.random.Generator) -> int:
        """Index of a profile drawn with probability ``weights``."""
        if len(self.profiles) == 1:
            return 0
        return min(int(np.searchsorted(self._cumulative, rng.random(), side="right")), len(self.profiles) - 1)


@dataclass(frozen=True, eq=False)
class Step:
    """What :meth:`VectorEnv.step` returns, one row per game.

    Attributes
    ----------
    obs : ndarray, float32, shape (num_envs, obs_dim)
        The learner's next observation (of the new episode where ``done``).
    mask : ndarray of bool, shape (num_envs, num_actions)
        Its legal actions.
    reward : ndarray, float32, shape (num_envs,)
        The learner's return where the game just ended, 0 elsewhere.
    done : ndarray of bool, shape (num_envs,)
    """

    obs: np.ndarray
    mask: np.ndarray
    reward: np.ndarray
    done: np.ndarray


def _sample(probs, u: float) -> int:
    """Index drawn from an unnormalised probability vector with the uniform number ``u``.

    A plain loop: the vectors are a handful of actions long, where numpy's call overhead dominates.
    """
    if isinstance(probs, np.ndarray):
        probs = probs.tolist()
    x = u * sum(probs)
    acc, last = 0.0, 0
    for i, p in enumerate(probs):
        if p > 0:
            acc += p
            last = i
            if x < acc:
                return i
    return last


class VectorEnv:
    """``num_envs`` games where the learner in seat ``player`` meets opponents drawn from a mixture.

    Parameters
    ----------
    game : pyspiel.Game
        A sequential game with information-state tensors.
    player : int
        The learner's seat.
    opponents : OpponentMixture
    num_envs : int
    rng : numpy.random.Generator or int
        Drives chance, the opponents' actions and the profile draws.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.game_tree import build_game_tree
    >>> from psro.policies import uniform_policy
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> opp = OpponentMixture.single([None, TabularStatePolicy(uniform_policy(tree.infostates[1]), tree.infostates[1])])
    >>> env = VectorEnv(tree.game, 0, opp, num_envs=4, rng=0)
    >>> obs, mask = env.reset()
    >>> obs.shape, mask.tolist()[0]
    ((4, 11), [True, True])
    >>> step = env.step(np.ones(4, dtype=np.int64))   # everyone bets
    >>> step.reward.shape, step.done.dtype
    ((4,), dtype('bool'))
    """

    def __init__(self, game, player: int, opponents: OpponentMixture, num_envs: int = 16, rng=None):
        gtype = game.get_type()
        if not gtype.provides_information_state_tensor:
            raise ValueError(f"game {game} does not provide information-state tensors, which the RL oracles need.")
        if not 0 <= player < game.num_players():
            raise ValueError(f"player must be in [0, {game.num_players()}); got {player}.")
        if not is_integer(num_envs) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int; got {num_envs!r}.")
        if not isinstance(opponents, OpponentMixture):
            raise TypeError(f"opponents must be an OpponentMixture; got {type(opponents).__name__}.")
        for k, prof in enumerate(opponents.profiles):
            if len(prof) != game.num_players():
                raise ValueError(f"opponents.profiles[{k}] needs one entry per seat ({game.num_players()}).")
        self.game, self.player, self.opponents = game, int(player), opponents
        self.num_envs = int(num_envs)
        self.rng = np.random.default_rng(rng)
        (self.obs_dim,) = game.information_state_tensor_shape()
        self.num_actions = game.num_distinct_actions()
        self._states: list = [None] * self.num_envs
        self._profiles: list = [None] * self.num_envs
        self.episode_returns: list = []   # returns of finished episodes, in the order they ended
        self.episode_envs: list = []      # the game each of them was played in

    # ----------------------------------------------------------------- internals
    def _advance(self, state, profile) -> None:
        """Play chance and the opponents until the learner must move or the game is over."""
        rng, me = self.rng, self.player
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes())
                state.apply_action(actions[_sample(probs, rng.random())])
                continue
            q = state.current_player()
            if q == me:
                return
            policy = profile[q]
            if policy is None:
                raise ValueError(f"the opponent profile has no policy for seat {q}.")
            state.apply_action(_sample(policy.action_probabilities(state, q), rng.random()))

    def _new_episode(self, i: int) -> None:
        while True:
            profile = self.opponents.profiles[self.opponents.sample(self.rng)]
            state = self.game.new_initial_state()
            self._advance(state, profile)
            if not state.is_terminal():
                self._states[i], self._profiles[i] = state, profile
                return
            self.episode_returns.append(state.returns()[self.player])   # over before the learner moved
            self.episode_envs.append(i)

    def _observe(self, obs: np.ndarray, mask: np.ndarray, i: int) -> None:
        state = self._states[i]
        obs[i] = state.information_state_tensor(self.player)
        mask[i, state.legal_actions()] = True

    # ----------------------------------------------------------------- the API
    def reset(self) -> tuple:
        """Start a new episode in every game; return ``(obs, mask)``."""
        obs = np.empty((self.num_envs, self.obs_dim), dtype=np.float32)
        mask = np.zeros((self.num_envs, self.num_actions), dtype=bool)
        for i in range(self.num_envs):
            self._new_episode(i)
            self._observe(obs, mask, i)
        return obs, mask

    def step(self, actions) -> Step:
        """Apply one learner action per game, play on to the learner's next turn, restart finished games."""
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},); got {actions.shape}.")
        obs = np.empty((self.num_envs, self.obs_dim), dtype=np.float32)
        mask = np.zeros((self.num_envs, self.num_actions), dtype=bool)
        reward = np.zeros(self.num_envs, dtype=np.float32)
        done = np.zeros(self.num_envs, dtype=bool)
        for i, action in enumerate(actions.tolist()):
            state = self._states[i]
            state.apply_action(action)
            self._advance(state, self._profiles[i])
            if state.is_terminal():
                ret = state.returns()[self.player]
                reward[i], done[i] = ret, True
                self.episode_returns.append(ret)
                self.episode_envs.append(i)
                self._new_episode(i)
            self._observe(obs, mask, i)
        return Step(obs, mask, reward, done)


@dataclass(frozen=True)
class EpisodeStats:
    """Mean return of a batch of evaluation episodes, with its standard error.

    Attributes
    ----------
    mean : float
    stderr : float
    episodes : int
    """

    mean: float
    stderr: float
    episodes: int


def play_episodes(env: VectorEnv, act, episodes: int) -> EpisodeStats:
    """Play ``episodes`` full episodes with ``act(obs, mask) -> actions`` and summarise the returns.

    Every game plays the same number of episodes and only its first ones
    count, so short episodes (which finish first) are not over-represented.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.game_tree import build_game_tree
    >>> from psro.policies import uniform_policy
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> opp = OpponentMixture.single([None, TabularStatePolicy(uniform_policy(tree.infostates[1]), tree.infostates[1])])
    >>> env = VectorEnv(tree.game, 0, opp, num_envs=8, rng=0)
    >>> stats = play_episodes(env, lambda obs, mask: mask.argmax(axis=1), 4000)   # always pass
    >>> abs(stats.mean - (-0.5)) < 4 * stats.stderr   # folds to the bets uniform makes half the time
    True
    """
    if episodes < 1:
        raise ValueError(f"episodes must be positive; got {episodes}.")
    quota = -(-episodes // env.num_envs)
    env.episode_returns, env.episode_envs = [], []
    counts = np.zeros(env.num_envs, dtype=np.int64)
    obs, mask = env.reset()
    seen = 0
    while counts.min() < quota:
        step = env.step(act(obs, mask))
        obs, mask = step.obs, step.mask
        np.add.at(counts, env.episode_envs[seen:], 1)
        seen = len(env.episode_envs)
    envs = np.asarray(env.episode_envs)
    rets = np.asarray(env.episode_returns, dtype=np.float64)
    # the first `quota` episodes of every game, in order
    rank = np.zeros(envs.size, dtype=np.int64)
    for i in range(env.num_envs):
        where = np.flatnonzero(envs == i)
        rank[where] = np.arange(where.size)
    returns = rets[rank < quota]
    episodes = returns.size
    env.episode_returns, env.episode_envs = [], []
    stderr = float(returns.std(ddof=1) / math.sqrt(episodes)) if episodes > 1 else math.nan
    return EpisodeStats(float(returns.mean()), stderr, episodes)
