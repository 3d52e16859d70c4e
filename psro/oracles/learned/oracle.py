"""Learned best-response oracles (DQN, PPO): trained on sampled play, with or without a game tree.

A :class:`LearnedOracle` answers a :class:`psro.oracles.base.Target` (product or
joint) through ``respond(player, target, key=(iteration, index))``, like the
exact oracles. Two paths:

**Neural (no tree needed).** When the populations hold policies that act on
observations (:class:`psro.oracles.learned.networks.NeuralPolicy`,
:class:`psro.policies.acting.UniformPolicy`, ...), or no tree is given, the
target becomes an :class:`psro.oracles.learned.env.OpponentMixture`: one
opponent profile per episode, drawn from the product of the meta-strategy's
marginals (PSRO) or from the conditional joint's rows (CCE/CE-JPSRO). A network
is trained against it with :func:`psro.oracles.learned.ppo.train_ppo` or
:func:`psro.oracles.learned.dqn.train_dqn`, and the returned
:class:`LearnedBestResponse`'s ``policy`` IS the trained
:class:`~psro.oracles.learned.networks.NeuralPolicy` (option ``response_mode``:
``"softmax"`` or ``"greedy"``; default softmax for PPO, greedy for DQN). Its
``estimated_value`` and ``estimated_stderr`` come from evaluation episodes of
that policy; only when a tree is given is the response tabularised
(:meth:`~psro.oracles.learned.networks.NeuralPolicy.to_tabular`) and its
``exact_value`` against the (tabularised) target computed. ``value`` is the
exact value when known, else the estimate.

**Tabular (a tree and tabular populations).** As before: with
``target_mode="aggregate"`` the opponents play the mixture's aggregated
behaviour policies (``"sample"``: one member per seat and episode), and the
response is the network's greedy table, valued exactly. The legacy call
``oracle(player, opponent_plans)`` takes this path too.

Warm starts: option ``warm_start=True`` starts every training run from a copy of
the latest :class:`~psro.oracles.learned.networks.NeuralPolicy` in the responder's
own population (``target.populations[player]``; the previous response that
joined); a target whose ``initial_policy`` is set starts from that policy
instead, whatever the option says. Option ``device`` (``"cpu"`` default) trains
the networks on a GPU where one exists; the returned network is moved back to
the CPU (populations, opponents and checkpoints keep networks there).

Learner health: a training run whose loss, scores or weights stop being finite
raises a ``ValueError`` naming ``learning_rate`` (and the other options that
steady it; :func:`psro.oracles.learned.training.check_finite`). After
training, the uniform random policy plays as many evaluation episodes in the
same seat against the same opponents; a response worth less than it by more
than three standard errors of the difference, or whose network answers every
observation alike (its hidden units died), did not learn: with option
``on_bad_response="error"`` (the default) that is a ``ValueError`` naming
``learning_rate`` and ``total_steps``; with ``"warn"`` it is logged as a
warning and the response carries ``ok=False`` (PSRO's history records it in
``response_ok``).

Each call is a pure function of its inputs and its seed. PSRO passes the key
``(iteration, index)`` (which of the player's targets), and the training seed
is :func:`psro.oracles.jobs.job_seed` of ``(seed, iteration, player, index)``;
an explicit ``seed=`` overrides it. Torch is seeded inside the call, trains on
one thread, and the caller's torch random state is restored afterwards, so
nothing carries over from one call to the next: a run resumed from a
checkpoint, or one whose responses are computed by worker processes
(:mod:`psro.oracles.jobs`), trains every response exactly as an uninterrupted
serial run does. Only a standalone call with neither ``iteration`` nor
``seed`` falls back on the number of calls so far.
"""

from __future__ import annotations

import difflib
import itertools
import logging
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace

import numpy as np

