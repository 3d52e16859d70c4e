"""Neural Fictitious Self-Play (Heinrich & Silver 2016): every player learns at once, in self-play.

Each player has two networks:

* a **best response**: a DQN (greedy in its Q-values, epsilon-greedy while acting) learning from a circular
  replay buffer of its own transitions, whoever chose the actions;
* an **average policy**: a softmax network trained by supervised learning (cross-entropy) on the actions the
  player took while playing its best response, kept in a reservoir buffer (a uniform sample of all of them),
  so it approximates the average of the past best responses, as in fictitious play.

At the start of every episode each seat plays its best response with probability ``anticipatory`` (eta) and
its average policy otherwise. All seats of ``num_envs`` games are played by the learners on
:func:`games.environment.make_env`; one **iteration** is ``steps_per_iteration`` decisions of all players
(the games restart at the start of each iteration, so an iteration boundary is an episode boundary and a
checkpoint needs no game state). After every iteration the average policies are copied into the populations
(:class:`psro.policies.population.PolicyPopulation`; the first members are the untrained networks of iteration 0), the
meta-game between the copies is extended (exact where the game tree fits, else sampled play), and the history
row's ``gap`` is the exact NashConv of the current average policies (NaN without a tree; ``approx_gap`` then
comes from :func:`psro.measures.approximate_gap.approximate_gap`). The output, ``meta_strategy``, is the latest average
policy of each player (a pure meta-strategy on the newest members).

Randomness: torch seeds the networks once (``seed``); everything after draws from the run's numpy generator
(chance, the eta draws, exploration, sampling, minibatches, the reservoir), so a checkpoint (JSON and npz under
a SHA-256 digest: networks, Adam states, both buffers, the generator's state) resumes bit for bit.

Examples
--------
>>> solver = NFSP("kuhn_poker", progress=False, algorithm_options={"steps_per_iteration": 256, "hidden": [16]})
>>> history = solver.run(iterations=2)
>>> history["iteration"].tolist(), [len(p) for p in solver.populations], solver.meta_game.shape
([0, 1, 2], [3, 3], (3, 3))
"""

from __future__ import annotations

import copy
import logging
import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from games.validation import is_integer
from psro.config.model import algorithm_options
from psro.errors import ConfigError
from psro.family.simultaneous import LoopOutput, SimultaneousLoop, load_network_arrays, network_arrays
from psro.oracles.learned.dqn import q_update
from psro.oracles.learned.env import sample_rows
from psro.oracles.learned.networks import NeuralPolicy, masked_scores
from psro.oracles.learned.training import check_finite

__all__ = ["NFSP", "NFSPOptions", "NFSPLearner", "play_and_learn"]

logger = logging.getLogger(__name__)

_CHUNK_SUMS = ("rl_loss", "rl_steps", "sl_loss", "entropy", "sl_steps", "return", "episodes")


@dataclass(frozen=True)
class NFSPOptions:
    """NFSP's own settings, from ``PSROConfig.algorithm_options`` (:meth:`from_options`).

    Examples
    --------
    >>> NFSPOptions.from_options({"anticipatory": 0.2}).anticipatory
    0.2
    >>> NFSPOptions.from_options({"eta": 0.2})
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: algorithm_options: NFSP has no option 'eta'. Its options are ['anticipatory', ...].
    """

    steps_per_iteration: int = 4096
    """decisions of all players per iteration (between snapshots of the average policies)"""
    num_envs: int = 16
    """games played side by side"""
    anticipatory: float = 0.1
    """eta: probability that a seat plays its best response (else its average policy) in an episode"""
    hidden: tuple = (64,)
    """hidden layer widths of both networks"""
    rl_learning_rate: float = 1e-2
    """Adam step size of the best-response Q-network"""
    sl_learning_rate: float = 5e-3
    """Adam step size of the average-policy network"""
    rl_buffer_size: int = 20_000
    """transitions in each player's circular replay buffer"""
    sl_buffer_size: int = 100_000
    """(state, action) pairs in each player's reservoir buffer"""
    batch_size: int = 128
    """minibatch size of both networks"""
    gradient_steps: int = 1
    """gradient steps of each network per step of all games"""
    target_update_interval: int = 300
    """Q-network gradient steps between copies into the target network"""
    start_epsilon: float = 0.06
    """exploration of the best response at the start"""
    end_epsilon: float = 0.001
    """... after the decay"""
    epsilon_decay_steps: int = 1_000_000
    """decisions over which epsilon decays linearly"""
    learning_starts: int = 1000
    """entries a buffer holds before its network learns"""
    double: bool = False
    """double DQN targets for the best responses"""

    def __post_init__(self):
        if not isinstance(self.hidden, list | tuple):   # (-3 or 64: not a list of widths)
            raise ConfigError("algorithm_options", "hidden must be a list of positive ints, one width per hidden "
                              f"layer (e.g. [64]); got {self.hidden!r}.")
        object.__setattr__(self, "hidden", tuple(self.hidden))
        for name in ("steps_per_iteration", "num_envs", "rl_buffer_size", "sl_buffer_size", "batch_size",
                     "gradient_steps", "target_update_interval", "epsilon_decay_steps", "learning_starts"):
            value = getattr(self, name)
            if not is_integer(value) or value < 1:
                raise ConfigError("algorithm_options", f"{name} must be a positive int; got {value!r}.")
        if not all(is_integer(h) and h > 0 for h in self.hidden):
            raise ConfigError("algorithm_options", f"hidden must be a list of positive ints; got {list(self.hidden)}.")
        for name in ("anticipatory", "start_epsilon", "end_epsilon"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and 0 <= value <= 1):
                raise ConfigError("algorithm_options", f"{name} must lie in [0, 1]; got {value!r}.")
        for name in ("rl_learning_rate", "sl_learning_rate"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and value > 0 and math.isfinite(value)):
                raise ConfigError("algorithm_options", f"{name} must be a positive number; got {value!r}.")
        if not isinstance(self.double, bool):
            raise ConfigError("algorithm_options", f"double must be true or false; got {self.double!r}.")

    @classmethod
    def from_options(cls, options: dict | None) -> NFSPOptions:
        """The options of a config's ``algorithm_options`` (None: the defaults); an unknown key is a
        ``ValueError`` naming it."""
        return algorithm_options(cls, options, "NFSP")


