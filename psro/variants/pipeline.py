"""Pipeline PSRO (P2SRO; McAleer, Lanier, Fox & Baldi, NeurIPS 2020): a hierarchy of best responses trained in
parallel.

Every player has ``active_policies`` **active** policies at levels ``0, 1, ..., a - 1`` above its **fixed**
population (what PSRO's populations hold). The active policy at level ``j`` trains against the meta-Nash of the
game restricted to the fixed policies and the active ones at levels below ``j`` (level 0: the fixed policies'
meta-Nash, the target PSRO itself would give). One iteration of :meth:`PipelinePSRO.step`:

1. **add**: when the last iteration fixed the lowest level, its policies join the fixed populations, the levels
   above move down one, and a new active policy starts at the top: a fresh network
   (``new_active="fresh"``, the default: randomly initialised, our reading of the paper's Algorithm 1) or a copy of
   the level below it (``"warm"``);
2. **evaluate** and **meta-solve**: the fixed meta-game, as PSRO does; its Nash mixture is the run's output (the
   history's ``gap`` is its NashConv);
3. **targets**: level 0's target is PSRO's; for the levels above, the active policies of levels ``0 .. a - 2``
   are evaluated against every fixed and active policy by the run's evaluator (a meta-game over both, rebuilt every
   iteration because the active policies change; its episodes are counted in ``eval_episodes``), and level ``j``'s
   target is the meta-Nash of its ``(k + j)``-policy corner;
4. **respond**: one **chunk** of training for every active policy of every player, all ``a * num_players`` of them
   in one ``map`` through the run's executor (:func:`psro.oracles.jobs.run_oracle_job`, key ``(iteration,
   level)``, seed :func:`psro.oracles.jobs.job_seed` of ``(seed, iteration, player, level)``; results gathered in
   order), so for a fixed seed the run does not depend on the engine or the number of workers. A chunk is one
   call of the learned oracle with its ``oracle_options`` budget (``total_steps``), starting from the active
   policy's current network (``initial_policy``). What carries over from chunk to chunk is that network alone:
   every oracle call is a pure function of its inputs, so PPO's critic, the Adam moments and the learning-rate
   schedule (DQN's replay buffer and exploration schedule) start afresh each chunk, a difference from the paper's
   continuously running learners; the checkpoint, holding the networks, holds the learners' whole state;
5. **select**: the lowest level is fixed when it has **plateaued**: its value against its target (the fixed
   meta-Nash, which does not change while it is the lowest; the response's exact value where the tree is built,
   else the oracle's estimate from its evaluation episodes) improved by less than ``plateau_threshold`` from its
   previous chunk as the lowest to this one, for every player; or when it has trained ``max_chunks`` chunks in all
   (at any level). Its response then passes PSRO's selection (:meth:`psro.PSRO.select`: nothing joins at an exact
   oracle's fixed point);
6. **measure**: PSRO's (the exact NashConv of the fixed meta-Nash, where the tree is built).

**Exact oracles.** An exact best response has no training to pipeline: a chunk is one exact best response to the
current target, and the lowest level's target does not change while it is the lowest, so its response is final
after its first chunk: with an exact oracle the lowest level is fixed every iteration, and the fixed populations
and the gaps are exactly PSRO's (the levels above are computed and discarded, an honest waste: P2SRO is a method
for learned responses). With a learned oracle, ``active_policies=1, max_chunks=1`` is PSRO too (one fresh
response per iteration, trained with the same seed).

**Workers.** The serial executor runs the ``a * num_players`` chunks one after another (any ``active_policies``);
a process pool or a local Ray instance (its ``num_cpus``, else every CPU) needs at least ``active_policies``
workers (each active level trains on a worker of its own, its players' chunks in turn or side by side): fewer is
refused at construction, naming ``algorithm_options: active_policies``. A Ray cluster joined by ``address`` says
its size only once joined and is not checked.

The active policies are kept in ``state.pending`` (checkpointed with their weights, as League keeps its learners),
their bookkeeping in ``state.extra`` (:class:`PipelineExtra`): the chunks each level has trained, whether it is
still fresh, the lowest level's values since it became the lowest, whether the lowest level joins at the next step
and the iterations at which a level was fixed; so a run killed at any point resumes bit for bit.

Examples
--------
>>> from psro import PSRO
>>> pipeline = PipelinePSRO("kuhn_poker", algorithm_options={"active_policies": 2}, progress=False)
>>> [round(g, 6) for g in pipeline.run(iterations=3)["gap"]] == \\
...     [round(g, 6) for g in PSRO("kuhn_poker", progress=False).run(iterations=3)["gap"]]
True
>>> pipeline.state.extra.fixed_at, len(pipeline.state.pending[0])
([0, 1, 2, 3], 2)
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os

import numpy as np

from games.empirical import EmpiricalGame
from games.executors import RayExecutor, SerialExecutor
from games.normal_form import NormalFormGame
from games.validation import check_int, check_real
from psro.config.model import PSROConfig, algorithm_options
from psro.errors import ConfigError, with_field
from psro.evaluation.base import new_profile_blocks
from psro.loop.measures import is_exact
from psro.loop.psro_loop import PSRO
from psro.loop.requirements import LoopRequirements
from psro.loop.state import LoopExtra
from psro.meta.targets import meta_targets
from psro.oracles.base import Target
from psro.policies.population import PolicyPopulation, Population, Provenance, tabular_policy

__all__ = ["NEW_ACTIVE", "PipelineOptions", "PipelinePSRO", "check_workers"]

logger = logging.getLogger(__name__)

#: ``PipelineOptions.new_active``: how a new top-level active policy starts.
NEW_ACTIVE = ("fresh", "warm")


@dataclasses.dataclass(frozen=True)
class PipelineOptions:
    """P2SRO's own options (``algorithm_options``).

    Attributes
    ----------
    active_policies : int
        Active policies per player (levels of the pipeline), at least 1.
    plateau_threshold : float
        The lowest level is fixed once its value against its target rose by less than this (payoff units) from its
        previous chunk as the lowest level, for every player.
    max_chunks : int
        ... or once it has trained this many chunks in all (at any level).
    new_active : {"fresh", "warm"}
        A new top-level policy starts from a fresh network, or from the policy of the level below it.

    Examples
    --------
    >>> PipelineOptions.from_dict({"active_policies": 3}).active_policies
    3
    >>> PipelineOptions.from_dict({"active_policies": 0})
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: algorithm_options: active_policies must be an int >= 1; got 0.
    """

    active_policies: int = 2
    plateau_threshold: float = 0.02
    max_chunks: int = 4
    new_active: str = "fresh"

    def __post_init__(self):
        for name, check, least in (("active_policies", check_int, 1), ("plateau_threshold", check_real, 0.0),
                                   ("max_chunks", check_int, 1)):
            object.__setattr__(self, name, with_field("algorithm_options", check, getattr(self, name), name,
                                                      minimum=least))
        if self.new_active not in NEW_ACTIVE:
            raise ConfigError("algorithm_options", f"new_active must be one of {list(NEW_ACTIVE)}; got "
                              f"{self.new_active!r}.")

    @classmethod
    def from_dict(cls, options: dict | None) -> "PipelineOptions":
        """The options of a config's ``algorithm_options`` mapping (None: the defaults)."""
        return algorithm_options(cls, options, "P2SRO")


