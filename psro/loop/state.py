"""Everything a PSRO run has done so far, apart from the loop that does it: :class:`LoopState`.

The loop (:class:`psro.PSRO`) reads and replaces this state; a checkpoint
(:mod:`psro.run.checkpoint`) saves ``(options, state)`` and a resumed run is
``PSRO`` of those options given that state, so nothing outside the loop
touches its private attributes.
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import asdict, dataclass, field, fields

import numpy as np

from games.empirical import EmpiricalGame
from psro.evaluation.top_up import TopUpProgress
from psro.policies import uniform_policy
from psro.policies.population import PolicyPopulation, Population

__all__ = ["LoopState", "LoopExtra", "RolesExtra", "STATE_FIELDS", "HISTORY_COLUMNS", "EpisodeCounter", "time_columns",
           "untimed"]


@dataclass
class LoopExtra:
    """A training loop's own state beyond :class:`LoopState` (none for PSRO): each loop that keeps some (roles,
    win rates, step counters) subclasses it with typed fields of JSON values (numbers, strings, lists, dicts),
    names it as its ``Extra`` and finds it in ``state.extra``; the checkpoint saves it as its ``"extra"``
    (:meth:`to_document`) and a resumed run reads it back (:meth:`from_document`).

    Examples
    --------
    >>> from dataclasses import dataclass, field
    >>> @dataclass
    ... class Counted(LoopExtra):
    ...     counts: dict = field(default_factory=dict)
    ...     steps: int = 0
    >>> saved = Counted({1: 2}, steps=5).to_document()
    >>> saved, Counted.from_document(saved)   # (JSON: integer keys come back as strings, as from the file)
    ({'counts': {'1': 2}, 'steps': 5}, Counted(counts={'1': 2}, steps=5))
    >>> Counted.from_document({"stepz": 5})
    Traceback (most recent call last):
    ...
    ValueError: the checkpoint's extra state has field(s) ['stepz'] that Counted does not know (its fields: ...
    """

    def to_document(self) -> dict:
        """The fields as the checkpoint's JSON holds them (a copy)."""
        return json.loads(json.dumps(asdict(self)))

    @classmethod
    def from_document(cls, document: dict) -> "LoopExtra":
        """The state a checkpoint's ``"extra"`` holds (a copy; a field it lacks, as in older checkpoints, keeps
        its default)."""
        known = [f.name for f in fields(cls)]
        unknown = sorted(set(document) - set(known))
        if unknown:
            raise ValueError(f"the checkpoint's extra state has field(s) {unknown} that {cls.__name__} does not "
                             f"know (its fields: {known}); was it written by another training loop?")
        return cls(**copy.deepcopy(document))


@dataclass
class RolesExtra(LoopExtra):
    """The state of a loop whose members have roles (FXP's ``main`` and ``counter``, self-play PSRO's
    ``best_response`` and ``self_play``): each player's members' roles, and those of the policies waiting to
    join (``pending_roles``; None: every waiting policy is ``initial``).

    Examples
    --------
    >>> extra = RolesExtra()
    >>> extra.join([[0], [0]])   # (each player's waiting policies: the uniform one)
    >>> extra.pending_roles = [["main", "counter"], ["main", "counter"]]
    >>> extra.join([[1, 2], [1, 2]])
    >>> extra.of(0), extra.pending_roles
    (['initial', 'main', 'counter'], None)
    """

    roles: list = field(default_factory=list)
    pending_roles: list | None = None

    def of(self, player: int) -> list:
        """The roles of ``player``'s members (none before the first join)."""
        return list(self.roles[player]) if self.roles else []

    def join(self, pending: list) -> None:
        """The roles of the waiting policies (``pending``: each player's) join those of the members."""
        if not self.roles:
            self.roles = [[] for _ in pending]
        for p, joining in enumerate(self.pending_roles or [["initial"] * len(waiting) for waiting in pending]):
            self.roles[p].extend(joining)
        self.pending_roles = None


