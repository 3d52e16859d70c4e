"""Policy-gradient self-play: PPO self-play and magnetic mirror descent (MMD) with neural policies, both seats
learning at once.

These are the learners Rudolph et al. (ICLR 2026, "Reevaluating Policy Gradient Methods for Imperfect-Information
Games") found ahead of NFSP, PSRO, ESCHER and R-NaD on phantom tic-tac-toe and dark hex. Each seat has its own
actor (a softmax :class:`psro.oracles.learned.networks.NeuralPolicy` over the information-state tensor) and
critic, trained on that seat's own decisions: the reward of a decision is 0 until the seat's last decision of
the episode, whose reward is the seat's return. (One network for both seats is not offered: the
information-state tensor of phantom tic-tac-toe is the same for both seats at their first decisions, so a shared
network could not tell them apart.)

One **update** plays ``num_envs`` games side by side until every game has given ``num_steps`` decisions and
finished its episode (so updates, and iterations, end on episode boundaries), then updates each seat's networks
on its own decisions; an **iteration** (between snapshots into the populations) is ``updates_per_iteration``
updates. An update: generalised advantage estimates (``gamma``, ``gae_lambda``, per own decision), ``update_epochs``
passes in ``num_minibatches`` minibatches, advantages normalised per minibatch, and the loss

    clipped surrogate (``clip_coef``) - ``ent_coef`` * entropy + ``vf_coef`` * value loss (clipped like the ratio)
    + ``kl_coef`` * KL(new || old) + ``magnet_coef`` * KL(new || magnet)

with the gradient's norm clipped to ``max_grad_norm``. The output is each seat's current (last-iterate) actor.

* ``algorithm: ppo_self_play`` (:class:`PPOSelfPlay`, options :class:`PPOSelfPlayOptions`): ``kl_coef`` and
  ``magnet_coef`` 0. Defaults from the best PPO settings for classical phantom tic-tac-toe of the paper's
  benchmark (IIG-RL-Benchmark, ``best_hyperparameters/min_final_expl_hparams/ppo/classical_phantom_ttt``):
  learning rate 0.002, clip 0.05, entropy 0.1, value weight 0.0625, gradient norm 2, 8 games of 512 steps,
  2 minibatches, 1 epoch, gamma 0.99, lambda 0.95; 4 updates (16,384 decisions) an iteration.
* ``algorithm: mmd`` (:class:`MMDSelfPlay`, options :class:`MMDOptions`): magnetic mirror descent (Sokota et al.,
  ICLR 2023) as a modification of PPO: the entropy term is the KL to the uniform magnet, ``kl_coef`` the mirror
  descent's proximal term (the KL to the previous policy), and a moving magnet: ``magnet_coef`` times the KL to a
  copy of the actor taken every ``magnet_every`` updates. Defaults from the benchmark's best MMD settings for
  classical phantom tic-tac-toe (learning rate 2.5e-4, clip 0.1, entropy 0.05, KL 0.05, value weight 0.5,
  gradient norm 0.5, 8 games of 128 steps, 4 minibatches, 4 epochs, gamma 0.99, lambda 0.95; 16 updates an
  iteration); the benchmark has
  no moving magnet, so ``magnet_coef`` defaults to 0 (set it to turn the moving magnet on).

Where the benchmark anneals its learning rate over a fixed step budget, these loops have no horizon: the rate
is constant unless ``anneal_decisions`` names the decisions over which it falls linearly to 0. The benchmark's
networks are 3 layers of 512 (tanh) trained on GPUs; ours are ReLU layers of ``hidden``, by default 2 of 256 for
the CPU: the exact evaluator asks a network for all 6 million information sets of phantom tic-tac-toe, which
takes 6 times longer with 3 layers of 512 (2 s per 65,536 on one core).

Randomness: every action, minibatch order and chance outcome comes from the run's numpy generator (torch only
seeds the networks), so a checkpoint resumes bit for bit (:mod:`psro.family.simultaneous`).

Examples
--------
>>> loop = PPOSelfPlay("kuhn_poker", progress=False,
...                    algorithm_options={"num_steps": 64, "updates_per_iteration": 1, "hidden": [16],
...                                       "learning_rate": 0.01})
>>> history = loop.run(iterations=2)
>>> history["iteration"].tolist(), [len(p) for p in loop.populations], bool(history["gap"].notna().all())
([0, 1, 2], [3, 3], True)
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from psro.config.model import algorithm_options
from psro.family.simultaneous import LoopOutput, SimultaneousLoop, load_network_arrays, network_arrays
from psro.oracles.learned.env import sample_rows
from psro.oracles.learned.networks import NeuralPolicy, PolicyNetwork, masked_scores, network_parameters
from psro.oracles.learned.training import (
    SCORE_LIMIT,
    check_finite,
    check_hidden,
    check_positive_ints,
    check_real_fields,
)

__all__ = ["PPOSelfPlay", "MMDSelfPlay", "PPOSelfPlayOptions", "MMDOptions", "PGLearner", "advantages",
           "play_and_update"]

_CHUNK_SUMS = ("loss", "entropy", "updates", "return", "episodes")

#: ``(minimum, maximum, strict)`` of the options' real fields
_BOUNDS = {"learning_rate": (0.0, None, True), "gamma": (0.0, 1.0, False), "gae_lambda": (0.0, 1.0, False),
           "clip_coef": (0.0, None, True), "ent_coef": (0.0, 100.0, False), "vf_coef": (0.0, 100.0, False),
           "max_grad_norm": (0.0, None, True), "kl_coef": (0.0, 100.0, False), "magnet_coef": (0.0, 100.0, False)}


@dataclass(frozen=True)
class PPOSelfPlayOptions:
    """The settings of PPO self-play, from ``PSROConfig.algorithm_options`` (:meth:`from_options`; the module
    docstring says where each default comes from).

    Examples
    --------
    >>> PPOSelfPlayOptions.from_options({"ent_coef": 0.05}).ent_coef
    0.05
    >>> PPOSelfPlayOptions.from_options({"num_steps": 0})
    Traceback (most recent call last):
    ...
    ValueError: num_steps must be a positive int; got 0.
    """

    num_envs: int = 8
    """games played side by side"""
    num_steps: int = 512
    """decisions each game gives per update at least (it then finishes its episode)"""
    updates_per_iteration: int = 4
    """updates (each on the decisions of ``num_envs`` games of ``num_steps`` steps) between snapshots"""
    hidden: tuple = (256, 256)
    """hidden layer widths of the actor and of the critic"""
    learning_rate: float = 0.002
    """Adam step size"""
    anneal_decisions: int | None = None
    """decisions (of all seats) over which the step size falls linearly to 0; None: constant"""
    gamma: float = 0.99
    """discount per own decision"""
    gae_lambda: float = 0.95
    """lambda of generalised advantage estimation"""
    num_minibatches: int = 2
    """minibatches per epoch"""
    update_epochs: int = 1
    """passes over each iteration's decisions"""
    clip_coef: float = 0.05
    """ratio clipping (also of the value's change)"""
    ent_coef: float = 0.1
    """weight of the entropy bonus"""
    vf_coef: float = 0.0625
    """weight of the value loss"""
    max_grad_norm: float = 2.0
    """gradient clipping norm"""
    kl_coef: float = 0.0
    """weight of KL(new || old), the mirror-descent proximal term"""
    magnet_coef: float = 0.0
    """weight of KL(new || magnet), the moving magnet (0: none)"""
    magnet_every: int = 10
    """updates between copies of the actor into the magnet"""

    def __post_init__(self):
        check_positive_ints(self, ("num_envs", "num_steps", "updates_per_iteration", "num_minibatches",
                                   "update_epochs", "magnet_every"))
        if self.anneal_decisions is not None:
            check_positive_ints(self, ("anneal_decisions",))
        check_real_fields(self, _BOUNDS)
        check_hidden(self)

    @classmethod
    def from_options(cls, options: dict | None):
        """The options of a config's ``algorithm_options`` (None: the defaults); an unknown key is a
        ``ValueError`` naming it."""
        return algorithm_options(cls, options, cls.__name__.removesuffix("Options"))


