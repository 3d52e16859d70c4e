"""A neural best response from sampled play: fitted Q iteration on the learner's sampled decision problem.

The model-based response (:mod:`psro.oracles.learned.model_based`) samples the learner's decision problem against
fixed opponents and solves it by backward induction over a table of observations. Where the game is large, most
observations are seen once, and a table's backward induction rests on one sample per state. This oracle keeps the
same samples (:class:`~psro.oracles.learned.decisions.DecisionSampler`: whole episodes, a uniformly exploring
round, then rounds around the solution so far) and replaces the table by a Q-network over the observation, fitted
by **fitted Q iteration** on the aggregated problem:

1. the decisions are aggregated per ``(state, action)`` pair: its visits ``n``, the sum ``R`` of the returns of
   the episodes that ended there, and where the others went (successor states, with counts);
2. each **sweep** computes every pair's target ``(R + sum over successors s' of V(s')) / n``, where ``V(s')`` is
   the largest Q-value the network gives a legal action at ``s'``, then fits the network to the targets (squared
   error weighted by ``n``: the per-decision loss with the noise of each pair's own samples averaged out) for
   ``epochs`` passes of minibatches (at most ``max_updates`` minibatches), continuing from the previous sweep's
   weights;
3. ``sweeps`` sweeps (at least the length of the learner's longest chain of decisions, so that the returns reach
   the first decisions); a later round of sampling follows the network's greedy actions with probability
   ``1 - explore``;
4. the response is the Q-network played greedily (a :class:`~psro.oracles.learned.networks.NeuralPolicy` with
   ``mode="greedy"``: no table, any observation), valued like the other learned responses.

Why the other networks miss where a table from the same play does not (issue #55): on Leduc, PPO and DQN with
100,000 decisions give each sample one or a few gradient steps and bootstrap from moving estimates, and PPO
learns only on its own (on-policy) play; the fitted network here sees every pair's averaged target for tens of
passes per sweep and its targets come from the whole sampled problem, explored off-policy. The
``neural_br`` rows of ``experiments/benchmarks/results/deep_leduc_br_quality.md`` measure the result.

Examples
--------
>>> import pyspiel
>>> from psro.sequence_form.game_tree import build_game_tree
>>> from psro.oracles.exact import best_response
>>> from psro.policies.acting import TabularStatePolicy
>>> from psro.oracles.learned.oracle import exact_value
>>> from psro.policies import realization_plans, uniform_policy
>>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
>>> uniform = uniform_policy(tree.infostates[1])
>>> result = train_neural_br(tree.game, 0, OpponentMixture.single([None, TabularStatePolicy(uniform,
...                          tree.infostates[1])]), NeuralBRConfig(total_steps=20_000, eval_episodes=200))
>>> plans = [None, realization_plans(uniform[None], tree.infostates[1])[0]]
>>> round(best_response(tree, 0, plans).value, 4), round(exact_value(tree, 0, result.policy.to_tabular(tree, 0),
...                                                                    plans), 4)
(0.5, 0.5)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import torch

from psro.oracles.learned.decisions import DecisionModel, DecisionSampler, check_sampling
from psro.oracles.learned.env import OpponentMixture, VectorEnv
from psro.oracles.learned.networks import NeuralPolicy, masked_scores
from psro.oracles.learned.training import (
    Curve,
    TrainingResult,
    check_finite,
    check_hidden,
    check_positive_ints,
    check_real_fields,
    evaluated_result,
)

__all__ = ["NeuralBRConfig", "PairProblem", "pair_problem", "train_neural_br"]


@dataclass(frozen=True)
class NeuralBRConfig:
    """Settings of :func:`train_neural_br`.

    Examples
    --------
    >>> NeuralBRConfig(total_steps=5000).sweeps
    8
    """

    total_steps: int = 300_000
    """learner decisions sampled, summed over the parallel games"""
    num_envs: int = 1024
    """games stepped side by side"""
    rounds: int = 2
    """rounds of sampling: the first explores uniformly, each later one follows the network's greedy actions,
    exploring with probability ``explore``; the budget is split evenly"""
    explore: float = 0.5
    """in the rounds after the first, the probability of a uniform legal action instead of the greedy one"""
    hidden: tuple = (256, 256)
    """hidden layer widths of the Q-network"""
    sweeps: int = 8
    """fitted Q iteration sweeps per round (at least the learner's longest chain of decisions)"""
    epochs: int = 30
    """passes over the (state, action) pairs per sweep ..."""
    max_updates: int = 1500
    """... but at most this many minibatch updates per sweep (on a large game most pairs are seen once, and the
    passes would cost more than the sampling)"""
    batch_size: int = 512
    """pairs per minibatch"""
    learning_rate: float = 3e-3
    """Adam step size"""
    eval_episodes: int = 2000
    """episodes played at the end (greedy) to estimate the response's value"""
    seed: int = 0
    """seeds torch and the numpy generator that drives chance, the opponents, exploration and minibatches"""

    def __post_init__(self):
        check_positive_ints(self, ("sweeps", "epochs", "max_updates", "batch_size"))
        check_real_fields(self, {"learning_rate": (0.0, None, True)})
        check_hidden(self)
        check_sampling(self)


@dataclass(frozen=True, eq=False)
class PairProblem:
    """The sampled decisions aggregated per ``(state, action)`` pair.

    Attributes
    ----------
    state, action : ndarray of int64, shape (pairs,)
    visits : ndarray of float64
        Decisions of the pair.
    ended : ndarray of float64
        Sum of the returns of the episodes that ended with the pair's decision.
    edge_pair, edge_state : ndarray of int64
        One entry per (pair, successor state) link: the pair's index and the successor.
    edge_count : ndarray of float64
        How many of the pair's decisions led there.
    """

    state: np.ndarray
    action: np.ndarray
    visits: np.ndarray
    ended: np.ndarray
    edge_pair: np.ndarray
    edge_state: np.ndarray
    edge_count: np.ndarray

    def targets(self, value: np.ndarray) -> np.ndarray:
        """``(R + sum of V(successor)) / n`` per pair, ``value`` being ``V`` per state."""
        onward = np.bincount(self.edge_pair, weights=self.edge_count * value[self.edge_state],
                             minlength=len(self.state))
        return (self.ended + onward) / self.visits


def pair_problem(model: DecisionModel) -> PairProblem:
    """Aggregate a :class:`~psro.oracles.learned.decisions.DecisionModel` per ``(state, action)`` pair.

    Examples
    --------
    From state 0, action 1 ends with 1 and action 0 leads to state 1, whose action 0 ends with 3 or 1:

    >>> model = DecisionModel(np.zeros((2, 1), np.float32), np.ones((2, 2), bool), state=np.array([0, 0, 1, 1]),
    ...                       action=np.array([0, 1, 0, 0]), next_state=np.array([1, -1, -1, -1]),
    ...                       reward=np.array([0.0, 1.0, 3.0, 1.0]))
    >>> problem = pair_problem(model)
    >>> problem.state.tolist(), problem.action.tolist(), problem.visits.tolist()
    ([0, 0, 1], [0, 1, 0], [1.0, 1.0, 2.0])
    >>> problem.targets(np.array([0.0, 2.0])).tolist()   # V(1) = 2 reaches pair (0, 0)
    [2.0, 1.0, 2.0]
    """
    num_actions = model.legal.shape[1]
    key = model.state * num_actions + model.action
    pairs, index = np.unique(key, return_inverse=True)
    visits = np.bincount(index, minlength=len(pairs)).astype(np.float64)
    going = model.next_state >= 0
    ended = np.bincount(index[~going], weights=model.reward[~going], minlength=len(pairs))
    link = index[going] * (model.num_states + 1) + model.next_state[going]
    links, counts = np.unique(link, return_counts=True)
    return PairProblem(state=pairs // num_actions, action=pairs % num_actions, visits=visits, ended=ended,
                       edge_pair=links // (model.num_states + 1), edge_state=links % (model.num_states + 1),
                       edge_count=counts.astype(np.float64))


def _scores(network: NeuralPolicy, obs: np.ndarray, mask: np.ndarray, chunk: int = 65_536) -> np.ndarray:
    """The network's Q-values of ``obs`` with illegal actions pushed far below, in chunks."""
    with torch.no_grad():
        return np.concatenate([masked_scores(network.network(torch.from_numpy(obs[lo:lo + chunk])),
                                             torch.from_numpy(mask[lo:lo + chunk])).numpy()
                               for lo in range(0, len(obs), chunk)] or [np.zeros((0, mask.shape[1]), np.float32)])


def _state_values(network: NeuralPolicy, model: DecisionModel, tried: np.ndarray) -> np.ndarray:
    """``V(s)``: the largest Q-value of an action tried at ``s`` in the samples (of a legal one where none was)."""
    mask = np.where(tried.any(axis=1, keepdims=True), tried, model.legal)
    return _scores(network, model.observations, mask).max(axis=1).astype(np.float64)


def _fit(network: NeuralPolicy, optimizer, model: DecisionModel, problem: PairProblem, config: NeuralBRConfig,
         rng: np.random.Generator) -> float:
    """One sweep: targets from the network's current values, then ``epochs`` passes of weighted regression (at most
    ``max_updates`` minibatches); the mean loss of the last (possibly partial) pass."""
    tried = np.zeros(model.legal.shape, bool)
    tried[problem.state, problem.action] = True
    ends = model.reward[model.next_state < 0]   # (a state's value lies between the smallest and largest return)
    value = np.clip(_state_values(network, model, tried), ends.min(), ends.max())
    target = torch.from_numpy(problem.targets(value).astype(np.float32))
    obs = torch.from_numpy(model.observations[problem.state])
    action = torch.from_numpy(problem.action)
    weight = torch.from_numpy((problem.visits / problem.visits.mean()).astype(np.float32))
    n, updates, mean_loss = len(target), 0, math.nan
    for _ in range(config.epochs):
        if updates == config.max_updates:
            break
        order = torch.from_numpy(rng.permutation(n))
        total, batches = 0.0, 0
        for lo in range(0, n, config.batch_size):
            if updates == config.max_updates:
                break
            mb = order[lo:lo + config.batch_size]
            q = network.network(obs[mb]).gather(1, action[mb, None]).squeeze(1)
            loss = (weight[mb] * (q - target[mb]).pow(2)).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total, batches, updates = total + float(loss.detach()), batches + 1, updates + 1
        mean_loss = total / batches
    return mean_loss


def train_neural_br(game, player: int, opponents: OpponentMixture, config: NeuralBRConfig = NeuralBRConfig(), *,
                    initial=None, mode: str = "greedy", device="cpu") -> TrainingResult:
    """A best response for seat ``player`` against ``opponents``: a Q-network fitted to the sampled decision
    problem (see the module docstring).

    Parameters
    ----------
    game : pyspiel.Game or an environment game
    player : int
    opponents : OpponentMixture
        An opponent profile is drawn from it at the start of every episode.
    config : NeuralBRConfig
    initial, mode, device
        Accepted for the interface the other learners share: the network starts fresh, plays greedily (its
        Q-values) and trains on the CPU.

    Returns
    -------
    TrainingResult
        Its ``policy`` is the Q-network as a greedy :class:`NeuralPolicy`.
    """
    start = time.perf_counter()
    rng = np.random.default_rng(config.seed)
    torch.manual_seed(config.seed)
    env = VectorEnv(game, player, opponents, config.num_envs, rng)
    network = NeuralPolicy(env.obs_dim, env.num_actions, config.hidden, mode="greedy")
    optimizer = torch.optim.Adam(network.network.parameters(), lr=config.learning_rate)
    sampler, greedy, curve = DecisionSampler(env, max_states=2 ** 62), None, Curve(env)
    with curve.kept():
        for r in range(config.rounds):
            sampler.play(config.total_steps // config.rounds, greedy, 1.0 if r == 0 else config.explore)
            model = sampler.model()
            problem = pair_problem(model)
            for _ in range(config.sweeps):
                loss = _fit(network, optimizer, model, problem, config, rng)
            steps = int(model.state.size)
            check_finite(loss, "loss", config, "neural_br", steps)
            greedy = _scores(network, model.observations, model.legal).argmax(axis=1)
            curve.add(loss)   # (the mean loss of the round's last pass)
            curve.end_chunk(steps, learning_rate=config.learning_rate)
        return evaluated_result(env, network, eval_episodes=config.eval_episodes, training_steps=steps,
                                seed=config.seed, start=start, config=config, algorithm="neural_br", curve=curve)
