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
3. **meta-solve**: ``meta_solver`` solves the meta-game (and ``eval_meta_solver``,
   when it differs, for the reported gap);
4. **targets**: the solution becomes best-response targets
   (:func:`psro.best_response.meta_targets`): the others' product mixture for
   PSRO, the conditional joint for CCE-JPSRO, one conditional per recommended
   policy for CE-JPSRO;
5. **oracles**: every player best-responds to its targets; the responses of
   the players chosen by ``update_players`` wait to join at step ``t + 1``;
6. **measure**: the same best-response values give the gap of the meta-strategy
   in the full game (NashConv, CCE gap or CE gap, :mod:`psro.metrics`).

:meth:`PSRO.run` then records the row, calls the callback and writes the
checkpoint (:mod:`psro.checkpoint`). Row 0 of the history is the initial
population; row ``t`` the state after ``t`` iterations.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable

import numpy as np
import pandas as pd

import games
from games.empirical import EmpiricalGame
from psro.best_response import LEARNED, ORACLES, make_oracle, meta_targets
from psro.evaluation import EVALUATORS, make_evaluator
from psro.game_tree import build_game_tree
from psro.meta_solvers import get_meta_solver
from psro.metrics import gap_from_responses
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
)


def _constant_sum(game) -> bool:
    import pyspiel

    return game.get_type().utility in (pyspiel.GameType.Utility.ZERO_SUM, pyspiel.GameType.Utility.CONSTANT_SUM)