@dataclass(frozen=True)
class MMDOptions(PPOSelfPlayOptions):
    """The settings of MMD self-play (:class:`PPOSelfPlayOptions`' fields, the benchmark's best MMD defaults).

    Examples
    --------
    >>> MMDOptions().kl_coef, MMDOptions().learning_rate
    (0.05, 0.00025)
    """

    num_steps: int = 128
    updates_per_iteration: int = 16
    learning_rate: float = 0.00025
    num_minibatches: int = 4
    update_epochs: int = 4
    clip_coef: float = 0.1
    ent_coef: float = 0.05
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    kl_coef: float = 0.05


def _check_memory(obs_dim: int, actions: int, options: PPOSelfPlayOptions, players: int) -> None:
    """Refuse options whose learners (per seat: actor, critic, magnet, Adam's two moments; one iteration's
    decisions) pass the memory limit, before anything is allocated."""
    from games.memory_limit import check_memory

    weights = 4 * (4 * network_parameters(obs_dim, actions, options.hidden)
                   + 3 * network_parameters(obs_dim, 1, options.hidden))
    decisions = 2 * options.num_envs * options.num_steps * (4 * obs_dim + actions + 40)
    check_memory(players * (weights + decisions),
                 f"the policy-gradient learners (algorithm_options: hidden={list(options.hidden)}, num_envs="
                 f"{options.num_envs}, num_steps={options.num_steps}; {players} players, observations of {obs_dim})",
                 "Use narrower hidden layers, fewer num_envs or fewer num_steps.")