def _check_learner_memory(obs_dim: int, actions: int, options: NFSPOptions, players: int) -> None:
    """Refuse options whose learners (per player: three networks, two Adam states, two buffers) pass the memory
    limit (:func:`games.memory_limit.check_memory`), before anything is allocated."""
    from games.memory_limit import check_memory
    from psro.oracles.learned.networks import network_parameters

    weights = 7 * 4 * network_parameters(obs_dim, actions, options.hidden)   # q, target, avg + Adam's 2 x (q, avg)
    rl = options.rl_buffer_size * (8 * obs_dim + actions + 16)
    sl = options.sl_buffer_size * (4 * obs_dim + actions + 8)
    check_memory(players * (weights + rl + sl),
                 f"NFSP's learners (algorithm_options: hidden={list(options.hidden)}, rl_buffer_size="
                 f"{options.rl_buffer_size}, sl_buffer_size={options.sl_buffer_size}; {players} players, "
                 f"observations of {obs_dim})", "Use narrower hidden layers or smaller buffers.")


class NFSPLearner:
    """One player's networks, optimisers and buffers."""

    def __init__(self, obs_dim: int, actions: int, options: NFSPOptions):
        self.q = NeuralPolicy(obs_dim, actions, options.hidden, mode="greedy")
        self.target = copy.deepcopy(self.q.network)
        self.avg = NeuralPolicy(obs_dim, actions, options.hidden, mode="softmax")
        self.q_opt = torch.optim.Adam(self.q.network.parameters(), lr=options.rl_learning_rate)
        self.avg_opt = torch.optim.Adam(self.avg.network.parameters(), lr=options.sl_learning_rate)
        r, s = options.rl_buffer_size, options.sl_buffer_size
        self.rl = {"obs": np.zeros((r, obs_dim), np.float32), "action": np.zeros(r, np.int64),
                   "reward": np.zeros(r, np.float32), "next_obs": np.zeros((r, obs_dim), np.float32),
                   "next_mask": np.zeros((r, actions), bool), "done": np.zeros(r, np.float32)}
        self.sl = {"obs": np.zeros((s, obs_dim), np.float32), "mask": np.zeros((s, actions), bool),
                   "action": np.zeros(s, np.int64)}
        self.counters = {"rl_filled": 0, "rl_cursor": 0, "sl_seen": 0, "updates": 0}
        self.chunk = dict.fromkeys(_CHUNK_SUMS, 0.0)   # (sums and counts since the last curve_rows: learners.csv)

    check_memory = staticmethod(_check_learner_memory)

    @property
    def policy(self) -> NeuralPolicy:
        """The seat's output: its average policy."""
        return self.avg

    def curve_rows(self, options: NFSPOptions) -> list:
        """The learning-curve chunks since the last call, one per network (best response, average policy): mean
        loss, the average policy's mean entropy, the mean return of the seat's finished episodes; then reset."""
        c = self.chunk

        def mean(total: str, count: str) -> float:
            return c[total] / c[count] if c[count] else math.nan

        episode_return = mean("return", "episodes")
        rows = [{"learner": "nfsp_best_response", "loss": mean("rl_loss", "rl_steps"), "entropy": math.nan,
                 "episode_return": episode_return, "learning_rate": options.rl_learning_rate},
                {"learner": "nfsp_average_policy", "loss": mean("sl_loss", "sl_steps"),
                 "entropy": mean("entropy", "sl_steps"), "episode_return": episode_return,
                 "learning_rate": options.sl_learning_rate}]
        self.chunk = dict.fromkeys(_CHUNK_SUMS, 0.0)
        return rows

    def networks(self) -> dict:
        return {"q": self.q.network, "target": self.target, "avg": self.avg.network}

    def add_transitions(self, obs, action, reward, next_obs, next_mask, done) -> None:
        k = len(action)
        if k == 0:
            return
        size, c = len(self.rl["action"]), self.counters
        rows = (c["rl_cursor"] + np.arange(k)) % size
        for name, value in (("obs", obs), ("action", action), ("reward", reward), ("next_obs", next_obs),
                            ("next_mask", next_mask), ("done", done)):
            self.rl[name][rows] = value
        c["rl_cursor"] = int((c["rl_cursor"] + k) % size)
        c["rl_filled"] = int(min(size, c["rl_filled"] + k))

    def add_behaviour(self, obs, mask, action, rng: np.random.Generator) -> None:
        """Reservoir sampling: item ``i`` of the stream is kept with probability ``capacity / (i + 1)``."""
        k = len(action)
        if k == 0:
            return
        size, c = len(self.sl["action"]), self.counters
        ranks = c["sl_seen"] + np.arange(k)
        slots = ranks.copy()
        full = ranks >= size
        if full.any():
            drawn = rng.integers(0, ranks[full] + 1)
            slots[full] = np.where(drawn < size, drawn, -1)
        keep = slots >= 0
        for name, value in (("obs", obs), ("mask", mask), ("action", action)):
            self.sl[name][slots[keep]] = value[keep]
        c["sl_seen"] = int(c["sl_seen"] + k)

    def learn(self, options: NFSPOptions, rng: np.random.Generator) -> None:
        c, b = self.counters, options.batch_size
        if c["rl_filled"] >= options.learning_starts:
            idx = rng.integers(0, c["rl_filled"], b)
            buf = {name: torch.from_numpy(value[idx]) for name, value in self.rl.items()}
            loss, c["updates"] = q_update(
                self.q.network, self.target, self.q_opt, buf, c["updates"], gamma=1.0, double=options.double,
                target_update_interval=options.target_update_interval,
                checked=lambda loss: check_finite(loss, "best-response loss", options, "nfsp", c["updates"],
                                                  names=("rl_learning_rate",), unit="updates"))
            self.chunk["rl_loss"] += float(loss)
            self.chunk["rl_steps"] += 1
        held = min(c["sl_seen"], len(self.sl["action"]))
        if held >= options.learning_starts:
            idx = rng.integers(0, held, b)
            logits = masked_scores(self.avg.network(torch.from_numpy(self.sl["obs"][idx])),
                                   torch.from_numpy(self.sl["mask"][idx]))
            loss = nn.functional.cross_entropy(logits, torch.from_numpy(self.sl["action"][idx]))
            check_finite(loss.detach(), "average-policy loss", options, "nfsp", c["updates"],
                         names=("sl_learning_rate",), unit="updates")
            self.avg_opt.zero_grad()
            loss.backward()
            self.avg_opt.step()
            with torch.no_grad():
                self.chunk["entropy"] += float(torch.distributions.Categorical(logits=logits).entropy().mean())
            self.chunk["sl_loss"] += float(loss.detach())
            self.chunk["sl_steps"] += 1

    # ---------------------------------------------------------------- checkpoint arrays
    def optimizers(self) -> dict:
        return {"q_opt": self.q_opt, "avg_opt": self.avg_opt}

    def to_arrays(self, prefix: str) -> tuple:
        """``(arrays, json)``: everything of this learner, for a checkpoint."""
        arrays, groups = network_arrays(prefix, self.networks(), self.optimizers())
        c = self.counters
        arrays.update({f"{prefix}rl__{k}": v[:c["rl_filled"]] for k, v in self.rl.items()})
        held = min(c["sl_seen"], len(self.sl["action"]))
        arrays.update({f"{prefix}sl__{k}": v[:held] for k, v in self.sl.items()})
        return arrays, {"optimizers": groups, "counters": dict(c)}

    def load_arrays(self, prefix: str, arrays: dict, meta: dict) -> None:
        load_network_arrays(prefix, arrays, meta["optimizers"], self.networks(), self.optimizers())
        self.counters = {k: int(v) for k, v in meta["counters"].items()}
        for k, v in self.rl.items():
            v[:self.counters["rl_filled"]] = arrays[f"{prefix}rl__{k}"]
        held = min(self.counters["sl_seen"], len(self.sl["action"]))
        for k, v in self.sl.items():
            v[:held] = arrays[f"{prefix}sl__{k}"]


