"""The learner's decision problem against fixed opponents, sampled by play: what the model-based response
(:mod:`psro.oracles.learned.model_based`, a table) and the neural response (:mod:`psro.oracles.learned.neural_br`,
a Q-network) both solve.

Against fixed opponents, a player with perfect recall faces a finite decision problem over its own information
states: from state ``s`` action ``a`` leads to its next state ``s'`` (or to the end of the game with some return)
with probabilities that chance and the opponents alone decide. :class:`DecisionSampler` records the learner's
decisions in a :class:`~psro.oracles.learned.env.VectorEnv` round after round (whole episodes only), a state being
the learner's observation; :class:`DecisionModel` holds them.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from games.validation import check_real, is_integer
from psro.oracles.learned.env import VectorEnv, sample_rows
from psro.oracles.learned.observation_table import observation_rows
from psro.oracles.learned.training import check_positive_ints

__all__ = ["DecisionModel", "DecisionSampler", "check_sampling", "sample_decisions"]


def check_sampling(config) -> None:
    """Check the sampling settings a config shares with :class:`ModelBRConfig` (``total_steps``, ``num_envs``,
    ``rounds``, ``explore``, ``eval_episodes``, ``seed``), naming the field."""
    check_positive_ints(config, ("total_steps", "num_envs", "rounds", "eval_episodes"))
    check_real(config.explore, "explore", minimum=0.0, maximum=1.0)
    if config.explore == 0.0 and config.rounds > 1:
        raise ValueError("explore must be above 0 when rounds > 1: the later rounds must still try every "
                         "action (e.g. explore: 0.5), or use rounds: 1.")
    if config.total_steps < config.num_envs:
        raise ValueError(f"total_steps ({config.total_steps}) must be at least num_envs ({config.num_envs}), one "
                         "decision per game; raise total_steps or lower num_envs.")
    if not is_integer(config.seed):
        raise TypeError(f"seed must be an int; got {config.seed!r}.")


@dataclass(frozen=True, eq=False)
class DecisionModel:
    """The learner's sampled decisions: one entry per decision, the states numbered in order of first visit.

    Attributes
    ----------
    observations : ndarray, float32, shape (num_states, key_size)
        Each state's observation (its first ``key_size`` entries: the sampler's key).
    legal : ndarray of bool, shape (num_states, num_actions)
    state, action : ndarray of int64, shape (decisions,)
    next_state : ndarray of int64
        The learner's next state in the same episode, -1 where the episode ended.
    reward : ndarray of float64
        The learner's return where the episode ended, 0 elsewhere.
    overflow : bool
        Play visited more than ``max_states`` states (the arrays hold what was sampled before).
    """

    observations: np.ndarray
    legal: np.ndarray
    state: np.ndarray
    action: np.ndarray
    next_state: np.ndarray
    reward: np.ndarray
    overflow: bool = False

    @property
    def num_states(self) -> int:
        return int(self.observations.shape[0])


class DecisionSampler:
    """Records the learner's decisions in ``env`` round after round, its states numbered across rounds (a state
    being the first ``key_size`` entries of the observation; None: all of it).

    A round (:meth:`play`) restarts every game, plays about ``steps`` decisions with a behaviour policy, then
    plays on, starting no new episode, until every game has finished the episode it was in: only whole episodes
    are kept, and none is left out for being long (leaving out the episodes still running at a cut-off would
    favour short ones). Whatever the behaviour, the estimate of where an action leads is unbiased: the learner's
    choices elsewhere do not change it.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.oracles.learned.env import OpponentMixture
    >>> from psro.policies.acting import UniformPolicy
    >>> env = VectorEnv(pyspiel.load_game("kuhn_poker"), 0, OpponentMixture.single([None, UniformPolicy(2)]),
    ...                 num_envs=8, rng=0)
    >>> sampler = DecisionSampler(env, max_states=100)
    >>> sampler.play(800)
    >>> model = sampler.model()
    >>> model.num_states, bool(np.all(model.reward[model.next_state >= 0] == 0))   # returns come at the end only
    (6, True)
    """

    def __init__(self, env: VectorEnv, max_states: int, key_size: int | None = None):
        self.env, self.max_states = env, int(max_states)
        self.key_size = env.obs_dim if key_size is None else int(key_size)
        self.ids: dict = {}
        self.observations: list = []
        self.legal: list = []
        self.chunks: list = []
        self.overflow = False

    def numbered(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The state number of each row of ``obs`` (new observations get the next numbers, in order of first
        appearance)."""
        rows = np.ascontiguousarray(obs[:, :self.key_size], dtype=np.float32)
        distinct, first, inverse = np.unique(observation_rows(rows), return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        number = np.empty(distinct.size, dtype=np.int64)
        ids, width = self.ids, distinct.dtype.itemsize
        raw = distinct.tobytes()
        for u in order.tolist():                 # (the keys ObservationTablePolicy looks up)
            key = raw[u * width:(u + 1) * width]
            k = ids.get(key)
            if k is None:
                k = ids[key] = len(ids)
                self.observations.append(rows[first[u]].copy())
                self.legal.append(mask[first[u]].copy())
            number[u] = k
        return number[inverse.reshape(-1)]

    def play(self, steps: int, greedy: np.ndarray | None = None, explore: float = 1.0) -> None:
        """One round of about ``steps`` decisions: with probability ``explore`` a uniform legal action, else
        ``greedy[state]`` (uniform where ``greedy`` is None, does not know the state or holds -1 for it)."""
        env = self.env
        n = env.num_envs
        obs, mask = env.reset()
        current = self.numbered(obs, mask)
        running = np.ones(n, dtype=bool)     # the game is still in an episode that started before the cut-off
        for t in itertools.count():
            if t * n >= steps and not running.any():
                break
            action = sample_rows(mask.astype(np.float64), mask, env.rng.random(n))
            if greedy is not None and explore < 1.0:
                known = current < len(greedy)
                known[known] = greedy[current[known]] >= 0   # -1: no action of the state tried yet
                use = known & (env.rng.random(n) >= explore)
                action[use] = greedy[current[use]]
            step = env.step(action)
            following = self.numbered(step.obs, step.mask)
            keep = running.copy()
            self.chunks.append((current[keep], action[keep], np.where(step.done, -1, following)[keep],
                                step.reward.astype(np.float64)[keep]))
            if (t + 1) * n >= steps:
                running &= ~step.done      # past the cut-off: a finished game starts nothing that counts
            current, mask = following, step.mask
            if len(self.ids) > self.max_states:
                self.overflow = True
                return

    def model(self) -> DecisionModel:
        """Everything recorded so far."""
        state, action, next_state, reward = (np.concatenate(parts) for parts in zip(*self.chunks))
        return DecisionModel(np.asarray(self.observations, dtype=np.float32).reshape(-1, self.key_size),
                             np.asarray(self.legal, dtype=bool).reshape(-1, self.env.num_actions), state, action,
                             next_state, reward, self.overflow)


def sample_decisions(env: VectorEnv, total_steps: int, max_states: int) -> DecisionModel:
    """``total_steps`` uniform random learner decisions in ``env`` (one round of :class:`DecisionSampler`).

    Examples
    --------
    >>> import pyspiel
    >>> from psro.oracles.learned.env import OpponentMixture
    >>> from psro.policies.acting import UniformPolicy
    >>> env = VectorEnv(pyspiel.load_game("kuhn_poker"), 0, OpponentMixture.single([None, UniformPolicy(2)]),
    ...                 num_envs=8, rng=0)
    >>> model = sample_decisions(env, 800, max_states=100)
    >>> model.num_states, model.state.size >= 800   # Kuhn's first player has 6 information states
    (6, True)
    """
    sampler = DecisionSampler(env, max_states)
    sampler.play(total_steps)
    return sampler.model()