class PGLearner:
    """One seat's actor, critic, magnet and Adam optimiser (one optimiser over actor and critic)."""

    check_memory = staticmethod(_check_memory)

    def __init__(self, obs_dim: int, actions: int, options: PPOSelfPlayOptions):
        self.policy = NeuralPolicy(obs_dim, actions, options.hidden, mode="softmax")
        self.critic = PolicyNetwork(obs_dim, 1, options.hidden)
        self.magnet = copy.deepcopy(self.policy.network)
        self.params = [*self.policy.network.parameters(), *self.critic.parameters()]
        self.optimizer = torch.optim.Adam(self.params, lr=options.learning_rate, eps=1e-5)
        self.counters = {"updates": 0}
        self.chunk = dict.fromkeys(_CHUNK_SUMS, 0.0)

    def networks(self) -> dict:
        return {"actor": self.policy.network, "critic": self.critic, "magnet": self.magnet}

    def curve_rows(self, options) -> list:
        """The learning-curve chunk since the last call (mean loss and entropy of the updates, mean return of the
        seat's finished episodes); then reset."""
        c = self.chunk
        rows = [{"learner": "policy_gradient", "loss": c["loss"] / c["updates"] if c["updates"] else math.nan,
                 "entropy": c["entropy"] / c["updates"] if c["updates"] else math.nan,
                 "episode_return": c["return"] / c["episodes"] if c["episodes"] else math.nan,
                 "learning_rate": self.optimizer.param_groups[0]["lr"]}]
        self.chunk = dict.fromkeys(_CHUNK_SUMS, 0.0)
        return rows

    def to_arrays(self, prefix: str) -> tuple:
        """``(arrays, json)``: everything of this learner, for a checkpoint."""
        arrays, groups = network_arrays(prefix, self.networks(), {"optimizer": self.optimizer})
        return arrays, {"optimizers": groups, "counters": dict(self.counters)}

    def load_arrays(self, prefix: str, arrays: dict, meta: dict) -> None:
        load_network_arrays(prefix, arrays, meta["optimizers"], self.networks(), {"optimizer": self.optimizer})
        self.counters = {k: int(v) for k, v in meta["counters"].items()}

    def values(self, obs: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return self.critic(torch.from_numpy(obs)).squeeze(1).numpy()

    def update(self, batch: dict, options: PPOSelfPlayOptions, rng: np.random.Generator, decisions: int) -> None:
        """Generalised advantages of the seat's decisions ``batch`` (in the order of their trajectories: ``last``
        marks a trajectory's last decision, whose ``reward`` is the return), then the epochs of minibatch
        updates (their order drawn from ``rng``); the magnet follows the actor every ``magnet_every``
        iterations."""
        o = options
        n = len(batch["action"])
        self.counters["updates"] += 1
        if o.anneal_decisions is not None:
            self.optimizer.param_groups[0]["lr"] = o.learning_rate * max(0.0, 1.0 - decisions / o.anneal_decisions)
        if n == 0:
            return
        value = self.values(batch["obs"])
        advantage = advantages(batch["reward"], batch["last"], value, o.gamma, o.gae_lambda)
        t = {name: torch.from_numpy(batch[name]) for name in ("obs", "mask", "action", "logprob")}
        t["advantage"] = torch.from_numpy(advantage.astype(np.float32))
        t["return"] = t["advantage"] + torch.from_numpy(value)
        t["value"] = torch.from_numpy(value)
        size = max(1, n // o.num_minibatches)
        for _ in range(o.update_epochs):
            order = torch.from_numpy(rng.permutation(n))
            for lo in range(0, n, size):
                self._minibatch({k: v[order[lo:lo + size]] for k, v in t.items()}, o, decisions)
        if self.counters["updates"] % o.magnet_every == 0:
            self.magnet.load_state_dict(self.policy.network.state_dict())

    def _minibatch(self, mb: dict, o: PPOSelfPlayOptions, decisions: int) -> None:
        scores = self.policy.network(mb["obs"])
        check_finite(scores.detach(), "actor's action scores", o, "ppo", decisions, SCORE_LIMIT)
        logits = torch.log_softmax(masked_scores(scores, mb["mask"]), dim=1)
        dist = torch.distributions.Categorical(logits=logits)
        logratio = dist.log_prob(mb["action"]) - mb["logprob"]
        ratio = logratio.exp()
        adv = mb["advantage"]
        if adv.numel() > 1:
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - o.clip_coef, 1 + o.clip_coef)).mean()
        new_value = self.critic(mb["obs"]).squeeze(1)
        clipped = mb["value"] + (new_value - mb["value"]).clamp(-o.clip_coef, o.clip_coef)
        v_loss = 0.5 * torch.max((new_value - mb["return"]).pow(2), (clipped - mb["return"]).pow(2)).mean()
        entropy = dist.entropy().mean()
        loss = pg_loss - o.ent_coef * entropy + o.vf_coef * v_loss
        if o.kl_coef:   # KL(new || old) from the sampled actions (Schulman's estimator)
            loss = loss + o.kl_coef * (ratio * logratio - (ratio - 1)).mean()
        if o.magnet_coef:   # KL(new || magnet), exact over the legal actions
            with torch.no_grad():
                magnet = torch.log_softmax(masked_scores(self.magnet(mb["obs"]), mb["mask"]), dim=1)
            probs = logits.exp()
            loss = loss + o.magnet_coef * (probs * (logits - magnet)).masked_fill(~mb["mask"], 0.0).sum(1).mean()
        check_finite(loss.detach(), "loss", o, "ppo", decisions)
        self.optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(self.params, o.max_grad_norm)
        self.optimizer.step()
        self.chunk["loss"] += float(loss.detach())
        self.chunk["entropy"] += float(entropy.detach())
        self.chunk["updates"] += 1


