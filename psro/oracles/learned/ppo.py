"""A PPO best response against a fixed opponent mixture, in one function you can read top to bottom.

Clipped-objective PPO with generalised advantage estimation over
``num_envs`` parallel games, separate actor and critic networks, logits of
illegal actions masked out, and a linearly annealed learning rate. The actor
is a :class:`psro.oracles.learned.networks.NeuralPolicy` with ``mode="softmax"``; it
is evaluated, and returned, as a softmax policy unless ``mode="greedy"`` is asked
for (then it plays its most likely legal action). ``initial`` warm-starts the
actor from a previous response's weights (the critic starts fresh), and
``device`` trains on a GPU where one exists.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from games.memory_limit import check_memory
from psro.oracles.learned.env import OpponentMixture
from psro.oracles.learned.networks import NeuralPolicy, PolicyNetwork, masked_scores
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

__all__ = ["PPOConfig", "PPO_BOUNDS", "train_ppo"]


@dataclass(frozen=True)
class PPOConfig:
    """Settings of :func:`train_ppo` (defaults tuned on Kuhn poker).

    Examples
    --------
    >>> PPOConfig(total_steps=1000).num_envs
    32
    """

    total_steps: int = 20_000
    """learner decisions to train for, summed over the parallel games"""
    num_envs: int = 32
    """games stepped side by side (one network call per step for all of them)"""
    num_steps: int = 16
    """steps per game in each rollout; a rollout has ``num_envs * num_steps`` transitions"""
    learning_rate: float = 1e-2
    """Adam step size at the start"""
    anneal_lr: bool = True
    """decay the step size linearly to zero"""
    gamma: float = 1.0
    """discount (1: the return of a finite game)"""
    gae_lambda: float = 0.95
    """lambda of generalised advantage estimation"""
    num_minibatches: int = 4
    """minibatches per epoch"""
    update_epochs: int = 4
    """passes over each rollout"""
    clip_coef: float = 0.2
    """PPO's ratio clipping"""
    ent_coef: float = 0.01
    """weight of the entropy bonus"""
    vf_coef: float = 0.5
    """weight of the value loss"""
    max_grad_norm: float = 0.5
    """gradient clipping norm"""
    hidden: tuple = (64,)
    """hidden layer widths of the actor and of the critic"""
    eval_episodes: int = 2000
    """episodes played at the end (in the returned policy's mode) to estimate the response's value"""
    seed: int = 0
    """seeds torch and the numpy generator that drives chance and the opponents"""

    def __post_init__(self):
        check_positive_ints(self, ("total_steps", "num_envs", "num_steps", "num_minibatches", "update_epochs",
                                   "eval_episodes"))
        if self.total_steps < self.num_envs * self.num_steps:
            raise ValueError(f"total_steps ({self.total_steps}) must be at least one rollout, "
                             f"num_envs * num_steps = {self.num_envs * self.num_steps}.")
        check_real_fields(self, PPO_BOUNDS)
        if not isinstance(self.anneal_lr, bool):
            raise TypeError(f"anneal_lr must be True or False; got {self.anneal_lr!r}.")
        check_hidden(self)


#: ``(minimum, maximum, strict)`` of :class:`PPOConfig`'s real fields: finite, and where a learner can work
#: (an entropy or value weight above 100 drowns the policy objective, whose advantages are normalised)
PPO_BOUNDS = {"learning_rate": (0.0, None, True), "gamma": (0.0, 1.0, False), "gae_lambda": (0.0, 1.0, False),
              "clip_coef": (0.0, None, True), "max_grad_norm": (0.0, None, True), "ent_coef": (0.0, 100.0, False),
              "vf_coef": (0.0, 100.0, False)}