class PSRO:
    """PSRO and JPSRO with exact best responses and exact meta-game payoffs.

    Parameters
    ----------
    game : str or pyspiel.Game
        An OpenSpiel game or its string (``"kuhn_poker(players=3)"``), loaded with :func:`games.load`.
    meta_solver : str
        A name from :func:`psro.meta_solvers.known_names`. Product solvers
        (``"nash"``, ``"alpharank"``, ``"prd"``, ``"uniform"``, ``"rae"``, ...)
        run PSRO; correlated ones (``"mgcce"``, ``"mgce"``, ...) run JPSRO.
    oracle : {"exact", "openspiel", "dqn", "ppo"}
        Sequence-form best response in numpy, pyspiel's ``TabularBestResponse`` / ``cce_dist``, or a
        learned oracle (:mod:`psro.oracles_rl`; its training is not part of the checkpoint).
    evaluator : {"sequence_form", "openspiel", "monte_carlo"}
        How new meta-game profiles are evaluated: exactly (sequence form in numpy,
        or pyspiel's C++), or by sampled episodes recorded with their counts and
        variances (:class:`psro.evaluation.MonteCarloEvaluator`).
    evaluator_options : dict, optional
        Options of the ``monte_carlo`` evaluator (``episodes_per_profile``,
        ``executor``, ...); its seed defaults to ``seed``.
    seed : int
        Seeds ``self.rng`` (``update_players="random"``; learned oracles draw from it too).
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
        mass-weighted deviation incentive.
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
        already evaluated, so no finished evaluation is lost.

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
    """

    def __init__(self, game, meta_solver: str = "nash", oracle: str = "exact",
                 evaluator: str = "sequence_form", seed: int = 0, progress: bool = True,
                 eval_meta_solver: str | None = None, update_players: str = "all", br_selection: str = "all",
                 meta_solver_options: dict | None = None, evaluator_options: dict | None = None,
                 checkpoint_dir=None):
        try:
            self.game = games.load(game)
        except (ValueError, TypeError) as exc:
            raise type(exc)(f"game: {exc}") from None
        n, constant_sum = self.game.num_players(), _constant_sum(self.game)
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
        if update_players not in UPDATE_PLAYERS:
            raise ValueError(f"update_players must be one of {list(UPDATE_PLAYERS)}; got {update_players!r}.")
        if br_selection not in BR_SELECTIONS:
            raise ValueError(f"br_selection must be one of {list(BR_SELECTIONS)}; got {br_selection!r}.")
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise TypeError(f"seed must be an int; got {seed!r}.")
        self.kind = self.meta_solver.kind   # "product" (PSRO), "cce" or "ce" (JPSRO)
        self.oracle_name, self.evaluator_name, self.seed, self.progress = oracle, evaluator, int(seed), progress
        self.update_players, self.br_selection = update_players, br_selection
        self.options = dict(game=str(self.game), meta_solver=meta_solver, oracle=oracle, evaluator=evaluator,
                            seed=int(seed), eval_meta_solver=self.eval_meta_solver.name,
                            update_players=update_players, br_selection=br_selection,
                            meta_solver_options=options, evaluator_options=dict(evaluator_options or {}))
        self.checkpoint_dir = checkpoint_dir
        self.run_config = None   # the CLI's config (a dict), stored in checkpoints
        self.rng = np.random.default_rng(seed)
        self.on_evaluation_batch: list = []

        start = time.perf_counter()
        self.tree = build_game_tree(self.game)
        self.oracle = make_oracle(oracle, self.tree, seed=self.seed)
        # the gap is always measured with exact best responses; a learned oracle's values only bound it from below
        self.metric_oracle = make_oracle("exact", self.tree) if oracle in LEARNED else self.oracle
        evaluator_opts = dict(evaluator_options or {})
        if evaluator == "monte_carlo":
            evaluator_opts.setdefault("seed", self.seed)
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
            if not self.evaluator.exact:
                # sampled: plays only the episodes a profile still lacks, recording batch by batch
                self.evaluator.evaluate(self.populations, index, meta_game=self.meta_game,
                                        on_batch=lambda batch, index=index: [h(self, index)
                                                                             for h in self.on_evaluation_batch])
                self.evaluations += math.prod(len(i) for i in index)
                continue
            ix = np.ix_(*[np.asarray(i, dtype=np.intp) for i in index])
            if (self.meta_game.count[0][ix] > 0).all():
                continue
            self.meta_game.set_exact_block(index, self.evaluator.evaluate(self.populations, index))
            self.evaluations += math.prod(len(i) for i in index)
            for hook in self.on_evaluation_batch:
                hook(self, index)
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
        responses = [[self.oracle(p, target) for target in targets[p]] for p in range(n)]
        for p in self._players_to_update(t):
            self._pending[p] = self._select(p, targets[p], responses[p])
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

    def _players_to_update(self, t: int) -> list:
        """The players whose new best responses join at the next step (``update_players``)."""
        n = len(self.populations)
        if self.update_players == "cycle":
            return [t % n]
        if self.update_players == "random":
            return [int(self.rng.integers(n))]
        return list(range(n))

    def _select(self, player: int, targets: list, responses: list) -> list:
        """The ``(policy, value)`` pairs of ``player`` that join the population (``br_selection``)."""
        pop = self.populations[player]
        chosen, seen = [], []
        for target, br in zip(targets, responses):
            duplicate = any(np.array_equal(br.policy, other) for other in seen)
            if duplicate:
                continue
            seen.append(br.policy)
            known = bool(np.any(np.all(pop.policies == br.policy, axis=(1, 2))))
            if self.br_selection != "all" and known:
                continue
            gain = target.mass * max(br.value - target.on_policy_value, 0.0)
            chosen.append((br, gain))
        if self.br_selection == "largest_gap" and chosen:
            chosen = [max(chosen, key=lambda pair: pair[1])]   # the first one among equals
        return [(br.policy, br.value) for br, _ in chosen]

    def _finish_iteration(self, times: dict, wall0: float, cpu0: float, callback) -> None:
        """Record the history row, call the callback, write the checkpoint."""
        self._wall = time.perf_counter() - wall0
        self._cpu = time.process_time() - cpu0
        row = {"iteration": self.iteration, "gap": self.gap, "train_gap": self.train_gap}
        row.update({f"population_{p}": len(pop) for p, pop in enumerate(self.populations)})
        row.update({f"time_{k}": v for k, v in times.items()})
        row.update(wall_time=self._wall, cpu_time=self._cpu, evaluations=self.evaluations)
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

    @classmethod
    def resume(cls, checkpoint_dir, progress: bool = True) -> "PSRO":
        """Rebuild a solver from the checkpoint in ``checkpoint_dir``; :meth:`run` continues it.

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

        return restore(load_checkpoint(checkpoint_dir), checkpoint_dir=checkpoint_dir, progress=progress)


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
