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
(:class:`psro.population.PolicyPopulation`; the first members are the untrained networks of iteration 0), the
meta-game between the copies is extended (exact where the game tree fits, else sampled play), and the history
row's ``gap`` is the exact NashConv of the current average policies (NaN without a tree; ``approx_gap`` then
comes from :func:`psro.approximate_gap.approximate_gap`). The output, ``meta_strategy``, is the latest average
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
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from games.empirical import EmpiricalGame
from games.environment import make_env, num_actions, observation_size
from games.validation import is_integer
from psro.approx_gap_schedule import share_allows
from psro.approximate_gap import (
    approx_gap_due,
    approx_gap_settings,
    measure_with_oracle,
    responder_seed,
    unvalued,
)
from psro.config import PSROConfig, algorithm_options
from psro.game_tree import TreeTooLarge, build_game_tree
from psro.metrics import nash_conv
from psro.oracles.learned.env import sample_rows
from psro.oracles.learned.networks import LearnedProvenance, NeuralPolicy, masked_scores
from psro.oracles.learned.oracle import isolated_torch
from psro.oracles.learned.training import check_finite
from psro.population import PolicyPopulation
from psro.run.checkpoint import member_arrays, member_from_arrays
from psro.run.checkpoint_schema import NFSPDocument, decode
from psro.run.store import previous_name, read_arrays, read_document, read_or_advise, write_arrays
from psro.state import EpisodeCounter, LoopExtra, LoopState
from psro.training_loop import TrainingLoop

__all__ = ["NFSP", "NFSPOptions", "NFSPLearner", "play_and_learn"]

logger = logging.getLogger(__name__)

FORMAT = "psro.NFSP/1"
CHECKPOINT_FILE = "checkpoint.json"
_NETWORKS = ("q", "target", "avg")
_OPTIMIZERS = ("q_opt", "avg_opt")
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
    ValueError: algorithm_options: NFSP has no option 'eta'. Its options are ['anticipatory', 'batch_size', \
'double', 'end_epsilon', 'epsilon_decay_steps', 'gradient_steps', 'hidden', 'learning_starts', 'num_envs', \
'rl_buffer_size', 'rl_learning_rate', 'sl_buffer_size', 'sl_learning_rate', 'start_epsilon', \
'steps_per_iteration', 'target_update_interval'].
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
            raise ValueError(f"algorithm_options: hidden must be a list of positive ints, one width per hidden layer "
                             f"(e.g. [64]); got {self.hidden!r}.")
        object.__setattr__(self, "hidden", tuple(self.hidden))
        for name in ("steps_per_iteration", "num_envs", "rl_buffer_size", "sl_buffer_size", "batch_size",
                     "gradient_steps", "target_update_interval", "epsilon_decay_steps", "learning_starts"):
            value = getattr(self, name)
            if not is_integer(value) or value < 1:
                raise ValueError(f"algorithm_options: {name} must be a positive int; got {value!r}.")
        if not all(is_integer(h) and h > 0 for h in self.hidden):
            raise ValueError(f"algorithm_options: hidden must be a list of positive ints; got {list(self.hidden)}.")
        for name in ("anticipatory", "start_epsilon", "end_epsilon"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and 0 <= value <= 1):
                raise ValueError(f"algorithm_options: {name} must lie in [0, 1]; got {value!r}.")
        for name in ("rl_learning_rate", "sl_learning_rate"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and value > 0 and math.isfinite(value)):
                raise ValueError(f"algorithm_options: {name} must be a positive number; got {value!r}.")
        if not isinstance(self.double, bool):
            raise ValueError(f"algorithm_options: double must be true or false; got {self.double!r}.")

    @classmethod
    def from_options(cls, options: dict | None) -> NFSPOptions:
        """The options of a config's ``algorithm_options`` (None: the defaults); an unknown key is a
        ``ValueError`` naming it."""
        return algorithm_options(cls, options, "NFSP")