def check_workers(active_policies: int, executor) -> None:
    """Refuse more active levels than a parallel executor has workers (the module docstring's rule).

    Examples
    --------
    >>> from games.executors import ProcessPoolExecutor
    >>> check_workers(3, SerialExecutor()), check_workers(2, ProcessPoolExecutor(workers=2))
    (None, None)
    >>> check_workers(3, ProcessPoolExecutor(workers=2))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: algorithm_options: active_policies=3 needs at least 3 workers ...
    >>> check_workers(64, RayExecutor(address="auto"))   # (a cluster's size is known once joined)
    """
    if isinstance(executor, SerialExecutor) or getattr(executor, "address", None) is not None:
        return
    workers = int(getattr(executor, "workers", 1))
    if isinstance(executor, RayExecutor) and executor.num_cpus is None:   # (a local instance with every CPU)
        workers = os.cpu_count() or 1
    if active_policies > workers:
        raise ConfigError("algorithm_options", f"active_policies={active_policies} needs at least {active_policies} "
                          f"workers (one per active level) and the executor {executor!r} has {workers}; lower "
                          "active_policies, give the executor more workers, or run serially (executor: serial).")


@dataclasses.dataclass
class PipelineExtra(LoopExtra):
    """The pipeline's bookkeeping: per level (lowest first) the chunks it has trained and whether it is still
    fresh; the lowest level's values after each of its chunks; which players' lowest level joins at the next
    step (None: none); the iterations at which a lowest level was fixed."""

    chunks: list = dataclasses.field(default_factory=list)
    fresh: list = dataclasses.field(default_factory=list)
    lowest_values: list = dataclasses.field(default_factory=list)
    joins: list | None = None
    fixed_at: list = dataclasses.field(default_factory=list)

    @classmethod
    def from_document(cls, document: dict) -> "PipelineExtra":
        """As :meth:`psro.loop.state.LoopExtra.from_document`; older checkpoints kept the fields under ``"pipeline"``.

        Examples
        --------
        >>> PipelineExtra.from_document({"pipeline": {"chunks": [2, 1], "fresh": [False, True]}}).chunks
        [2, 1]
        """
        return super().from_document(document.get("pipeline", document))


