"""Policy-Space Response Oracles (PSRO) and Joint PSRO (JPSRO), read top to bottom.

A product meta-solver (Nash, alpha-Rank, PRD, uniform, RAE, ...) gives PSRO; a correlated one (``mgcce``,
``mgce``, ...) JPSRO with CCE or CE targets. What the run does is one :class:`psro.config.PSROConfig`; what it has
done, one :class:`psro.state.LoopState`.

Each :meth:`PSRO._step` (iteration ``t``):

1. **add**: the best responses found at step ``t - 1`` join the populations (at ``t = 0``: uniform policies);
2. **evaluate**: the evaluator (:mod:`psro.evaluation`) fills the new blocks of the meta-game; a Monte Carlo
   top-up then spends ``top_up_episodes`` more where their confidence matters;
3. **meta-solve**: ``meta_solver`` (and ``eval_meta_solver`` for the reported gap) solves the meta-game, after
   pruning dominated policies when ``prune_dominated`` is set (:mod:`psro.meta.solvers`);
4. **targets**: the solution becomes best-response targets (:func:`psro.meta.targets.meta_targets`);
5. **oracles**: every player best-responds to its targets (:mod:`psro.oracles`, through the executor as jobs
   when ``oracle_dispatch`` says so); :mod:`psro.selection` picks the responses that join at ``t + 1``;
6. **measure**: the meta-strategy's gap in the full game (NashConv, CCE or CE gap, :mod:`psro.metrics`) when the
   game tree is built (neural members tabularised, the meta-strategy's own value exact too), for JPSRO with
   ``extensive_form_gaps`` its EFCE and EFCCE gaps (:mod:`psro.efce_gaps`), and its regret in the empirical
   meta-game (``meta_gap``); on ``approx_gap_every``'s schedule (by default, where there is no exact gap:
   iterations 0, 1, 2, 4, 8, ...) and on the last row of each :meth:`PSRO.run` call, the approximate gap, a lower
   bound of the exact gap from learned best responses (:mod:`psro.approximate_gap`), timed in ``approx_gap_time``.

The game tree is built only when something needs it: an exact oracle or evaluator, or the exact gap
(``exact_gap``), and only within ``max_histories``. With a learned oracle the populations hold policy objects
(:class:`psro.population.PolicyPopulation`: the uniform policy, then the trained networks), which play without a
tree; a game too large for the tree then runs with ``gap`` NaN.

:meth:`PSRO.run` records the row, calls the callback and writes the checkpoint (:mod:`psro.run.checkpoint`).
Row 0 of the history is the initial population; row ``t`` the state after ``t`` iterations.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from games.empirical import EmpiricalGame
from games.environment import num_actions
from games.executors import Executor, TaskError, make_executor, portable_spec
from games.validation import check_int, check_real
from psro import selection
from psro.algorithms import algorithm_class
from psro.approximate_gap import approx_gap_due, approx_gap_settings, measure_with_oracle, responder_seed
from psro.config import PSROConfig, is_environment_game, num_players, spec_kept, with_field
from psro.efce_gaps import history_gaps
from psro.evaluation import SequenceFormEvaluator, make_evaluator
from psro.evaluation.base import new_profile_blocks
from psro.evaluation.top_up import run_top_up
from psro.game_tree import TreeTooLarge, build_game_tree
from psro.matrix_game import normal_form_to_json
from psro.meta.solvers import loop_meta_solvers
from psro.meta.targets import meta_targets
from psro.metrics import gap_from_responses
from psro.openspiel_policy import members_policy
from psro.oracles import make_oracle, oracle_info
from psro.oracles.exact import ExactOracle
from psro.oracles.jobs import oracle_jobs, remember_tree, run_oracle_job
from psro.policies import starting_policies
from psro.population import PolicyPopulation, Provenance
from psro.run import checkpoint
from psro.state import HISTORY_COLUMNS, STATE_FIELDS, EpisodeCounter, LoopState
from solvers import cce_gap, ce_gap, nash_conv

__all__ = ["PSRO", "PHASES"]

logger = logging.getLogger(__name__)

PHASES = ("meta_solve", "oracle", "evaluation", "metric")


class PSRO:
    """PSRO and JPSRO on a game: ``PSRO(PSROConfig(...))``, or ``PSRO(game, **fields)`` to build the config.

    Parameters
    ----------
    config : PSROConfig, or a game
        The run's :class:`psro.config.PSROConfig` (its stopping rules are :meth:`run`'s business); or a game (a
        string, ``pyspiel.Game``, ``games.SequentialGame`` or ``games.NormalFormGame``) and, as ``**fields``, the
        config's fields (:meth:`PSROConfig.from_keywords`). Every field is checked by the config (the message
        starts with the field's name).
    executor : None, str, int, dict or games.executors.Executor
        Where the run's jobs go (default: the config's ``executor``); an instance stays the caller's to close.
    checkpoint_dir : str or Path, optional
        Write a checkpoint there after every iteration (:mod:`psro.run.checkpoint`).

    Attributes
    ----------
    state : psro.state.LoopState
        Everything done so far; its fields (``populations``, ``meta_game``, ``iteration``, ``gap``, ...) read as
        the solver's own attributes. With a learned oracle its ``populations`` are
        :class:`psro.population.PolicyPopulation` (policy objects), else tabular ones.
    tree : psro.game_tree.GameTree or None
        The game tree, when something needed it and it fit ``max_histories``; None otherwise (``gap`` is NaN).
    on_evaluation_batch : list of callable
        ``hook(solver, index)`` after each evaluated batch (``index``: one ``range`` per player); a hook may call
        :meth:`save_checkpoint`, and the resumed run skips what is already evaluated.

    Examples
    --------
    >>> history = PSRO(PSROConfig(game="kuhn_poker", meta_solver="nash", progress=False)).run(iterations=3)
    >>> history[["iteration", "population_0", "population_1", "evaluations"]].values.tolist()
    [[0, 1, 1, 1], [1, 2, 2, 4], [2, 3, 3, 9], [3, 4, 4, 16]]
    >>> round(float(history["gap"].iloc[0]), 6)   # the uniform policy's NashConv
    0.916667
    >>> jpsro = PSRO("kuhn_poker(players=3)", meta_solver="mgcce", progress=False)
    >>> jpsro.kind, bool(jpsro.run(iterations=2)["gap"].iloc[-1] >= 0)
    ('cce', True)
    >>> from games import catalog
    >>> PSRO(catalog.chicken(), progress=False).run(target_gap=0.0, iterations=10)["gap"].tolist()
    [0.5, 0.5, 0.0]
    """

    #: The :data:`psro.algorithms.ALGORITHMS` name of this training loop (a subclass sets its own).
    algorithm = "psro"

    def __init__(self, config, /, *, executor=None, checkpoint_dir=None, **fields):
        config, executor = PSROConfig.for_loop(type(self).algorithm, config, executor, fields)
        if config.teams is not None and type(self) is PSRO:   # (the family's loops take their team view themselves)
            from psro.family.teams import team_config

            config = team_config(config)   # a team game is played on its team view (one player per team)
        self.config = config
        self.game, self.normal_form = config.checked_game()   # the one validator (every field named)
        self.meta_solver, self.eval_meta_solver = loop_meta_solvers(config)
        self.kind = self.meta_solver.kind   # "product" (PSRO), "cce" or "ce" (JPSRO)
        spec = executor if executor is not None else config.executor_spec()
        self.executor = with_field("executor", make_executor, spec)
        self._owns_executor = not isinstance(spec, Executor)
        self.oracle_name, self.evaluator_name, self.seed = config.oracle, config.evaluator, int(config.seed)
        self.progress, self.oracle_dispatch = config.progress, config.oracle_dispatch
        self.update_players, self.br_selection = config.update_players, config.br_selection
        self.top_up_episodes, self.top_up_method, self.top_up_rounds = \
            config.top_up_episodes, config.top_up_method, config.top_up_rounds
        self.num_players = num_players(self.game)
        kept = spec_kept(config.game)   # (a PettingZoo module or an observation-tensor game, as written)
        self.game_spec = config.game.strip() if kept else str(self.game)   # what a worker or a resume loads
        game_spec = self.game_spec if self.normal_form is None else normal_form_to_json(self.normal_form)
        self.options = config.solver_options(game_spec, self.eval_meta_solver.name, portable_spec(spec))
        self.checkpoint_dir = checkpoint_dir
        self.run_config = None   # the CLI's config (a dict), stored in checkpoints
        self.on_evaluation_batch: list = []

        start = time.perf_counter()
        self.learned = oracle_info(config.oracle).learned   # then the populations hold policy objects
        self.tree = self._game_tree(config)
        if self.tree is not None and self.normal_form is None:   # (a NormalFormGame's oracles run in-process)
            remember_tree(self.game_spec, self.tree)   # serial oracle jobs reuse it; workers rebuild it once
        self.oracle = with_field("oracle_options", make_oracle, config.oracle, self.tree, seed=self.seed,
                                 game=self.game, **config.oracle_settings())
        self._built_oracle = self.oracle
        self._approx_gap_oracle = self._approx_oracle() if self.learned and config.approx_gap_every is not None \
            else None   # (built now, so a bad approx_gap_options fails before the run starts)
        # the gap is always measured with exact best responses; a learned oracle's values only bound it from below
        # (an oracle that is neither learned nor exact, such as team_pg, says so with ``exact = False``)
        exact = _is_exact(self.oracle)
        self.metric_oracle = None if self.tree is None else self.oracle if exact else ExactOracle(self.tree)
        evaluator_options = config.evaluator_settings()
        if config.evaluator == "monte_carlo":
            evaluator_options.setdefault("seed", self.seed)
            evaluator_options["executor"] = self.executor
        sampled_policies = self.learned and config.evaluator == "monte_carlo"   # (played without the tree)
        if sampled_policies:
            evaluator_options["game"] = self.game
        self.evaluator = with_field("evaluator_options", make_evaluator, config.evaluator,
                                    None if sampled_policies else self.tree, **evaluator_options)
        self.setup_time = time.perf_counter() - start
        self.state = (LoopState.of_policies(self.num_players, num_actions(self.game), self.seed) if self.learned
                      else LoopState.initial(self.tree, self.seed))
        if config.initial_policies is not None:   # start from the user's policies instead of the uniform one
            if self.learned:
                raise ValueError(f"initial_policies: needs tabular populations; the learned oracle "
                                 f"{config.oracle!r} starts from the uniform policy (use an exact oracle).")
            self.state.pending = starting_policies(config.initial_policies, self.tree.infostates)
        self._tolerances = selection.gain_tolerances(self.tree.terminal_returns if self.tree is not None
                                                     else _utility_range(self.game, self.num_players))
        self._exact_meta = None   # (EmpiricalGame, sizes): exact payoffs of tabularised members, for the gap

    def _game_tree(self, config: PSROConfig):
        """The game tree when something needs it (an exact oracle or evaluator, or the exact gap) and it has at
        most ``max_histories`` histories; else None (with ``exact_gap="auto"``, said once in the log)."""
        needs = ([f"oracle={config.oracle!r}"] if not self.learned else []) + \
            ([f"evaluator={config.evaluator!r}"] if config.evaluator != "monte_carlo" else []) + \
            (["exact_gap=true"] if config.exact_gap is True else [])
        if (not needs and config.exact_gap is False) or is_environment_game(self.game):
            return None
        try:
            return build_game_tree(self.game, max_histories=config.max_histories)
        except ValueError as exc:
            too_large = isinstance(exc, TreeTooLarge)
            # (the budget that stopped the walk: the histories, their estimate, or the memory)
            reason = str(exc).split("; it is too large")[0] if too_large else str(exc).rstrip(".")
            if needs and too_large:
                raise ValueError(f"max_histories: {reason}, and {' and '.join(needs)} needs its whole tree. Raise "
                                 "max_histories, or use a learned oracle (oracle='ppo' or 'dqn') with "
                                 "evaluator='monte_carlo', which needs no tree (then exact_gap='auto' measures "
                                 "the exact gap only where the tree fits).") from None
            if needs:
                raise
            logger.warning("%s; exact gap off (gap = NaN; approx_gap estimates it; raise max_histories or set "
                           "exact_gap=false to silence this)", reason)
            return None

    def __getattr__(self, name):
        """The state's fields (:data:`psro.state.STATE_FIELDS`) read (and are set) as the solver's attributes."""
        if name in STATE_FIELDS and "state" in self.__dict__:
            return getattr(self.__dict__["state"], name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __setattr__(self, name, value):
        object.__setattr__(self.state if name in STATE_FIELDS and "state" in self.__dict__ else self, name, value)

    @property
    def top_up_progress(self):
        """Where the Monte Carlo top-up stands: ``key == (iteration,)`` once this iteration's has started."""
        return self.state.top_up

    @property
    def pending_responses(self) -> list:
        """Per player, the ``(policy, value)`` best responses that join at the next step."""
        return [list(p) for p in self.state.pending]

    is_jpsro = property(lambda self: self.kind != "product", doc="True for JPSRO (a correlated meta-solver).")

    def run(self, iterations: int | None = None, target_gap: float | None = None,
            time_limit: float | None = None, progress: bool | None = None,
            callback: Callable[[dict], None] | None = None) -> pd.DataFrame:
        """Run until one stopping rule fires (iterations in this call, a gap, wall seconds in this call); return
        the whole history. ``callback(row)`` sees each new row before the checkpoint is written; calling ``run``
        again continues where the last call stopped.

        Examples
        --------
        >>> solver = PSRO("kuhn_poker", progress=False)
        >>> history = solver.run(target_gap=1e-6, iterations=100)
        >>> bool(history["gap"].iloc[-1] <= 1e-6)
        True
        """
        if iterations is None and target_gap is None and time_limit is None:
            raise ValueError("give at least one stopping rule: iterations, target_gap or time_limit.")
        check_int(iterations, "iterations", minimum=0, none_ok=True)
        check_real(target_gap, "target_gap", minimum=0.0, none_ok=True)
        check_real(time_limit, "time_limit", minimum=0.0, none_ok=True)
        from tqdm.auto import tqdm

        show = self.progress if progress is None else progress
        bar = tqdm(total=iterations, disable=not show, desc="JPSRO" if self.is_jpsro else "PSRO", unit="it")
        wall0, cpu0 = time.perf_counter() - self.state.wall, time.process_time() - self.state.cpu
        started, done = time.perf_counter(), 0
        try:
            if self.state.iteration < 0 or self.state.in_iteration:   # the initial population, or a step cut short
                self._finish_iteration(self._step(), wall0, cpu0, callback)
            while not ((target_gap is not None and self.state.gap <= target_gap)
                       or (iterations is not None and done >= iterations)
                       or (time_limit is not None and time.perf_counter() - started >= time_limit)):
                self._finish_iteration(self._step(), wall0, cpu0, callback)
                done += 1
                bar.update(1)
                bar.set_postfix(gap=f"{self.state.gap:.3g}", refresh=False)
        finally:
            bar.close()
        self._measure_last_row()
        return self.history

    def _measure_last_row(self) -> None:
        """The last row of a ``run`` call always has its approximate gap (measured now if it was not due)."""
        rows = self.state.rows
        if rows and self.config.approx_gap_every is not None and self._approximates() \
                and math.isnan(rows[-1]["approx_gap"]):
            rows[-1].update(self._approx_gap())
            rows[-1]["eval_episodes"] = self.state.eval_episodes()
            if self.checkpoint_dir is not None:
                self.save_checkpoint()

    def _step(self) -> dict:
        """One iteration (steps 1-6 of the module docstring). Returns the seconds spent in each phase."""
        state, times = self.state, dict.fromkeys(PHASES, 0.0)
        start = time.perf_counter()
        if not state.in_iteration:   # (a run resumed from a checkpoint written in step 2 has done step 1)
            self._add_pending()      # 1. the best responses of the last step join (oracle time)
        t, old, new = state.iteration, state.sizes_before, [len(pop) for pop in state.populations]
        times["oracle"] = time.perf_counter() - start

        start = time.perf_counter()   # 2. only the new profiles are evaluated (what a resumed run has is skipped)
        evaluated = self._tabular_populations() if self.evaluator.exact and self.learned else state.populations
        for index in new_profile_blocks(old, new):
            if not self.evaluator.done(state.meta_game, index):
                self.evaluator.evaluate(evaluated, index, meta_game=state.meta_game,
                                        on_batch=lambda batch, index=index: self._stored(batch, index))
        if self.top_up_episodes:
            self._top_up(t)   # resumes the rounds and batches a checkpoint already has
        times["evaluation"] = time.perf_counter() - start

        start = time.perf_counter()   # 3. meta-solve (training, and evaluation when it differs)
        meta_game = state.meta_game.mean_game()
        state.meta_strategy = self.meta_solver(meta_game)
        separate_eval = self.eval_meta_solver is not self.meta_solver
        state.eval_meta_strategy = self.eval_meta_solver(meta_game) if separate_eval else state.meta_strategy
        times["meta_solve"] = time.perf_counter() - start

        start = time.perf_counter()   # 4-5. targets and best responses for every player (all are needed for the gap)
        n = len(state.populations)
        targets = self._targets(meta_game)
        responses = self._best_responses(t, targets)
        self._count_responses(responses)
        fixed_point = _is_exact(self.oracle) and selection.at_fixed_point(self._tolerances, targets, responses)
        for p in selection.players_to_update(self.update_players, t, n, state.rng):
            pop = state.populations[p]   # (policy objects are never equal to a new response)
            known = np.zeros((0, 0, 0)) if isinstance(pop, PolicyPopulation) else pop.policies
            state.pending[p] = selection.select_responses(self.br_selection, known, targets[p], responses[p],
                                                          self._tolerances[p], fixed_point)
        times["oracle"] += time.perf_counter() - start

        start = time.perf_counter()   # 6. measure: the gap of the meta-strategy in the full game
        state.train_gap = state.gap = math.nan
        if self._measures_exact_gap():   # (an exact oracle's training responses are the metric's)
            reuse = responses if self.metric_oracle is self.oracle and not self.learned else None
            state.train_gap = self._exact_gap(state.meta_strategy, meta_game, reuse)
            state.gap = self._exact_gap(state.eval_meta_strategy, meta_game) if separate_eval else state.train_gap
        times["metric"] = time.perf_counter() - start
        state.in_iteration = False
        return times

    def _count_responses(self, responses: list) -> None:
        """Add the step's responses' compute to the run's counters; remember whether all of them beat the uniform
        policy (``response_ok``)."""
        flat = [br for player_responses in responses for br in player_responses]
        self.state.env_steps += sum(br.env_steps for br in flat)
        self.state.measure_episodes += sum(br.eval_episodes for br in flat)
        self._responses_ok = all(getattr(br, "ok", True) for br in flat)

    def _targets(self, meta_game) -> list:
        """Per player, the best-response targets of this iteration (step 4): here the meta-strategy's
        (:func:`psro.meta.targets.meta_targets`); a training loop built on PSRO overrides this to train against
        other mixtures (a target's ``initial_policy`` warm-starts its response)."""
        state = self.state
        return [meta_targets(state.meta_strategy, self.kind, state.populations, meta_game.payoffs, p)
                for p in range(len(state.populations))]

    def _measures_exact_gap(self) -> bool:
        return self.tree is not None and self.config.exact_gap is not False

    def _exact_gap(self, strategy, meta_game, responses=None) -> float:
        """The gap of ``strategy`` in the full game, with exact best responses to targets whose on-policy values are
        exact too (an exact meta-game, or the exact payoffs of the tabularised members when it is sampled);
        ``responses``: the training step's exact best responses to the same targets, when there are."""
        populations = self._tabular_populations()
        payoffs = meta_game.payoffs if self.evaluator.exact else self._exact_payoffs(populations)
        targets = [meta_targets(strategy, self.kind, populations, payoffs, p) for p in range(self.num_players)]
        if not self.evaluator.exact and self.kind != "ce":   # (the solution's own values are the sampled ones)
            joint = np.asarray(strategy.joint, dtype=np.float64)
            targets = [[dataclasses.replace(target, on_policy_value=float(np.sum(joint * payoffs[p])))
                        for target in ts] for p, ts in enumerate(targets)]
        if responses is None:
            responses = [[self.metric_oracle.respond(p, target) for target in ts] for p, ts in enumerate(targets)]
        return gap_from_responses(self.kind, targets, responses)

    def _tabular_populations(self) -> list:
        """The populations as tabular arrays over the tree's infostates (policy objects tabularised once each)."""
        if self.tree is None:
            raise ValueError(f"this run has no game tree (exact_gap={self.config.exact_gap!r}, max_histories="
                             f"{self.config.max_histories}), so its policies have no tabular form; set "
                             "exact_gap=true (and raise max_histories) where the tree fits.")
        return [pop.tabular(self.tree) if isinstance(pop, PolicyPopulation) else pop for pop in self.state.populations]

    def _exact_payoffs(self, populations) -> np.ndarray:
        """Exact meta-game payoffs of the (tabularised) populations, for the gap of a sampled run: kept apart from
        the sampled meta-game and grown block by block like it."""
        sizes = [len(pop) for pop in populations]
        if self._exact_meta is None:
            self._exact_meta = (EmpiricalGame((0,) * self.num_players), [0] * self.num_players,
                                SequenceFormEvaluator(self.tree))
        game, have, evaluator = self._exact_meta
        for p, (k, h) in enumerate(zip(sizes, have)):
            if k > h:
                game.grow(p, k - h)
        for index in new_profile_blocks(have, sizes):
            evaluator.evaluate(populations, index, meta_game=game)
        have[:] = sizes
        return game.mean_game().payoffs

    def _meta_gap(self, meta_game) -> float:
        """The eval meta-strategy's regret in the empirical meta-game (NashConv, CCE or CE gap)."""
        strategy = self.state.eval_meta_strategy
        if strategy is None:
            return math.nan
        if self.kind == "product":
            return float(nash_conv(meta_game, strategy.marginals))
        return float((cce_gap if self.kind == "cce" else ce_gap)(meta_game, strategy.joint))

    def _approximates(self) -> bool:
        """Whether this run measures the approximate gap: its populations hold policies that play on observations
        (a learned oracle; a tabular array among them cannot)."""
        return self.learned and all(isinstance(pop, PolicyPopulation) and not any(
            isinstance(member, np.ndarray) for member in pop.policies) for pop in self.state.populations)

    def _approx_gap(self) -> dict:
        """The ``approx_gap`` (a lower bound of the exact gap up to its sampling error) and ``approx_gap_stderr`` of
        the current eval meta-strategy (:func:`psro.approximate_gap.measure_with_oracle`): the best of the best
        member, a fresh and a warm-started learned response per target, with ``approx_gap_options``' budget (by
        default the run's oracle's), its cost in ``approx_gap_time``."""
        start = time.perf_counter()
        if self._approx_gap_oracle is None:
            self._approx_gap_oracle = self._approx_oracle()
        oracle, settings = self._approx_gap_oracle
        counter = EpisodeCounter()
        result = measure_with_oracle(self.game, self.kind, self.state.eval_meta_strategy, self.state.populations,
                                     oracle, settings, seed=self.seed, iteration=self.state.iteration,
                                     payoffs=self.state.meta_game.mean_game().payoffs, counter=counter)
        self.state.measure_episodes += counter.episodes
        return {"approx_gap": result.gap, "approx_gap_stderr": result.stderr,
                "approx_gap_time": time.perf_counter() - start}

    def _approx_oracle(self) -> tuple:
        """``(oracle, settings)`` of the approximate gap (:func:`psro.approximate_gap.approx_gap_settings`)."""
        settings, options = approx_gap_settings(self.config.oracle_settings(), self.config.approx_gap_options)
        oracle = with_field("approx_gap_options", make_oracle, settings["oracle"] or self.oracle_name, None,
                            seed=responder_seed(self.seed), game=self.game, **options)
        return oracle, settings

    def _approx_gap_due(self, iteration: int) -> bool:
        """Whether the approximate gap is measured on row ``iteration`` (besides the last row of a run call)."""
        return self._approximates() and approx_gap_due(self.config.approx_gap_every, iteration, self.state.gap)

    def _reference_columns(self) -> list:
        """The history columns of ``reference_opponents``: ``<reference>_win_<p>`` and ``<reference>_return_<p>``."""
        return [f"{name}_{what}_{p}" for name in self.config.reference_opponents or ()
                for p in range(self.num_players) for what in ("win", "return")]

    def _reference_results(self) -> dict:
        """The eval meta-strategy against ``reference_opponents`` (:func:`psro.reference_opponents.evaluate_against`,
        seeded by the run's seed and the iteration; its episodes count as measurement)."""
        if not self.config.reference_opponents or self.state.eval_meta_strategy is None:
            return dict.fromkeys(self._reference_columns(), math.nan)
        from games.environment import ObservationGame
        from psro.reference_opponents import evaluate_against

        game = self.game.game if isinstance(self.game, ObservationGame) else self.game
        seed = int(np.random.SeedSequence(self.seed, spawn_key=(self.state.iteration,)).generate_state(1)[0] >> 1)
        table = evaluate_against(game, self.state.populations, self.config.reference_opponents, members=False,
                                 marginals=self.state.eval_meta_strategy.marginals, tree=self.tree, seed=seed)
        self.state.measure_episodes += int(table.episodes.sum())
        return {f"{r.reference}_{what}_{r.player}": getattr(r, column) for r in table.itertuples()
                for what, column in (("win", "win"), ("return", "mean_return"))}

    def _stored(self, batch, index) -> None:
        """A batch of block ``index`` is stored: the block counts at its last batch, before the hooks (which may
        checkpoint)."""
        if batch.batch == batch.num_batches - 1:
            self.state.evaluations += math.prod(len(i) for i in index)
        self._call_hooks(index)

    def _call_hooks(self, index) -> None:
        for hook in self.on_evaluation_batch:
            hook(self, index)

    def _best_responses(self, t: int, targets: list) -> list:
        """``responses[p][i]`` answers ``targets[p][i]``: as jobs mapped through the executor in one ``map`` (each
        a pure function of its inputs, :func:`psro.oracles.jobs.run_oracle_job`) when ``oracle_dispatch`` says so,
        else in-process with the same keys ``(t, index)`` (also for an environment game, which a worker cannot
        load from a string)."""
        dispatch = self.oracle_dispatch
        if self.oracle is self._built_oracle and not is_environment_game(self.game) \
                and (dispatch == "executor" or (dispatch == "auto" and self.oracle.learned)):
            jobs = oracle_jobs(self.oracle_name, self.game_spec, targets, t, self.seed,
                               options=self.config.oracle_settings(), use_tree=self.tree is not None)
            with _learner_failures():
                results = iter(self.executor.map(run_oracle_job, jobs, chunksize=1))
            return [[next(results) for _ in player_targets] for player_targets in targets]
        with _learner_failures():
            return [[self.oracle.respond(p, target, key=(t, i)) for i, target in enumerate(targets[p])]
                    for p in range(len(targets))]

    def _add_pending(self) -> None:
        """Start a new iteration: the waiting best responses join the populations and the meta-game grows."""
        state = self.state
        state.iteration += 1
        t = state.iteration
        state.sizes_before = [len(pop) for pop in state.populations]
        for p, (pop, pending) in enumerate(zip(state.populations, state.pending)):
            for policy, value in pending:
                pop.add(policy, Provenance(t, "initial") if t == 0
                        else Provenance(t, self.oracle_name, self.meta_solver.name, value))
            if pending:
                state.meta_game.grow(p, len(pending))
        state.pending = [[] for _ in state.populations]
        state.in_iteration = True

    def _top_up(self, t: int) -> None:
        """Step 2's resumable Monte Carlo top-up (:func:`psro.evaluation.top_up.run_top_up`)."""
        whole = [range(len(pop)) for pop in self.state.populations]
        run_top_up(self.evaluator, self.state, self.top_up_episodes, self.top_up_method, self.top_up_rounds, t,
                   solve=lambda meta_game: self.meta_solver(meta_game.mean_game()),
                   on_batch=lambda batch: self._call_hooks(whole))

    def _finish_iteration(self, times: dict, wall0: float, cpu0: float, callback) -> None:
        """Record the history row, call the callback, write the checkpoint."""
        state = self.state
        state.wall, state.cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        row = {"iteration": state.iteration, "gap": state.gap, "train_gap": state.train_gap}
        row.update({f"population_{p}": len(pop) for p, pop in enumerate(state.populations)})
        row.update({f"time_{k}": v for k, v in times.items()})
        row.update(wall_time=state.wall, cpu_time=state.cpu, evaluations=state.evaluations,
                   top_up_episodes=state.top_up.spent if state.top_up.key == (state.iteration,) else 0,
                   episodes=state.meta_game_episodes(), env_steps=state.env_steps)
        measured = self.is_jpsro and self.config.extensive_form_gaps and self.tree is not None
        row.update(history_gaps(self.tree, self._tabular_populations() if measured else None,
                                state.eval_meta_strategy if measured else None))
        row.update(self._approx_gap() if self._approx_gap_due(state.iteration) else
                   {"approx_gap": math.nan, "approx_gap_stderr": math.nan, "approx_gap_time": 0.0})
        row["meta_gap"] = self._meta_gap(state.meta_game.mean_game())
        start = time.perf_counter()
        row.update(self._reference_results())
        row["time_metric"] += time.perf_counter() - start
        row.update(eval_episodes=state.eval_episodes(), response_ok=getattr(self, "_responses_ok", True))
        state.rows.append(row)
        logger.info("iteration %d: gap %.3e, populations %s, %.2fs", state.iteration, state.gap,
                    [len(p) for p in state.populations], state.wall)
        if callback is not None:
            callback(row)
        if self.checkpoint_dir is not None:
            self.save_checkpoint()

    @property
    def history(self) -> pd.DataFrame:
        """One row per iteration; see :data:`HISTORY_COLUMNS` (plus ``population_<p>`` per player)."""
        n = self.num_players
        columns = [*HISTORY_COLUMNS[:3], *(f"population_{p}" for p in range(n)), *HISTORY_COLUMNS[3:],
                   *self._reference_columns()]
        return pd.DataFrame(self.state.rows, columns=columns)

    def save_checkpoint(self, directory=None):
        """Write a checkpoint now (into ``directory`` or ``checkpoint_dir``); return its path
        (:func:`psro.run.checkpoint.save_checkpoint`). Safe from an :attr:`on_evaluation_batch` hook."""
        directory = self.checkpoint_dir if directory is None else directory
        if directory is None:
            raise ValueError("directory: give a directory, or construct PSRO with checkpoint_dir.")
        return checkpoint.save_checkpoint(directory, self)

    def aggregate_policies(self) -> list:
        """Each population mixed with its meta-strategy marginal, as one behaviour policy ``(I, A)`` per player."""
        if self.state.meta_strategy is None:
            raise ValueError("run() has not evaluated any population yet; call run() first.")
        return [pop.aggregate(w) for pop, w in zip(self._tabular_populations(), self.state.meta_strategy.marginals)]

    def openspiel_policy(self, members=None):
        """The meta-strategy's policy (or chosen members: per player an index, or None for the aggregate) as one
        OpenSpiel ``TabularPolicy``; see :func:`psro.openspiel_policy.members_policy`.

        Examples
        --------
        >>> from open_spiel.python.algorithms import exploitability
        >>> solver = PSRO("kuhn_poker", progress=False)
        >>> _ = solver.run(iterations=4)
        >>> bool(abs(exploitability.nash_conv(solver.game, solver.openspiel_policy()) - solver.gap) < 1e-12)
        True
        """
        aggregates = self.aggregate_policies() if members is None or None in list(members) else None
        return members_policy(self._tabular_populations(), aggregates, members, self.tree)

    def close(self) -> None:
        """Release the executor's workers if this solver built the executor (one passed in is left open); also
        on leaving ``with PSRO(...) as solver:``."""
        if self._owns_executor:
            self.executor.close()

    def __enter__(self) -> "PSRO":
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False

    @classmethod
    def resume(cls, checkpoint_dir, progress: bool = True, executor=None, previous: bool = False) -> "PSRO":
        """Rebuild a solver from the checkpoint in ``checkpoint_dir`` (verified first,
        :func:`psro.run.checkpoint.load_checkpoint`; ``previous=True``: the one before); :meth:`run` continues it.
        ``executor`` may differ from the interrupted run's: results do not depend on it.

        Examples
        --------
        >>> import tempfile
        >>> _ = PSRO("kuhn_poker", progress=False, checkpoint_dir=(out := tempfile.mkdtemp())).run(iterations=2)
        >>> (b := PSRO.resume(out, progress=False)).iteration, [len(p) for p in b.populations]
        (2, [3, 3])
        """
        document = checkpoint.load_checkpoint(checkpoint_dir, previous=previous)
        return cls.restore(document, checkpoint_dir=checkpoint_dir, progress=progress, executor=executor)

    @classmethod
    def restore(cls, document: dict, checkpoint_dir=None, progress: bool = True, executor=None) -> "PSRO":
        """The solver a checkpoint document describes: ``PSRO`` of its options, given its
        :class:`psro.state.LoopState`; a warm-started meta-solver replays its solves. A document the solver cannot
        take raises ``ValueError`` naming the file."""
        algorithm = document.get("options", {}).get("algorithm", cls.algorithm) if isinstance(document, dict) \
            else cls.algorithm
        if cls is PSRO and algorithm != cls.algorithm:   # (``PSRO.resume`` of any algorithm's checkpoint)
            source = document.get("file", "the checkpoint")
            try:
                loop = algorithm_class(algorithm)
            except ValueError as exc:
                raise ValueError(f"checkpoint file {source!r}: options.{exc}") from None
            if not issubclass(loop, PSRO):
                raise ValueError(f"checkpoint file {source!r}: options.algorithm is {algorithm!r}, a loop that keeps "
                                 f"its own kind of checkpoint ({loop.__name__}), not this PSRO checkpoint; the "
                                 "document was edited or mixed up with another run's.")
            return loop.restore(document, checkpoint_dir=checkpoint_dir, progress=progress, executor=executor)
        with checkpoint.restoring(document):
            options = checkpoint.solver_options(document, executor)
            solver = cls(options.pop("game"), **options, progress=progress, checkpoint_dir=checkpoint_dir)
            solver.run_config = document.get("config")
            checkpoint.adopt_policy_files(solver, document, checkpoint_dir)
            solver.state = checkpoint.state_from_document(document, solver.state,
                                                          solver.eval_meta_solver is solver.meta_solver)
            checkpoint.replay_warm_start((solver.meta_solver, solver.eval_meta_solver), solver.state)
        return solver


@contextlib.contextmanager
def _learner_failures():
    """A learned oracle that diverged or learned nothing (its ``ValueError`` names ``learning_rate``, also from
    inside an executor's job) ends as one ``ValueError`` naming ``oracle_options``."""
    try:
        yield
    except (ValueError, TaskError) as exc:
        error = exc.error if isinstance(exc, TaskError) else exc
        if isinstance(error, ValueError) and str(error).startswith("learning_rate: "):
            raise ValueError(f"oracle_options: {error}") from None
        raise


def _is_exact(oracle) -> bool:
    """Whether ``oracle``'s responses are exact best responses (its ``exact`` attribute; else: not learned)."""
    return bool(getattr(oracle, "exact", not oracle.learned))


def _utility_range(game, n: int) -> np.ndarray:
    """``(2, n)`` stand-in terminal returns (the game's utility bounds) for the zero-gain tolerances of a run
    without a tree."""
    try:
        low, high = float(game.min_utility()), float(game.max_utility())
    except (AttributeError, RuntimeError):   # (an environment may not declare them)
        low, high = -1.0, 1.0
    return np.array([[low] * n, [high] * n])