def play_and_learn(env, learners: list, options: NFSPOptions, rng: np.random.Generator, counters: dict) -> None:
    """NFSP's learning on a batched env (:func:`games.environment.make_env`, or a restricted game's env as NXDO's):
    ``options.steps_per_iteration`` decisions of all seats from a reset, each seat's learner (``learners[q]``, an
    NFSP learner) acting with its best response (epsilon-greedy) or its average policy per episode, storing its
    transitions and behaviour and learning as it goes; ``counters["decisions"]`` counts the decisions (epsilon's
    schedule) and is advanced. Every draw comes from ``rng``."""
    o, n = options, env.num_players
    obs_dim, num_actions = env.obs_dim, env.num_actions
    s = env.reset()
    pend = np.zeros((o.num_envs, n), bool)
    pend_obs = np.zeros((o.num_envs, n, obs_dim), np.float32)
    pend_act = np.zeros((o.num_envs, n), np.int64)
    best = rng.random((o.num_envs, n)) < o.anticipatory
    steps = 0
    while steps < o.steps_per_iteration:
        envs = s.envs
        if s.done.any():   # the episodes that ended: every seat's last move gets its return
            ended = envs[s.done]
            returns = s.returns[s.done]
            for q in range(n):
                learners[q].chunk["return"] += float(returns[:, q].sum())
                learners[q].chunk["episodes"] += len(ended)
                has = pend[ended, q]
                e = ended[has]
                k = len(e)
                learners[q].add_transitions(pend_obs[e, q], pend_act[e, q], returns[has, q].astype(np.float32),
                                            np.zeros((k, obs_dim), np.float32),
                                            np.ones((k, num_actions), bool), np.ones(k, np.float32))
            pend[ended] = False
            best[ended] = rng.random((len(ended), n)) < o.anticipatory
        actions = np.zeros(len(envs), np.int64)
        epsilon = o.start_epsilon + (o.end_epsilon - o.start_epsilon) * min(
            1.0, counters["decisions"] / o.epsilon_decay_steps)
        for q in range(n):
            rows = np.flatnonzero(s.player == q)
            if rows.size == 0:
                continue
            e, obs, mask = envs[rows], s.obs[rows], s.mask[rows]
            learner = learners[q]
            again = pend[e, q]
            learner.add_transitions(pend_obs[e[again], q], pend_act[e[again], q], np.zeros(again.sum(), np.float32),
                                    obs[again], mask[again], np.zeros(again.sum(), np.float32))
            br = best[e, q]
            chosen = np.zeros(rows.size, np.int64)
            if br.any():
                with torch.no_grad():
                    greedy = masked_scores(learner.q.network(torch.from_numpy(obs[br])),
                                           torch.from_numpy(mask[br])).argmax(dim=1).numpy()
                random_legal = (rng.random(mask[br].shape) * mask[br]).argmax(axis=1)
                chosen[br] = np.where(rng.random(int(br.sum())) < epsilon, random_legal, greedy)
                learner.add_behaviour(obs[br], mask[br], chosen[br], rng)
            if (~br).any():
                probs = learner.avg.probabilities_np(obs[~br], mask[~br])
                chosen[~br] = sample_rows(probs, mask[~br], rng.random(int((~br).sum())))
            actions[rows] = chosen
            pend[e, q], pend_obs[e, q], pend_act[e, q] = True, obs, chosen
        s = env.step(envs, actions)
        steps += len(envs)
        counters["decisions"] += len(envs)
        for learner in learners:
            for _ in range(o.gradient_steps):
                learner.learn(o, rng)


class NFSP(SimultaneousLoop):
    """Neural Fictitious Self-Play, a :class:`psro.family.simultaneous.SimultaneousLoop` (its step: learn, then
    snapshot the average policies; see the module docstring).

    Parameters
    ----------
    config : PSROConfig or game
        A config with ``algorithm="nfsp"`` (its ``algorithm_options`` are :class:`NFSPOptions`), or a game
        with config fields as keywords. Read: ``game``, ``seed``, ``max_histories``, ``exact_gap``,
        ``exact_gap_every``, ``episodes_per_profile`` (sampled meta-game entries where there is no tree),
        ``approx_gap_every`` and ``approx_gap_options`` (as for PSRO), ``progress``.
    checkpoint_dir : path, optional
        Where a checkpoint is written after every iteration.
    """

    algorithm = "nfsp"
    options_class = NFSPOptions
    learner_class = NFSPLearner
    output = LoopOutput("nfsp", "latest average policy")

    def average_policies(self) -> list:
        """The current average-policy networks (copies), one per player: NFSP's output."""
        return self.output_policies()

    def play(self, env, counters: dict) -> None:
        play_and_learn(env, self.learners, self.options, self.state.rng, counters)