class PipelinePSRO(PSRO):
    """Pipeline PSRO: ``PipelinePSRO(game, **fields)`` or ``PipelinePSRO(PSROConfig(algorithm="pipeline_psro",
    ...))``; see the module docstring.

    Examples
    --------
    >>> PipelinePSRO("kuhn_poker", algorithm_options={"active_policies": 2}, oracle="ppo",
    ...              executor={"engine": "process", "workers": 1})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: algorithm_options: active_policies=2 needs at least 2 workers ...
    """

    algorithm = "pipeline_psro"
    options_class = PipelineOptions
    Extra = PipelineExtra
    requirements = LoopRequirements(
        product_meta_solver=True, no_teams="has no team view",
        fixed=(("warm_start", (False,), "continues every active policy from its own network (and starts new ones by "
                                        "algorithm_options: new_active)"),
               ("update_players", ("all",), "fixes every player's lowest level together"),
               ("br_selection", ("all",), "fixes every player's lowest level together")))

    def __init__(self, config, /, *, executor=None, checkpoint_dir=None, **fields):
        config, executor = PSROConfig.for_loop(type(self).algorithm, config, executor, fields)
        options = self.options_class.from_dict(config.algorithm_options)
        super().__init__(config, executor=executor, checkpoint_dir=checkpoint_dir)
        self.pipeline_options = options
        check_workers(options.active_policies, self.executor)

    @property
    def progress_label(self) -> str:
        return "P2SRO"

    @property
    def pipeline(self) -> "PipelineExtra":
        """The pipeline's bookkeeping (``state.extra``)."""
        return self.state.extra

    def active_policies(self, player: int) -> list:
        """``player``'s active policies, lowest level first."""
        return [policy for policy, _ in self.state.pending[player]]

    def add(self) -> None:
        """Phase 1: the lowest level joins the fixed populations when the last step fixed it (the levels move down
        and a new one starts at the top); the active policies stay in ``state.pending``."""
        state, a = self.state, self.pipeline_options.active_policies
        if state.iteration < 0:   # the initial policies join; every level starts fresh, playing as the first one
            super().add()
            state.extra = PipelineExtra(chunks=[0] * a, fresh=[True] * a)
            state.pending = [[(pop.policies[0], math.nan)] * a for pop in state.populations]
            return
        book, actives = self.pipeline, [list(pending) for pending in state.pending]
        joins = book.joins
        state.pending = [[actives[p][0]] if joins and joins[p] else [] for p in range(self.num_players)]
        super().add()
        if joins is not None:   # the lowest level was fixed: the others move down, a new one starts on top
            warm = self.pipeline_options.new_active == "warm"
            for p, levels in enumerate(actives):
                top = levels[-1] if warm and not book.fresh[-1] else (state.populations[p].policies[0], math.nan)
                actives[p] = levels[1:] + [top]
            book.chunks = book.chunks[1:] + [0]
            book.fresh = book.fresh[1:] + [not warm or book.fresh[-1]]
            book.lowest_values, book.joins = [], None
        state.pending = actives

    def targets(self, meta_game) -> list:
        """Per player, one target per level, lowest first (see the module docstring)."""
        state, a, n = self.state, self.pipeline_options.active_policies, self.num_players
        targets = [[dataclasses.replace(target, initial_policy=self._start(p, 0)) for target in
                    meta_targets(state.meta_strategy, self.kind, state.populations, meta_game.payoffs, p)]
                   for p in range(n)]
        if a > 1:
            populations, extended = self._extended_game([self.active_policies(p)[:a - 1] for p in range(n)])
            sizes = [len(pop) for pop in state.populations]
            for j in range(1, a):
                mixtures = self._corner_nash(extended, [k + j for k in sizes])
                for p in range(n):
                    targets[p].append(Target(player=p, populations=populations, mixtures=tuple(mixtures),
                                             on_policy_value=_profile_value(extended.payoffs[p], mixtures),
                                             initial_policy=self._start(p, j)))
        return targets

    def select(self, t: int, targets: list, responses: list) -> None:
        """After phase 5: every level takes its new policy; the lowest is fixed when it plateaued (its response
        then passes PSRO's selection)."""
        state, book = self.state, self.pipeline
        actives = [[(br.policy, br.value) for br in player_responses] for player_responses in responses]
        book.chunks = [c + 1 for c in book.chunks]
        book.fresh = [False] * len(book.fresh)
        book.lowest_values.append([float(rs[0].value) for rs in responses])
        if self._plateaued():
            state.pending = [[] for _ in range(self.num_players)]
            super().select(t, [ts[:1] for ts in targets], [rs[:1] for rs in responses])
            book.joins = [bool(pending) for pending in state.pending]
            book.fixed_at.append(int(t))
        state.pending = actives

    def measure(self, meta_game, responses: list) -> None:
        """Phase 6: PSRO's, with level 0's responses (those to the fixed meta-Nash)."""
        super().measure(meta_game, [rs[:1] for rs in responses])

    def _plateaued(self) -> bool:
        """Whether the lowest level is fixed now (module docstring): always with an exact oracle."""
        book, options = self.pipeline, self.pipeline_options
        if is_exact(self.oracle) or book.chunks[0] >= options.max_chunks:
            return True
        values = book.lowest_values
        return len(values) >= 2 and max(now - before for now, before in zip(values[-1], values[-2])) \
            < options.plateau_threshold

    def _start(self, player: int, level: int):
        """What level ``level``'s chunk starts from: None for a fresh learner, else its current policy."""
        return None if self.pipeline.fresh[level] else self.state.pending[player][level][0]

    def _extended_game(self, lower: list) -> tuple:
        """The populations with ``lower[p]`` (the active policies of the lower levels) appended, and their mean
        meta-game: the fixed block copied, the rest evaluated by the run's evaluator."""
        state, fixed = self.state, self.state.meta_game
        populations = [_extended(pop, policies, state.iteration) for pop, policies in zip(state.populations, lower)]
        sizes, extended = fixed.shape, EmpiricalGame([len(pop) for pop in populations])
        corner = (slice(None), *(slice(0, k) for k in sizes))
        for name in ("count", "total", "total_sq"):
            getattr(extended, name)[corner] = getattr(fixed, name)
        extended.exact[corner[1:]] = fixed.exact
        evaluated = populations
        if self.evaluator.exact and self.learned:   # (the fixed members' tables are cached; the active ones are new)
            evaluated = [_extended(pop.tabular(self.tree), [tabular_policy(a, self.tree, p) for a in lower[p]],
                                   state.iteration) for p, pop in enumerate(state.populations)]
        for index in new_profile_blocks(sizes, extended.shape):
            self.evaluator.evaluate(evaluated, index, meta_game=extended)
        state.measure_episodes += int(extended.count[0][~extended.exact].sum() - fixed.count[0][~fixed.exact].sum())
        return populations, extended.mean_game()

    def _corner_nash(self, game: NormalFormGame, sizes: list) -> list:
        """Per player, the meta-Nash of ``game``'s corner of ``sizes`` policies, padded with zeros (a cold solve:
        the training meta-solver's warm start follows the fixed meta-game)."""
        payoffs = game.payoffs[(slice(None), *(slice(0, k) for k in sizes))]
        solver = dataclasses.replace(self.meta_solver, warm_lp=None)
        marginals = solver(NormalFormGame(payoffs)).marginals
        return [np.concatenate([m, np.zeros(total - len(m))]) for m, total in zip(marginals, game.shape)]


def _extended(pop, policies: list, iteration: int):
    """A copy of population ``pop`` with ``policies`` (active ones) appended."""
    if isinstance(pop, PolicyPopulation):
        out = PolicyPopulation(pop.player, pop.num_actions)
        out.add(pop.policies, list(pop.provenance))
    else:
        out = Population(pop.infostates)
        out.add(pop.policies, list(pop.provenance))
    if policies:
        out.add(list(policies) if isinstance(out, PolicyPopulation) else np.stack(policies),
                [Provenance(iteration, "active")] * len(policies))
    return out


def _profile_value(payoffs: np.ndarray, mixtures: list) -> float:
    """The expected payoff ``payoffs`` (one player's, shape ``(k_1, ..., k_n)``) when every player ``q`` plays its
    ``mixtures[q]``."""
    value = payoffs
    for mixture in reversed(mixtures):
        value = value @ mixture
    return float(value)
