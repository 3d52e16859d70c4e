"""A DQN best response against a fixed opponent mixture, in one function you can read top to bottom.

Kept to what a best response needs: an
epsilon-greedy learner over ``num_envs`` parallel games, a uniform replay
buffer in numpy arrays, a target network copied every
``target_update_interval`` gradient steps, and the legal-action mask applied
both when acting and in the bootstrap ``max``. The learned policy is greedy
in the Q-values (:class:`psro.oracles.learned.networks.NeuralPolicy` with ``mode="greedy"``,
unless ``mode="softmax"`` asks for the softmax of the Q-values). ``initial``
warm-starts the Q-network from a previous response's weights, and ``device``
trains on a GPU where one exists.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from games.memory_limit import check_memory
from games.validation import is_integer
from psro.oracles.learned.env import OpponentMixture
from psro.oracles.learned.networks import NeuralPolicy, masked_scores
from psro.oracles.learned.training import (
    SCORE_LIMIT,
    Curve,
    TrainingResult,
    check_finite,
    check_hidden,
    check_positive_ints,
    check_real_fields,
    evaluated_result,
    initial_network,
    seeded_env,
)

__all__ = ["DQNConfig", "DQN_BOUNDS", "q_learning_loss", "q_update", "train_dqn"]


@dataclass(frozen=True)
class DQNConfig:
    """Settings of :func:`train_dqn` (defaults tuned on Kuhn poker).

    Examples
    --------
    >>> DQNConfig(total_steps=1000).num_envs
    16
    """

    total_steps: int = 20_000
    """learner decisions to train for, summed over the parallel games"""
    num_envs: int = 16
    """games stepped side by side (one network call per step for all of them)"""
    learning_rate: float = 1e-3
    """Adam step size"""
    buffer_size: int = 20_000
    """transitions kept in the replay buffer"""
    batch_size: int = 128
    """transitions per gradient step"""
    gradient_steps: int = 2
    """gradient steps per environment step of all games"""
    gamma: float = 1.0
    """discount (1: the return of a finite game)"""
    target_update_interval: int = 100
    """gradient steps between copies of the online network into the target network"""
    start_epsilon: float = 1.0
    """exploration rate at the start"""
    end_epsilon: float = 0.05
    """exploration rate after the decay"""
    exploration_fraction: float = 0.5
    """fraction of the steps over which epsilon decays linearly"""
    learning_starts: int = 500
    """transitions collected before the first gradient step"""
    double: bool = False
    """double DQN (van Hasselt et al. 2016): the online network picks the bootstrap action, the target network
    values it (False: the target network's own ``max``)"""
    hidden: tuple = (64,)
    """hidden layer widths of the Q-network"""
    eval_episodes: int = 2000
    """episodes played at the end (in the returned policy's mode) to estimate the response's value"""
    seed: int = 0
    """seeds torch and the numpy generator that drives chance, opponents and exploration"""
    chunk_steps: int = 1000
    """learner decisions per row of the learning curve (``learners.csv``; rounded up to whole steps of all games)"""

    def __post_init__(self):
        if not isinstance(self.double, bool):
            raise TypeError(f"double must be True or False; got {self.double!r}.")
        check_positive_ints(self, ("total_steps", "num_envs", "buffer_size", "batch_size", "gradient_steps",
                                   "target_update_interval", "eval_episodes", "chunk_steps"))
        if not is_integer(self.learning_starts) or self.learning_starts < 0:
            raise ValueError(f"learning_starts must be an int >= 0; got {self.learning_starts!r}.")
        check_real_fields(self, DQN_BOUNDS)
        if not 0 < self.exploration_fraction:
            raise ValueError(f"exploration_fraction must lie in (0, 1]; got {self.exploration_fraction!r}.")
        check_hidden(self)


#: ``(minimum, maximum, strict)`` of :class:`DQNConfig`'s real fields (all finite)
DQN_BOUNDS = {"learning_rate": (0.0, None, True), "gamma": (0.0, 1.0, False), "start_epsilon": (0.0, 1.0, False),
              "end_epsilon": (0.0, 1.0, False), "exploration_fraction": (0.0, 1.0, False)}


def q_learning_loss(q_network, target_network, sample: dict, *, gamma: float, double: bool) -> torch.Tensor:
    """DQN's loss on one minibatch: the mean squared error of ``Q(s, a)`` against ``r + gamma * max_legal
    Q_target(s', .)`` (``double``: ``Q_target(s', argmax_legal Q(s', .))``), the target held fixed; ``sample``
    holds the tensors ``obs``, ``action``, ``reward``, ``next_obs``, ``next_mask`` and ``done``. DQN's responses
    and NFSP's best-response networks take this step.

    Examples
    --------
    >>> q, target = nn.Linear(2, 2), nn.Linear(2, 2)
    >>> with torch.no_grad():
    ...     _ = q.weight.zero_(), q.bias.fill_(1.0), target.weight.zero_(), target.bias.copy_(torch.tensor([2.0, 5.0]))
    >>> sample = {"obs": torch.zeros(1, 2), "action": torch.tensor([0]), "reward": torch.tensor([1.0]),
    ...           "next_obs": torch.zeros(1, 2), "next_mask": torch.tensor([[True, False]]),
    ...           "done": torch.tensor([0.0])}
    >>> q_learning_loss(q, target, sample, gamma=0.5, double=False).item()   # (1 + 0.5 * 2 - 1) ** 2
    1.0
    """
    with torch.no_grad():
        target_scores = masked_scores(target_network(sample["next_obs"]), sample["next_mask"])
        if double:
            best = masked_scores(q_network(sample["next_obs"]), sample["next_mask"]).argmax(dim=1, keepdim=True)
            next_q = target_scores.gather(1, best).squeeze(1)
        else:
            next_q = target_scores.max(dim=1).values
        target = sample["reward"] + gamma * next_q * (1.0 - sample["done"])
    predicted = q_network(sample["obs"]).gather(1, sample["action"][:, None]).squeeze(1)
    return nn.functional.mse_loss(predicted, target)


def q_update(q_network, target_network, optimizer, sample: dict, updates: int, *, gamma: float, double: bool,
             target_update_interval: int, checked) -> tuple:
    """One DQN update, as DQN's responses and NFSP's best-response networks take it: :func:`q_learning_loss` on
    ``sample``, ``checked(loss)`` (which raises where the loss is not finite), one step of ``optimizer``, and the
    target network's copy of the Q-network every ``target_update_interval`` updates. Returns ``(loss, updates)``:
    the loss (detached) and the count of updates with this one.

    Examples
    --------
    >>> q, target = nn.Linear(2, 2), nn.Linear(2, 2)
    >>> sample = {"obs": torch.zeros(1, 2), "action": torch.tensor([0]), "reward": torch.tensor([1.0]),
    ...           "next_obs": torch.zeros(1, 2), "next_mask": torch.tensor([[True, True]]), "done": torch.tensor([1.0])}
    >>> optimizer = torch.optim.SGD(q.parameters(), lr=0.1)
    >>> loss, updates = q_update(q, target, optimizer, sample, 1, gamma=1.0, double=False, target_update_interval=2,
    ...                          checked=lambda loss: None)
    >>> updates, all(torch.equal(a, b) for a, b in zip(q.parameters(), target.parameters()))   # (copied at 2)
    (2, True)
    """
    loss = q_learning_loss(q_network, target_network, sample, gamma=gamma, double=double)
    checked(loss.detach())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    updates += 1
    if updates % target_update_interval == 0:
        target_network.load_state_dict(q_network.state_dict())
    return loss.detach(), updates


def train_dqn(game, player: int, opponents: OpponentMixture, config: DQNConfig = DQNConfig(), *,
              initial: NeuralPolicy | None = None, mode: str = "greedy", device="cpu", shaping=None,
              callback=None) -> TrainingResult:
    """Train a Q-network for seat ``player`` against ``opponents`` and evaluate it in ``mode``.

    Parameters
    ----------
    game : pyspiel.Game
    player : int
    opponents : OpponentMixture
        An opponent profile is drawn from it at the start of every episode.
    config : DQNConfig
    initial : NeuralPolicy, optional
        Warm start: the Q-network (and its target network) start from a copy of these weights.
    mode : {"greedy", "softmax"}
        How the returned policy plays (and is evaluated).
    device : str or torch.device
        Where the networks train; the environment and the replay buffer stay on the CPU.
    shaping : callable, optional
        ``shaping(env, step) -> rewards``: the rewards stored for the transitions of ``step`` instead of
        ``step.reward`` (float32, one per game). The environment then records, in ``env.intermediate``, the
        state right after the learner's move (:meth:`psro.oracles.learned.env.VectorEnv.step`); the minimax
        exploiter (:mod:`psro.oracles.learned.minimax_exploiter`) reads the main agent's Q-values there.
    callback : callable, optional
        ``callback(steps, q_policy)`` after every environment step of all games (``steps``: learner decisions
        so far), e.g. to evaluate the network during training; it must not draw from the training's generators.

    Returns
    -------
    TrainingResult

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.policies import uniform_policy
    >>> from psro.policies.acting import TabularStatePolicy
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> uniform = TabularStatePolicy(uniform_policy(tree.infostates[1]), tree.infostates[1])
    >>> result = train_dqn(tree.game, 0, OpponentMixture.single([None, uniform]),
    ...                    DQNConfig(total_steps=1000, eval_episodes=100))
    >>> result.training_steps, result.policy.mode
    (992, 'greedy')
    """
    start = time.perf_counter()
    rng, env = seeded_env(game, player, opponents, config.num_envs, config.seed)
    env.record_intermediate = shaping is not None
    q_policy = initial_network(game, "greedy", config.hidden, initial, device)
    q_network, device = q_policy.network, q_policy.device
    target_network = copy.deepcopy(q_network)
    optimizer = torch.optim.Adam(q_network.parameters(), lr=config.learning_rate)

    # ---- replay buffer
    size, d, num_a = config.buffer_size, env.obs_dim, env.num_actions
    check_memory(size * (8 * d + num_a + 16), f"DQN's replay buffer (buffer_size={size}, observations of {d})",
                 "Use a smaller buffer_size.")
    buf_obs = np.zeros((size, d), dtype=np.float32)
    buf_action = np.zeros(size, dtype=np.int64)
    buf_reward = np.zeros(size, dtype=np.float32)
    buf_next_obs = np.zeros((size, d), dtype=np.float32)
    buf_next_mask = np.zeros((size, num_a), dtype=bool)
    buf_done = np.zeros(size, dtype=np.float32)
    filled, cursor = 0, 0

    num_iterations = config.total_steps // config.num_envs
    decay_iterations = max(1, int(config.exploration_fraction * num_iterations))
    obs, mask = env.reset()
    updates = 0
    curve = Curve(env)   # (a row every chunk_steps decisions: learners.csv)
    chunk = -(-config.chunk_steps // config.num_envs)   # (steps of all games per row)
    with curve.kept():
        for iteration in range(num_iterations):
            if iteration and iteration % chunk == 0:
                curve.end_chunk(iteration * config.num_envs, config.learning_rate)
            # ---- act: epsilon-greedy over legal actions
            epsilon = config.start_epsilon + (config.end_epsilon - config.start_epsilon) * min(
                1.0, iteration / decay_iterations)
            with torch.no_grad():
                scores = q_network(torch.from_numpy(obs).to(device))
                check_finite(scores, "Q-values", config, "dqn", iteration * config.num_envs, SCORE_LIMIT)
                greedy = masked_scores(scores, torch.from_numpy(mask).to(device)).argmax(dim=1).cpu().numpy()
            random_legal = (rng.random(mask.shape) * mask).argmax(axis=1)
            actions = np.where(rng.random(config.num_envs) < epsilon, random_legal, greedy)
            step = env.step(actions)
            reward = step.reward if shaping is None else shaping(env, step)

            # ---- store the transitions
            rows = (cursor + np.arange(config.num_envs)) % size
            buf_obs[rows], buf_action[rows], buf_reward[rows] = obs, actions, reward
            buf_next_obs[rows], buf_next_mask[rows], buf_done[rows] = step.obs, step.mask, step.done
            cursor = (cursor + config.num_envs) % size
            filled = min(size, filled + config.num_envs)
            obs, mask = step.obs, step.mask
            if callback is not None:
                callback((iteration + 1) * config.num_envs, q_policy)

            # ---- learn: regress Q(s, a) on r + gamma * max_legal Q_target(s', .) (double: Q_target(s', argmax Q))
            if filled < config.learning_starts:
                continue
            for _ in range(config.gradient_steps):
                idx = rng.integers(0, filled, config.batch_size)

                sample = {name: torch.from_numpy(array[idx]).to(device) for name, array in (
                    ("obs", buf_obs), ("action", buf_action), ("reward", buf_reward), ("next_obs", buf_next_obs),
                    ("next_mask", buf_next_mask), ("done", buf_done))}
                loss, updates = q_update(
                    q_network, target_network, optimizer, sample, updates, gamma=config.gamma, double=config.double,
                    target_update_interval=config.target_update_interval,
                    checked=lambda loss: check_finite(loss, "loss", config, "dqn", (iteration + 1) * config.num_envs))
                curve.add(loss)
        curve.end_chunk(num_iterations * config.num_envs, config.learning_rate)

        return evaluated_result(env, q_policy, eval_episodes=config.eval_episodes, seed=config.seed, start=start,
                                training_steps=num_iterations * config.num_envs, mode=mode, config=config,
                                algorithm="dqn", curve=curve)
