"""Learned best-response oracles (DQN, PPO) behind the interface of the exact ones.

A :class:`LearnedOracle` is called like the oracles of :func:`psro.oracles.exact.make_oracle`,
``oracle(player, target)`` with a :class:`psro.oracles.exact.Target` (product
or joint), or with the opponents' mixed realization plans,
``oracle(player, opponent_plans)``. It turns the target into an
:class:`psro.oracles.learned.env.OpponentMixture` (the aggregated behaviour policies, or
one population member per seat drawn per episode with ``target_mode="sample"``;
joint targets are always sampled), trains a fresh network against
it with :func:`psro.oracles.learned.dqn.train_dqn` or :func:`psro.oracles.learned.ppo.train_ppo`,
and returns a :class:`LearnedBestResponse`. Its ``policy`` is the network's
tabular form (when a :class:`psro.game_tree.GameTree` is given) and its
``value`` is measured exactly against the target when the tree is known, and
estimated from evaluation episodes otherwise; both are kept.

Each call is a pure function of its inputs and its seed. PSRO passes the
keys ``iteration`` and ``index`` (which of the player's targets), and the
training seed is :func:`psro.oracles.jobs.job_seed` of ``(seed, iteration,
player, index)``; an explicit ``seed=`` overrides it. Torch is seeded inside
the call, trains on one thread, and the caller's torch random state is
restored afterwards, so nothing carries over from one call to the next: a run
resumed from a checkpoint, or one whose responses are computed by worker
processes (:mod:`psro.oracles.jobs`), trains every response exactly as an
uninterrupted serial run does. Only a standalone call with neither
``iteration`` nor ``seed`` falls back on the number of calls so far.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace

import numpy as np

from games.validation import is_integer
from psro.evaluation.exact import SequenceFormEvaluator
from psro.game_tree import GameTree
from psro.oracles.base import BestResponse, Target
from psro.oracles.jobs import job_seed
from psro.oracles.learned.dqn import DQNConfig, train_dqn
from psro.oracles.learned.env import OpponentMixture, TabularStatePolicy
from psro.oracles.learned.networks import LearnedProvenance, NeuralPolicy
from psro.oracles.learned.ppo import PPOConfig, train_ppo
from psro.oracles.learned.training import TrainingResult
from psro.policies import behaviour_from_plan, check_policy, realization_plans

__all__ = [
    "ALGORITHMS",
    "LearnedBestResponse",
    "LearnedOracle",
        "exact_value",
    "make_learned_oracle",
]

logger = logging.getLogger(__name__)

ALGORITHMS = ("dqn", "ppo")
TARGET_MODES = ("aggregate", "sample")


@dataclass(frozen=True, eq=False)
class LearnedBestResponse(BestResponse):
    """A learned response: a :class:`psro.oracles.exact.BestResponse` with training facts.

    Attributes
    ----------
    player : int
    policy : ndarray
        The greedy tabular policy ``(num_infostates, num_actions)``.
    value : float
        ``exact_value`` when known, else ``estimated_value``.
    exact_value : float
        The tabular policy's exact expected payoff against the target (NaN without a tree).
    estimated_value : float
        Mean return over the evaluation episodes.
    estimated_stderr : float
    network : NeuralPolicy
    training : TrainingResult
    """

    exact_value: float
    estimated_value: float
    estimated_stderr: float
    network: NeuralPolicy
    training: TrainingResult


def exact_value(tree: GameTree, player: int, policy: np.ndarray, opponent_plans: Sequence) -> float:
    """Exact expected payoff of ``player``'s tabular ``policy`` against the others' realization plans.

    Parameters
    ----------
    tree : GameTree
    player : int
    policy : ndarray, shape (num_infostates, num_actions)
    opponent_plans : sequence of ndarray
        One realization plan per player (the learner's entry is ignored), for
        example the mixture ``weights @ population.plans``.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.game_tree import build_game_tree
    >>> from psro.policies import uniform_policy
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> plans = [realization_plans(uniform_policy(i)[None], i)[0] for i in tree.infostates]
    >>> round(exact_value(tree, 0, uniform_policy(tree.infostates[0]), plans), 6)   # uniform vs uniform
    0.125
    """
    info = tree.infostates[player]
    own = realization_plans(check_policy(policy, info, argname="policy"), info)
    plans = [own if q == player else np.asarray(x, dtype=np.float64).reshape(1, -1)
             for q, x in enumerate(opponent_plans)]
    return float(SequenceFormEvaluator(tree).payoffs(plans)[player].reshape(-1)[0])


def _trainer(algorithm: str):
    if algorithm == "dqn":
        return DQNConfig, train_dqn
    if algorithm == "ppo":
        return PPOConfig, train_ppo
    raise ValueError(f"algorithm must be one of {list(ALGORITHMS)}; got {algorithm!r}.")


class LearnedOracle:
    """A DQN or PPO best-response oracle with the call signature of the exact ones.

    Parameters
    ----------
    tree : GameTree
        The game and its infostates (for the tabular form and exact values).
    algorithm : {"dqn", "ppo"}
    config : DQNConfig or PPOConfig, optional
        Training settings; its ``seed`` is replaced by each call's seed.
    seed : int
        The run's seed, root of the per-call seeds (:meth:`seed_for`).
    meta_solver : str
        Recorded in the provenance of the networks it trains.
    target_mode : {"aggregate", "sample"}
        For product targets: train against the opponents' aggregated behaviour
        policies, or draw one member of each opponent population per episode.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.game_tree import build_game_tree
    >>> from psro.oracles.learned.dqn import DQNConfig
    >>> from psro.policies import uniform_policy
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> oracle = LearnedOracle(tree, "dqn", DQNConfig(total_steps=2000, eval_episodes=200), seed=0)
    >>> plans = [realization_plans(uniform_policy(i)[None], i)[0] for i in tree.infostates]
    >>> br = oracle(0, plans)
    >>> br.policy.shape, br.value == br.exact_value, br.network.provenance.oracle
    ((6, 2), True, 'dqn')
    """

    learned = True

    def __init__(self, tree: GameTree, algorithm: str = "ppo", config=None, seed: int = 0, meta_solver: str = "",
                 target_mode: str = "aggregate"):
        if target_mode not in TARGET_MODES:
            raise ValueError(f"target_mode must be one of {TARGET_MODES}; got {target_mode!r}.")
        self.target_mode = target_mode
        config_type, self._train = _trainer(algorithm)
        if config is None:
            config = config_type()
        if not isinstance(config, config_type):
            raise TypeError(f"config must be a {config_type.__name__} for algorithm={algorithm!r}; "
                            f"got {type(config).__name__}.")
        if not is_integer(seed):
            raise TypeError(f"seed must be an int; got {seed!r}.")
        if seed < 0:
            raise ValueError(f"seed must be a non-negative int; got {seed!r}.")
        self.tree, self.name, self.config, self.meta_solver = tree, algorithm, config, meta_solver
        self.seed = int(seed)
        self.calls = 0

    def seed_for(self, player: int, iteration: int | None = None, index: int = 0) -> int:
        """The training seed of a call: :func:`psro.oracles.jobs.job_seed` of ``(seed, iteration, player, index)``.

        Without ``iteration`` (a standalone call), the number of calls so far
        takes its place in a separate key space.

        Examples
        --------
        >>> import pyspiel
        >>> from psro.game_tree import build_game_tree
        >>> from psro.oracles.jobs import job_seed
        >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
        >>> LearnedOracle(tree, "ppo", seed=7).seed_for(1, iteration=3) == job_seed(7, 3, 1, 0)
        True
        """
        if iteration is None:
            sequence = np.random.SeedSequence(self.seed, spawn_key=(self.calls,))
            return int(sequence.generate_state(1, dtype=np.uint32)[0])
        return job_seed(self.seed, iteration, player, index)

    def __call__(self, player: int, target, opponent_policies: Sequence | None = None,
                 iteration: int | None = None, *, index: int = 0, seed: int | None = None) -> LearnedBestResponse:
        """Respond to a :class:`psro.oracles.exact.Target`, or to the opponents' mixed realization plans.

        With plans, the opponents play the aggregated behaviour policies
        (``opponent_policies`` if given, else computed from the plans).
        ``iteration`` and ``index`` key the training seed (:meth:`seed_for`)
        unless ``seed`` is given.
        """
        if seed is None:
            seed = self.seed_for(player, iteration, index)
        if hasattr(target, "populations"):
            return self._respond_to_target(player, target, iteration, seed)
        opponent_plans = target
        tree = self.tree
        if len(opponent_plans) != tree.num_players:
            raise ValueError(f"opponent_plans needs one entry per player ({tree.num_players}); "
                             f"got {len(opponent_plans)}.")
        profile = []
        for q, info in enumerate(tree.infostates):
            if q == player:
                profile.append(None)
                continue
            if opponent_policies is not None and opponent_policies[q] is not None:
                pol = np.asarray(opponent_policies[q])
            else:
                pol = behaviour_from_plan(np.asarray(opponent_plans[q], dtype=np.float64), info)
            profile.append(TabularStatePolicy(pol, info))
        return self.train_against(player, OpponentMixture.single(profile), opponent_plans, iteration, seed=seed)

    def respond(self, player: int, target: Target, *, key: tuple | None = None) -> LearnedBestResponse:
        """The :class:`psro.oracles.base.Oracle` call: ``key = (iteration, index)`` seeds the training."""
        iteration, index = (None, 0) if key is None else key
        return self(player, target, iteration=iteration, index=index)

    def _respond_to_target(self, player: int, target, iteration: int | None, seed: int) -> LearnedBestResponse:
        tree = self.tree
        pops = target.populations
        if not target.is_joint:
            if self.target_mode == "aggregate":
                return self(player, target.opponent_plans(), None, iteration, seed=seed)
            mixture = OpponentMixture.from_populations(
                player, [None if q == player else pop.policies for q, pop in enumerate(pops)],
                [None if q == player else w for q, w in enumerate(target.mixtures)], tree.infostates)
            return self.train_against(player, mixture, target.opponent_plans(), iteration, seed=seed)
        profiles = np.asarray(target.profiles)
        weights = np.asarray(target.weights, dtype=np.float64)
        seats = [[None if q == player else TabularStatePolicy(pops[q].policies[row[q]], info)
                  for q, info in enumerate(tree.infostates)] for row in profiles]
        result = self.train_against(player, OpponentMixture(tuple(seats), weights), None, iteration, seed=seed)
        # exact value against the joint target: the weighted sum over its support profiles
        value = sum(w * exact_value(tree, player, result.policy,
                                    [pops[q].plans[row[q]] if q != player else None for q in range(len(pops))])
                    for row, w in zip(profiles, weights))
        result.network.provenance = replace(result.network.provenance, value=float(value))
        return replace(result, value=float(value), exact_value=float(value))

    def train_against(self, player: int, opponents: OpponentMixture, opponent_plans: Sequence | None = None,
                iteration: int | None = None, *, seed: int | None = None) -> LearnedBestResponse:
        """Train against ``opponents`` (any mixture of profiles); measure exactly if ``opponent_plans`` is given.

        ``seed`` (default :meth:`seed_for` of ``player`` and ``iteration``)
        seeds the training run; torch trains on one thread and the caller's
        torch random state is left as it was.

        Examples
        --------
        See :class:`LearnedOracle`; :meth:`psro.oracles.learned.env.OpponentMixture.from_populations`
        builds a target that samples one opponent per episode.
        """
        if not 0 <= player < self.tree.num_players:
            raise ValueError(f"player must be in [0, {self.tree.num_players}); got {player}.")
        config = replace(self.config, seed=self.seed_for(player, iteration) if seed is None else int(seed))
        with _isolated_torch():
            result = self._train(self.tree.game, player, opponents, config)
            policy = result.policy.to_tabular(self.tree, player, greedy=True)
        self.calls += 1
        exact = math.nan if opponent_plans is None else exact_value(self.tree, player, policy, opponent_plans)
        value = result.evaluation.mean if math.isnan(exact) else exact
        result.policy.provenance = LearnedProvenance(
            iteration=self.calls if iteration is None else int(iteration), oracle=self.name,
            meta_solver=self.meta_solver, value=value, training_steps=result.training_steps, seed=config.seed)
        logger.info("%s response of player %d: value %.4f (estimated %.4f +- %.4f) after %d steps, %.2fs",
                    self.name, player, value, result.evaluation.mean, result.evaluation.stderr,
                    result.training_steps, result.seconds)
        return LearnedBestResponse(player=player, policy=policy, value=value, exact_value=exact,
                                   estimated_value=result.evaluation.mean,
                                   estimated_stderr=result.evaluation.stderr,
                                   network=result.policy, training=result)


@contextmanager
def _isolated_torch() -> Iterator[None]:
    """Run the body on one torch thread with a forked global torch generator; restore both afterwards.

    The training seeds torch itself (:func:`psro.oracles.learned.training.seeded_env`);
    forking keeps the caller's random state, and one thread makes the
    arithmetic identical in every process (no thread-count-dependent
    reductions) and keeps parallel workers from oversubscribing the CPUs.
    """
    import torch

    threads = torch.get_num_threads()
    with torch.random.fork_rng(devices=[]):
        torch.set_num_threads(1)
        try:
            yield
        finally:
            torch.set_num_threads(threads)


def make_learned_oracle(name: str, tree: GameTree, seed: int = 0, target_mode: str = "aggregate",
                        **config_fields) -> LearnedOracle:
    """A :class:`LearnedOracle` by name, with config fields given as keyword arguments.

    This is what :func:`psro.oracles.exact.make_oracle` calls for ``"dqn"`` and
    ``"ppo"`` (``PSRO(oracle_options=...)`` ends up here). Lists are accepted
    for tuple fields such as ``hidden`` (a config read back from JSON or YAML).

    Examples
    --------
    >>> import pyspiel
    >>> from psro.game_tree import build_game_tree
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> make_learned_oracle("ppo", tree, total_steps=1000).config.total_steps
    1000
    """
    config_type, _ = _trainer(name)
    known = set(config_type.__dataclass_fields__) - {"seed"}
    unknown = sorted(set(config_fields) - known)
    if unknown:
        raise TypeError(f"{config_type.__name__} has no field(s) {unknown}; its fields are "
                        f"{sorted(known | {'target_mode'})}.")
    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in config_fields.items()}
    return LearnedOracle(tree, name, config_type(**fields), seed=seed, target_mode=target_mode)
