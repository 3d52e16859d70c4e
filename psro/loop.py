"""Policy-Space Response Oracles on an OpenSpiel game, read top to bottom.

Each iteration:

1. **oracle**: every player best-responds to the others' meta-strategy mixtures
   (aggregated into one behaviour policy each); the responses join the populations;
2. **evaluation**: the meta-game grows and only the new profiles are evaluated, exactly;
3. **meta-solve**: the meta-solver gives each player a mixture over its population;
4. **metric**: the best responses to *these* mixtures are computed right away
   (they are the next iteration's oracle outputs) and give the NashConv of the
   meta-strategy in the full game: ``sum_p (BR value_p - meta-game value_p)``.

Row 0 of the history is the initial population (one uniform policy per
player); row ``t`` is the state after ``t`` iterations.
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
from psro.best_response import ORACLES, make_oracle
from psro.evaluation import EVALUATORS, make_evaluator
from psro.game_tree import build_game_tree
from psro.meta_solvers import get_meta_solver
from psro.policies import behaviour_from_plan, uniform_policy
from psro.population import Population, Provenance

__all__ = ["PSRO", "HISTORY_COLUMNS", "PHASES", "new_profile_blocks"]

logger = logging.getLogger(__name__)

PHASES = ("meta_solve", "oracle", "evaluation", "metric")

HISTORY_COLUMNS = (
    "iteration",        # 0 for the initial population
    "gap",              # NashConv of the meta-strategy in the full game
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
    """PSRO with exact best responses and exact meta-game payoffs.

    Parameters
    ----------
    game : str or pyspiel.Game
        An OpenSpiel game or its string (``"kuhn_poker"``), loaded with :func:`games.load`.
    meta_solver : str
        A name from :func:`psro.meta_solvers.known_names` (``"nash"``, ``"uniform"``, ...).
    oracle : {"exact", "openspiel"}
        Sequence-form best response in numpy, or pyspiel's ``TabularBestResponse``.
    evaluator : {"sequence_form", "openspiel"}
        How new meta-game profiles are evaluated (both exact).
    seed : int
        Seeds ``self.rng`` (the exact oracles are deterministic; learned ones will draw from it).
    progress : bool
        Show a ``tqdm`` progress bar in :meth:`run`.

    Raises
    ------
    ValueError
        For an unknown game (with suggestions), meta-solver, oracle or
        evaluator, or a meta-solver that does not fit the game (e.g. the
        zero-sum Nash LP on a three-player game).

    Examples
    --------
    >>> history = PSRO("kuhn_poker", meta_solver="nash", progress=False).run(iterations=3)
    >>> history[["iteration", "population_0", "population_1", "evaluations"]].values.tolist()
    [[0, 1, 1, 1], [1, 2, 2, 4], [2, 3, 3, 9], [3, 4, 4, 16]]
    >>> round(float(history["gap"].iloc[0]), 6)   # the uniform policy's NashConv
    0.916667
    """

    def __init__(self, game, meta_solver: str = "nash", oracle: str = "exact",
                 evaluator: str = "sequence_form", seed: int = 0, progress: bool = True):
        try:
            self.game = games.load(game)
        except (ValueError, TypeError) as exc:
            raise type(exc)(f"game: {exc}") from None
        self.meta_solver = get_meta_solver(meta_solver)
        self.meta_solver.check_fits(self.game.num_players(), _constant_sum(self.game))
        if oracle not in ORACLES:
            raise ValueError(f"oracle must be one of {list(ORACLES)}; got {oracle!r}.")
        if evaluator not in EVALUATORS:
            raise ValueError(f"evaluator must be one of {sorted(EVALUATORS)}; got {evaluator!r}.")
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise TypeError(f"seed must be an int; got {seed!r}.")
        self.oracle_name, self.evaluator_name, self.seed, self.progress = oracle, evaluator, int(seed), progress
        self.rng = np.random.default_rng(seed)

        start = time.perf_counter()
        self.tree = build_game_tree(self.game)
        self.oracle = make_oracle(oracle, self.tree)
        self.evaluator = make_evaluator(evaluator, self.tree)
        self.setup_time = time.perf_counter() - start

        n = self.tree.num_players
        self.populations = [Population(info) for info in self.tree.infostates]
        self.meta_game = EmpiricalGame((0,) * n)
        self.meta_strategy = None   # solvers.Equilibrium of the latest meta-game
        self.gap = math.nan
        self.iteration = -1          # becomes 0 once the initial population is evaluated
        self.evaluations = 0
        self._responses = [uniform_policy(info) for info in self.tree.infostates]
        self._response_values = [math.nan] * n
        self._rows: list = []
        self._wall = 0.0
        self._cpu = 0.0

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
            Stop once the NashConv is at most this.
        time_limit : float, optional
            Stop once this call has run this many wall-clock seconds.
        progress : bool, optional
            Override the constructor's ``progress``.
        callback : callable, optional
            Called with each new history row (a dict).

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
        bar = tqdm(total=iterations, disable=not show, desc="PSRO", unit="it")
        wall0, cpu0 = time.perf_counter() - self._wall, time.process_time() - self._cpu
        started = time.perf_counter()
        done = 0
        try:
            if self.iteration < 0:
                self._record(self._step(), wall0, cpu0, callback)
            while True:
                if target_gap is not None and self.gap <= target_gap:
                    break
                if iterations is not None and done >= iterations:
                    break
                if time_limit is not None and time.perf_counter() - started >= time_limit:
                    break
                self._record(self._step(), wall0, cpu0, callback)
                done += 1
                bar.update(1)
                bar.set_postfix(gap=f"{self.gap:.3g}", refresh=False)
        finally:
            bar.close()
        return self.history

    def _step(self) -> dict:
        """One iteration: add the pending responses, evaluate, meta-solve, respond. Returns phase times."""
        times = dict.fromkeys(PHASES, 0.0)
        self.iteration += 1
        t = self.iteration

        # 1. the responses computed at the end of the last step join the populations (oracle time)
        start = time.perf_counter()
        old = [len(pop) for pop in self.populations]
        for pop, policy, value in zip(self.populations, self._responses, self._response_values):
            if t == 0:
                source = Provenance(t, "initial")
            else:
                source = Provenance(t, self.oracle_name, self.meta_solver.name, value)
            pop.add(policy, source)
        new = [len(pop) for pop in self.populations]
        times["oracle"] = time.perf_counter() - start

        # 2. the meta-game grows and only the new profiles are evaluated
        start = time.perf_counter()
        for p in range(len(new)):
            self.meta_game.grow(p)
        for index in new_profile_blocks(old, new):
            _set_exact_block(self.meta_game, index, self.evaluator.evaluate(self.populations, index))
            self.evaluations += math.prod(len(ix) for ix in index)
        times["evaluation"] = time.perf_counter() - start

        # 3. meta-solve
        start = time.perf_counter()
        self.meta_strategy = self.meta_solver(self.meta_game.mean_game())
        times["meta_solve"] = time.perf_counter() - start

        # 4. best responses to the meta-strategy: next step's new policies, and this step's metric
        start = time.perf_counter()
        plans = [np.asarray(w) @ pop.plans for w, pop in zip(self.meta_strategy.marginals, self.populations)]
        policies = None
        if self.oracle_name == "openspiel":
            policies = [behaviour_from_plan(x, pop.infostates) for x, pop in zip(plans, self.populations)]
        responses = [self.oracle(p, plans, policies) for p in range(len(plans))]
        times["oracle"] += time.perf_counter() - start

        start = time.perf_counter()
        self._responses = [br.policy for br in responses]
        self._response_values = [br.value for br in responses]
        self.gap = float(sum(self._response_values) - np.sum(self.meta_strategy.values))
        times["metric"] = time.perf_counter() - start
        return times

    def _record(self, times: dict, wall0: float, cpu0: float, callback) -> None:
        self._wall = time.perf_counter() - wall0
        self._cpu = time.process_time() - cpu0
        row = {"iteration": self.iteration, "gap": self.gap}
        row.update({f"population_{p}": len(pop) for p, pop in enumerate(self.populations)})
        row.update({f"time_{k}": v for k, v in times.items()})
        row.update(wall_time=self._wall, cpu_time=self._cpu, evaluations=self.evaluations)
        self._rows.append(row)
        logger.info("iteration %d: gap %.3e, populations %s, %.2fs", self.iteration, self.gap,
                    [len(p) for p in self.populations], self._wall)
        if callback is not None:
            callback(row)

    # ----------------------------------------------------------------- results
    @property
    def history(self) -> pd.DataFrame:
        """One row per iteration; see :data:`HISTORY_COLUMNS` (plus ``population_<p>`` per player)."""
        n = self.tree.num_players
        columns = ["iteration", "gap", *(f"population_{p}" for p in range(n)), *HISTORY_COLUMNS[2:]]
        return pd.DataFrame(self._rows, columns=columns)

    def aggregate_policies(self) -> list:
        """Each player's population mixed with its current meta-strategy, as one behaviour policy ``(I, A)``."""
        if self.meta_strategy is None:
            raise ValueError("run() has not evaluated any population yet; call run() first.")
        return [pop.aggregate(w) for pop, w in zip(self.populations, self.meta_strategy.marginals)]


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


def _set_exact_block(meta_game: EmpiricalGame, index, values: np.ndarray) -> None:
    """Record exact payoffs for a block of profiles at once (``set_exact`` for each, without the loop)."""
    ix = np.ix_(*[np.asarray(i, dtype=np.intp) for i in index])
    if not np.all(np.isfinite(values)):
        raise ValueError("the evaluator returned non-finite payoffs.")
    for p in range(meta_game.num_players):
        meta_game.count[p][ix] = 1.0
        meta_game.total[p][ix] = values[p]
        meta_game.total_sq[p][ix] = values[p] ** 2
    meta_game.exact[ix] = True
