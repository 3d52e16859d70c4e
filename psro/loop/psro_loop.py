"""Policy-Space Response Oracles (PSRO) and Joint PSRO (JPSRO), read top to bottom.

A product meta-solver (Nash, alpha-Rank, PRD, uniform, RAE, ...) gives PSRO; a correlated one (``mgcce``, ...)
JPSRO. What the run does is one :class:`psro.config.PSROConfig`; what it has done, one
:class:`psro.loop.state.LoopState`. PSRO is a :class:`psro.loop.training.TrainingLoop` (``run``, the stopping rules,
the history, checkpoints, resume) whose :meth:`PSRO.step` runs six phases, each a public method a subclass may
override:

1. **add** (:meth:`PSRO.add`): the best responses found at step ``t - 1`` join the populations (at ``t = 0``:
   uniform policies);
2. **evaluate** (:meth:`PSRO.evaluate`): the evaluator (:mod:`psro.evaluation`) fills the new blocks of the
   meta-game; a Monte Carlo top-up then spends ``top_up_episodes`` more where their confidence matters;
3. **meta-solve** (:meth:`PSRO.meta_solve`): ``meta_solver`` (and ``eval_meta_solver`` for the reported gap)
   solves the meta-game, after pruning dominated policies when ``prune_dominated`` is set (:mod:`psro.meta.solvers`);
4. **targets** (:meth:`PSRO.targets`): the solution becomes best-response targets
   (:func:`psro.meta.targets.meta_targets`);
5. **respond** (:meth:`PSRO.respond`): every player best-responds to its targets (:mod:`psro.oracles`, as executor
   jobs per ``oracle_dispatch``); :meth:`PSRO.select` (:mod:`psro.loop.selection`) picks those joining at ``t + 1``;
6. **measure** (:meth:`PSRO.measure`): the meta-strategy's gap in the full game (NashConv, CCE or CE gap,
   :mod:`psro.measures.metrics`) when the game tree is built; the row (:meth:`PSRO.row`) adds the EFCE and EFCCE
   gaps (JPSRO with ``extensive_form_gaps``, :mod:`psro.measures.efce_gaps`), the regret in the empirical meta-game
   (``meta_gap``) and, on ``approx_gap_every``'s schedule and each :meth:`PSRO.run` call's last row, the approximate
   gap, a lower bound of the exact gap from learned responses (:mod:`psro.measures.approximate_gap`).

The game tree is built only when something needs it (an exact oracle or evaluator, or ``exact_gap``) and fits
``max_histories``. With a learned oracle the populations hold policy objects (:class:`psro.policies.population.
PolicyPopulation`), which play without a tree. Row 0 of the history is the initial population; row ``t`` the state
after ``t`` iterations.
"""

from __future__ import annotations

import logging
import math
import time

import numpy as np

from games.environment import num_actions
from games.executors import Executor, make_executor, portable_spec
from psro.config.model import PSROConfig, is_environment_game, num_players, spec_kept
from psro.errors import ConfigError, with_field
from psro.evaluation import evaluator_capabilities, make_evaluator
from psro.evaluation.base import new_profile_blocks
from psro.evaluation.top_up import run_top_up
from psro.loop import selection
from psro.loop.measures import LoopMeasures, is_exact, learner_failures, utility_range
from psro.loop.seating import make_seating
from psro.loop.state import LoopState
from psro.loop.training import PHASES, TrainingLoop
from psro.measures.efce_gaps import history_gaps
from psro.meta.solvers import loop_meta_solvers
from psro.meta.targets import meta_targets
from psro.oracles import make_oracle, oracle_info
from psro.oracles.exact import ExactOracle
from psro.oracles.jobs import oracle_jobs, remember_tree, run_oracle_job
from psro.policies import starting_policies
from psro.policies.population import PolicyPopulation, Provenance
from psro.run import checkpoint
from psro.run.learning_curves import curve_rows, failed_rows
from psro.sequence_form.matrix_game import normal_form_to_json

__all__ = ["PSRO", "PHASES"]

logger = logging.getLogger(__name__)


