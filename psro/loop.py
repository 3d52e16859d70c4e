"""Policy-Space Response Oracles (PSRO) and Joint PSRO (JPSRO) on an OpenSpiel game, read top to bottom.

The meta-solver decides the algorithm: a product meta-solver (Nash, alpha-Rank,
PRD, uniform, RAE, ...) gives PSRO; a correlated one (``mgcce``, ``mgce``, ...)
gives JPSRO with CCE or CE targets. Any number of players, any general-sum game
whose tree fits in memory (see :func:`psro.game_tree.build_game_tree`).

Each call of :meth:`PSRO._step` (iteration ``t``):

1. **add**: the best responses found at the end of step ``t - 1`` join the
   populations (``br_selection`` picks among several per player under CE-JPSRO);
   at ``t = 0`` the initial population is one uniform policy per player;
2. **evaluate**: the meta-game grows and only the new joint profiles are
   evaluated (hook :attr:`PSRO.on_evaluation_batch` runs after each block);
   with ``top_up_episodes`` a sampled meta-game then gets that many more
   episodes where their confidence matters (:meth:`MonteCarloEvaluator.top_up_rounds
   <psro.evaluation.MonteCarloEvaluator.top_up_rounds>`, resumable batch by batch);
3. **meta-solve**: ``meta_solver`` solves the meta-game (and ``eval_meta_solver``,
   when it differs, for the reported gap);
4. **targets**: the solution becomes best-response targets
   (:func:`psro.best_response.meta_targets`): the others' product mixture for
   PSRO, the conditional joint for CCE-JPSRO, one conditional per recommended
   policy for CE-JPSRO;
5. **oracles**: every player best-responds to its targets; the responses of
   the players chosen by ``update_players`` wait to join at step ``t + 1``.
   Each call is a job (:mod:`psro.oracle_jobs`), a pure function of its
   inputs; learned oracles' jobs run through ``executor``, all players'
   and targets' jobs of the iteration in one ``map``;
6. **measure**: the same best-response values give the gap of the meta-strategy
   in the full game (NashConv, CCE gap or CE gap, :mod:`psro.metrics`).

:meth:`PSRO.run` then records the row, calls the callback and writes the
checkpoint (:mod:`psro.checkpoint`). Row 0 of the history is the initial
population; row ``t`` the state after ``t`` iterations.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import math
import sys
import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from games.empirical import EmpiricalGame
from games.executors import Executor, make_executor, portable_spec
from psro.best_response import LEARNED, ORACLES, make_oracle, meta_targets
from psro.evaluation import EVALUATORS, TOP_UP_METHODS, TopUpProgress, make_evaluator
from psro.game_tree import build_game_tree
from psro.matrix_game import check_normal_form_options, normal_form_to_json, resolve_game
from psro.meta_solvers import get_meta_solver
from psro.metrics import gap_from_responses
from psro.oracle_jobs import ORACLE_DISPATCH, oracle_jobs, remember_tree, run_oracle_job
from psro.policies import uniform_policy
from psro.population import Population, Provenance

__all__ = ["PSRO", "HISTORY_COLUMNS", "PHASES", "UPDATE_PLAYERS", "BR_SELECTIONS", "new_profile_blocks"]

logger = logging.getLogger(__name__)

PHASES = ("meta_solve", "oracle", "evaluation", "metric")
UPDATE_PLAYERS = ("all", "cycle", "random")
BR_SELECTIONS = ("all", "novel", "largest_gap")

HISTORY_COLUMNS = (
    "iteration",        # 0 for the initial population
    "gap",              # the eval meta-strategy's gap in the full game: NashConv (PSRO), CCE or CE gap (JPSRO)
    "train_gap",        # the same measure for the training meta-strategy (equal to gap when the solvers agree)
    # "population_<p>"  # population size of each player (inserted per player)
    "time_meta_solve",  # seconds in each phase during this iteration
    "time_oracle",
    "time_evaluation",
    "time_metric",
    "wall_time",        # cumulative wall-clock seconds of run() calls
    "cpu_time",         # cumulative CPU seconds of this process during run() calls
    "evaluations",      # cumulative number of evaluated meta-game profiles
    "top_up_episodes",  # episodes the Monte Carlo top-up played in this iteration (0 when off)
    "episodes",         # cumulative episodes recorded in the meta-game (evaluation and top-up; 0 when exact)
)


def _check_top_up(episodes, method, rounds, evaluator: str) -> None:
    """Raise ``ValueError`` naming the top-up option that is wrong."""
    if isinstance(episodes, bool) or not isinstance(episodes, (int, np.integer)) or episodes < 0:
        raise ValueError(f"top_up_episodes must be a non-negative int (extra episodes per iteration, 0 for none); "
                         f"got {episodes!r}.")
    if method not in TOP_UP_METHODS:
        raise ValueError(f"top_up_method must be one of {list(TOP_UP_METHODS)}; got {method!r}.")
    if isinstance(rounds, bool) or not isinstance(rounds, (int, np.integer)) or rounds < 1:
        raise ValueError(f"top_up_rounds must be a positive int; got {rounds!r}.")
    if episodes and evaluator != "monte_carlo":
        raise ValueError(f"top_up_episodes={episodes} needs evaluator='monte_carlo'; the {evaluator!r} evaluator "
                         "is exact and has nothing to top up (set top_up_episodes=0).")


def _constant_sum(game) -> bool:
    import pyspiel

    return game.get_type().utility in (pyspiel.GameType.Utility.ZERO_SUM, pyspiel.GameType.Utility.CONSTANT_SUM)


class PSRO:
    """PSRO and JPSRO with exact best responses and exact meta-game payoffs.

    Parameters
    ----------
    game : str, pyspiel.Game or games.NormalFormGame
        An OpenSpiel game or its string (``"kuhn_poker(players=3)"``), loaded with :func:`games.load`;
        or a matrix / n-player tensor game, played as a one-shot game with pure-strategy best responses
        and exact payoffs (:mod:`psro.matrix_game`: oracle ``"exact"`` or ``"openspiel"``, evaluator
        ``"sequence_form"`` or ``"openspiel"``; with ``meta_solver="nash"`` this is the double oracle).
    meta_solver : str
        A name from :func:`psro.meta_solvers.known_names`. Product solvers
        (``"nash"``, ``"alpharank"``, ``"prd"``, ``"uniform"``, ``"rae"``, ...)
        run PSRO; correlated ones (``"mgcce"``, ``"mgce"``, ...) run JPSRO.
    oracle : {"exact", "openspiel", "dqn", "ppo"}
        Sequence-form best response in numpy, pyspiel's ``TabularBestResponse`` / ``cce_dist``, or a
        learned oracle (:mod:`psro.oracles_rl`). A learned response's training seed is derived from
        ``(seed, iteration, player, target index)`` (:func:`psro.oracle_jobs.job_seed`), so a resumed
        run, or one on another executor, trains exactly the same responses.
    oracle_options : dict, optional
        A learned oracle's settings: fields of :class:`psro.dqn_oracle.DQNConfig` /
        :class:`psro.ppo_oracle.PPOConfig` (e.g. ``{"total_steps": 4096}``) and ``target_mode``.
    executor : None, str, int, dict or games.executors.Executor
        Where the run's jobs go, anything :func:`games.executors.make_executor` accepts: ``None`` or
        ``"serial"`` (default), ``"process"``, ``"ray"``, a worker count, or an executor instance (which
        the caller keeps and closes). The oracle jobs of every player and target of an iteration are
        mapped through it (see ``oracle_dispatch``), and so are the ``monte_carlo`` evaluator's episodes.
        Results do not depend on it. An executor this solver builds is released by :meth:`close`.
    oracle_dispatch : {"auto", "executor", "in_process"}
        Which oracle calls go through ``executor``: ``"auto"`` sends learned oracles' jobs (seconds
        each) and calls exact oracles in-process (milliseconds each, cheaper than sending the
        populations); ``"executor"`` sends all, ``"in_process"`` none. An oracle assigned to
        :attr:`oracle` after construction is always called in-process.
    evaluator : {"sequence_form", "openspiel", "monte_carlo"}
        How new meta-game profiles are evaluated: exactly (sequence form in numpy,
        or pyspiel's C++), or by sampled episodes recorded with their counts and
        variances (:class:`psro.evaluation.MonteCarloEvaluator`).
    evaluator_options : dict, optional
        Options of the ``monte_carlo`` evaluator (``episodes_per_profile``, ...); its seed defaults to
        ``seed`` and its executor to ``executor`` (an ``"executor"`` given here, the older way, becomes
        the run's executor when ``executor`` is not given).
    top_up_episodes : int
        Extra episodes per iteration (default 0: none), spent after the new
        profiles are evaluated and before the meta-solve on the profiles whose
        uncertainty matters (``evaluator="monte_carlo"`` only). The meta-solver
        then solves cold (no warm-started LP): the top-up changes old entries.
    top_up_method : {"support", "response_graph_ucb"}
        Where those episodes go (:meth:`psro.evaluation.MonteCarloEvaluator.top_up_rounds`):
        ``"support"`` weights each profile by how much its payoffs enter the
        regret of the meta-strategy of the evaluated meta-game times their
        standard errors; ``"response_graph_ucb"`` samples the ends of the
        single-deviation edges whose confidence intervals still overlap.
    top_up_rounds : int
        Rounds per iteration the top-up budget is split into; each round
        re-allocates from the samples so far and a checkpoint can resume it.
    seed : int
        Seeds ``self.rng`` (``update_players="random"``) and the learned oracles' jobs.
    progress : bool
        Show a ``tqdm`` progress bar with the current gap in :meth:`run`.
    eval_meta_solver : str, optional
        The meta-solver whose solution the reported ``gap`` measures (default:
        ``meta_solver``). It must be of the same kind (product, CCE or CE).
    update_players : {"all", "cycle", "random"}
        Whose best responses join each iteration: everyone, players in turn,
        or one player drawn from ``rng``.
    br_selection : {"all", "novel", "largest_gap"}
        Which best responses join when a player has several (CE-JPSRO: one per
        recommendation): all (identical ones once), only those not already in
        the population (compared exactly), or the novel one with the largest
        mass-weighted deviation incentive. A response that gains nothing over
        its target (up to round-off, :attr:`ZERO_GAIN_RTOL`) never joins under
        "novel" and "largest_gap"; under "all" nothing joins once no player's
        exact response gains anything (a fixed point: the meta-strategy is an
        equilibrium of the full game). See :meth:`_select`.
    meta_solver_options : dict, optional
        Keyword options for the meta-solver (e.g. ``{"alpha": 10.0}`` for ``"alpharank"``).
    checkpoint_dir : str or Path, optional
        Write a checkpoint there after every iteration (see :mod:`psro.checkpoint`).

    Attributes
    ----------
    on_evaluation_batch : list of callable
        Hooks called as ``hook(solver, index)`` after each block of new profiles
        (``index``: one ``range`` per player) is stored in ``meta_game``. A hook
        may call :meth:`save_checkpoint`: the resumed run then skips the blocks
        already evaluated, so no finished evaluation is lost. The top-up calls
        them after each of its batches with ``index`` covering the whole meta-game.

    Raises
    ------
    ValueError
        For an unknown game (with suggestions), meta-solver, oracle, evaluator
        or option, or a meta-solver that does not fit the game (e.g. the
        zero-sum Nash LP on a three-player game).

    Examples
    --------
    >>> history = PSRO("kuhn_poker", meta_solver="nash", progress=False).run(iterations=3)
    >>> history[["iteration", "population_0", "population_1", "evaluations"]].values.tolist()
    [[0, 1, 1, 1], [1, 2, 2, 4], [2, 3, 3, 9], [3, 4, 4, 16]]
    >>> round(float(history["gap"].iloc[0]), 6)   # the uniform policy's NashConv
    0.916667
    >>> jpsro = PSRO("kuhn_poker(players=3)", meta_solver="mgcce", progress=False)
    >>> jpsro.kind, bool(jpsro.run(iterations=2)["gap"].iloc[-1] >= 0)
    ('cce', True)
    >>> from games import catalog
    >>> chicken = PSRO(catalog.chicken(), progress=False)   # a NormalFormGame: pure best responses
    >>> chicken.run(target_gap=0.0, iterations=10)["gap"].tolist()
    [0.5, 0.5, 0.0]
    >>> [p.tolist() for p in chicken.aggregate_policies()]   # the pure equilibrium (dare, swerve)
    [[[1.0, 0.0]], [[0.0, 1.0]]]
    """

    def __init__(self, game, meta_solver: str = "nash", oracle: str = "exact",
                 evaluator: str = "sequence_form", seed: int = 0, progress: bool = True,
                 eval_meta_solver: str | None = None, update_players: str = "all", br_selection: str = "all",
                 meta_solver_options: dict | None = None, evaluator_options: dict | None = None,
                 checkpoint_dir=None, oracle_options: dict | None = None, executor=None,
                 oracle_dispatch: str = "auto", top_up_episodes: int = 0, top_up_method: str = "support",
                 top_up_rounds: int = 4):
        self.game, self.normal_form = resolve_game(game)   # a NormalFormGame is played as its turn-based game
        n = self.game.num_players()
        constant_sum = _constant_sum(self.game) if self.normal_form is None else self.normal_form.is_constant_sum()
        options = dict(meta_solver_options or {})
        self.meta_solver = get_meta_solver(meta_solver, **options)
        self.meta_solver.check_fits(n, constant_sum)
        if eval_meta_solver is None or eval_meta_solver == meta_solver:
            self.eval_meta_solver = self.meta_solver
        else:
            try:
                self.eval_meta_solver = get_meta_solver(eval_meta_solver)
                self.eval_meta_solver.check_fits(n, constant_sum)
            except (ValueError, TypeError) as exc:
                raise type(exc)(f"eval_meta_solver: {exc}") from None
            if self.eval_meta_solver.kind != self.meta_solver.kind:
                raise ValueError(
                    f"eval_meta_solver={eval_meta_solver!r} gives a {self.eval_meta_solver.kind} solution but "
                    f"meta_solver={meta_solver!r} a {self.meta_solver.kind} one; choose two of the same kind.")
        if oracle not in ORACLES:
            raise ValueError(f"oracle must be one of {list(ORACLES)}; got {oracle!r}.")
        if evaluator not in EVALUATORS:
            raise ValueError(f"evaluator must be one of {sorted(EVALUATORS)}; got {evaluator!r}.")
        _check_top_up(top_up_episodes, top_up_method, top_up_rounds, evaluator)
        if update_players not in UPDATE_PLAYERS:
            raise ValueError(f"update_players must be one of {list(UPDATE_PLAYERS)}; got {update_players!r}.")
        if br_selection not in BR_SELECTIONS:
            raise ValueError(f"br_selection must be one of {list(BR_SELECTIONS)}; got {br_selection!r}.")
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise TypeError(f"seed must be an int; got {seed!r}.")
        if oracle_dispatch not in ORACLE_DISPATCH:
            raise ValueError(f"oracle_dispatch must be one of {list(ORACLE_DISPATCH)}; got {oracle_dispatch!r}.")
        if self.normal_form is not None:
            check_normal_form_options(oracle, evaluator, oracle_dispatch)
        if oracle_options is not None and not isinstance(oracle_options, dict):
            raise TypeError(f"oracle_options must be a dict of option: value; got {type(oracle_options).__name__}.")
        evaluator_opts = dict(evaluator_options or {})
        legacy_executor = evaluator_opts.pop("executor", None) if evaluator == "monte_carlo" else None
        if executor is not None and legacy_executor is not None and legacy_executor is not executor \
                and legacy_executor != executor:
            raise ValueError(f"executor={executor!r} and evaluator_options['executor']={legacy_executor!r} differ; "
                             "give one executor for the run (the executor argument).")
        executor_spec = executor if executor is not None else legacy_executor
        try:
            self.executor = make_executor(executor_spec)
        except (ValueError, TypeError) as exc:
            raise type(exc)(f"executor: {exc}") from None
        self._owns_executor = not isinstance(executor_spec, Executor)
        self.oracle_dispatch = oracle_dispatch
        self.kind = self.meta_solver.kind   # "product" (PSRO), "cce" or "ce" (JPSRO)
        self.oracle_name, self.evaluator_name, self.seed, self.progress = oracle, evaluator, int(seed), progress
        self.update_players, self.br_selection = update_players, br_selection
        game_spec = str(self.game) if self.normal_form is None else normal_form_to_json(self.normal_form)
        self.options = dict(game=game_spec, meta_solver=meta_solver, oracle=oracle, evaluator=evaluator,
                            seed=int(seed), eval_meta_solver=self.eval_meta_solver.name,
                            update_players=update_players, br_selection=br_selection,
                            meta_solver_options=options, evaluator_options=dict(evaluator_opts),
                            oracle_options=dict(oracle_options or {}), oracle_dispatch=oracle_dispatch,
                            executor=portable_spec(executor_spec))
        self.options.update(top_up_episodes=int(top_up_episodes), top_up_method=top_up_method,
                            top_up_rounds=int(top_up_rounds))
        self.top_up_episodes, self.top_up_method, self.top_up_rounds = \
            int(top_up_episodes), top_up_method, int(top_up_rounds)
        if self.top_up_episodes:
            # the top-up changes old meta-game entries, so a warm-started LP would be rebuilt anyway; cold
            # solves also keep a resumed run's solutions independent of the solves before the checkpoint
            cold = dataclasses.replace(self.meta_solver, warm_lp=None)
            self.eval_meta_solver = (cold if self.eval_meta_solver is self.meta_solver
                                     else dataclasses.replace(self.eval_meta_solver, warm_lp=None))
            self.meta_solver = cold
        self._top_up_progress = TopUpProgress()   # the top-up of the current iteration (checkpointed)
        self.checkpoint_dir = checkpoint_dir
        self.run_config = None   # the CLI's config (a dict), stored in checkpoints
        self.rng = np.random.default_rng(seed)
        self.on_evaluation_batch: list = []

        start = time.perf_counter()
        self.tree = build_game_tree(self.game)
        if self.normal_form is None:   # (a NormalFormGame's oracles run in-process: it has no game string)
            remember_tree(str(self.game), self.tree)   # serial oracle jobs reuse it; workers rebuild it once
        try:
            self.oracle = make_oracle(oracle, self.tree, seed=self.seed, **dict(oracle_options or {}))
        except (ValueError, TypeError) as exc:
            raise type(exc)(f"oracle_options: {exc}") from None
        self._built_oracle = self.oracle
        # the gap is always measured with exact best responses; a learned oracle's values only bound it from below
        self.metric_oracle = make_oracle("exact", self.tree) if oracle in LEARNED else self.oracle
        if evaluator == "monte_carlo":
            evaluator_opts.setdefault("seed", self.seed)
            evaluator_opts["executor"] = self.executor
        try:
            self.evaluator = make_evaluator(evaluator, self.tree, **evaluator_opts)
        except (ValueError, TypeError) as exc:
            raise type(exc)(f"evaluator_options: {exc}") from None
        self.setup_time = time.perf_counter() - start

        self.populations = [Population(info) for info in self.tree.infostates]
        self.meta_game = EmpiricalGame((0,) * n)
        self.meta_strategy = None       # solvers.Equilibrium of the latest meta-game (training meta-solver)
        self.eval_meta_strategy = None  # the same for eval_meta_solver
        self.gap = self.train_gap = math.nan
        self.iteration = -1             # becomes 0 once the initial population is evaluated
        self.evaluations = 0
        # best responses waiting to join at the next step: per player a list of (policy, value)
        self._pending = [[(uniform_policy(info), math.nan)] for info in self.tree.infostates]
        self.in_iteration = False      # True between adding the new policies and the end of the step
        self._sizes_before = [0] * n   # population sizes before the policies of the current step joined
        self._rows: list = []
        self._wall = 0.0
        self._cpu = 0.0

    @property
    def top_up_progress(self) -> TopUpProgress:
        """Where the Monte Carlo top-up stands: ``key == (iteration,)`` once this iteration's has started."""
        return self._top_up_progress

    @property
    def is_jpsro(self) -> bool:
        return self.kind != "product"

    # ----------------------------------------------------------------- running
    def run(self, iterations: int | None = None, target_gap: float | None = None,
            time_limit: float | None = None, progress: bool | None = None,
            callback: Callable[[dict], None] | None = None) -> pd.DataFrame:
        """Run until one stopping rule fires; return the whole history.

        Calling ``run`` again continues from where the last call stopped.

        Parameters
        ----------
        iterations : int, optional
            Iterations to run in this call (the initial evaluation is not one).
        target_gap : float, optional
            Stop once the gap is at most this.
        time_limit : float, optional
            Stop once this call has run this many wall-clock seconds.
        progress : bool, optional
            Override the constructor's ``progress``.
        callback : callable, optional
            Called with each new history row (a dict), before the checkpoint is written.

        Examples
        --------
        >>> solver = PSRO("kuhn_poker", progress=False)
        >>> history = solver.run(target_gap=1e-6, iterations=100)
        >>> bool(history["gap"].iloc[-1] <= 1e-6)
        True
        """
        if iterations is None and target_gap is None and time_limit is None:
            raise ValueError("give at least one stopping rule: iterations, target_gap or time_limit.")
        if iterations is not None and (isinstance(iterations, bool) or int(iterations) != iterations or iterations < 0):
            raise ValueError(f"iterations must be a non-negative int; got {iterations!r}.")
        for name, value in (("target_gap", target_gap), ("time_limit", time_limit)):
            if value is not None and not (isinstance(value, (int, float)) and value >= 0):
                raise ValueError(f"{name} must be a non-negative number; got {value!r}.")
        from tqdm.auto import tqdm

        show = self.progress if progress is None else progress
        bar = tqdm(total=iterations, disable=not show, desc="JPSRO" if self.is_jpsro else "PSRO", unit="it")
        wall0, cpu0 = time.perf_counter() - self._wall, time.process_time() - self._cpu
        started = time.perf_counter()
        done = 0
        try:
            if self.iteration < 0 or self.in_iteration:   # the initial population, or a step cut short
                self._finish_iteration(self._step(), wall0, cpu0, callback)
            while True:
                if target_gap is not None and self.gap <= target_gap:
                    break
                if iterations is not None and done >= iterations:
                    break
                if time_limit is not None and time.perf_counter() - started >= time_limit:
                    break
                self._finish_iteration(self._step(), wall0, cpu0, callback)
                done += 1
                bar.update(1)
                bar.set_postfix(gap=f"{self.gap:.3g}", refresh=False)
        finally:
            bar.close()
        return self.history

    def _step(self) -> dict:
        """One iteration (steps 1-6 of the module docstring). Returns the seconds spent in each phase."""
        times = dict.fromkeys(PHASES, 0.0)
        start = time.perf_counter()
        if not self.in_iteration:   # (a run resumed from a checkpoint written in step 2 has done step 1)
            # 1. the best responses of the last step join the populations (oracle time)
            self._add_pending()
        t, old, new = self.iteration, self._sizes_before, [len(pop) for pop in self.populations]
        times["oracle"] = time.perf_counter() - start

        # 2. only the new profiles are evaluated (blocks a resumed run already has are skipped)
        start = time.perf_counter()
        for index in new_profile_blocks(old, new):
            ix = np.ix_(*[np.asarray(i, dtype=np.intp) for i in index])
            if not self.evaluator.exact:
                # sampled: plays only the episodes a profile still lacks, recording batch by batch
                done = bool((self.meta_game.count[0][ix] >= self.evaluator.episodes_per_profile).all())
                self.evaluator.evaluate(self.populations, index, meta_game=self.meta_game,
                                        on_batch=lambda batch, index=index: [h(self, index)
                                                                             for h in self.on_evaluation_batch])
                if not done:   # a block finished before a checkpoint is counted once
                    self.evaluations += math.prod(len(i) for i in index)
                continue
            if (self.meta_game.count[0][ix] > 0).all():
                continue
            self.meta_game.set_exact_block(index, self.evaluator.evaluate(self.populations, index))
            self.evaluations += math.prod(len(i) for i in index)
            for hook in self.on_evaluation_batch:
                hook(self, index)
        if self.top_up_episodes:
            self._top_up(t)   # resumes the rounds and batches a checkpoint already has
        times["evaluation"] = time.perf_counter() - start

        # 3. meta-solve (training, and evaluation when it differs)
        start = time.perf_counter()
        meta_game = self.meta_game.mean_game()
        self.meta_strategy = self.meta_solver(meta_game)
        separate_eval = self.eval_meta_solver is not self.meta_solver
        self.eval_meta_strategy = self.eval_meta_solver(meta_game) if separate_eval else self.meta_strategy
        times["meta_solve"] = time.perf_counter() - start

        # 4-5. targets and best responses for every player (all are needed for the gap)
        start = time.perf_counter()
        n = len(self.populations)
        targets = [meta_targets(self.meta_strategy, self.kind, self.populations, meta_game.payoffs, p)
                   for p in range(n)]
        responses = self._best_responses(t, targets)
        at_fixed_point = self._at_fixed_point(targets, responses)
        for p in self._players_to_update(t):
            self._pending[p] = self._select(p, targets[p], responses[p], at_fixed_point)
        times["oracle"] += time.perf_counter() - start

        # 6. measure: the gap of the meta-strategy in the full game
        start = time.perf_counter()
        if self.metric_oracle is not self.oracle:
            responses = [[self.metric_oracle(p, target) for target in targets[p]] for p in range(n)]
        self.train_gap = gap_from_responses(self.kind, targets, responses)
        if separate_eval:
            eval_targets = [meta_targets(self.eval_meta_strategy, self.kind, self.populations, meta_game.payoffs, p)
                            for p in range(n)]
            eval_responses = [[self.metric_oracle(p, target) for target in eval_targets[p]] for p in range(n)]
            self.gap = gap_from_responses(self.kind, eval_targets, eval_responses)
        else:
            self.gap = self.train_gap
        times["metric"] = time.perf_counter() - start
        self.in_iteration = False
        return times

    def _best_responses(self, t: int, targets: list) -> list:
        """Every player's best responses at iteration ``t``: ``responses[p][i]`` answers ``targets[p][i]``.

        The jobs of all players and targets go through :attr:`executor` in one
        ``map`` when ``oracle_dispatch`` says so (learned oracles under
        ``"auto"``); each is a pure function of its inputs
        (:func:`psro.oracle_jobs.run_oracle_job`), so the engine never changes
        the answer. Otherwise the oracle is called in-process, a learned one
        with the same seed keys.
        """
        oracle = self.oracle
        rl = sys.modules.get("psro.oracles_rl")   # not imported: no learned oracle exists (and torch stays out)
        learned = rl is not None and isinstance(oracle, rl.LearnedOracle)
        dispatch = self.oracle_dispatch
        if oracle is self._built_oracle and (dispatch == "executor" or (dispatch == "auto" and learned)):
            settings = (dict(config=oracle.config, target_mode=oracle.target_mode, meta_solver=oracle.meta_solver)
                        if learned else {})
            jobs = oracle_jobs(self.oracle_name, str(self.game), targets, t, self.seed, **settings)
            results = iter(self.executor.map(run_oracle_job, jobs, chunksize=1))
            return [[next(results) for _ in player_targets] for player_targets in targets]
        if learned:
            return [[oracle(p, target, iteration=t, index=i) for i, target in enumerate(targets[p])]
                    for p in range(len(targets))]
        return [[oracle(p, target) for target in targets[p]] for p in range(len(targets))]

    def _add_pending(self) -> None:
        """Start a new iteration: the waiting best responses join the populations and the meta-game grows."""
        self.iteration += 1
        t = self.iteration
        self._sizes_before = [len(pop) for pop in self.populations]
        for p, (pop, pending) in enumerate(zip(self.populations, self._pending)):
            for policy, value in pending:
                pop.add(policy, Provenance(t, "initial") if t == 0
                        else Provenance(t, self.oracle_name, self.meta_solver.name, value))
            if pending:
                self.meta_game.grow(p, len(pending))
        self._pending = [[] for _ in self.populations]
        self.in_iteration = True

    def _top_up(self, t: int) -> None:
        """Step 2's top-up: ``top_up_episodes`` more episodes in ``top_up_rounds`` resumable rounds.

        The progress (round, episodes, the ``"support"`` meta-strategy, which is
        solved once per iteration with the cold meta-solver and counted in the
        evaluation time, and a round's target counts) is kept in
        :attr:`top_up_progress` before any episode of a round is played, so a
        checkpoint written by an :attr:`on_evaluation_batch` hook resumes the
        top-up at the batch where it stopped. Episode streams come from the
        evaluator's seed and each profile's episode numbers; ResponseGraphUCB
        rounds from ``(seed, t, round)``.
        """
        whole = [range(len(pop)) for pop in self.populations]

        def keep(progress: TopUpProgress) -> None:
            self._top_up_progress = progress

        def strategy(meta_game: EmpiricalGame):
            return self.meta_solver(meta_game.mean_game())   # cold (see the constructor)

        self._top_up_progress = self.evaluator.top_up_rounds(
            self.meta_game, self.populations, self.top_up_episodes, method=self.top_up_method,
            rounds=self.top_up_rounds, key=(t,), strategy=strategy if self.top_up_method == "support" else None,
            progress=self._top_up_progress, on_progress=keep,
            on_batch=lambda batch: [hook(self, whole) for hook in self.on_evaluation_batch])

    def _players_to_update(self, t: int) -> list:
        """The players whose new best responses join at the next step (``update_players``)."""
        n = len(self.populations)
        if self.update_players == "cycle":
            return [t % n]
        if self.update_players == "random":
            return [int(self.rng.integers(n))]
        return list(range(n))

    #: A best response gains nothing when its mass-weighted gain over its target is at most this times the
    #: player's payoff scale (:attr:`_gain_tolerances`): round-off in the values, not a deviation incentive.
    ZERO_GAIN_RTOL = 1e-12

    @functools.cached_property
    def _gain_tolerances(self) -> np.ndarray:
        """Per player, ``ZERO_GAIN_RTOL`` times the larger of the span and the magnitude of its terminal payoffs.

        Every value in the loop is an average of terminal payoffs, so its
        round-off is relative to their magnitude, and a gain is measured
        against their span.
        """
        returns = self.tree.terminal_returns
        scale = np.maximum(np.ptp(returns, axis=0), np.abs(returns).max(axis=0))
        return self.ZERO_GAIN_RTOL * scale

    def _gain(self, target, br) -> float:
        """The mass-weighted deviation incentive of ``br`` over ``target`` (NaN when the on-policy value is unknown)."""
        gain = br.value - target.on_policy_value
        return math.nan if math.isnan(gain) else target.mass * max(gain, 0.0)

    def _gains_nothing(self, player: int, target, br) -> bool:
        """True when ``br`` gains at most round-off over ``target`` (see :attr:`ZERO_GAIN_RTOL`)."""
        return self._gain(target, br) <= self._gain_tolerances[player]   # NaN (unknown) gains something

    def _at_fixed_point(self, targets: list, responses: list) -> bool:
        """True when no player's exact best response gains anything: the meta-strategy is an equilibrium
        (Nash, CCE or CE, by ``kind``) of the full game. Never true with a learned oracle, whose values
        only bound the best response from below."""
        if self.oracle_name in LEARNED:
            return False
        return all(self._gains_nothing(p, target, br)
                   for p, (player_targets, player_responses) in enumerate(zip(targets, responses))
                   for target, br in zip(player_targets, player_responses))

    def _select(self, player: int, targets: list, responses: list, at_fixed_point: bool = False) -> list:
        """The ``(policy, value)`` pairs of ``player`` that join the population (``br_selection``).

        A best response *gains nothing* when its mass-weighted gain over its
        target, ``mass * max(value - on_policy_value, 0)`` (its term in the
        gap), is at most :attr:`ZERO_GAIN_RTOL` (1e-12) times the player's
        payoff scale. Such a response cannot lower the gap, but joining would
        change the meta-game and its solution, and the gap can rise again
        (on ``sheriff`` it went from 1e-14 back to 0.4-0.9). So:

        * ``"novel"`` and ``"largest_gap"``: a response that gains nothing
          never joins (nor one already in the population); when none is left
          the player adds nothing. With an equilibrium meta-solver the loop
          still converges in a finite game: its exact meta-solution leaves no
          gain to the population's members, so a response that gains
          something is new, and every iteration with a positive gap adds a
          new pure policy.
        * ``"all"``: as in the JPSRO paper and OpenSpiel's ``jpsro``, every
          distinct response joins, those that gain nothing included, except at
          the fixed point (``at_fixed_point``): when no player's exact best
          response gains anything, the meta-strategy is already an equilibrium
          of the full game, so nothing joins and the populations, the
          meta-game and the gap stay where they are. With a learned oracle
          there is no fixed point (its values only bound the best response
          from below).
        """
        if self.br_selection == "all" and at_fixed_point:
            return []
        pop = self.populations[player]
        chosen, seen = [], []
        for target, br in zip(targets, responses):
            duplicate = any(np.array_equal(br.policy, other) for other in seen)
            if duplicate:
                continue
            seen.append(br.policy)
            if self.br_selection != "all":
                known = bool(np.any(np.all(pop.policies == br.policy, axis=(1, 2))))
                if known or self._gains_nothing(player, target, br):
                    continue
            chosen.append((br, self._gain(target, br)))
        if self.br_selection == "largest_gap" and chosen:
            # the first one among equals; an unknown (NaN) gain ranks last
            chosen = [max(chosen, key=lambda pair: -math.inf if math.isnan(pair[1]) else pair[1])]
        return [(br.policy, br.value) for br, _ in chosen]

    def _finish_iteration(self, times: dict, wall0: float, cpu0: float, callback) -> None:
        """Record the history row, call the callback, write the checkpoint."""
        self._wall = time.perf_counter() - wall0
        self._cpu = time.process_time() - cpu0
        row = {"iteration": self.iteration, "gap": self.gap, "train_gap": self.train_gap}
        row.update({f"population_{p}": len(pop) for p, pop in enumerate(self.populations)})
        row.update({f"time_{k}": v for k, v in times.items()})
        row.update(wall_time=self._wall, cpu_time=self._cpu, evaluations=self.evaluations)
        topped = self._top_up_progress
        row.update(top_up_episodes=topped.spent if topped.key == (self.iteration,) else 0,
                   episodes=int(self.meta_game.count[0][~self.meta_game.exact].sum()))
        self._rows.append(row)
        logger.info("iteration %d: gap %.3e, populations %s, %.2fs", self.iteration, self.gap,
                    [len(p) for p in self.populations], self._wall)
        if callback is not None:
            callback(row)
        if self.checkpoint_dir is not None:
            self.save_checkpoint()

    # ----------------------------------------------------------------- results
    @property
    def history(self) -> pd.DataFrame:
        """One row per iteration; see :data:`HISTORY_COLUMNS` (plus ``population_<p>`` per player)."""
        n = self.tree.num_players
        columns = [*HISTORY_COLUMNS[:3], *(f"population_{p}" for p in range(n)), *HISTORY_COLUMNS[3:]]
        return pd.DataFrame(self._rows, columns=columns)

    def save_checkpoint(self, directory=None):
        """Write a checkpoint now (into ``directory`` or ``checkpoint_dir``); return its path.

        Safe to call from an :attr:`on_evaluation_batch` hook: a checkpoint
        written in the middle of step 2 keeps the blocks evaluated so far, and
        the resumed run evaluates only the rest.

        Examples
        --------
        >>> import tempfile
        >>> solver = PSRO("kuhn_poker", progress=False)
        >>> _ = solver.run(iterations=1)
        >>> solver.save_checkpoint(tempfile.mkdtemp()).name
        'checkpoint.json'
        """
        from psro.checkpoint import save_checkpoint

        directory = self.checkpoint_dir if directory is None else directory
        if directory is None:
            raise ValueError("directory: give a directory, or construct PSRO with checkpoint_dir.")
        return save_checkpoint(directory, self)

    @property
    def pending_responses(self) -> list:
        """Per player, the ``(policy, value)`` best responses that join at the next step."""
        return [list(p) for p in self._pending]

    def aggregate_policies(self) -> list:
        """Each population mixed with its meta-strategy marginal, as one behaviour policy ``(I, A)`` per player."""
        if self.meta_strategy is None:
            raise ValueError("run() has not evaluated any population yet; call run() first.")
        return [pop.aggregate(w) for pop, w in zip(self.populations, self.meta_strategy.marginals)]

    def openspiel_policy(self, members=None):
        """The meta-strategy's policy (or chosen population members) as one OpenSpiel ``TabularPolicy``.

        Parameters
        ----------
        members : sequence of (int or None), optional
            Per player, the index of a population member to export, or None
            for that player's meta-strategy aggregate. Default: every player's
            aggregate (:meth:`aggregate_policies`), whose NashConv in OpenSpiel
            is this run's ``gap`` under a product meta-solver. Under JPSRO the
            aggregates mix each player's marginal only: a ``TabularPolicy``
            cannot correlate players.

        Returns
        -------
        open_spiel.python.policy.TabularPolicy
            See :func:`psro.openspiel_policy.to_openspiel_policy`; read back with
            :func:`psro.openspiel_policy.from_openspiel_policy`.

        Examples
        --------
        >>> from open_spiel.python.algorithms import exploitability
        >>> solver = PSRO("kuhn_poker", progress=False)
        >>> _ = solver.run(iterations=4)
        >>> policy = solver.openspiel_policy()
        >>> bool(abs(exploitability.nash_conv(solver.game, policy) - solver.gap) < 1e-12)
        True
        >>> solver.openspiel_policy(members=[0, None]).policy_for_key(solver.tree.infostates[0].keys[0]).tolist()
        [0.5, 0.5]
        """
        from psro.openspiel_policy import to_openspiel_policy

        n = len(self.populations)
        members = [None] * n if members is None else list(members)
        if len(members) != n:
            raise ValueError(f"members needs one entry per player ({n}), None for the aggregate; got {len(members)}.")
        needs_aggregate = any(m is None for m in members)
        aggregates = self.aggregate_policies() if needs_aggregate else [None] * n
        chosen = []
        for p, (m, pop) in enumerate(zip(members, self.populations)):
            if m is None:
                chosen.append(aggregates[p])
            elif isinstance(m, (int, np.integer)) and not isinstance(m, bool) and 0 <= m < len(pop):
                chosen.append(pop.policies[m])
            else:
                raise ValueError(f"members[{p}] must be None or a member index in [0, {len(pop)}); got {m!r}.")
        return to_openspiel_policy(chosen, self.tree)

    def close(self) -> None:
        """Release the executor's workers if this solver built the executor (one passed in is left open).

        The solver stays usable: a process pool or Ray instance starts again at the next :meth:`run`.

        Examples
        --------
        >>> with PSRO("kuhn_poker", executor="serial", progress=False) as solver:
        ...     _ = solver.run(iterations=1)
        """
        if self._owns_executor:
            self.executor.close()

    def __enter__(self) -> "PSRO":
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False

    @classmethod
    def resume(cls, checkpoint_dir, progress: bool = True, executor=None, previous: bool = False) -> "PSRO":
        """Rebuild a solver from the checkpoint in ``checkpoint_dir``; :meth:`run` continues it.

        ``executor`` (default: the checkpoint's, or serial when the run was given an
        executor instance) may differ from the interrupted run's: results do not depend on it.
        The checkpoint is verified first (:func:`psro.checkpoint.load_checkpoint`): a damaged
        or tampered one, or one whose executor names more than an engine and a worker count,
        raises ``ValueError`` naming the file. ``previous=True`` resumes from the checkpoint
        before the latest (kept until the next one is verified).

        Examples
        --------
        >>> import tempfile
        >>> out = tempfile.mkdtemp()
        >>> a = PSRO("kuhn_poker", progress=False, checkpoint_dir=out)
        >>> _ = a.run(iterations=2)
        >>> b = PSRO.resume(out, progress=False)
        >>> b.iteration, [len(p) for p in b.populations]
        (2, [3, 3])
        """
        from psro.checkpoint import load_checkpoint, restore

        return restore(load_checkpoint(checkpoint_dir, previous=previous), checkpoint_dir=checkpoint_dir,
                       progress=progress, executor=executor)


def new_profile_blocks(old_sizes, new_sizes) -> list:
    """Blocks of profiles, as one ``range`` per player, that cover each new profile exactly once.

    A profile is new when some player's index is ``>= old_sizes[p]``. Block
    ``q`` holds the profiles whose first new index is player q's: players
    before q old, player q new, players after q anything.

    Examples
    --------
    >>> new_profile_blocks([2, 3], [3, 4])
    [[range(2, 3), range(0, 4)], [range(0, 2), range(3, 4)]]
    """
    blocks = []
    for q in range(len(new_sizes)):
        index = ([range(old_sizes[r]) for r in range(q)] + [range(old_sizes[q], new_sizes[q])]
                 + [range(new_sizes[r]) for r in range(q + 1, len(new_sizes))])
        if all(len(ix) for ix in index):
            blocks.append(index)
    return blocks