from games.validation import is_integer
from psro.errors import LearnerDiverged
from psro.evaluation.exact import SequenceFormEvaluator
from psro.oracles.base import BestResponse, Target
from psro.oracles.exact import best_response
from psro.oracles.jobs import job_seed
from psro.oracles.learned.dqn import DQNConfig, train_dqn
from psro.oracles.learned.env import OpponentMixture
from psro.oracles.learned.model_based import ModelBRConfig, train_model_br
from psro.oracles.learned.networks import MODES, LearnedProvenance, NeuralPolicy, game_sizes, torch_device
from psro.oracles.learned.ppo import PPOConfig, train_ppo
from psro.oracles.learned.training import TrainingResult
from psro.policies import behaviour_from_plan, check_policy, realization_plans
from psro.policies.acting import TabularStatePolicy
from psro.sequence_form.game_tree import GameTree

__all__ = [
    "ALGORITHMS",
    "LearnedBestResponse",
    "LearnedOracle",
    "exact_value",
    "isolated_torch",
    "make_learned_oracle",
    "response_failure",
]

logger = logging.getLogger(__name__)

ALGORITHMS = ("dqn", "ppo", "model", "neural")
TARGET_MODES = ("aggregate", "sample")
ON_BAD_RESPONSE = ("error", "warn")
#: Standard errors of the difference by which a response may fall short of the uniform policy before it is bad
BAD_RESPONSE_Z = 3.0
DEFAULT_RESPONSE_MODE = {"ppo": "softmax", "dqn": "greedy", "model": "greedy", "neural": "greedy"}


@dataclass(frozen=True, eq=False)
class LearnedBestResponse(BestResponse):
    """A learned response: a :class:`psro.oracles.base.BestResponse` with training facts.

    Attributes
    ----------
    player : int
    policy : NeuralPolicy or ndarray
        Neural path: the trained network itself (the same object as
        ``network``). Tabular path: its greedy table ``(num_infostates, num_actions)``.
    value : float
        ``exact_value`` when known, else ``estimated_value``.
    exact_value : float
        The response's exact expected payoff against the target, its tabular
        form over the tree's infostates (NaN without a tree).
    estimated_value : float
        Mean return over the evaluation episodes (played as ``policy`` plays).
    estimated_stderr : float
        Its standard error.
    network : NeuralPolicy
    training : TrainingResult
    ok : bool
        False when the response is worth less than the uniform policy against the same opponents by more than
        :data:`BAD_RESPONSE_Z` standard errors, or when its network answers every observation alike (see
        :func:`response_failure`; only with ``on_bad_response="warn"``: else that is an error).
    exact_error : float
        With a tree and a product target: the exact best response's value against the target minus
        ``exact_value`` (how far the response is from a best response); NaN otherwise.

    The learning curve of its training reads as ``curve`` (``training.curve``: one row per chunk, with the learner's
    name and the responder, the last row valued like ``value``).
    """

    exact_value: float
    estimated_value: float
    estimated_stderr: float
    network: NeuralPolicy
    training: TrainingResult
    ok: bool = True
    exact_error: float = math.nan

    env_steps = property(lambda self: int(self.training.training_steps), doc="Learner decisions of its training.")
    curve = property(lambda self: tuple(self.training.curve), doc="Its training's learning curve (plain dicts).")
    training_episodes = property(lambda self: int(self.training.training_episodes),
                                 doc="Episodes its training finished.")
    eval_episodes = property(lambda self: int(self.training.evaluation.episodes) + (
        0 if self.training.baseline is None else int(self.training.baseline.episodes)),
        doc="Episodes played to value it and the uniform policy it must beat.")