@dataclass(frozen=True)
class NFSPOutput:
    """What NFSP outputs, in the place of a PSRO meta-solver (what run directories record)."""

    name: str = "nfsp"
    method: str = "latest average policy"
    kind: str = "product"


def _refuse(path: Path, what: str) -> None:
    raise ValueError(f"{path} is not a readable NFSP checkpoint: {what}; it was edited or written by another "
                     "program, and cannot be resumed.")


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
            with torch.no_grad():
                scores = masked_scores(self.target(buf["next_obs"]), buf["next_mask"])
                if options.double:
                    best = masked_scores(self.q.network(buf["next_obs"]), buf["next_mask"]).argmax(1, keepdim=True)
                    next_q = scores.gather(1, best).squeeze(1)
                else:
                    next_q = scores.max(dim=1).values
                target = buf["reward"] + next_q * (1.0 - buf["done"])
            predicted = self.q.network(buf["obs"]).gather(1, buf["action"][:, None]).squeeze(1)
            loss = nn.functional.mse_loss(predicted, target)
            check_finite(loss.detach(), "best-response loss", options, "nfsp", c["updates"],
                         names=("rl_learning_rate",), unit="updates")
            self.q_opt.zero_grad()
            loss.backward()
            self.q_opt.step()
            self.chunk["rl_loss"] += float(loss.detach())
            self.chunk["rl_steps"] += 1
            c["updates"] += 1
            if c["updates"] % options.target_update_interval == 0:
                self.target.load_state_dict(self.q.network.state_dict())
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
    def to_arrays(self, prefix: str) -> tuple:
        """``(arrays, json)``: everything of this learner, for a checkpoint."""
        arrays, groups = {}, {}
        for name, net in self.networks().items():
            arrays.update({f"{prefix}{name}__{k}": v.detach().cpu().numpy().copy()
                           for k, v in net.state_dict().items()})
        for name in _OPTIMIZERS:
            state = getattr(self, name).state_dict()
            groups[name] = {"param_groups": state["param_groups"],
                            "state": {str(i): sorted(entry) for i, entry in state["state"].items()}}
            for i, entry in state["state"].items():
                arrays.update({f"{prefix}{name}_{i}__{k}": v.detach().cpu().numpy().copy() for k, v in entry.items()})
        c = self.counters
        arrays.update({f"{prefix}rl__{k}": v[:c["rl_filled"]] for k, v in self.rl.items()})
        held = min(c["sl_seen"], len(self.sl["action"]))
        arrays.update({f"{prefix}sl__{k}": v[:held] for k, v in self.sl.items()})
        return arrays, {"optimizers": groups, "counters": dict(c)}

    def load_arrays(self, prefix: str, arrays: dict, meta: dict) -> None:
        for name, net in self.networks().items():
            head = f"{prefix}{name}__"
            for k, v in net.state_dict().items():
                if head + k not in arrays:
                    raise ValueError(f"the arrays hold no {head + k!r} (a network weight of this learner).")
                if tuple(np.shape(arrays[head + k])) != tuple(v.shape):
                    raise ValueError(
                        f"{head + k!r} has shape {tuple(np.shape(arrays[head + k]))} but the network of this game "
                        f"and options needs {tuple(v.shape)}: the checkpoint's game or hidden layers were changed "
                        "after its networks were saved.")
            net.load_state_dict({k: torch.from_numpy(np.array(arrays[head + k])) for k in net.state_dict()})
        for name in _OPTIMIZERS:
            saved = meta["optimizers"][name]
            state = {int(i): {k: torch.from_numpy(np.array(arrays[f"{prefix}{name}_{i}__{k}"])) for k in keys}
                     for i, keys in saved["state"].items()}
            getattr(self, name).load_state_dict({"state": state, "param_groups": saved["param_groups"]})
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


@dataclass
class NFSPExtra(LoopExtra):
    """NFSP's own state: the decisions its learners took so far (epsilon's schedule and the run's steps)."""

    decisions: int = 0