def advantages(reward: np.ndarray, last: np.ndarray, value: np.ndarray, gamma: float, lam: float) -> np.ndarray:
    """Generalised advantage estimates of decisions laid out trajectory after trajectory (``last`` marks each
    trajectory's last decision, after which nothing is bootstrapped): ``delta_i = r_i + gamma V_{i+1} - V_i`` and
    ``A_i = delta_i + gamma lam A_{i+1}`` within a trajectory.

    Examples
    --------
    >>> advantages(np.array([0.0, 1.0, -1.0]), np.array([False, True, True]), np.array([0.5, 0.25, 0.0]), 1.0, 0.5)
    array([ 0.125,  0.75 , -1.   ])
    """
    out = np.zeros(len(reward), np.float64)
    following, running = 0.0, 0.0
    for i in range(len(reward) - 1, -1, -1):
        if last[i]:
            following, running = 0.0, 0.0
        delta = reward[i] + gamma * following - value[i]
        running = delta + gamma * lam * running
        out[i], following = running, value[i]
    return out


def play_and_update(env, learners: list, options: PPOSelfPlayOptions, rng: np.random.Generator,
                    counters: dict) -> None:
    """One iteration: ``options.updates_per_iteration`` times, ``options.num_envs`` games on ``env`` from a reset
    until each has given ``options.num_steps`` decisions and finished its episode, every seat sampling from its
    own actor, then every seat's :meth:`PGLearner.update` on its own decisions. ``counters["decisions"]`` counts
    the decisions of all seats and is advanced."""
    for _ in range(options.updates_per_iteration):
        taken, returns = _rollout(env, learners, options, rng, counters)
        for q, learner in enumerate(learners):
            learner.update(_trajectories(taken[q], returns[q], env.obs_dim, env.num_actions), options, rng,
                           counters["decisions"])