def response_failure(result: TrainingResult, z: float = BAD_RESPONSE_Z) -> str | None:
    """Why a trained response did not learn, or None: its network answers every observation alike (its hidden
    units died: :attr:`TrainingResult.responsive`), or it is worth less than the uniform policy in its seat
    against the same opponents (:attr:`TrainingResult.baseline`) by more than ``z`` standard errors of the
    difference.

    Examples
    --------
    >>> from psro.oracles.learned.env import EpisodeStats
    >>> def result(value, responsive=True):   # the uniform policy is worth 0.0 +- 0.05
    ...     stats, uniform = EpisodeStats(value, 0.05, 2000), EpisodeStats(0.0, 0.05, 2000)
    ...     return TrainingResult(None, stats, 1000, 10, 1.0, 0, baseline=uniform, responsive=responsive)
    >>> response_failure(result(-0.75))
    "it is worth -0.75 +- 0.05 against its opponents, less than the uniform random policy's 0 +- 0.05"
    >>> response_failure(result(-0.1)) is None, response_failure(result(0.4)) is None
    (True, True)
    >>> response_failure(result(0.4, responsive=False))
    'its network answers every observation alike (its hidden units died)'
    """
    if not result.responsive:
        return "its network answers every observation alike (its hidden units died)"
    base, own = result.baseline, result.evaluation
    if base is None:
        return None
    margin = z * math.hypot(own.stderr, base.stderr)
    if math.isfinite(margin) and own.mean < base.mean - margin:
        return (f"it is worth {own.mean:.4g} +- {own.stderr:.2g} against its opponents, less than the uniform random "
                f"policy's {base.mean:.4g} +- {base.stderr:.2g}")
    return None


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
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> from psro.policies import uniform_policy
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
    if algorithm == "model":
        return ModelBRConfig, train_model_br
    if algorithm == "neural":
        from psro.oracles.learned.neural_br import NeuralBRConfig, train_neural_br

        return NeuralBRConfig, train_neural_br
    raise ValueError(f"algorithm must be one of {list(ALGORITHMS)}; got {algorithm!r}.")


def _is_tabular_population(pop) -> bool:
    return isinstance(pop.policies, np.ndarray)


def _member_plans(pop, tree: GameTree, player: int) -> np.ndarray:
    """Realization plans ``(k, S)`` of a population's members over ``tree``: its own cached tabular form when it
    has one (:meth:`psro.policies.population.PolicyPopulation.tabular`), else each member tabularised
    (:func:`psro.policies.population.tabular_policy`)."""
    if hasattr(pop, "tabular"):
        return np.asarray(pop.tabular(tree).plans)
    if _is_tabular_population(pop) and hasattr(pop, "plans"):
        return np.asarray(pop.plans)
    from psro.policies.population import tabular_policy

    info = tree.infostates[player]
    tables = np.stack([tabular_policy(member, tree, player) for member in pop.policies])
    return realization_plans(tables, info)


