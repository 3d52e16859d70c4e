"""Scaffolding shared by the learned oracles (:mod:`psro.oracles.learned.dqn`, :mod:`psro.oracles.learned.ppo`).

The parts of a training run that do not depend on the learning rule: checking
the integer settings of a config, seeding and building the vector of games,
the network a run starts from (fresh, or a copy of a previous response: a warm
start), and the final evaluation of the trained policy, greedy or sampled from
its softmax, packed into a :class:`TrainingResult`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import torch

from games.validation import is_integer
from psro.oracles.learned.env import EpisodeStats, OpponentMixture, VectorEnv, play_episodes
from psro.oracles.learned.networks import MODES, NeuralPolicy, masked_scores

__all__ = ["TrainingResult", "check_positive_ints", "seeded_env", "initial_network", "evaluated_result"]


@dataclass(frozen=True, eq=False)
class TrainingResult:
    """What a training run (:func:`psro.oracles.learned.dqn.train_dqn`, :func:`psro.oracles.learned.ppo.train_ppo`)
    returns.

    Attributes
    ----------
    policy : NeuralPolicy
        The trained network, in the mode it was evaluated in (by default
        ``"greedy"`` for DQN, ``"softmax"`` for PPO).
    evaluation : EpisodeStats
        Mean return of ``policy`` over the evaluation episodes.
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


def initial_network(game, mode: str, hidden: tuple, initial: NeuralPolicy | None, device) -> NeuralPolicy:
    """The network a training run starts from: fresh for ``game``, or a copy of ``initial`` (a warm start).

    A warm start keeps ``initial``'s layer widths (``hidden`` is then not
    used) and must fit the game's observations and actions (``ValueError``
    naming ``initial`` otherwise); ``initial`` itself is never modified.

    Examples
    --------
    >>> import pyspiel
    >>> game = pyspiel.load_game("kuhn_poker")
    >>> previous = NeuralPolicy.for_game(game, hidden=(8,))
    >>> net = initial_network(game, "greedy", (64,), previous, "cpu")
    >>> net.hidden, net.mode, net.network is previous.network
    ((8,), 'greedy', False)
    """
    fresh = NeuralPolicy.for_game(game, hidden=hidden, mode=mode, device=device)
    if initial is None:
        return fresh
    if not isinstance(initial, NeuralPolicy):
        raise TypeError(f"initial must be a NeuralPolicy (the response to start from); got {type(initial).__name__}.")
    initial.check_fits(fresh.obs_dim, fresh.num_actions, argname="initial")
    arch = {**initial.architecture(), "mode": mode, "provenance": None}
    return NeuralPolicy.from_arrays(arch, initial.to_arrays(), device=device)


def evaluated_result(env: VectorEnv, policy: NeuralPolicy, *, eval_episodes: int, training_steps: int,
                     seed: int, start: float, mode: str = "greedy") -> TrainingResult:
    """Evaluate ``policy`` in ``mode`` and pack the training run.

    ``"greedy"`` plays the highest legal score; ``"softmax"`` samples from
    the softmax of the legal scores with the environment's generator. The
    returned :attr:`TrainingResult.policy` is ``policy`` with ``mode`` set,
    so its value estimate is the value of the policy as returned.

    Parameters
    ----------
    env : VectorEnv
        The games the policy was trained on; the episodes finished so far
        count as training episodes.
    policy : NeuralPolicy
        The trained network (its scores are Q-values or logits).
    eval_episodes : int
        Episodes to play.
    training_steps : int
        Learner decisions used for training.
    seed : int
        The seed of the run, recorded in the result.
    start : float
        ``time.perf_counter()`` at the start of the run.
    mode : {"greedy", "softmax"}

    Returns
    -------
    TrainingResult

    Examples
    --------
    >>> import pyspiel
    >>> game = pyspiel.load_game("kuhn_poker")
    >>> untrained = NeuralPolicy.for_game(game, mode="greedy")
    >>> _, env = seeded_env(game, 0, OpponentMixture.single([None, untrained]), num_envs=4, seed=0)   # self-play
    >>> result = evaluated_result(env, untrained, eval_episodes=8, training_steps=0, seed=0,
    ...                           start=time.perf_counter(), mode="softmax")
    >>> result.training_episodes, result.evaluation.episodes, result.policy.mode
    (0, 8, 'softmax')
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}; got {mode!r}.")
    training_episodes = len(env.episode_returns)
    policy.mode = mode
    device = policy.device

    def act(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            scores = masked_scores(policy.network(torch.from_numpy(obs).to(device)),
                                   torch.from_numpy(mask).to(device))
        if mode == "greedy":
            return scores.argmax(dim=1).cpu().numpy()
        probs = torch.softmax(scores, dim=1).cpu().double().numpy() * mask
        cumulative = np.cumsum(probs, axis=1)
        u = env.rng.random(len(obs)) * cumulative[:, -1]
        return np.minimum((cumulative <= u[:, None]).sum(axis=1), mask.shape[1] - 1)

    evaluation = play_episodes(env, act, eval_episodes)
    return TrainingResult(policy=policy, evaluation=evaluation, training_steps=training_steps,
                          training_episodes=training_episodes, seconds=time.perf_counter() - start, seed=seed)