def train_ppo(game, player: int, opponents: OpponentMixture, config: PPOConfig = PPOConfig(), *,
              initial: NeuralPolicy | None = None, mode: str = "softmax", device="cpu") -> TrainingResult:
    """Train an actor-critic for seat ``player`` against ``opponents`` and evaluate the actor in ``mode``.

    Parameters
    ----------
    game : pyspiel.Game
    player : int
    opponents : OpponentMixture
        An opponent profile is drawn from it at the start of every episode.
    config : PPOConfig
    initial : NeuralPolicy, optional
        Warm start: the actor starts from a copy of these weights.
    mode : {"softmax", "greedy"}
        How the returned actor plays (and is evaluated).
    device : str or torch.device
        Where the networks train; the environment stays on the CPU.

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
    >>> result = train_ppo(tree.game, 0, OpponentMixture.single([None, uniform]),
    ...                    PPOConfig(total_steps=1024, eval_episodes=100))
    >>> result.training_steps, result.policy.mode
    (1024, 'softmax')
    """
    start = time.perf_counter()
    rng, env = seeded_env(game, player, opponents, config.num_envs, config.seed)
    actor = initial_network(game, "softmax", config.hidden, initial, device)
    device = actor.device
    critic = PolicyNetwork(env.obs_dim, 1, config.hidden).to(device)
    params = list(actor.network.parameters()) + list(critic.parameters())
    optimizer = torch.optim.Adam(params, lr=config.learning_rate, eps=1e-5)

    # ---- rollout storage, (num_steps, num_envs, ...)
    shape = (config.num_steps, config.num_envs)
    check_memory(config.num_steps * config.num_envs * (4 * env.obs_dim + env.num_actions + 28),
                 f"PPO's rollout storage (num_steps={config.num_steps}, num_envs={config.num_envs}, observations of "
                 f"{env.obs_dim})", "Use fewer num_steps or num_envs.")
    roll_obs = torch.zeros((*shape, env.obs_dim), device=device)
    roll_mask = torch.zeros((*shape, env.num_actions), dtype=torch.bool, device=device)
    roll_action = torch.zeros(shape, dtype=torch.long, device=device)
    roll_logprob = torch.zeros(shape, device=device)
    roll_reward = torch.zeros(shape, device=device)
    roll_done = torch.zeros(shape, device=device)   # 1 where the observation starts a new episode
    roll_value = torch.zeros(shape, device=device)

    batch_size = config.num_envs * config.num_steps
    minibatch_size = max(1, batch_size // config.num_minibatches)
    num_iterations = config.total_steps // batch_size
    obs, mask = env.reset()
    next_obs, next_mask = torch.from_numpy(obs).to(device), torch.from_numpy(mask).to(device)
    next_done = torch.zeros(config.num_envs, device=device)
    curve = Curve(env)   # (one row per update: learners.csv)
    with curve.kept():
        for iteration in range(num_iterations):
            if config.anneal_lr:
                optimizer.param_groups[0]["lr"] = config.learning_rate * (1.0 - iteration / num_iterations)

            # ---- collect a rollout
            for t in range(config.num_steps):
                roll_obs[t], roll_mask[t], roll_done[t] = next_obs, next_mask, next_done
                with torch.no_grad():
                    logits = actor.network(next_obs)
                    check_finite(logits, "actor's action scores", config, "ppo", iteration * batch_size, SCORE_LIMIT)
                    dist = torch.distributions.Categorical(logits=masked_scores(logits, next_mask))
                    action = dist.sample()
                    roll_logprob[t] = dist.log_prob(action)
                    roll_value[t] = critic(next_obs).squeeze(1)
                roll_action[t] = action
                step = env.step(action.cpu().numpy())
                roll_reward[t] = torch.from_numpy(step.reward).to(device)
                next_obs, next_mask = torch.from_numpy(step.obs).to(device), torch.from_numpy(step.mask).to(device)
                next_done = torch.from_numpy(step.done.astype(np.float32)).to(device)

            # ---- generalised advantage estimates, backwards through the rollout
            with torch.no_grad():
                advantages = _advantages(roll_reward, roll_done, roll_value, critic(next_obs).squeeze(1), next_done,
                                         config)
                returns = advantages + roll_value

            # ---- optimise the clipped objective on minibatches
            b_obs, b_mask = roll_obs.reshape(batch_size, -1), roll_mask.reshape(batch_size, -1)
            b_action, b_logprob = roll_action.reshape(-1), roll_logprob.reshape(-1)
            b_adv, b_ret = advantages.reshape(-1), returns.reshape(-1)
            for _ in range(config.update_epochs):
                order = torch.randperm(batch_size).to(device)
                for lo in range(0, batch_size, minibatch_size):
                    mb = order[lo:lo + minibatch_size]
                    dist = torch.distributions.Categorical(logits=masked_scores(actor.network(b_obs[mb]), b_mask[mb]))
                    ratio = (dist.log_prob(b_action[mb]) - b_logprob[mb]).exp()
                    adv = b_adv[mb]
                    adv = (adv - adv.mean()) / (adv.std() + 1e-8) if mb.numel() > 1 else adv
                    pg_loss = torch.max(-adv * ratio,
                                        -adv * ratio.clamp(1 - config.clip_coef, 1 + config.clip_coef)).mean()
                    v_loss = 0.5 * (critic(b_obs[mb]).squeeze(1) - b_ret[mb]).pow(2).mean()
                    entropy = dist.entropy().mean()
                    loss = pg_loss - config.ent_coef * entropy + config.vf_coef * v_loss
                    check_finite(loss.detach(), "loss", config, "ppo", (iteration + 1) * batch_size)
                    curve.add(loss.detach(), entropy=entropy.detach())
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(params, config.max_grad_norm)
                    optimizer.step()
            curve.end_chunk((iteration + 1) * batch_size, optimizer.param_groups[0]["lr"])

        return evaluated_result(env, actor, eval_episodes=config.eval_episodes,
                                training_steps=num_iterations * batch_size, seed=config.seed, start=start, mode=mode,
                                config=config, algorithm="ppo", curve=curve)


def _advantages(reward: torch.Tensor, done: torch.Tensor, value: torch.Tensor, next_value: torch.Tensor,
                next_done: torch.Tensor, config: PPOConfig) -> torch.Tensor:
    """Generalised advantage estimates ``(num_steps, num_envs)`` of a rollout, computed backwards through it
    (``done[t]``: 1 where the observation of step ``t`` starts a new episode; ``next_value`` and ``next_done``: of the
    observation after the rollout)."""
    advantages = torch.zeros_like(reward)
    last_gae = torch.zeros_like(next_value)
    for t in reversed(range(reward.shape[0])):
        if t == reward.shape[0] - 1:
            not_done, following = 1.0 - next_done, next_value
        else:
            not_done, following = 1.0 - done[t + 1], value[t + 1]
        delta = reward[t] + config.gamma * following * not_done - value[t]
        last_gae = delta + config.gamma * config.gae_lambda * not_done * last_gae
        advantages[t] = last_gae
    return advantages
