"""Scaffolding shared by the learned oracles (:mod:`psro.oracles.learned.dqn`, :mod:`psro.oracles.learned.ppo`).

The parts of a training run that do not depend on the learning rule: checking
the integer settings of a config, seeding and building the vector of games,
and the final evaluation of the greedy policy packed into a
:class:`TrainingResult`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import torch

from games.validation import is_integer
from psro.oracles.learned.env import EpisodeStats, OpponentMixture, VectorEnv, play_episodes
from psro.oracles.learned.networks import NeuralPolicy, masked_scores

__all__ = ["TrainingResult", "check_positive_ints", "seeded_env", "greedy_result"]


@dataclass(frozen=True, eq=False)
class TrainingResult:
    """What a training run (:func:`psro.oracles.learned.dqn.train_dqn`, :func:`psro.oracles.learned.ppo.train_ppo`)
    returns.

    Attributes
    ----------
    policy : NeuralPolicy
        The trained network (``mode="greedy"`` for DQN, ``"softmax"`` for PPO).
    evaluation : EpisodeStats
        Mean return of the greedy policy over the evaluation episodes.
    training_steps : int
        Learner decisions used for training.
    training_episodes : int
        Episodes finished during training.
    seconds : float
        Wall-clock seconds of training and evaluation.
    seed : int
    """

    policy: NeuralPolicy
    evaluation: EpisodeStats
    training_steps: int
    training_episodes: int
    seconds: float
    seed: int


def check_positive_ints(config, names: Iterable[str]) -> None:
    """Raise ``ValueError`` unless every field ``names`` of ``config`` is a positive int (bools are not).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> check_positive_ints(SimpleNamespace(total_steps=10), ["total_steps"])
    >>> check_positive_ints(SimpleNamespace(total_steps=0), ["total_steps"])
    Traceback (most recent call last):
    ...
    ValueError: total_steps must be a positive int; got 0.
    """
    for name in names:
        value = getattr(config, name)
        if not is_integer(value) or value < 1:
            raise ValueError(f"{name} must be a positive int; got {value!r}.")


def seeded_env(game, player: int, opponents: OpponentMixture, num_envs: int,
               seed: int) -> tuple[np.random.Generator, VectorEnv]:
    """Seed torch and a numpy generator with ``seed`` and build the games the learner plays.

    Everything random in a training run draws from these two: torch (network
    initialisation, sampling) and the returned generator (chance, opponents,
    exploration), which the environment shares.

    Examples
    --------
    >>> import pyspiel
    >>> game = pyspiel.load_game("kuhn_poker")
    >>> opponent = NeuralPolicy.for_game(game)   # any policy with action_probabilities(state, player)
    >>> rng, env = seeded_env(game, 0, OpponentMixture.single([None, opponent]), 4, seed=0)
    >>> obs, mask = env.reset()
    >>> obs.shape[0], mask.shape
    (4, (4, 2))
    """
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    return rng, VectorEnv(game, player, opponents, num_envs, rng)


def greedy_result(env: VectorEnv, policy: NeuralPolicy, *, eval_episodes: int, training_steps: int,
                  seed: int, start: float) -> TrainingResult:
    """Evaluate the greedy (highest legal score) play of ``policy.network`` and pack the training run.

    Parameters
    ----------
    env : VectorEnv
        The games the policy was trained on; the episodes finished so far
        count as training episodes.
    policy : NeuralPolicy
        The trained network (its scores are Q-values or logits).
    eval_episodes : int
        Episodes to play greedily.
    training_steps : int
        Learner decisions used for training.
    seed : int
        The seed of the run, recorded in the result.
    start : float
        ``time.perf_counter()`` at the start of the run.

    Returns
    -------
    TrainingResult

    Examples
    --------
    >>> import pyspiel
    >>> game = pyspiel.load_game("kuhn_poker")
    >>> untrained = NeuralPolicy.for_game(game, mode="greedy")
    >>> _, env = seeded_env(game, 0, OpponentMixture.single([None, untrained]), num_envs=4, seed=0)   # self-play
    >>> result = greedy_result(env, untrained, eval_episodes=8, training_steps=0, seed=0,
    ...                        start=time.perf_counter())
    >>> result.training_episodes, result.evaluation.episodes
    (0, 8)
    """
    training_episodes = len(env.episode_returns)

    def act(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            scores = masked_scores(policy.network(torch.from_numpy(obs)), torch.from_numpy(mask))
            return scores.argmax(dim=1).numpy()

    evaluation = play_episodes(env, act, eval_episodes)
    return TrainingResult(policy=policy, evaluation=evaluation, training_steps=training_steps,
                          training_episodes=training_episodes, seconds=time.perf_counter() - start, seed=seed)