class PSRO(LoopMeasures, TrainingLoop):
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
    state : psro.loop.state.LoopState
        Everything done so far; its fields (``populations``, ``meta_game``, ``iteration``, ``gap``, ...) read as
        the solver's own properties (:class:`psro.loop.training.TrainingLoop`). With a learned oracle its
        ``populations`` are :class:`psro.policies.population.PolicyPopulation` (policy objects), else tabular ones.
    tree : psro.sequence_form.game_tree.GameTree or None
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

    algorithm = "psro"
    #: a step's responses are the exact gap's best responses (False in a subclass defining targets or respond, unless
    #: declared); the gap then reuses them when they come from the exact metric oracle itself
    step_responses_answer_the_gap = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if {"targets", "respond"} & vars(cls).keys() and "step_responses_answer_the_gap" not in vars(cls):
            cls.step_responses_answer_the_gap = False

    def __init__(self, config, /, *, executor=None, checkpoint_dir=None, **fields):
        config, executor = PSROConfig.for_loop(type(self).algorithm, config, executor, fields)
        if config.teams is not None and type(self) is PSRO:   # (the family's loops take their team view themselves)
            from psro.sequence_form.team_view import team_config

            config = team_config(config)   # a team game is played on its team view (one player per team)
        self.config = config
        self.game, self.normal_form = config.checked_game()   # the one validator (every field named)
        type(self).requirements.check(config, self.game, self.normal_form, type(self).__name__)   # (before building)
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
        self.on_evaluation_batch: list = []

        start = time.perf_counter()
        self.learned = oracle_info(config.oracle).learned   # then the populations hold policy objects
        self.tree, self._compiled_board = self._measured_tree(config)
        # (a shared seat checks the game now, before the oracles are built: a game that is not symmetric fails fast)
        self.seating = make_seating(self, config.symmetric)
        if self.tree is not None and self.normal_form is None:   # (a NormalFormGame's oracles run in-process)
            remember_tree(self.game_spec, self.tree)   # serial oracle jobs reuse it; workers rebuild it once
        self.oracle = with_field("oracle_options", make_oracle, config.oracle, self.tree, seed=self.seed,
                                 game=self.game, **config.oracle_settings())
        self._built_oracle = self.oracle
        # (built now, so a bad approx_gap_options fails before the run starts)
        self._approx_gap_oracle = self._approx_oracle() if self._measures_approx_gap() else None
        # the gap is always measured with exact best responses; a learned oracle's values only bound it from below
        # (an oracle that is neither learned nor exact, such as team_pg, says so with ``exact = False``)
        exact = is_exact(self.oracle)
        self.metric_oracle = None if self.tree is None else self.oracle if exact else ExactOracle(self.tree)
        evaluator_options, sampled = config.evaluator_settings(), evaluator_capabilities(config.evaluator).sampled
        if sampled:
            evaluator_options.update(seed=evaluator_options.get("seed", self.seed), executor=self.executor)
            if self.learned:   # (policies played without the tree)
                evaluator_options["game"] = self.game
        self.evaluator = with_field("evaluator_options", make_evaluator, config.evaluator,
                                    None if self.learned and sampled else self.tree, **evaluator_options)
        self.setup_time = time.perf_counter() - start
        self.state = (LoopState.of_policies(self.num_players, num_actions(self.game), self.seed, type(self).Extra())
                      if self.learned else LoopState.initial(self.tree, self.seed, type(self).Extra()))
        if config.initial_policies is not None:   # start from the user's policies instead of the uniform one
            if self.learned:
                raise ConfigError("initial_policies", f"needs tabular populations; the learned oracle "
                                  f"{config.oracle!r} starts from the uniform policy (use an exact oracle).")
            self.state.pending = starting_policies(config.initial_policies, self.tree.infostates)
        self._tolerances = selection.gain_tolerances(self.tree.terminal_returns if self.tree is not None
                                                     else utility_range(self.game, self.num_players))
        self.seating.setup(self)   # (a shared seat: one population, the meta-solvers wrapped)

    @property
    def progress_label(self) -> str:
        return "JPSRO" if self.is_jpsro else "PSRO"

    def step(self) -> dict:
        """One iteration: the phases add, evaluate, meta-solve, targets, respond (and select), measure (module
        docstring); a step a checkpoint cut short after ``add`` resumes at ``evaluate``. Returns the seconds spent
        in each of :data:`PHASES`."""
        state, times = self.state, dict.fromkeys(PHASES, 0.0)
        start = time.perf_counter()
        if not state.in_iteration:   # (a run resumed from a checkpoint written in step 2 has done step 1)
            self.add()
        times["oracle"] = time.perf_counter() - start
        start = time.perf_counter()
        self.evaluate()
        times["evaluation"] = time.perf_counter() - start
        start = time.perf_counter()
        meta_game = self.meta_solve()
        times["meta_solve"] = time.perf_counter() - start
        start = time.perf_counter()   # (all players respond: every response is needed for the gap)
        targets = self.targets(meta_game)
        responses = self.respond(state.iteration, targets)
        self._answered = (state.iteration, targets, responses)   # (approx_gap's candidates for the same targets)
        self._count_responses(responses)
        self.select(state.iteration, targets, responses)
        times["oracle"] += time.perf_counter() - start
        start = time.perf_counter()
        self.measure(meta_game, responses)
        times["metric"] = time.perf_counter() - start
        state.in_iteration = False
        return times

    def add(self) -> None:
        """Phase 1, start a new iteration: the waiting best responses (``state.pending``) join the populations and
        the meta-game grows."""
        state = self.state
        state.iteration = t = state.iteration + 1
        state.sizes_before = [len(pop) for pop in state.populations]
        for p, (pop, pending) in enumerate(zip(state.populations, state.pending)):
            for policy, value in pending:
                pop.add(policy, Provenance(t, "initial") if t == 0
                        else Provenance(t, self.oracle_name, self.meta_solver.name, value))
            for axis in self.seating.grown_axes(p) if pending else ():
                state.meta_game.grow(axis, len(pending))
        state.pending = [[] for _ in state.populations]
        state.in_iteration = True

    def evaluate(self) -> None:
        """Phase 2: only the new profiles of the meta-game are evaluated (what a resumed run has is skipped), then
        the resumable Monte Carlo top-up (:func:`psro.evaluation.top_up.run_top_up`) when ``top_up_episodes``."""
        state = self.state
        sizes = (state.sizes_before, [len(pop) for pop in state.populations])
        old, new = (self.seating.seat_sizes(k) for k in sizes)   # (a shared seat: the one population per seat)
        evaluated = self._tabular_populations() if self.evaluator.exact and self.learned else self.seat_populations()
        for index in self.seating.evaluated_blocks(new_profile_blocks(old, new)):
            if not self.evaluator.done(state.meta_game, index):
                self.evaluator.evaluate(evaluated, index, meta_game=state.meta_game,
                                        on_batch=lambda batch, index=index: self._stored(batch, index))
        self.seating.after_evaluation(state)   # (a shared seat: the seat-swapped new profiles, from the evaluated)
        if self.top_up_episodes:
            whole = [range(len(pop)) for pop in state.populations]
            run_top_up(self.evaluator, state, self.top_up_episodes, self.top_up_method, self.top_up_rounds,
                       state.iteration, solve=lambda meta_game: self.meta_solver(meta_game.mean_game()),
                       on_batch=lambda batch: self._call_hooks(whole))

    def meta_solve(self):
        """Phase 3: solve the meta-game (``state.meta_strategy``; ``state.eval_meta_strategy`` with the eval
        meta-solver when it differs); return the mean meta-game that was solved."""
        state = self.state
        meta_game = state.meta_game.mean_game()
        state.meta_strategy = self.meta_solver(meta_game)
        separate_eval = self.eval_meta_solver is not self.meta_solver
        state.eval_meta_strategy = self.eval_meta_solver(meta_game) if separate_eval else state.meta_strategy
        return meta_game

    def targets(self, meta_game) -> list:
        """Phase 4: per player, the best-response targets of this iteration: here the meta-strategy's
        (:func:`psro.meta.targets.meta_targets`); a training loop built on PSRO overrides this to train against
        other mixtures (a target's ``initial_policy`` warm-starts its response)."""
        state = self.state
        return [meta_targets(state.meta_strategy, self.kind, self.seat_populations(), meta_game.payoffs, p)
                for p in range(len(state.populations))]   # (symmetric: seat 0's target only)

    def respond(self, t: int, targets: list) -> list:
        """Phase 5: ``responses[p][i]`` answers ``targets[p][i]``: as jobs mapped through the executor in one
        ``map`` (each a pure function of its inputs, :func:`psro.oracles.jobs.run_oracle_job`) when
        ``oracle_dispatch`` says so, else in-process with the same keys ``(t, index)`` (also for an environment
        game, which a worker cannot load from a string)."""
        dispatch = self.oracle_dispatch
        if self.oracle is self._built_oracle and not is_environment_game(self.game) \
                and (dispatch == "executor" or (dispatch == "auto" and self.oracle.learned)):
            jobs = oracle_jobs(self.oracle_name, self.game_spec, targets, t, self.seed,
                               options=self.config.oracle_settings(), use_tree=self.tree is not None)
            with learner_failures(self._failed_curve):
                results = iter(self.executor.map(run_oracle_job, jobs, chunksize=1))
            return [[next(results) for _ in player_targets] for player_targets in targets]
        with learner_failures(self._failed_curve):
            return [[self.oracle.respond(p, target, key=(t, i)) for i, target in enumerate(targets[p])]
                    for p in range(len(targets))]

    def _count_responses(self, responses: list) -> None:
        """Add the step's responses' compute to the run's counters; remember whether all of them beat the uniform
        policy (``response_ok``)."""
        flat = [br for player_responses in responses for br in player_responses]
        self.emit_learner_rows(curve_rows(self.state.iteration, responses, self.state.env_steps))
        self.state.env_steps += sum(br.env_steps for br in flat)
        self.state.measure_episodes += sum(br.eval_episodes for br in flat)
        self._responses_ok, self._response_errors = all(getattr(br, "ok", True) for br in flat), responses

    def _failed_curve(self, curve) -> None:
        """The learning curve of a learner that stopped the step with an error, handed on before the error."""
        self.emit_learner_rows(failed_rows(self.state.iteration, curve, self.state.env_steps))

    def select(self, t: int, targets: list, responses: list) -> None:
        """After phase 5: which responses join at the next step (``state.pending``; :mod:`psro.loop.selection`:
        ``update_players``, ``br_selection``, and nothing at an exact oracle's fixed point)."""
        state, n = self.state, len(self.state.populations)
        fixed_point = is_exact(self.oracle) and selection.at_fixed_point(self._tolerances, targets, responses)
        for p in selection.players_to_update(self.update_players, t, n, state.rng):
            pop = state.populations[p]   # (policy objects are never equal to a new response)
            known = np.zeros((0, 0, 0)) if isinstance(pop, PolicyPopulation) else pop.policies
            state.pending[p] = selection.select_responses(self.br_selection, known, targets[p], responses[p],
                                                          self._tolerances[p], fixed_point)

    def measure(self, meta_game, responses: list) -> None:
        """Phase 6: ``state.gap`` (eval meta-strategy) and ``state.train_gap`` in the full game, with exact best
        responses, when the tree is built (else NaN); an exact oracle's training ``responses`` are reused."""
        state = self.state
        state.train_gap = state.gap = math.nan
        if self._measures_exact_gap():
            answered = self.step_responses_answer_the_gap and self.metric_oracle is self.oracle and not self.learned
            reuse = self.seating.responses_for_every_seat(responses) if answered else None
            state.train_gap = self._exact_gap(state.meta_strategy, meta_game, reuse)
            state.gap = (self._exact_gap(state.eval_meta_strategy, meta_game)
                         if self.eval_meta_solver is not self.meta_solver else state.train_gap)

    def _stored(self, batch, index) -> None:
        """A batch of block ``index`` is stored: the block counts at its last batch, before the hooks (which may
        checkpoint)."""
        if batch.batch == batch.num_batches - 1:
            self.state.evaluations += math.prod(len(i) for i in index)
        self._call_hooks(index)

    def _call_hooks(self, index) -> None:
        for hook in self.on_evaluation_batch:
            hook(self, index)


    def row(self, times: dict) -> dict:
        """The history row of the step just done: the state's counters and the row's measures (EFCE / EFCCE gaps,
        the approximate gap when due, ``meta_gap``, the reference opponents)."""
        state = self.state
        row = {"iteration": state.iteration, "gap": state.gap, "train_gap": state.train_gap,
               **{f"population_{p}": len(pop) for p, pop in enumerate(state.populations)},
               **{f"time_{k}": v for k, v in times.items()}}
        row.update(wall_time=state.wall, cpu_time=state.cpu, evaluations=state.evaluations,
                   top_up_episodes=state.top_up.spent if state.top_up.key == (state.iteration,) else 0,
                   episodes=state.meta_game_episodes(), env_steps=state.env_steps)
        measured = self.is_jpsro and self.config.extensive_form_gaps and self.tree is not None
        row.update(history_gaps(self.tree, self._tabular_populations() if measured else None,
                                state.eval_meta_strategy if measured else None))
        row.update(self._approx_gap(times=times) if self._approx_gap_due(state.iteration) else
                   {"approx_gap": math.nan, "approx_gap_stderr": math.nan, "approx_gap_time": 0.0})
        row["meta_gap"] = self._meta_gap(state.meta_game.mean_game())
        row.update(self._compiled_gap_row(row))   # (phantom_ttt, dark_hex: the exact gap when due)
        start = time.perf_counter()
        row.update(self._reference_results())
        row["time_metric"] += time.perf_counter() - start
        row.update(eval_episodes=state.eval_episodes(), response_ok=getattr(self, "_responses_ok", True),
                   **self._response_error_row())
        return row

    def finish_run(self) -> bool:
        """The last row of a ``run`` call always has its approximate gap (measured now if it was not due; its time
        counts in the row's clocks)."""
        rows, measured = self.state.rows, self._finish_compiled_gap()
        if rows and self.config.approx_gap_every is not None and self._approximates() \
                and math.isnan(rows[-1]["approx_gap"]):
            rows[-1].update(self._approx_gap(final=True))
            rows[-1]["eval_episodes"] = self.state.eval_episodes()
            return True
        return measured

    def history_columns(self) -> list:
        return [*super().history_columns(), *self._compiled_columns(), *self._reference_columns(),
                *self._response_error_columns()]

    checkpoint_name = checkpoint.CHECKPOINT_FILE
    checkpoint_prefixes = checkpoint.PREFIXES
    checkpoint_files = staticmethod(checkpoint.manifest_files)

    def state_dict(self, directory) -> dict:
        """The checkpoint document (:func:`psro.run.checkpoint.state_document`); a checkpoint is safe to write from
        an :attr:`on_evaluation_batch` hook."""
        return checkpoint.state_document(directory, self)

    @classmethod
    def load_checkpoint(cls, checkpoint_dir, previous: bool = False) -> dict:
        """The verified checkpoint document in ``checkpoint_dir`` (:func:`psro.run.checkpoint.load_checkpoint`).

        Examples
        --------
        >>> import tempfile
        >>> _ = PSRO("kuhn_poker", progress=False, checkpoint_dir=(out := tempfile.mkdtemp())).run(iterations=2)
        >>> (b := PSRO.resume(out, progress=False)).iteration, [len(p) for p in b.populations]
        (2, [3, 3])
        """
        return checkpoint.load_checkpoint(checkpoint_dir, previous=previous)

    @classmethod
    def from_checkpoint(cls, document: dict, checkpoint_dir=None, progress: bool = True, executor=None) -> "PSRO":
        options = checkpoint.solver_options(document, executor)
        return cls(options.pop("game"), **options, progress=progress, checkpoint_dir=checkpoint_dir)

    def load_state_dict(self, document: dict) -> None:
        """The document's :class:`psro.loop.state.LoopState`; a warm-started meta-solver replays its solves."""
        checkpoint.adopt_policy_files(self, document, self.checkpoint_dir)
        self.state = checkpoint.state_from_document(document, self.state, self.eval_meta_solver is self.meta_solver)
        checkpoint.replay_warm_start((self.meta_solver, self.eval_meta_solver), self.state)