class LearnedOracle:
    """A DQN or PPO best-response oracle: trains a network against a target by sampled play.

    Parameters
    ----------
    tree : GameTree, optional
        The game and its infostates: for exact values, and for tabular
        populations. None: no tree (give ``game``).
    algorithm : {"dqn", "ppo"}
    config : DQNConfig or PPOConfig, optional
        Training settings; its ``seed`` is replaced by each call's seed.
    seed : int
        The run's seed, root of the per-call seeds (:meth:`seed_for`).
    meta_solver : str
        Recorded in the provenance of the networks it trains.
    target_mode : {"aggregate", "sample"}
        Tabular path, product targets: train against the opponents' aggregated
        behaviour policies, or draw one member of each opponent population per
        episode. (The neural path always samples.)
    game : pyspiel.Game, str or environment game, optional
        The game to play (default ``tree.game``); a string is loaded with :func:`games.load`.
    response_mode : {"softmax", "greedy"}, optional
        How a neural response plays (default: ``"softmax"`` for PPO, ``"greedy"`` for DQN).
    warm_start : bool
        Start each training run from the latest network of the responder's own population.
    device : str
        Where the networks train (``"cpu"``, or ``"cuda"`` where a GPU exists).
    on_bad_response : {"error", "warn"}
        What a response that did not learn does (:func:`response_failure`): a
        ``ValueError`` naming the options to change, or a logged warning and ``ok=False`` on the response.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.oracles.learned.dqn import DQNConfig
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> from psro.policies import uniform_policy
    >>> oracle = LearnedOracle(tree, "dqn", DQNConfig(total_steps=2000, eval_episodes=200), seed=0)
    >>> plans = [realization_plans(uniform_policy(i)[None], i)[0] for i in tree.infostates]
    >>> br = oracle(0, plans)
    >>> br.policy.shape, br.value == br.exact_value, br.network.provenance.oracle
    ((6, 2), True, 'dqn')

    Without a tree, against a population of networks:

    >>> from psro.policies.population import PolicyPopulation, Provenance
    >>> game = pyspiel.load_game("kuhn_poker")
    >>> pops = [PolicyPopulation(p, 2) for p in range(2)]
    >>> _ = [pop.add(NeuralPolicy.for_game(game, hidden=(8,)), Provenance(0, "initial")) for pop in pops]
    >>> target = Target(player=1, populations=pops, mixtures=(np.ones(1), np.ones(1)))
    >>> oracle = LearnedOracle(None, "ppo", PPOConfig(total_steps=512, eval_episodes=50), game=game)
    >>> br = oracle.respond(1, target, key=(1, 0))
    >>> type(br.policy).__name__, br.policy.mode, math.isnan(br.exact_value), br.estimated_stderr > 0
    ('NeuralPolicy', 'softmax', True, True)
    """

    learned = True

    def __init__(self, tree: GameTree | None = None, algorithm: str = "ppo", config=None, seed: int = 0,
                 meta_solver: str = "", target_mode: str = "aggregate", *, game=None,
                 response_mode: str | None = None, warm_start: bool = False, device="cpu",
                 on_bad_response: str = "error"):
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
        if tree is not None and not isinstance(tree, GameTree):
            raise TypeError(f"tree must be a psro.sequence_form.game_tree.GameTree or None; got {type(tree).__name__}.")
        if tree is None and game is None:
            raise ValueError("a learned oracle needs game= (the game to play) when no tree is given.")
        if isinstance(game, str):
            import games

            game = games.load(game)
        if response_mode is not None and response_mode not in MODES:
            raise ValueError(f"response_mode must be one of {MODES} or None (the algorithm's default); "
                             f"got {response_mode!r}.")
        if not isinstance(warm_start, bool):
            raise TypeError(f"warm_start must be True or False; got {warm_start!r}.")
        if on_bad_response not in ON_BAD_RESPONSE:
            raise ValueError(f"on_bad_response must be one of {ON_BAD_RESPONSE}; got {on_bad_response!r}.")
        self.on_bad_response = on_bad_response
        self.device = torch_device(device)
        self.tree, self.name, self.config, self.meta_solver = tree, algorithm, config, meta_solver
        self.game = tree.game if game is None else game
        self.sizes = game_sizes(self.game)   # ValueError here for a game without observations
        self.response_mode = DEFAULT_RESPONSE_MODE[algorithm] if response_mode is None else response_mode
        self.warm_start = warm_start
        self.seed = int(seed)
        self.calls = 0

    @property
    def num_players(self) -> int:
        if self.tree is not None:
            return self.tree.num_players
        n = self.game.num_players
        return int(n() if callable(n) else n)

    def seed_for(self, player: int, iteration: int | None = None, index: int = 0) -> int:
        """The training seed of a call: :func:`psro.oracles.jobs.job_seed` of ``(seed, iteration, player, index)``.

        Without ``iteration`` (a standalone call), the number of calls so far
        takes its place in a separate key space.

        Examples
        --------
        >>> import pyspiel
        >>> from psro.sequence_form.game_tree import build_game_tree
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
        """Respond to a :class:`psro.oracles.base.Target`, or (with a tree) to the opponents' realization plans.

        With plans, the opponents play the aggregated behaviour policies
        (``opponent_policies`` if given, else computed from the plans).
        ``iteration`` and ``index`` key the training seed (:meth:`seed_for`)
        unless ``seed`` is given.
        """
        self._check_player(player)
        if seed is None:
            seed = self.seed_for(player, iteration, index)
        if hasattr(target, "populations"):
            if self.tree is not None and all(_is_tabular_population(pop) for pop in target.populations):
                return self._respond_tabular(player, target, iteration, seed)
            return self._respond_neural(player, target, iteration, seed)
        tree = self._need_tree("opponent realization plans")
        opponent_plans = target
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

    # ------------------------------------------------------------------ helpers
    def _check_player(self, player: int) -> None:
        n = self.num_players
        if not is_integer(player) or not 0 <= player < n:
            raise ValueError(f"player must be in [0, {n}); got {player!r}.")

    def _need_tree(self, what: str) -> GameTree:
        if self.tree is None:
            raise ValueError(f"{what} need a game tree, and this oracle has none; give populations of neural "
                             "policies (or build the oracle with a tree).")
        return self.tree

    def _seat(self, member, q: int):
        """A population member as something the environment can play in seat ``q``."""
        if isinstance(member, np.ndarray):
            tree = self._need_tree("tabular population members")
            return TabularStatePolicy(member, tree.infostates[q])
        if isinstance(member, NeuralPolicy):
            member.check_fits(*self.sizes, argname=f"populations[{q}]")
        return member

    def _initial(self, player: int, target) -> NeuralPolicy | None:
        """The warm-start network: ``target.initial_policy``, else (``warm_start``) the latest own network. A
        model-based response has no weights to continue: it starts from nothing (a loop that continues its
        responses, such as pipeline PSRO, re-solves against each chunk's target)."""
        if self.name in ("model", "neural"):   # (the neural response's Q-network starts fresh too)
            return None
        initial = getattr(target, "initial_policy", None)
        if initial is None and self.warm_start:
            initial = next((m for m in reversed(list(target.populations[player].policies))
                            if isinstance(m, NeuralPolicy)), None)
        if initial is not None:
            if not isinstance(initial, NeuralPolicy):
                raise TypeError(f"initial_policy must be a NeuralPolicy; got {type(initial).__name__}.")
            initial.check_fits(*self.sizes, argname="initial_policy")
        return initial

    def _train_run(self, player: int, opponents: OpponentMixture, seed: int, mode: str,
                   initial: NeuralPolicy | None) -> tuple:
        config = replace(self.config, seed=int(seed))
        try:
            with isolated_torch():
                result = self._train(self.game, player, opponents, config, initial=initial, mode=mode,
                                     device=self.device)
        except ValueError as exc:   # (a diverged run: its learning curve so far goes on with the error)
            exc.learner_curve = self._stamped(player, getattr(exc, "learner_curve", ()))
            raise
        result.policy.to_device("cpu")   # populations, opponents and checkpoints keep networks on the CPU
        self.calls += 1
        return config, result

    def _stamped(self, player: int, curve) -> tuple:
        """The learning-curve rows of a training run with the learner's name and the responder."""
        return tuple({**row, "learner": self.name, "player": int(player)} for row in curve)

    def _finish(self, player: int, iteration: int | None, config, result: TrainingResult, policy, exact: float,
                best: float = math.nan) -> LearnedBestResponse:
        value = result.evaluation.mean if math.isnan(exact) else exact
        curve = self._stamped(player, result.curve)
        if curve:   # (the last row's value: the response's value against its target)
            curve[-1]["value"] = float(value)
            result = replace(result, curve=curve)
        failure = response_failure(result)
        if failure is not None:
            what = (f"the {self.name} response of player {player}"
                    f"{'' if iteration is None else f' at iteration {iteration}'} did not learn: {failure}")
            # (a network's step size, where the learner has one, then its budget: model_br's table has no step)
            fixes = [f"lower learning_rate (now {config.learning_rate!r})"] if hasattr(config, "learning_rate") else []
            fixes += [f"raise total_steps (now {config.total_steps})"] if result.responsive else []
            fix, first = " or ".join(fixes), "learning_rate" if hasattr(config, "learning_rate") else "total_steps"
            if self.on_bad_response == "error":
                error = LearnerDiverged(f"{first}: {what}; {fix}, or set the oracle option on_bad_response: "
                                        "warn to record it (the history's response_ok column) and go on.")
                error.learner_curve = curve
                raise error
            logger.warning("%s (response_ok = False); %s.", what, fix)
        result.policy.provenance = LearnedProvenance(
            iteration=self.calls if iteration is None else int(iteration), oracle=self.name,
            meta_solver=self.meta_solver, value=value, training_steps=result.training_steps, seed=config.seed)
        logger.info("%s response of player %d: value %.4f (estimated %.4f +- %.4f) after %d steps, %.2fs",
                    self.name, player, value, result.evaluation.mean, result.evaluation.stderr,
                    result.training_steps, result.seconds)
        return LearnedBestResponse(player=player, policy=policy, value=value, exact_value=exact,
                                   estimated_value=result.evaluation.mean,
                                   estimated_stderr=result.evaluation.stderr,
                                   network=result.policy, training=result,
                                   ok=failure is None, exact_error=best - exact)

    # ------------------------------------------------------------------ the neural path
    def opponent_mixture(self, player: int, target) -> OpponentMixture:
        """The target as a distribution over opponent profiles, one profile drawn per episode.

        Product target: the product of the marginals' supports (profile
        weight: the product of the members' weights). Joint target: its rows
        and weights (the responder's column ignored).

        Examples
        --------
        See :class:`LearnedOracle`.
        """
        pops = target.populations
        members = [list(pop.policies) for pop in pops]
        if target.is_joint:
            rows = np.asarray(target.profiles, dtype=np.int64)
            seats = [tuple(None if q == player else self._seat(members[q][row[q]], q) for q in range(len(pops)))
                     for row in rows]
            return OpponentMixture(tuple(seats), np.asarray(target.weights, dtype=np.float64))
        support = []
        for q, pop_members in enumerate(members):
            if q == player:
                support.append([(None, 1.0)])
                continue
            w = np.asarray(target.mixtures[q], dtype=np.float64).reshape(-1)
            if w.shape != (len(pop_members),):
                raise ValueError(f"target.mixtures[{q}] needs one weight per member of populations[{q}] "
                                 f"({len(pop_members)}); got shape {w.shape}.")
            if not np.all(np.isfinite(w)) or np.any(w < 0) or not w.sum() > 0:
                raise ValueError(f"target.mixtures[{q}] must be non-negative weights with a positive sum; got {w}.")
            support.append([(self._seat(pop_members[i], q), w[i]) for i in np.flatnonzero(w > 0)])
        profiles, weights = [], []
        for combo in itertools.product(*support):
            profiles.append(tuple(pol for pol, _ in combo))
            weights.append(math.prod(w for _, w in combo))
        weights = np.asarray(weights)
        return OpponentMixture(tuple(profiles), weights / weights.sum())

    def _exact_against(self, player: int, target, table: np.ndarray) -> float:
        """Exact value of the tabular response against the tabularised target."""
        tree, pops = self.tree, target.populations
        plans = [None if q == player else _member_plans(pop, tree, q) for q, pop in enumerate(pops)]
        if target.is_joint:
            return float(sum(w * exact_value(tree, player, table, [None if q == player else plans[q][row[q]]
                                                                   for q in range(len(pops))])
                             for row, w in zip(np.asarray(target.profiles),
                                               np.asarray(target.weights, dtype=np.float64))))
        mixed = [None if q == player else np.asarray(target.mixtures[q], dtype=np.float64) @ plans[q]
                 for q in range(len(pops))]
        return exact_value(tree, player, table, mixed)

    def _best_against(self, player: int, target) -> float:
        """The exact best response's value against a product target (NaN for a joint one)."""
        if target.is_joint:
            return math.nan
        plans = [None if q == player else np.asarray(target.mixtures[q], dtype=np.float64) @ _member_plans(
            pop, self.tree, q) for q, pop in enumerate(target.populations)]
        return float(best_response(self.tree, player, plans).value)

    def _respond_neural(self, player: int, target, iteration: int | None, seed: int) -> LearnedBestResponse:
        opponents = self.opponent_mixture(player, target)
        config, result = self._train_run(player, opponents, seed, self.response_mode, self._initial(player, target))
        exact = best = math.nan
        if self.tree is not None:
            exact = self._exact_against(player, target, result.policy.to_tabular(self.tree, player))
            best = self._best_against(player, target)
        return self._finish(player, iteration, config, result, result.policy, exact, best)

    # ------------------------------------------------------------------ the tabular path
    def _respond_tabular(self, player: int, target, iteration: int | None, seed: int) -> LearnedBestResponse:
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
        """Tabular path: train against ``opponents`` and return the greedy table; measured exactly if
        ``opponent_plans`` is given.

        ``seed`` (default :meth:`seed_for` of ``player`` and ``iteration``)
        seeds the training run; torch trains on one thread and the caller's
        torch random state is left as it was.

        Examples
        --------
        See :class:`LearnedOracle`; :meth:`psro.oracles.learned.env.OpponentMixture.from_populations`
        builds a target that samples one opponent per episode.
        """
        tree = self._need_tree("tabular responses")
        self._check_player(player)
        seed = self.seed_for(player, iteration) if seed is None else int(seed)
        config, result = self._train_run(player, opponents, seed, "greedy", None)
        policy = result.policy.to_tabular(tree, player, greedy=True)
        exact = best = math.nan
        if opponent_plans is not None:
            exact = exact_value(tree, player, policy, opponent_plans)
            best = float(best_response(tree, player, opponent_plans).value)
        return self._finish(player, iteration, config, result, policy, exact, best)


@contextmanager
def isolated_torch() -> Iterator[None]:
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


ORACLE_OPTIONS = ("target_mode", "response_mode", "warm_start", "device", "on_bad_response")


def make_learned_oracle(name: str, tree: GameTree | None, seed: int = 0, target_mode: str = "aggregate", *,
                        game=None, response_mode: str | None = None, warm_start: bool = False, device="cpu",
                        on_bad_response: str = "error", **config_fields) -> LearnedOracle:
    """A :class:`LearnedOracle` by name, with config fields given as keyword arguments.

    This is what :func:`psro.oracles.base.make_oracle` calls for ``"dqn"`` and
    ``"ppo"`` (``PSRO(oracle_options=...)`` ends up here). Lists are accepted
    for tuple fields such as ``hidden`` (a config read back from JSON or YAML).
    Every setting is checked here, at construction: a zero budget
    (``total_steps=0``) is a ``ValueError`` naming ``total_steps``.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> make_learned_oracle("ppo", tree, total_steps=1000).config.total_steps
    1000
    >>> make_learned_oracle("dqn", None, game="leduc_poker", warm_start=True).response_mode
    'greedy'
    >>> make_learned_oracle("ppo", None, game="kuhn_poker", total_steps=0)
    Traceback (most recent call last):
    ...
    ValueError: total_steps (the oracle's training budget, learner steps per response) must be a positive int; got 0.
    """
    config_type, _ = _trainer(name)
    known = set(config_type.__dataclass_fields__) - {"seed"}
    unknown = sorted(set(config_fields) - known)
    if unknown:
        close = difflib.get_close_matches(unknown[0], sorted(known | set(ORACLE_OPTIONS)), n=1)
        raise TypeError(f"{config_type.__name__} has no field(s) {unknown}"
                        + (f" (did you mean {close[0]!r}?)" if close else "")
                        + f"; its fields are {sorted(known | set(ORACLE_OPTIONS))}.")
    steps = config_fields.get("total_steps", 1)
    if not is_integer(steps) or steps < 1:
        raise ValueError("total_steps (the oracle's training budget, learner steps per response) must be a "
                         f"positive int; got {steps!r}.")
    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in config_fields.items()}
    return LearnedOracle(tree, name, config_type(**fields), seed=seed, target_mode=target_mode, game=game,
                         response_mode=response_mode, warm_start=warm_start, device=device,
                         on_bad_response=on_bad_response)
