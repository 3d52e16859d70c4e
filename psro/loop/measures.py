"""What a PSRO loop measures and outputs, apart from the loop's phases: :class:`LoopMeasures`, and the loop's helpers.

:class:`psro.loop.PSRO` inherits these: the meta-strategy's gap in the full game with exact best responses
(NashConv, CCE or CE gap; neural members tabularised once each, a sampled run's on-policy values exact too), its
regret in the empirical meta-game (``meta_gap``), the approximate gap from fresh learned best responses
(:mod:`psro.measures.approximate_gap`), the results against ``reference_opponents``
(:mod:`psro.measures.reference_opponents`),
and the outputs ``aggregate_policies`` / ``openspiel_policy``. Beside it: :func:`needed_tree` (the game tree, only
when something needs it), :func:`is_exact`, :func:`utility_range` and :func:`learner_failures`.

Examples
--------
>>> from psro import PSRO
>>> solver = PSRO("kuhn_poker", progress=False)
>>> _ = solver.run(iterations=1)
>>> isinstance(solver, LoopMeasures), solver.history["meta_gap"].tolist()
(True, [0.0, 0.0])
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import time

import numpy as np

from games.empirical import EmpiricalGame
from games.executors import TaskError
from psro.config.model import is_environment_game
from psro.errors import ConfigError, LearnerDiverged, with_field
from psro.evaluation import SequenceFormEvaluator, evaluator_capabilities
from psro.evaluation.base import new_profile_blocks
from psro.loop.seating import SeparateSeats
from psro.loop.state import EpisodeCounter
from psro.measures.approx_gap_schedule import approx_gap_due, approx_gap_mode, expected_episodes, measured_seconds
from psro.measures.approx_gap_settings import approx_gap_settings, unvalued
from psro.measures.approximate_gap import measure_with_oracle, responder_seed
from psro.measures.metrics import gap_from_responses
from psro.meta.targets import meta_targets
from psro.oracles import make_oracle, oracle_capabilities
from psro.policies.openspiel import members_policy
from psro.policies.population import PolicyPopulation
from psro.sequence_form.game_tree import TreeTooLarge, build_game_tree
from solvers import cce_gap, ce_gap, nash_conv

__all__ = ["LoopMeasures", "needed_tree", "is_exact", "utility_range", "learner_failures", "same_target"]

logger = logging.getLogger(__name__)


class LoopMeasures:
    """The measurements of :class:`psro.loop.PSRO` (module docstring); they read the loop's ``state``, ``tree``,
    ``config``, ``kind``, ``evaluator``, ``metric_oracle`` and ``learned``."""

    _exact_meta = None   # (EmpiricalGame, sizes, evaluator): exact payoffs of tabularised members, for the gap
    seating = SeparateSeats()   # which population each seat plays from (psro.loop.seating); the loop sets its own

    def seat_populations(self, populations=None) -> list:
        """The population each seat plays from (of ``populations``, by default the state's): one per player; in a
        symmetric run (``symmetric=True``) the one population in every seat (:mod:`psro.loop.seating`)."""
        return self.seating.populations(self.state.populations if populations is None else populations)

    def _measures_exact_gap(self) -> bool:
        return self.tree is not None and self.config.exact_gap is not False

    def _measured_tree(self, config) -> tuple:
        """The run's game tree (:func:`needed_tree`) and, where there is none and ``exact_gap`` is true, the board
        whose exact gap the compiled evaluator measures (phantom tic-tac-toe, dark hex), else None."""
        tree = needed_tree(self.game, config, self.learned)
        board = compiled_board(self.game) if tree is None and config.exact_gap is True else None
        if board is not None and self.kind != "product":
            raise ConfigError("exact_gap", f"on {self.game} the compiled evaluator measures the NashConv of a product "
                              f"meta-strategy (PSRO); this run's is a joint one ({self.kind}). Use a product "
                              "meta-solver, or exact_gap: auto.")
        return tree, board

    def _response_error_columns(self) -> list:
        """``response_error_<p>`` per player where learned responses are measured exactly (a learned oracle and the
        game tree, or the compiled evaluator of ``exact_gap``): the exact best response's value against the
        response's target minus the response's exact value, the mean over the player's responses of the row's
        step (those that join the populations at the next iteration; NaN for joint targets, and with the compiled
        evaluator on the rows whose exact gap it does not measure)."""
        measured = self.learned and (self.tree is not None or self._compiled_board is not None) and not self.is_jpsro
        return [f"response_error_{p}" for p in range(len(self.state.populations))] if measured else []

    def _response_error_row(self) -> dict:
        if self._compiled_board is not None:
            measured = self._compiled_errors if self._compiled_errors[0] == self.state.iteration else (None, {})
            return {column: measured[1].get(column, math.nan) for column in self._response_error_columns()}
        responses = getattr(self, "_response_errors", None) or []
        return {column: float(np.mean([getattr(br, "exact_error", math.nan) for br in responses[p]]))
                if p < len(responses) and responses[p] else math.nan
                for p, column in enumerate(self._response_error_columns())}

    #: ``(iteration, {response_error_<p>: error})`` of the compiled evaluator's latest measurement
    _compiled_errors = (None, {})

    def _compiled_columns(self) -> list:
        """``exact_gap_time`` where the compiled evaluator measures the gap (seconds; 0 on rows it skips)."""
        return ["exact_gap_time"] if self._compiled_board is not None else []

    def _compiled_gap_row(self, row: dict, due: bool = False) -> dict:
        """On a run whose gap the compiled evaluator measures: the row's ``gap``, ``train_gap`` and
        ``exact_gap_time`` at iterations ``k, 2k, ...`` of ``exact_gap_every`` (row 0 too when ``k`` is 1) or when
        ``due``, their seconds added to its ``time_metric`` (and so to ``wall_time``), with the step's
        ``response_error_<p>`` measured in the same evaluation; else nothing."""
        if self._compiled_board is None:
            return {}
        every, t = self.config.exact_gap_every, self.state.iteration
        if not (due or every == 1 or (t > 0 and t % every == 0)):
            return {"exact_gap_time": 0.0}
        seconds = self._measure_compiled_gap()
        return {"gap": self.state.gap, "train_gap": self.state.train_gap, "time_metric": row["time_metric"] + seconds,
                "exact_gap_time": row.get("exact_gap_time", 0.0) + seconds, **self._response_error_row()}

    def _finish_compiled_gap(self) -> bool:
        """The last row of a run call always has its exact gap where the compiled evaluator measures it."""
        rows = self.state.rows
        if not rows or self._compiled_board is None or not math.isnan(rows[-1]["gap"]):
            return False
        rows[-1].update(self._compiled_gap_row(rows[-1], due=True))
        return True

    def _measure_compiled_gap(self) -> float:
        """``state.gap`` and ``state.train_gap`` from the compiled evaluator (:func:`psro.exact_nash_conv`): the
        NashConv of each seat's population mixed by its meta-strategy marginal, and the exact errors of the step's
        learned responses against their targets (in the same evaluation where a target is a measured
        meta-strategy's); returns the seconds it took."""
        from psro.measures.exact import exact_nash_conv, mixture_profile

        state, start = self.state, time.perf_counter()
        asked = self._responses_by_target()
        gaps, errors = {}, [[] for _ in state.populations]

        def measure(populations, marginals, responses) -> float:
            result = exact_nash_conv(self.game, mixture_profile(populations, marginals), responses=responses)
            for p, found in enumerate(result.response_errors):
                errors[p] += found
            return result.nash_conv

        for name, strategy in (("gap", state.eval_meta_strategy), ("train_gap", state.meta_strategy)):
            key = _mixtures_key(strategy.marginals)
            if key not in gaps:
                gaps[key] = measure(self.seat_populations(), strategy.marginals, asked.pop(key, ([], None))[0])
            setattr(state, name, gaps[key])
        for responses, target in asked.values():   # (targets no measured meta-strategy's: a variant's own)
            measure(target.populations, target.mixtures, responses)
        self._compiled_errors = (state.iteration, {f"response_error_{p}": float(np.mean(e))
                                                   for p, e in enumerate(errors) if e})
        return time.perf_counter() - start

    def _responses_by_target(self) -> dict:
        """The policies of this step's learned responses grouped by their product target's mixtures:
        ``{key: (responses per player, a target)}`` (empty unless ``response_error_<p>`` is a column)."""
        grouped = {}
        if not self._response_error_columns() or self._answered is None \
                or self._answered[0] != self.state.iteration:
            return grouped
        _, targets, responses = self._answered
        for p, (player_targets, player_responses) in enumerate(zip(targets, responses)):
            for target, response in zip(player_targets, player_responses):
                if getattr(target, "mixtures", None) is None or getattr(response, "policy", None) is None:
                    continue   # (a joint target: NaN)
                entry = grouped.setdefault(_mixtures_key(target.mixtures),
                                           ([[] for _ in targets], target))
                entry[0][p].append(response.policy)
        return grouped

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
        return self.seat_populations([pop.tabular(self.tree) if isinstance(pop, PolicyPopulation) else pop
                                      for pop in self.state.populations])

    def _exact_payoffs(self, populations) -> np.ndarray:
        """Exact meta-game payoffs of the (tabularised) populations, for the gap of a sampled run: kept apart from
        the sampled meta-game and grown block by block like it. A resumed run rebuilds them through the same blocks
        as the run before it (the sizes its history rows record), so its gaps equal the uninterrupted run's bit for
        bit (a block's products depend on its shape in the last digit)."""
        if self._exact_meta is None:
            self._exact_meta = (EmpiricalGame((0,) * self.num_players), [0] * self.num_players,
                                SequenceFormEvaluator(self.tree))
            for row in self.state.rows:   # (every row measured its gap: exact_gap and the tree do not change)
                self._grow_exact_payoffs(populations, self._row_sizes(row))
        self._grow_exact_payoffs(populations, [len(pop) for pop in populations])
        return self._exact_meta[0].mean_game().payoffs

    def _row_sizes(self, row: dict) -> list:
        """The seats' population sizes a history row records (a symmetric run's one population in every seat)."""
        return [int(row[f"population_{p if len(self.state.populations) > 1 else 0}"])
                for p in range(self.num_players)]

    def _grow_exact_payoffs(self, populations, sizes: list) -> None:
        game, have, evaluator = self._exact_meta
        for p, (k, h) in enumerate(zip(sizes, have)):
            if k > h:
                game.grow(p, k - h)
        for index in new_profile_blocks(have, sizes):
            evaluator.evaluate(populations, index, meta_game=game)
        have[:] = [max(k, h) for k, h in zip(sizes, have)]

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
        return self._measures_approx_gap() and all(isinstance(pop, PolicyPopulation) and not any(
            isinstance(member, np.ndarray) for member in pop.policies) for pop in self.state.populations)

    def _approx_gap(self, final: bool = False, times: dict | None = None) -> dict:
        """The ``approx_gap`` (a lower bound of the exact gap up to its sampling error) and ``approx_gap_stderr`` of
        the current eval meta-strategy (:func:`psro.measures.approximate_gap.measure_with_oracle`): the best of the best
        member, the step's own learned response to the same target (:meth:`_step_response`) and, where
        ``approx_gap_options``' ``train`` asks and its ``share`` of the wall time allows
        (:func:`psro.measures.approx_gap_schedule.approx_gap_mode`), a fresh and a warm-started learned response per
        target (as
        its ``fresh`` and ``warm_start`` ask) with its budget (by default the run's oracle's), its cost in
        ``approx_gap_time``. A row the share leaves unmeasured (never the ``final`` one) gets NaN; ``times`` are the
        phases' seconds of the step just done (not yet in the history)."""
        start = time.perf_counter()
        if self._approx_gap_oracle is None:
            self._approx_gap_oracle = self._approx_oracle()
        oracle, settings = self._approx_gap_oracle
        train = settings["train"]
        if train == "auto" and settings["oracle"] not in (None, self.oracle_name):
            train = True   # (an oracle of its own is named to be used)
        train = self._affordable(train, settings, oracle, final, times or {})
        if train is None:
            self.skip_by_share(settings["share"])
            return {"approx_gap": math.nan, "approx_gap_stderr": math.nan, "approx_gap_time": 0.0}
        low, high = utility_range(self.game, self.num_players)
        counter = EpisodeCounter()
        result = measure_with_oracle(self.game, self.kind, self.state.eval_meta_strategy, self.seat_populations(),
                                     oracle, settings, seed=self.seed, iteration=self.state.iteration,
                                     payoffs=self.state.meta_game.mean_game().payoffs, counter=counter,
                                     ready=self._step_response, train=train, payoff_range=float(high[0] - low[0]))
        self.state.measure_episodes += counter.episodes
        seconds = time.perf_counter() - start
        self._approx_costs = {**(self._approx_costs or {}), "untrained" if train is False else "trained": seconds}
        if final and settings["share"] is not None:
            self._warn_over_share(settings["share"], seconds)
        return {"approx_gap": result.gap, "approx_gap_stderr": result.stderr, "approx_gap_time": seconds}

    def _warn_over_share(self, share: float, last: float) -> None:
        """A warning naming the options when the last row (always measured) took measuring over its share."""
        spent = measured_seconds(self.state.rows) + last
        if spent > share * (self.state.wall + last):
            logger.warning("approx_gap took %.0f%% of the run's wall time, more than approx_gap_options' share "
                           "(%g): the last row, always measured with its fresh responses, took %.1f s of it. Lower "
                           "approx_gap_options' total_steps, episodes or max_episodes, set its warm_start or fresh "
                           "to false, its train to 'auto' or its stderr_target to null, or raise its share.",
                           100 * spent / (self.state.wall + last), share, last)

    def _affordable(self, train, settings: dict, oracle, final: bool, times: dict):
        """``train`` as :func:`psro.measures.approx_gap_schedule.approx_gap_mode` allows it under ``share``: the costs
        are those of the latest measurement of each kind, or before one, its episodes
        (:func:`psro.measures.approx_gap_schedule.expected_episodes`) at the evaluation's seconds per episode and the
        fresh responses' steps at the run's own seconds per training step (another oracle's steps: unknown, so free
        until its first measurement)."""
        rows = self.state.rows
        spent = measured_seconds(self.state.rows)
        costs = self._approx_costs or {}

        def per_unit(phase: str, units: int) -> float:
            seconds = sum(r.get(f"time_{phase}", 0.0) for r in rows) + times.get(phase, 0.0)
            return seconds / units if units else 0.0

        per_episode = per_unit("evaluation", self.state.meta_game_episodes())
        responses = int(settings["fresh"]) + int(settings["warm_start"])
        untrained = costs.get("untrained")
        if untrained is None:   # (the best member and the step's response, each with its greedy variant)
            untrained = per_episode * expected_episodes(self.num_players, 3, settings["selection_episodes"]
                                                        or settings["episodes"], settings["episodes"])
        trained = costs.get("trained")
        if trained is None:
            steps = getattr(getattr(oracle, "config", None), "total_steps", 0)
            played = expected_episodes(self.num_players, 3 + 2 * responses, settings["selection_episodes"]
                                       or settings["episodes"], settings["episodes"])
            # (the run's seconds per training step price the responses of the run's own oracle; another oracle's,
            # such as model_br's cheap table against PPO's steps, are unknown until its first measurement)
            per_step = (0.0 if settings["responder"] != self.oracle_name else
                        per_unit("oracle", self.state.env_steps) if self.state.env_steps else math.inf)
            trained = per_episode * played + self.num_players * responses * steps * per_step
        return approx_gap_mode(train, settings["share"], spent=spent, other=max(self.state.wall - spent, 0.0),
                               trained_cost=trained, untrained_cost=untrained, final=final)

    #: The seconds of the latest measurement of the approximate gap with and without fresh training (``"trained"``,
    #: ``"untrained"``), while the run is in memory
    _approx_costs = None

    #: ``(iteration, targets, responses)`` of the latest respond phase (PSRO.step), while the run is in memory
    _answered = None

    def _step_response(self, player: int, index: int, target):
        """The policy of this iteration's own learned response to ``target`` (``player``'s target ``index``), when
        the respond phase answered exactly that target (the same meta-strategy: ``eval_meta_solver`` is the
        meta-solver and the loop's targets are the meta-strategy's); else None."""
        if self._answered is None or self._answered[0] != self.state.iteration:
            return None
        _, targets, responses = self._answered
        if player >= len(targets) or index >= len(targets[player]) or index >= len(responses[player]) \
                or not same_target(targets[player][index], target):
            return None
        return getattr(responses[player][index], "policy", None)

    def _measures_approx_gap(self) -> bool:
        """Whether this run can measure the approximate gap at all: a learned run whose approximate-gap oracle
        plays without the game tree (a learned oracle whose factory needs the tree cannot answer there), unless
        ``approx_gap_every`` is None."""
        if not self.learned or self.config.approx_gap_every is None:
            return False
        settings, _ = approx_gap_settings(self.config.oracle_settings(), self.config.approx_gap_options,
                                          self.oracle_name)
        return not oracle_capabilities(settings["responder"]).needs_tree

    def _approx_oracle(self) -> tuple:
        """``(oracle, settings)`` of the approximate gap
        (:func:`psro.measures.approx_gap_settings.approx_gap_settings`)."""
        settings, options = approx_gap_settings(self.config.oracle_settings(), self.config.approx_gap_options,
                                                self.oracle_name)
        oracle = with_field("approx_gap_options", make_oracle, settings["responder"], None,
                            seed=responder_seed(self.seed), game=self.game, **options)
        return unvalued(oracle, self.config.approx_gap_options), settings

    def _approx_gap_due(self, iteration: int) -> bool:
        """Whether the approximate gap is measured on row ``iteration`` (besides the last row of a run call)."""
        return self._approximates() and approx_gap_due(self.config.approx_gap_every, iteration, self.state.gap)

    def _reference_columns(self) -> list:
        """The history columns of ``reference_opponents``: ``<reference>_win_<p>`` and ``<reference>_return_<p>``."""
        return [f"{name}_{what}_{p}" for name in self.config.reference_opponents or ()
                for p in range(self.num_players) for what in ("win", "return")]

    def _reference_results(self) -> dict:
        """The eval meta-strategy against ``reference_opponents``
        (:func:`psro.measures.reference_opponents.evaluate_against`,
        seeded by the run's seed and the iteration; its episodes count as measurement)."""
        if not self.config.reference_opponents or self.state.eval_meta_strategy is None:
            return dict.fromkeys(self._reference_columns(), math.nan)
        from games.environment import ObservationGame
        from psro.measures.reference_opponents import evaluate_against

        game = self.game.game if isinstance(self.game, ObservationGame) else self.game
        seed = int(np.random.SeedSequence(self.seed, spawn_key=(self.state.iteration,)).generate_state(1)[0] >> 1)
        table = evaluate_against(game, self.seat_populations(), self.config.reference_opponents, members=False,
                                 marginals=self.state.eval_meta_strategy.marginals, tree=self.tree, seed=seed)
        self.state.measure_episodes += int(table.episodes.sum())
        return {f"{r.reference}_{what}_{r.player}": getattr(r, column) for r in table.itertuples()
                for what, column in (("win", "win"), ("return", "mean_return"))}

    def aggregate_policies(self) -> list:
        """Each population mixed with its meta-strategy marginal, as one behaviour policy ``(I, A)`` per player."""
        if self.state.meta_strategy is None:
            raise ValueError("run() has not evaluated any population yet; call run() first.")
        return [pop.aggregate(w) for pop, w in zip(self._tabular_populations(), self.state.meta_strategy.marginals)]

    def openspiel_policy(self, members=None):
        """The meta-strategy's policy (or chosen members: per player an index, or None for the aggregate) as one
        OpenSpiel ``TabularPolicy``; see :func:`psro.policies.openspiel.members_policy`.

        Examples
        --------
        >>> from open_spiel.python.algorithms import exploitability
        >>> from psro import PSRO
        >>> solver = PSRO("kuhn_poker", progress=False)
        >>> _ = solver.run(iterations=4)
        >>> bool(abs(exploitability.nash_conv(solver.game, solver.openspiel_policy()) - solver.gap) < 1e-12)
        True
        """
        aggregates = self.aggregate_policies() if members is None or None in list(members) else None
        return members_policy(self._tabular_populations(), aggregates, members, self.tree)


def compiled_board(game):
    """The :class:`psro.measures.boards.Board` of ``game`` when the compiled evaluator measures its exact gap
    (phantom tic-tac-toe, dark hex up to 3x3), else None."""
    if is_environment_game(game):
        return None
    from psro.measures.boards import board_of

    return board_of(game)


def needed_tree(game, config, learned: bool):
    """The game tree of a PSRO run when something needs it (an exact oracle, unless ``learned``; an exact
    evaluator; the exact gap) and it has at most ``max_histories`` histories; else None (with
    ``exact_gap="auto"``, said once in the log)."""
    board = compiled_board(game)
    compiled = config.exact_gap is True and board is not None
    needs = ([f"oracle={config.oracle!r}"] if not learned else []) + \
        ([f"evaluator={config.evaluator!r}"] if not evaluator_capabilities(config.evaluator).sampled else []) + \
        (["exact_gap=true"] if config.exact_gap is True and not compiled else [])
    if (not needs and (config.exact_gap is False or compiled)) or is_environment_game(game):
        return None
    try:
        return build_game_tree(game, max_histories=config.max_histories)
    except ValueError as exc:
        too_large = isinstance(exc, TreeTooLarge)
        # (the budget that stopped the walk: the histories, their estimate, or the memory)
        reason = exc.reason if too_large else str(exc).rstrip(".")
        if needs and too_large:
            raise ConfigError("max_histories", f"{reason}, and {' and '.join(needs)} needs its whole tree. Raise "
                              "max_histories, or use a learned oracle (oracle='ppo' or 'dqn') with "
                              "evaluator='monte_carlo', which needs no tree (then exact_gap='auto' measures "
                              "the exact gap only where the tree fits).") from None
        if needs:
            raise
        logger.warning("%s; exact gap off (gap = NaN; approx_gap estimates it; %s or set exact_gap=false to "
                       "silence this)", reason, "exact_gap=true measures it with the compiled evaluator (minutes a "
                       "measure; exact_gap_every spaces them)" if board is not None
                       else "raise max_histories")
        return None


def same_target(a, b) -> bool:
    """Whether two best-response targets ask the same: the same player, mixtures, or joint support and weights.

    Examples
    --------
    >>> from psro.oracles.base import Target
    >>> t = Target(player=0, populations=[], mixtures=(None, np.array([0.5, 0.5])))
    >>> same_target(t, dataclasses.replace(t)), same_target(t, dataclasses.replace(t, mixtures=(None, np.ones(2))))
    (True, False)
    """
    def equal(x, y) -> bool:
        if x is None or y is None:
            return x is None and y is None
        x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        return x.shape == y.shape and bool(np.allclose(x, y, rtol=0.0, atol=1e-12))

    mixtures = (a.mixtures is None) == (b.mixtures is None) and (a.mixtures is None or (
        len(a.mixtures) == len(b.mixtures) and all(equal(x, y) for x, y in zip(a.mixtures, b.mixtures))))
    return a.player == b.player and a.recommendation == b.recommendation and mixtures \
        and equal(a.profiles, b.profiles) and equal(a.weights, b.weights)


def is_exact(oracle) -> bool:
    """Whether ``oracle``'s responses are exact best responses (its ``exact`` attribute; else: not learned)."""
    return bool(getattr(oracle, "exact", not oracle.learned))


def utility_range(game, n: int) -> np.ndarray:
    """``(2, n)`` stand-in terminal returns (the game's utility bounds) for the zero-gain tolerances of a run
    without a tree."""
    try:
        low, high = float(game.min_utility()), float(game.max_utility())
    except (AttributeError, RuntimeError):   # (an environment may not declare them)
        low, high = -1.0, 1.0
    return np.array([[low] * n, [high] * n])


@contextlib.contextmanager
def learner_failures(on_curve=None):
    """A learned oracle that diverged or learned nothing (a :class:`psro.errors.LearnerDiverged`, also from inside
    an executor's job) ends as one ``LearnerDiverged`` naming ``oracle_options``; ``on_curve(rows)`` first gets
    the learning curve the error carries (``learner_curve``: the chunks trained before it stopped)."""
    try:
        yield
    except (ValueError, TaskError) as exc:
        error = exc.error if isinstance(exc, TaskError) else exc
        if on_curve is not None and getattr(error, "learner_curve", None):
            on_curve(error.learner_curve)
        if isinstance(error, LearnerDiverged):
            raise LearnerDiverged(f"oracle_options: {error}") from None
        raise


def _mixtures_key(mixtures) -> tuple:
    """A hashable key of per-seat mixtures (equal mixtures, equal keys)."""
    return tuple(np.asarray(m, dtype=np.float64).tobytes() for m in mixtures)