def _rollout(env, learners: list, options: PPOSelfPlayOptions, rng: np.random.Generator, counters: dict) -> tuple:
    """The games of one update: per seat, its decisions (observation, mask, action, log-probability, episode key)
    and the returns of its finished episodes by key."""
    n = env.num_players
    s = env.reset()
    given = np.zeros(options.num_envs, np.int64)
    columns = ("obs", "mask", "action", "logprob", "key")
    taken = [{name: [] for name in columns} for _ in range(n)]
    returns = [{} for _ in range(n)]   # seat -> {episode key: return}
    while len(s.envs):
        if s.done.any():   # (the episode that ended in each env: its key is the env's previous episode)
            for row in np.flatnonzero(s.done):
                key = (int(s.envs[row]), int(s.episode[row]) - 1)
                for q in range(n):
                    returns[q][key] = float(s.returns[row, q])
                    learners[q].chunk["return"] += float(s.returns[row, q])
                    learners[q].chunk["episodes"] += 1
            going = ~(s.done & (given[s.envs] >= options.num_steps))   # (an env with its quota stops at a boundary)
            s = type(s)(**{name: getattr(s, name)[going] for name in ("envs", "player", "obs", "mask", "done",
                                                                       "returns", "episode")})
            if not len(s.envs):
                break
        actions = np.zeros(len(s.envs), np.int64)
        for q in range(n):
            rows = np.flatnonzero(s.player == q)
            if rows.size == 0:
                continue
            obs, mask = s.obs[rows], s.mask[rows]
            probs = learners[q].policy.probabilities_np(obs, mask)
            chosen = sample_rows(probs, mask, rng.random(rows.size))
            actions[rows] = chosen
            record = taken[q]
            record["obs"].append(obs)
            record["mask"].append(mask)
            record["action"].append(chosen)
            record["logprob"].append(np.log(probs[np.arange(rows.size), chosen]).astype(np.float32))
            record["key"].append(np.stack([s.envs[rows], s.episode[rows]], axis=1))
        given[s.envs] += 1
        counters["decisions"] += len(s.envs)
        s = env.step(s.envs, actions)
    return taken, returns


def _trajectories(record: dict, returns: dict, obs_dim: int, num_actions: int) -> dict:
    """A seat's decisions grouped by episode (in order within each; a stable sort keeps the order of play), each
    episode's last decision marked and rewarded with the seat's return."""
    if not record["action"]:
        return {"obs": np.zeros((0, obs_dim), np.float32), "mask": np.zeros((0, num_actions), bool),
                "action": np.zeros(0, np.int64), "logprob": np.zeros(0, np.float32), "last": np.zeros(0, bool),
                "reward": np.zeros(0)}
    batch = {name: np.concatenate(values) for name, values in record.items()}
    keys = batch.pop("key")
    order = np.lexsort((keys[:, 1], keys[:, 0]))   # (stable: by env, then episode; play order within)
    batch = {name: value[order] for name, value in batch.items()}
    keys = keys[order]
    last = np.ones(len(keys), bool)
    last[:-1] = np.any(keys[1:] != keys[:-1], axis=1)
    reward = np.zeros(len(keys))
    reward[last] = [returns[(int(e), int(k))] for e, k in keys[last]]
    return {**batch, "last": last, "reward": reward}


class PPOSelfPlay(SimultaneousLoop):
    """PPO self-play: both seats learn at once with PPO; the output is the current policy of each seat (see the
    module docstring; a :class:`psro.family.simultaneous.SimultaneousLoop`).

    ``PPOSelfPlay(game, **fields)`` or ``PPOSelfPlay(PSROConfig(algorithm="ppo_self_play", ...))``; two-player
    zero-sum (or constant-sum) OpenSpiel games and two-player environments (PettingZoo), whose payoffs the user
    vouches for.
    """

    algorithm = "ppo_self_play"
    options_class = PPOSelfPlayOptions
    learner_class = PGLearner
    output = LoopOutput("ppo_self_play", "latest policy")

    @classmethod
    def check_game(cls, game) -> None:
        """Refuse a game that is not two-player, or an OpenSpiel game not declared zero- or constant-sum: self-play
        of two learners converges to an equilibrium only in two-player zero-sum games."""
        from games.contracts import is_environment_game
        from psro.loop.requirements import check_two_player_zero_sum, require_two_players

        require_two_players(game, cls.__name__)
        if not is_environment_game(game):
            check_two_player_zero_sum(game, None, cls.__name__,
                                      " (self-play of two learners aims at an equilibrium only there)")

    def play(self, env, counters: dict) -> None:
        play_and_update(env, self.learners, self.options, self.state.rng, counters)


class MMDSelfPlay(PPOSelfPlay):
    """Magnetic mirror descent with neural policies (Sokota et al. 2023): :class:`PPOSelfPlay` with a KL to the
    previous policy and a magnet (see the module docstring).

    Examples
    --------
    >>> loop = MMDSelfPlay("kuhn_poker", progress=False,
    ...                    algorithm_options={"num_steps": 32, "updates_per_iteration": 2, "hidden": [16],
    ...                                       "magnet_coef": 0.05})
    >>> loop.run(iterations=1)["population_0"].tolist()
    [1, 2]
    """

    algorithm = "mmd"
    options_class = MMDOptions
    output = LoopOutput("mmd", "latest policy")