class NFSP(TrainingLoop):
    """Neural Fictitious Self-Play, a :class:`psro.training_loop.TrainingLoop` (its step: learn, then snapshot;
    see the module docstring).

    Parameters
    ----------
    config : PSROConfig or game
        A config with ``algorithm="nfsp"`` (its ``algorithm_options`` are :class:`NFSPOptions`), or a game
        with config fields as keywords. Read: ``game``, ``seed``, ``max_histories``, ``exact_gap``,
        ``episodes_per_profile`` (sampled meta-game entries where there is no tree), ``approx_gap_every`` and
        ``approx_gap_options`` (as for PSRO), ``progress``.
    checkpoint_dir : path, optional
        Where a checkpoint is written after every iteration.
    """

    algorithm = "nfsp"
    options_class = NFSPOptions
    Extra = NFSPExtra
    is_jpsro = False
    kind = "product"

    def __init__(self, config, /, *, executor=None, checkpoint_dir=None, **fields):
        config, executor = PSROConfig.for_loop(type(self).algorithm, config, executor, fields)
        self.config = config
        self.options = self.options_class.from_options(config.algorithm_options)
        self.game, normal_form = config.checked_game()
        if normal_form is not None:
            raise ValueError("game: NFSP plays sequential games on games.make_env; a normal-form game has no "
                             "environment (use PSRO).")
        self.seed, self.progress = int(config.seed), config.progress
        self.checkpoint_dir = checkpoint_dir
        self.run_config = None
        self.meta_solver = self.eval_meta_solver = NFSPOutput()
        self.num_players = int(self.game.num_players())
        self.obs_dim, self.num_actions = observation_size(self.game), num_actions(self.game)
        self.tree = self._game_tree(config)
        self._tables: list = [[] for _ in range(self.num_players)]   # members' tabular forms (with a tree)
        _check_learner_memory(self.obs_dim, self.num_actions, self.options, self.num_players)
        with isolated_torch():
            torch.manual_seed(self.seed)
            self.learners = [NFSPLearner(self.obs_dim, self.num_actions, self.options)
                             for _ in range(self.num_players)]
        self.state = LoopState(populations=[PolicyPopulation(p, self.num_actions) for p in range(self.num_players)],
                               meta_game=EmpiricalGame((0,) * self.num_players), pending=[[]] * self.num_players,
                               rng=np.random.default_rng(self.seed), sizes_before=[0] * self.num_players,
                               extra=self.Extra())
        self._approx_oracle = None
        self._approx_cost = 0.0   # (seconds of the latest approx_gap measurement, while the run is in memory)

    def _game_tree(self, config: PSROConfig):
        if config.exact_gap is False:
            return None
        try:
            return build_game_tree(self.game, max_histories=config.max_histories)
        except TreeTooLarge:
            if config.exact_gap is True:
                raise ValueError(f"exact_gap: the tree of {self.game} does not fit in max_histories="
                                 f"{config.max_histories}; raise it or set exact_gap to auto.") from None
            logger.info("NFSP on %s: no game tree within max_histories; gap is NaN (approx_gap instead)", self.game)
            return None

    # ------------------------------------------------------------------ what a run shows
    def average_policies(self) -> list:
        """The current average-policy networks (copies), one per player: NFSP's output."""
        return [learner.avg.copy() for learner in self.learners]

    # ------------------------------------------------------------------ the loop (TrainingLoop's phases)
    def running(self):
        """A ``run`` call's iterations keep torch's global state apart (:func:`isolated_torch`)."""
        return isolated_torch()

    def step(self) -> dict:
        """One iteration: ``steps_per_iteration`` decisions of all players learning as they go (none for row 0),
        then the average policies join the populations, the meta-game grows and the latest profile is measured."""
        start = time.perf_counter()
        if self.state.iteration >= 0:
            self._train_iteration()
        oracle_time = time.perf_counter() - start
        return {"meta_solve": 0.0, "oracle": oracle_time, **self._snapshot()}

    def finish_run(self) -> bool:
        """The last row of a ``run`` call has its approximate gap when there is no tree (measured now if not due)."""
        row = self.state.rows[-1]
        if self.tree is None and self.config.approx_gap_every is not None and math.isnan(row["approx_gap"]):
            row.update(self._approx_gap())
            return True
        return False

    def _train_iteration(self) -> None:
        """``steps_per_iteration`` decisions of all players on fresh games, learning as they go."""
        env = make_env(self.game, self.options.num_envs, rng=self.state.rng)
        counters = {"decisions": self.state.extra.decisions}
        play_and_learn(env, self.learners, self.options, self.state.rng, counters)
        self.state.extra.decisions = counters["decisions"]
        t, steps = self.state.iteration + 1, int(self.state.extra.decisions)
        self.emit_learner_rows([{"iteration": t, "player": p, "env_steps": steps, **chunk, "value": math.nan,
                                 "index": 0} for p, learner in enumerate(self.learners)
                                for chunk in learner.curve_rows(self.options)])

    def _snapshot(self) -> dict:
        """Snapshot the average policies, extend the meta-game, measure the gap; the seconds of evaluation and
        measurement."""
        t = self.state.iteration + 1
        st = self.state
        st.sizes_before = [len(pop) for pop in st.populations]
        for p, learner in enumerate(self.learners):
            member = learner.avg.copy()
            member.provenance = LearnedProvenance(iteration=t, oracle="nfsp", meta_solver="",
                                                  training_steps=int(st.extra.decisions), seed=self.seed)
            st.populations[p].add(member, member.provenance)
            st.meta_game.grow(p, 1)
            if self.tree is not None:
                self._tables[p].append(member.to_tabular(self.tree, p))
        t_eval = time.perf_counter()
        self._evaluate_meta_game()
        t_eval = time.perf_counter() - t_eval
        t_metric = time.perf_counter()
        from solvers import make_equilibrium

        sizes = st.meta_game.shape
        marginals = [np.eye(k)[k - 1] for k in sizes]
        st.meta_strategy = st.eval_meta_strategy = make_equilibrium(
            st.meta_game.mean_game(), concept="nash", method="nfsp", marginals=marginals)
        st.gap = st.train_gap = (nash_conv(self.tree, [tables[-1] for tables in self._tables])
                                 if self.tree is not None else math.nan)
        t_metric = time.perf_counter() - t_metric
        st.iteration = t
        st.evaluations = int(st.meta_game.evaluated().sum())
        st.env_steps = int(st.extra.decisions)
        return {"evaluation": t_eval, "metric": t_metric}

    def row(self, times: dict) -> dict:
        """The history row of the iteration just done (the approximate gap when due and there is no tree)."""
        st, t = self.state, self.state.iteration
        row = {"iteration": t, "gap": st.gap, "train_gap": st.train_gap,
               **{f"population_{p}": len(pop) for p, pop in enumerate(st.populations)},
               **{f"time_{k}": v for k, v in times.items()}, "wall_time": st.wall, "cpu_time": st.cpu,
               "evaluations": st.evaluations, "top_up_episodes": 0,
               "episodes": int(st.meta_game.count[0][~st.meta_game.exact].sum()),
               "efce_gap": math.nan, "efcce_gap": math.nan, "approx_gap": math.nan, "approx_gap_stderr": math.nan,
               "approx_gap_time": 0.0, "meta_gap": float(st.meta_strategy.gap),
               "env_steps": int(st.extra.decisions), "response_ok": True}
        if self.tree is None and approx_gap_due(self.config.approx_gap_every, t, st.gap):
            share = approx_gap_settings({}, self.config.approx_gap_options)[0]["share"]
            if share_allows(share, st.rows, st.wall, self._approx_cost):
                row.update(self._approx_gap())
            else:
                self.skip_by_share(share)
        row["eval_episodes"] = st.eval_episodes()
        return row

    def _evaluate_meta_game(self) -> None:
        st = self.state
        if self.tree is not None:
            from psro.evaluation.exact import SequenceFormEvaluator
            from psro.policies import realization_plans

            plans = [realization_plans(np.stack(tables), info) for tables, info in zip(self._tables,
                                                                                       self.tree.infostates)]
            payoffs = SequenceFormEvaluator(self.tree).payoffs(plans)
            st.meta_game.set_exact_block([list(range(k)) for k in st.meta_game.shape], payoffs)
            return
        from psro.evaluation.env_play import sample_profiles

        missing = np.asarray(st.meta_game.missing_profiles(), dtype=np.int64).reshape(-1, self.num_players)
        count, total, total_sq = sample_profiles(self.game, [pop.policies for pop in st.populations], missing,
                                                 self.config.episodes_per_profile, seed=self.seed)
        for k, profile in enumerate(missing.tolist()):
            st.meta_game.add_statistics(tuple(profile), count[k], total[k], total_sq[k])

    def _approx_gap(self) -> dict:
        """``approx_gap`` of the current average policies: a lower bound of their NashConv from learned best
        responses (by default DQN) and the best members, sampled values (:mod:`psro.approximate_gap`)."""
        from psro.oracles.learned.oracle import make_learned_oracle

        start = time.perf_counter()
        settings, options = approx_gap_settings({}, self.config.approx_gap_options)
        if self._approx_oracle is None:
            self._approx_oracle = unvalued(make_learned_oracle(settings["oracle"] or "dqn", None,
                                                               seed=responder_seed(self.seed), game=self.game,
                                                               **options), self.config.approx_gap_options)
        counter = EpisodeCounter()
        result = measure_with_oracle(self.game, "product", self.state.meta_strategy, self.state.populations,
                                     self._approx_oracle, settings, seed=self.seed, iteration=self.state.iteration,
                                     payoffs=self.state.meta_game.mean_game().payoffs, counter=counter)
        self.state.measure_episodes += counter.episodes
        self._approx_cost = time.perf_counter() - start
        return {"approx_gap": result.gap, "approx_gap_stderr": result.stderr, "approx_gap_time": self._approx_cost}

    # ------------------------------------------------------------------ checkpoints
    checkpoint_name = CHECKPOINT_FILE
    checkpoint_prefixes = ("nfsp-",)

    def state_dict(self, directory) -> dict:
        """The checkpoint document: one npz of arrays (networks, Adam states, buffers, populations, meta-game),
        written first, named with its SHA-256; the learners' settings, the members' architectures, the history
        and the loop's state. :meth:`write_checkpoint` writes it atomically after the arrays (a kill at any moment
        leaves the last complete checkpoint), the checkpoint it replaces kept as ``checkpoint.previous.json``
        (``resume(..., previous=True)``)."""
        st = self.state
        arrays, learners = {}, []
        for p, learner in enumerate(self.learners):
            a, meta = learner.to_arrays(f"learner_{p}_")
            arrays.update(a)
            learners.append(meta)
        members = []
        for p, pop in enumerate(st.populations):
            archs = []
            for k, policy in enumerate(pop.policies):
                arch, values = member_arrays(policy)
                archs.append(arch)
                arrays.update({f"member_{p}_{k}__{name}": v for name, v in values.items()})
            members.append(archs)
        for name in ("count", "total", "total_sq", "exact"):
            arrays[f"meta_game__{name}"] = getattr(st.meta_game, name)
        entry = write_arrays(directory, "nfsp", f"{st.iteration:06d}", arrays)
        return {"format": FORMAT, "version": 1, "iteration": st.iteration,
                "options": {"algorithm": self.algorithm, "config": self.config.to_dict()},
                "config": self.run_config, "arrays": entry,
                "rng": st.rng.bit_generator.state, "history": st.rows, "members": members,
                "columns": list(st.rows[0]) if st.rows else [],
                "learners": learners,
                "state": {"gap": st.gap, "train_gap": st.train_gap, "wall": st.wall, "cpu": st.cpu,
                          "evaluations": st.evaluations, "extra": st.extra.to_document(),
                          "measure_episodes": st.measure_episodes}}

    @classmethod
    def load_checkpoint(cls, checkpoint_dir, previous: bool = False) -> dict:
        """The verified checkpoint document of ``checkpoint_dir`` (``previous``: the one before the latest), its
        arrays under ``"_arrays"``; damage is a ``ValueError`` naming the file and saying whether the previous
        checkpoint is intact."""
        return read_or_advise(lambda prev: cls._read_checkpoint(Path(checkpoint_dir), prev), previous,
                              f"NFSP.resume({str(checkpoint_dir)!r}, previous=True)")

    @staticmethod
    def _read_checkpoint(directory: Path, previous: bool) -> dict:
        path = directory / (previous_name(CHECKPOINT_FILE) if previous else CHECKPOINT_FILE)
        if not path.is_file():
            raise ValueError(f"checkpoint_dir {str(directory)!r} holds no NFSP checkpoint ({path.name}).")
        path, document = read_document(directory, CHECKPOINT_FILE, previous, "NFSP")
        if document.get("format") != FORMAT:
            raise ValueError(f"{path} is not an NFSP checkpoint (format {document.get('format')!r}).")
        decode(NFSPDocument, document, lambda what: _refuse(path, what))   # (psro.run.checkpoint_schema)
        document["_arrays"] = read_arrays(directory, document["arrays"], path)
        document["file"] = str(path)
        return document

    @classmethod
    def from_checkpoint(cls, document: dict, checkpoint_dir=None, progress: bool = True, executor=None) -> NFSP:
        return cls(PSROConfig.from_dict(document["options"]["config"]).replace(progress=progress),
                   checkpoint_dir=checkpoint_dir)

    def load_state_dict(self, document: dict) -> None:
        """The learners, the members, the meta-game and the history of the document (its arrays under
        ``"_arrays"``, else read again from :attr:`checkpoint_dir`)."""
        if "_arrays" not in document:
            document = self.load_checkpoint(self.checkpoint_dir)
        arrays = document["_arrays"]
        if len(document["learners"]) != self.num_players:
            raise ValueError(f"learners holds {len(document['learners'])} learners but the game has "
                             f"{self.num_players} players.")
        with isolated_torch():
            for p, (learner, meta) in enumerate(zip(self.learners, document["learners"])):
                learner.load_arrays(f"learner_{p}_", arrays, meta)
        st = self.state
        for p, archs in enumerate(document["members"]):
            for k, arch in enumerate(archs):
                head = f"member_{p}_{k}__"
                member = member_from_arrays(arch, {n[len(head):]: v for n, v in arrays.items() if n.startswith(head)})
                st.populations[p].add(member, member.provenance)
                if self.tree is not None:
                    self._tables[p].append(member.to_tabular(self.tree, p))
        shape = tuple(len(pop) for pop in st.populations)
        st.meta_game = EmpiricalGame(shape)
        for name in ("count", "total", "total_sq", "exact"):
            setattr(st.meta_game, name, np.array(arrays[f"meta_game__{name}"]))
        st.rng.bit_generator.state = document["rng"]
        columns = document["columns"]   # (the document's keys are sorted; the history keeps its column order)
        st.iteration = int(document["iteration"])
        st.rows = [{c: row[c] for c in columns} for row in document["history"]]
        saved = document["state"]
        st.gap, st.train_gap, st.wall, st.cpu = saved["gap"], saved["train_gap"], saved["wall"], saved["cpu"]
        st.evaluations, st.extra = saved["evaluations"], self.Extra.from_document(saved["extra"])
        st.measure_episodes = int(saved.get("measure_episodes", 0))   # (0 in a checkpoint written before it counted)
        st.env_steps = int(st.extra.decisions)
        st.sizes_before = list(shape)
        if st.iteration >= 0:
            from solvers import make_equilibrium

            st.meta_strategy = st.eval_meta_strategy = make_equilibrium(
                st.meta_game.mean_game(), concept="nash", method="nfsp", marginals=[np.eye(k)[k - 1] for k in shape])