@dataclass(eq=False)
class LoopState:
    """The state of a PSRO run between (or within) iterations.

    Attributes
    ----------
    populations : list of Population or list of PolicyPopulation
        One per player: tabular arrays (exact oracles), or policy objects (learned oracles).
    meta_game : games.EmpiricalGame
        The evaluated meta-game (exact or sampled entries).
    pending : list of list of (policy, float)
        Per player, the ``(policy, value)`` best responses that join at the next step (at first: the uniform
        policy, value NaN).
    rng : numpy.random.Generator
        The run's generator (``update_players="random"``).
    iteration : int
        -1 before the initial population is evaluated, then the number of iterations done.
    in_iteration : bool
        True between the new policies joining and the end of the step (a checkpoint written by an evaluation
        hook resumes the step there).
    sizes_before : list of int
        Population sizes before the policies of the current step joined.
    meta_strategy, eval_meta_strategy : solvers.Equilibrium or None
        The latest meta-game solutions of the training and the evaluation meta-solver.
    gap, train_gap : float
        Their gaps in the full game (NaN before the first measurement).
    evaluations : int
        Meta-game profiles evaluated so far.
    rows : list of dict
        The history rows (see :data:`HISTORY_COLUMNS`).
    wall, cpu : float
        Wall-clock and CPU seconds of ``run`` calls so far.
    env_steps : int
        Environment decisions the run's oracles trained on so far (0 for exact oracles).
    measure_episodes : int
        Episodes played so far to measure rather than to fill the meta-game: the learned responses' evaluation
        (and the uniform policy's beside it), ``approx_gap``, a loop's own games (League's win rates), reference
        opponents; :meth:`eval_episodes` adds the meta-game's.
    top_up : psro.evaluation.TopUpProgress
        Where the Monte Carlo top-up of the current iteration stands.
    extra : LoopExtra
        A training loop's own state beyond PSRO's (roles, win rates, step counters): an instance of the loop's
        ``Extra`` (a :class:`LoopExtra`), saved in the checkpoint and restored with it.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> state = LoopState.initial(build_game_tree(pyspiel.load_game("kuhn_poker")), seed=0)
    >>> state.iteration, [len(p) for p in state.pending], state.meta_game.shape
    (-1, [1, 1], (0, 0))
    """

    populations: list
    meta_game: EmpiricalGame
    pending: list
    rng: np.random.Generator
    iteration: int = -1
    in_iteration: bool = False
    sizes_before: list = field(default_factory=list)
    meta_strategy: object = None
    eval_meta_strategy: object = None
    gap: float = math.nan
    train_gap: float = math.nan
    evaluations: int = 0
    rows: list = field(default_factory=list)
    wall: float = 0.0
    cpu: float = 0.0
    env_steps: int = 0
    measure_episodes: int = 0
    top_up: TopUpProgress = field(default_factory=TopUpProgress)
    extra: LoopExtra = field(default_factory=LoopExtra)

    def meta_game_episodes(self) -> int:
        """Episodes recorded in the sampled entries of the meta-game (evaluation and top-up; 0 when exact); in a
        symmetric run (one population, every seat) only those of the profiles evaluated, not of their mirrors."""
        counted = ~self.meta_game.exact
        if len(self.populations) == 1 < self.meta_game.num_players and counted.any():
            from psro.loop.seating import evaluated_profiles

            generations = [p.iteration for p in self.populations[0].provenance]
            counted = counted & evaluated_profiles(generations, self.meta_game.num_players)
        return int(self.meta_game.count[0][counted].sum())

    def eval_episodes(self) -> int:
        """Episodes spent so far on the meta-game and on measurement (:attr:`measure_episodes`)."""
        return self.meta_game_episodes() + int(self.measure_episodes)

    @classmethod
    def initial(cls, tree, seed: int, extra: LoopExtra | None = None) -> "LoopState":
        """The state before the first step: empty tabular populations, each waiting for its uniform policy (and
        ``extra``, the loop's own state, at its start)."""
        return cls(populations=[Population(info) for info in tree.infostates],
                   meta_game=EmpiricalGame((0,) * tree.num_players),
                   pending=[[(uniform_policy(info), math.nan)] for info in tree.infostates],
                   rng=np.random.default_rng(seed), sizes_before=[0] * tree.num_players,
                   extra=LoopExtra() if extra is None else extra)

    @classmethod
    def of_policies(cls, num_players: int, num_actions: int, seed: int,
                    extra: LoopExtra | None = None) -> "LoopState":
        """The state before the first step of a run whose populations hold policy objects (a learned oracle, on a
        game of any size): empty :class:`psro.policies.population.PolicyPopulation`, each waiting for a
        :class:`psro.policies.acting.UniformPolicy`.

        Examples
        --------
        >>> state = LoopState.of_policies(2, 3, seed=0)
        >>> [len(p) for p in state.populations], type(state.pending[0][0][0]).__name__
        ([0, 0], 'UniformPolicy')
        """
        from psro.policies.acting import UniformPolicy

        return cls(populations=[PolicyPopulation(p, num_actions) for p in range(num_players)],
                   meta_game=EmpiricalGame((0,) * num_players),
                   pending=[[(UniformPolicy(num_actions), math.nan)] for _ in range(num_players)],
                   rng=np.random.default_rng(seed), sizes_before=[0] * num_players,
                   extra=LoopExtra() if extra is None else extra)


class EpisodeCounter:
    """Counts the episodes a measurement plays: wrap its ``play`` (``play(game, policies, count, seed) ->
    returns``, default :func:`psro.evaluation.env_play.paired_returns`, what the approximate gap plays) and pass
    each learned response through :meth:`response` (its training and evaluation episodes count too).

    Examples
    --------
    >>> import numpy as np
    >>> counter = EpisodeCounter(lambda game, policies, count, seed: np.zeros((count, 2)))
    >>> counter.play(None, [None, None], 30, 0).shape, counter.episodes
    ((30, 2), 30)
    """

    def __init__(self, play=None):
        self._play, self.episodes = play, 0

    def play(self, game, policies, count, seed):
        if self._play is None:
            from psro.evaluation.env_play import paired_returns

            self._play = paired_returns
        returns = self._play(game, policies, count, seed)
        self.episodes += len(returns)
        return returns

    def response(self, response):
        """``response``, its episodes counted (training and evaluation)."""
        self.episodes += int(getattr(response, "training_episodes", 0)) + int(getattr(response, "eval_episodes", 0))
        return response


#: The state fields every training loop shows as its own properties (``solver.gap``, ...;
#: :class:`psro.loop.training.TrainingLoop`).
STATE_FIELDS = ("populations", "meta_game", "rng", "iteration", "in_iteration", "meta_strategy",
                "eval_meta_strategy", "gap", "train_gap", "evaluations")

#: The columns of :attr:`psro.PSRO.history`, one row per iteration (:attr:`LoopState.rows`).
HISTORY_COLUMNS = (
    "iteration",        # 0 for the initial population
    "gap",              # the eval meta-strategy's gap in the full game: NashConv (PSRO), CCE or CE gap (JPSRO)
    "train_gap",        # the same measure for the training meta-strategy (equal to gap when the solvers agree)
    # "population_<p>"  # population size of each player (inserted per player; symmetric runs: population_0 only)
    "time_meta_solve",  # seconds in each phase during this iteration
    "time_oracle",
    "time_evaluation",
    "time_metric",
    "wall_time",        # cumulative wall-clock seconds of run() calls
    "cpu_time",         # cumulative CPU seconds of this process during run() calls
    "evaluations",      # cumulative number of evaluated meta-game profiles
    "top_up_episodes",  # episodes the Monte Carlo top-up played in this iteration (0 when off)
    "episodes",         # cumulative episodes recorded in the meta-game (evaluation and top-up; 0 when exact)
    "env_steps",        # cumulative environment decisions the run's oracles (or learners) trained on (0 when exact)
    "eval_episodes",    # cumulative episodes spent on the meta-game and on measurement (responses' values, approx_gap,
                        #   a loop's own games, reference opponents)
    "efce_gap",         # JPSRO with extensive_form_gaps: the eval meta-strategy's EFCE gap in the full game (else NaN)
    "efcce_gap",        # ... and its EFCCE gap
    "approx_gap",       # a lower bound of the same measure from learned best responses and sampled play
                        #   (psro.measures.approximate_gap): on approx_gap_every's schedule and the last row of
                        #   each run() call
    "approx_gap_stderr",  # its Monte Carlo standard error
    "approx_gap_time",  # seconds spent measuring approx_gap on this row (0 when it was not measured)
    "meta_gap",         # the eval meta-strategy's regret in the empirical meta-game (NashConv, CCE or CE gap)
    "response_ok",      # False when a learned response of this iteration was worth less than the uniform policy
                        #   against its target (recorded with the oracle option on_bad_response: warn); else True
)


def time_columns(columns) -> list:
    """The columns among ``columns`` that hold seconds (``time_*``, ``*_time``): the only ones of a history that
    differ between two runs of one config and seed, so comparisons of runs leave them out.

    Examples
    --------
    >>> time_columns(["iteration", "gap", "time_oracle", "wall_time", "cpu_time", "exact_gap_time", "episodes"])
    ['time_oracle', 'wall_time', 'cpu_time', 'exact_gap_time']
    """
    return [c for c in columns if c.startswith("time_") or c.endswith("_time")]


def untimed(history):
    """``history`` (a :class:`pandas.DataFrame`) without its :func:`time_columns`: what two runs of one config and
    seed must hold equal.

    Examples
    --------
    >>> import pandas as pd
    >>> untimed(pd.DataFrame({"gap": [0.5], "wall_time": [1.2], "time_oracle": [0.3]})).columns.tolist()
    ['gap']
    """
    return history.drop(columns=time_columns(history.columns))
