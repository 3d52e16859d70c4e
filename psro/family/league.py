"""League training (AlphaStar, Vinyals et al. 2019) for two-player games: :class:`League`.

Each seat of the game has its own league of learning **agents**, trained by a learned oracle (``ppo``, ``dqn``)
and warm-started from their own latest weights:

* **main agents** (``main_agents`` per seat) train against a mixture of 35% self-play (the other seat's current
  main agents), 50% prioritised fictitious self-play (PFSP, weighting ``"squared"``) over every past player of
  the other seat, and 15% verification: PFSP (``"squared"``) over the other seat's main-exploiter snapshots this
  agent beats less than ``verification_win_rate`` of the time, and PFSP (``"variance"``) over the other seat's
  forgotten main-agent snapshots (those it beats less than ``forgotten_win_rate``), half each when both exist;
  an empty part's mass goes to self-play (as AlphaStar's fall-through does);
* **main exploiters** train against the other seat's current main agents; while their win rate against them is
  below ``exploiter_fallback_win_rate``, against PFSP (``"variance"``) over those agents' snapshots instead;
* **league exploiters** train against PFSP (``"capped"``) over every past player of the other seat.

A training call is one oracle response to such a mixture (the mixture's weights are the PFSP probabilities, so
the opponents of the episodes follow them). The league's **population** (what the meta-game, the CLI's alpha-Rank
and Elo and the ``gap`` see) holds, per seat, the initial uniform policy and the agents' **snapshots**: an agent's
new weights join when its win rate against its targets in this call's evaluation games reaches
``snapshot_win_rate``, or when it has trained ``snapshot_steps`` steps since its last snapshot. After a snapshot a
main exploiter always restarts from fresh weights, a league exploiter with probability
``league_exploiter_reset`` (drawn from a generator keyed by the run's seed, the iteration, the seat and the
agent); main agents never restart.

**Win rates** are win + ½ draw (a seat wins an episode when its return exceeds the other seat's) over
``win_rate_episodes`` evaluation games per agent and call, played with :func:`psro.evaluation.env_play.sample_returns`
after the training (its opponents drawn from the agent's mixture): the training runs' own episodes are not
exposed, and the meta-game holds only snapshots, not the learners. Per agent and opponent (a snapshot, or the
other seat's current learner), the decayed counts ``wins <- decay * wins + outcome``,
``games <- decay * games + 1`` (one update per game, in the order played) are kept in ``state.extra``; an opponent
without games counts as a win rate of ½. A restarted agent starts with no counts.

**Output** (the ``gap`` column, ``approx_gap`` and ``meta_gap``): the profile of the main agents' latest snapshots
(uniform over a seat's main agents), as the ``eval_meta_strategy``. The training meta-solver (``meta_solver``)
still solves the snapshots' meta-game (``train_gap``), which League's training does not use.

**Steps**: ``state.extra.learner_steps`` counts the environment steps the oracle trained on (each response's
``training_steps``); the win-rate games are evaluation, like the evaluator's episodes, and are not counted.

Like PSRO's best responses, the snapshots decided at iteration ``t`` join the population at ``t + 1``, so a
run's last calls are waiting (``state.pending``) when it stops. League needs a learned oracle, a product
meta-solver, ``update_players: all``, ``br_selection`` ``novel`` or ``all`` (every agent's response is kept) and
``warm_start: false`` (it warm-starts its agents itself); anything else is a ``ValueError`` naming the field.

Checkpoints: the learners' current weights travel as the waiting responses (``state.pending``), which the
checkpoint saves; the roles, counts, step counters and restart flags in ``state.extra``. A resumed run continues
bit for bit on the serial executor.

Examples
--------
>>> LeagueOptions.from_dict({"main_exploiters": 2}).roles()   # one seat's agents
['main', 'main_exploiter', 'main_exploiter', 'league_exploiter']
>>> pfsp_weights([0.9, 0.5], "hard").round(6).tolist()       # PFSP: the opponents it beats least, most often
[0.166667, 0.833333]

``League(...).run(iterations=...)`` then trains every agent once per iteration (tests/psro/family/test_league.py
runs it on Kuhn poker).
"""

from __future__ import annotations

import math
import typing
from dataclasses import dataclass, field

import numpy as np

from games.memory_limit import check_memory
from psro.config.model import algorithm_options
from psro.errors import ConfigError
from psro.loop.psro_loop import PSRO
from psro.loop.requirements import LoopRequirements
from psro.loop.state import LoopExtra
from psro.oracles.base import Target
from psro.oracles.jobs import PolicyList
from solvers import make_equilibrium

__all__ = ["League", "LeagueOptions", "WEIGHTINGS", "ROLES", "pfsp_weights", "decayed_update", "win_rates",
           "snapshot_rule"]

#: PFSP weightings of a win rate ``x``: ``f(x)``, normalised over the candidates.
WEIGHTINGS = {
    "hard": lambda x: 1.0 - x,
    "squared": lambda x: (1.0 - x) ** 2,
    "variance": lambda x: x * (1.0 - x),
    "capped": lambda x: np.minimum(0.5, 1.0 - x),
}

#: The agents' roles, in the order they are listed per seat.
ROLES = ("main", "main_exploiter", "league_exploiter")
#: A lower bound of the memory one agent of a seat holds (its networks, optimiser state and snapshots take more):
#: the agents a League is asked for are refused before any is made when this many bytes each pass the limit
AGENT_BYTES = 16 * 2**10



def _learned_oracle(name) -> bool:
    from psro.oracles import oracle_capabilities

    try:
        return isinstance(name, str) and oracle_capabilities(name).learned
    except ValueError:   # (not registered, nor a module:name that imports)
        return False


def pfsp_weights(rates, weighting: str = "squared") -> np.ndarray:
    """PFSP probabilities over opponents beaten with win rates ``rates``: ``f(x) / sum f(x)`` for the weighting
    ``f`` of :data:`WEIGHTINGS`; uniform when every ``f(x)`` is 0 (all beaten, or all unbeatable for
    ``"variance"``).

    Examples
    --------
    >>> pfsp_weights([0.0, 0.5, 1.0], "hard").round(6).tolist()   # (1, 0.5, 0) / 1.5
    [0.666667, 0.333333, 0.0]
    >>> pfsp_weights([0.0, 0.5], "squared").tolist()     # (1, 0.25) / 1.25
    [0.8, 0.2]
    >>> pfsp_weights([0.2, 0.5, 1.0], "variance").round(6).tolist()   # (0.16, 0.25, 0) / 0.41
    [0.390244, 0.609756, 0.0]
    >>> pfsp_weights([0.0, 0.8], "capped").round(6).tolist()      # (0.5, 0.2) / 0.7
    [0.714286, 0.285714]
    >>> pfsp_weights([1.0, 1.0], "hard").tolist()
    [0.5, 0.5]
    """
    if weighting not in WEIGHTINGS:
        raise ValueError(f"weighting must be one of {list(WEIGHTINGS)}; got {weighting!r}.")
    x = np.asarray(rates, dtype=np.float64).reshape(-1)
    if x.size == 0:
        raise ConfigError("rates", "PFSP needs at least one opponent.")
    if not np.all((x >= 0) & (x <= 1)):
        raise ValueError(f"rates must be win rates in [0, 1]; got {x.tolist()}.")
    f = np.asarray(WEIGHTINGS[weighting](x), dtype=np.float64)
    total = f.sum()
    return f / total if total > 0 else np.full(x.size, 1.0 / x.size)


def decayed_update(wins: float, games: float, outcomes, decay: float) -> tuple:
    """Decayed counts after the results ``outcomes`` (1 win, ½ draw, 0 loss) arrive in order: each result does
    ``wins <- decay * wins + outcome`` and ``games <- decay * games + 1``.

    Examples
    --------
    >>> decayed_update(0.0, 0.0, [1.0, 0.0], 0.5)   # wins 1 -> 0.5; games 1 -> 1.5
    (0.5, 1.5)
    >>> decayed_update(2.0, 4.0, [0.5], 0.9)        # 0.9 * 2 + 0.5, 0.9 * 4 + 1
    (2.3, 4.6)
    """
    o = np.asarray(outcomes, dtype=np.float64).reshape(-1)
    powers = decay ** np.arange(o.size - 1, -1, -1, dtype=np.float64)   # the i-th of k results: decay^(k-1-i)
    scale = decay ** o.size
    return float(scale * wins + powers @ o), float(scale * games + powers.sum())


def win_rates(counts: dict, keys, prior: float = 0.5) -> np.ndarray:
    """Win rates ``wins / games`` of the opponents ``keys`` from decayed ``counts`` (``key -> [wins, games]``);
    ``prior`` for an opponent without games.

    Examples
    --------
    >>> win_rates({"m0": [3.0, 4.0]}, ["m0", "m1"]).tolist()
    [0.75, 0.5]
    """
    out = []
    for key in keys:
        wins, games = counts.get(key, (0.0, 0.0))
        out.append(wins / games if games > 0 else prior)
    return np.clip(np.asarray(out, dtype=np.float64), 0.0, 1.0)


def snapshot_rule(role: str, win_rate: float, steps: int, options: "LeagueOptions", snapshot_steps: int,
                  draw: float) -> tuple:
    """``(snapshot, restart)`` of an agent after a call: it snapshots when its win rate against its targets
    reaches ``options.snapshot_win_rate`` or its ``steps`` since the last snapshot reach ``snapshot_steps``; then a
    main exploiter restarts, a league exploiter when ``draw`` (uniform in [0, 1)) is below
    ``options.league_exploiter_reset``, a main agent never.

    Examples
    --------
    >>> options = LeagueOptions()
    >>> snapshot_rule("main", 0.7, 0, options, 100, draw=0.0), snapshot_rule("main", 0.69, 99, options, 100, 0.0)
    ((True, False), (False, False))
    >>> snapshot_rule("main_exploiter", 0.1, 100, options, 100, 0.99), snapshot_rule("league_exploiter", 0.8, 0,
    ...                                                                               options, 100, 0.24)
    ((True, True), (True, True))
    >>> snapshot_rule("league_exploiter", 0.8, 0, options, 100, 0.25)
    (True, False)
    """
    if role not in ROLES:
        raise ValueError(f"role must be one of {list(ROLES)}; got {role!r}.")
    snapshot = bool(win_rate >= options.snapshot_win_rate or steps >= snapshot_steps)
    restart = snapshot and (role == "main_exploiter" or (role == "league_exploiter"
                                                         and draw < options.league_exploiter_reset))
    return snapshot, bool(restart)


def _outcomes(returns: np.ndarray, player: int) -> np.ndarray:
    """Per episode of a two-player game: 1 when ``player``'s return beats the other's, ½ on a tie, else 0."""
    mine, theirs = returns[:, player], returns[:, 1 - player]
    return np.where(mine > theirs, 1.0, np.where(mine == theirs, 0.5, 0.0))


@dataclass(frozen=True)
class LeagueOptions:
    """League training's own options (``PSROConfig.algorithm_options``); the defaults fit a laptop.

    Attributes
    ----------
    main_agents, main_exploiters, league_exploiters : int
        Agents of each role per seat (main agents >= 1, exploiters >= 0).
    self_play, pfsp : float
        A main agent's mixture: these shares of self-play and of PFSP over all past players; the rest
        (``1 - self_play - pfsp``, 0.15 by default) is verification.
    decay : float
        Per-game decay of the win-rate counts, in (0, 1].
    snapshot_win_rate : float
        An agent's new weights join the population when its win rate against its targets reaches this ...
    snapshot_steps : int, optional
        ... or when it has trained this many steps since its last snapshot (None: twice the oracle's
        ``total_steps``, i.e. every second call).
    league_exploiter_reset : float
        Probability that a league exploiter restarts from fresh weights after a snapshot.
    win_rate_episodes : int
        Evaluation games per agent and call (opponents drawn from its mixture) for its win rates.
    exploiter_fallback_win_rate : float
        A main exploiter below this win rate against the current main agents trains against their snapshots.
    verification_win_rate, forgotten_win_rate : float
        A main agent's verification opponents: main-exploiter snapshots it beats less than the first, past main
        agents it beats less than the second.
    main_exploiter_oracle : {"ppo", "dqn", "minimax_dqn"}, optional
        The main exploiters' oracle (None: the run's ``oracle``). ``minimax_dqn`` (the Minimax Exploiter) reads
        the main agents' Q-values, so it needs ``oracle: dqn``.
    main_exploiter_options : dict, optional
        Its options when it differs from the run's oracle (None: the run's ``oracle_options``).

    Examples
    --------
    >>> LeagueOptions.from_dict({"main_exploiters": 2}).main_exploiters
    2
    >>> LeagueOptions.from_dict({"main_agent": 2})
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: algorithm_options: League has no option 'main_agent'. Did you mean 'main_agents'? ...
    """

    main_agents: int = 1
    main_exploiters: int = 1
    league_exploiters: int = 1
    self_play: float = 0.35
    pfsp: float = 0.5
    decay: float = 0.99
    snapshot_win_rate: float = 0.7
    snapshot_steps: typing.Optional[int] = None
    league_exploiter_reset: float = 0.25
    win_rate_episodes: int = 100
    exploiter_fallback_win_rate: float = 0.1
    verification_win_rate: float = 0.3
    forgotten_win_rate: float = 0.7
    main_exploiter_oracle: typing.Optional[str] = None
    main_exploiter_options: typing.Optional[dict] = None

    def __post_init__(self):
        def fail(name, what):
            raise ConfigError("algorithm_options", f"{name} must be {what}; got {getattr(self, name)!r}.")

        for name, low in (("main_agents", 1), ("main_exploiters", 0), ("league_exploiters", 0),
                          ("win_rate_episodes", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
                fail(name, f"an int >= {low}")
        for name in ("self_play", "pfsp", "snapshot_win_rate", "league_exploiter_reset",
                     "exploiter_fallback_win_rate", "verification_win_rate", "forgotten_win_rate"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
                fail(name, "a number in [0, 1]")
        if not isinstance(self.decay, (int, float)) or isinstance(self.decay, bool) or not 0.0 < self.decay <= 1.0:
            fail("decay", "a number in (0, 1]")
        if self.self_play + self.pfsp > 1.0 + 1e-12:
            raise ConfigError("algorithm_options", f"self_play + pfsp must be at most 1 (the rest is verification); "
                              f"got {self.self_play} + {self.pfsp}.")
        agents = self.main_agents + self.main_exploiters + self.league_exploiters   # (refused before any is made)
        check_memory(agents * AGENT_BYTES, f"algorithm_options: main_agents + main_exploiters + league_exploiters = "
                     f"{agents} agents per seat", "Ask for fewer agents.")
        steps = self.snapshot_steps
        if steps is not None and (isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1):
            fail("snapshot_steps", "an int >= 1 or null")
        if self.main_exploiter_oracle is not None and not _learned_oracle(self.main_exploiter_oracle):
            from psro.oracles import learned_oracle_names

            fail("main_exploiter_oracle", f"a learned oracle (one of {learned_oracle_names()}) or null")
        if self.main_exploiter_options is not None and not isinstance(self.main_exploiter_options, dict):
            fail("main_exploiter_options", "a mapping or null")

    @classmethod
    def from_dict(cls, options: dict | None) -> "LeagueOptions":
        """The options of a mapping (None: the defaults); an unknown key is a ``ValueError`` naming it."""
        return algorithm_options(cls, options, "League")

    def roles(self) -> list:
        """The role of each agent of a seat, in agent order."""
        return (["main"] * self.main_agents + ["main_exploiter"] * self.main_exploiters
                + ["league_exploiter"] * self.league_exploiters)


def _check_reads_q_values(exploiter, main, name: str, main_name: str) -> None:
    """A minimax exploiter (:class:`psro.oracles.learned.minimax_exploiter.MinimaxOracle`) reads the main agents'
    Q-values: the main oracle must answer with greedy DQN networks."""
    from psro.oracles.learned.dqn import DQNConfig
    from psro.oracles.learned.minimax_exploiter import MinimaxOracle

    if isinstance(exploiter, MinimaxOracle) and not (isinstance(getattr(main, "config", None), DQNConfig)
                                                     and getattr(main, "response_mode", None) == "greedy"):
        raise ConfigError("algorithm_options", f"main_exploiter_oracle {name!r} reads the main agents' Q-values, so it "
                          f"needs oracle='dqn' with greedy responses (got oracle={main_name!r}).")


@dataclass(frozen=True)
class _MainAgentsOutput:
    """The League's output as an eval meta-solver: per seat, uniform over its main agents' latest snapshots."""

    league: object
    name: str = "league_main_agents"
    kind: str = "product"
    warm_lp: object = None

    def __call__(self, meta_game):
        extra = self.league.state.extra
        marginals = []
        for p, size in enumerate(meta_game.shape):
            m = np.zeros(size)
            for a, role in enumerate(extra.roles):
                if role == "main":
                    m[extra.last_snapshot[p][a]] += 1.0
            marginals.append(m / m.sum())
        return make_equilibrium(meta_game, concept="nash", method=self.name, marginals=marginals)


@dataclass
class LeagueExtra(LoopExtra):
    """The league's state (:class:`League` says what each field holds); per seat and agent where a list of
    lists."""

    roles: list = field(default_factory=list)
    members: list = field(default_factory=list)
    last_snapshot: list = field(default_factory=list)
    counts: list = field(default_factory=list)
    steps: list = field(default_factory=list)
    agent_steps: list = field(default_factory=list)
    fresh: list = field(default_factory=list)
    snapshot: list = field(default_factory=list)
    last_win_rate: list = field(default_factory=list)
    learner_steps: int = 0


class League(PSRO):
    """AlphaStar league training on a two-player game (see the module docstring): ``League(game, **fields)`` or
    ``League(PSROConfig(algorithm="league", ...))``; its own options come from ``algorithm_options``
    (:class:`LeagueOptions`).

    It is a :class:`psro.loop.PSRO` whose targets are the agents' league mixtures (:meth:`targets`) and whose
    populations grow by snapshots only; ``history``, ``state``, checkpoints and :meth:`resume` are PSRO's.
    ``state.extra`` holds the league (:class:`LeagueExtra`): ``roles`` (per agent), ``members`` (per seat,
    ``[role, agent]`` of each population member; the initial policy ``["initial", -1]``), ``last_snapshot``,
    ``counts`` (decayed win-rate counts per seat, agent and opponent key ``m<member>`` or ``a<agent>``), ``steps``
    (since the last snapshot), ``agent_steps`` (total), ``fresh`` (the next call starts from fresh weights),
    ``snapshot`` (the last call's decision), ``last_win_rate`` and ``learner_steps``.
    """

    algorithm = "league"
    options_class = LeagueOptions
    Extra = LeagueExtra
    requirements = LoopRequirements(
        two_players=True, product_meta_solver=True,
        learned_oracle="trains networks that continue from their own weights",
        own_eval_meta_solver="outputs its main agents' latest snapshots (the eval meta-strategy)",
        fixed=(("warm_start", (False,), "warm-starts each agent from its own weights and restarts exploiters from "
                                        "fresh ones"),
               ("update_players", ("all",), "trains every agent every iteration"),
               ("br_selection", ("all", "novel"), "trains every agent every iteration")))

    def __init__(self, config, /, *, executor=None, checkpoint_dir=None, **fields):
        super().__init__(config, executor=executor, checkpoint_dir=checkpoint_dir, **fields)
        config = self.config
        self.league_options = self.options_class.from_dict(config.algorithm_options)
        options = self.league_options
        self._exploiter_oracle = None
        name = options.main_exploiter_oracle
        if name is not None and name != config.oracle:
            from psro.errors import with_field
            from psro.oracles import make_oracle

            settings = config.oracle_settings() if options.main_exploiter_options is None \
                else dict(options.main_exploiter_options)
            self._exploiter_oracle = with_field("algorithm_options", make_oracle, name, self.tree, seed=self.seed,
                                                game=self.game, **settings)
            _check_reads_q_values(self._exploiter_oracle, self.oracle, name, config.oracle)
        total = int(config.oracle_settings().get("total_steps", 0) or 0)
        self._snapshot_steps = options.snapshot_steps if options.snapshot_steps is not None else max(2 * total, 1)
        self.eval_meta_solver = _MainAgentsOutput(self)
        self._league_targets = None

    # ------------------------------------------------------------------ the league's state
    def _init_extra(self) -> None:
        roles = self.league_options.roles()
        k = len(roles)
        self.state.extra = LeagueExtra(
            roles=roles, members=[[["initial", -1]] for _ in range(2)], last_snapshot=[[0] * k for _ in range(2)],
            counts=[[{} for _ in roles] for _ in range(2)], steps=[[0] * k for _ in range(2)],
            agent_steps=[[0] * k for _ in range(2)], fresh=[[True] * k for _ in range(2)],
            snapshot=[[False] * k for _ in range(2)], last_win_rate=[[math.nan] * k for _ in range(2)])

    def add(self) -> None:
        """The snapshots of the last call join (the uniform policies at the start); every agent's newest weights
        stay waiting in ``state.pending``, where the next targets (and a checkpoint) find them."""
        state = self.state
        if state.iteration < 0:
            self._init_extra()
            super().add()
            return
        extra, carried = state.extra, [list(pending) for pending in state.pending]
        state.pending = [[pair for pair, joins in zip(carried[p], extra.snapshot[p]) if joins] for p in range(2)]
        sizes = [len(pop) for pop in state.populations]
        super().add()
        for p in range(2):
            joined = [a for a, joins in enumerate(extra.snapshot[p]) if joins]
            for offset, a in enumerate(joined):
                extra.members[p].append([extra.roles[a], a])
                extra.last_snapshot[p][a] = sizes[p] + offset
        state.pending = carried

    def _learners(self) -> list:
        """Per seat and agent, its current network (None before its first call)."""
        pending = self.state.pending
        k = len(self.state.extra.roles)
        return [[pol for pol, _ in pending[p]] if len(pending[p]) == k else [None] * k for p in range(2)]

    def _current(self, q: int, a: int, learners):
        """Seat ``q``'s agent ``a`` as an opponent: its current network, else its latest snapshot (member index)."""
        return learners[q][a] if learners[q][a] is not None else int(self.state.extra.last_snapshot[q][a])

    def _mixture(self, p: int, a: int, learners) -> tuple:
        """Agent ``a`` of seat ``p``'s opponents: ``(pool, weights, keys)`` over the other seat's population and
        current learners (see the module docstring for each role's mixture)."""
        extra, options, q = self.state.extra, self.league_options, 1 - p
        role, counts = extra.roles[a], extra.counts[p][a]
        members = list(self.state.populations[q].policies)
        pool, keys = list(members), [f"m{i}" for i in range(len(members))]
        weights = np.zeros(len(members))

        def add(index_or_policy, mass, key):
            nonlocal weights
            if isinstance(index_or_policy, int):
                weights[index_or_policy] += mass
                return
            pool.append(index_or_policy)
            keys.append(key)
            weights = np.append(weights, mass)

        def pfsp_over(indices, mass, weighting):
            rates = win_rates(counts, [f"m{i}" for i in indices])
            for i, w in zip(indices, pfsp_weights(rates, weighting)):
                weights[i] += mass * w

        def current_mains(mass):
            mains = [b for b, r in enumerate(extra.roles) if r == "main"]
            for b in mains:
                add(self._current(q, b, learners), mass / len(mains), f"a{b}")

        everyone = list(range(len(members)))
        of_role = {r: [i for i, (role_i, _) in enumerate(extra.members[q]) if role_i == r] for r in ROLES}
        if role == "main":
            pfsp_over(everyone, options.pfsp, "squared")
            verification = 1.0 - options.self_play - options.pfsp
            rates = dict(zip(everyone, win_rates(counts, [f"m{i}" for i in everyone])))
            parts = [([i for i in of_role["main_exploiter"] if rates[i] < options.verification_win_rate], "squared"),
                     ([i for i in of_role["main"] if rates[i] < options.forgotten_win_rate], "variance")]
            parts = [part for part in parts if part[0]]
            for indices, weighting in parts:
                pfsp_over(indices, verification / len(parts), weighting)
            current_mains(options.self_play + (0.0 if parts else verification))
        elif role == "main_exploiter":
            mains = [f"a{b}" for b, r in enumerate(extra.roles) if r == "main"]
            beaten = float(np.mean(win_rates(counts, mains)))
            if beaten < options.exploiter_fallback_win_rate and of_role["main"]:
                pfsp_over(of_role["main"], 1.0, "variance")
            else:
                current_mains(1.0)
        else:
            pfsp_over(everyone, 1.0, "capped")
        return pool, weights / weights.sum(), keys

    # ------------------------------------------------------------------ the loop's hooks
    def targets(self, meta_game) -> list:
        """Per seat, one target per agent: its league mixture over the other seat, warm-started from its own
        current weights (fresh after a restart)."""
        state = self.state
        learners, extra = self._learners(), state.extra
        targets, plans = [], []
        for p in range(2):
            own = state.populations[p]
            seat_targets, seat_plans = [], []
            for a in range(len(extra.roles)):
                pool, weights, keys = self._mixture(p, a, learners)
                pops = [own, PolicyList(pool)] if p == 0 else [PolicyList(pool), own]
                mixtures = (np.full(len(own), 1.0 / len(own)), weights)
                initial = None if extra.fresh[p][a] else learners[p][a]
                seat_targets.append(Target(player=p, populations=pops, mixtures=mixtures if p == 0 else mixtures[::-1],
                                           initial_policy=initial))
                seat_plans.append((pool, weights, keys))
            targets.append(seat_targets)
            plans.append(seat_plans)
        self._league_targets = plans
        return targets

    def respond(self, t: int, targets: list) -> list:
        """Every agent's training call (the main exploiters with their own oracle when it differs), then its
        win-rate games, counts, snapshot and restart decisions."""
        roles = self.state.extra.roles
        if self._exploiter_oracle is None:
            responses = super().respond(t, targets)
        else:
            responses = [[(self._exploiter_oracle if roles[i] == "main_exploiter" else self.oracle).respond(
                p, target, key=(t, i)) for i, target in enumerate(targets[p])] for p in range(len(targets))]
        for p in range(2):
            for a, response in enumerate(responses[p]):
                self._record(t, p, a, response)
        return responses

    def _record(self, t: int, p: int, a: int, response) -> None:
        """Agent ``a`` of seat ``p`` after its call at iteration ``t``: its win-rate games against its mixture,
        the decayed counts, its steps, and whether it snapshots and restarts."""
        from psro.evaluation.env_play import sample_returns

        extra, options = self.state.extra, self.league_options
        pool, weights, keys = self._league_targets[p][a]
        key = (t, p, a, 0x1EA6)   # (the league's own key space: pure in the run's seed and the call)
        rng = np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=key))
        episodes = rng.multinomial(options.win_rate_episodes, weights)
        counts = extra.counts[p][a]
        score = 0.0
        for j in np.flatnonzero(episodes):
            profile = [response.policy, pool[j]] if p == 0 else [pool[j], response.policy]
            returns = sample_returns(self.game, profile, int(episodes[j]),
                                     seed=np.random.SeedSequence(self.seed, spawn_key=(*key, int(j))))
            outcomes = _outcomes(returns, p)
            score += float(outcomes.sum())
            counts[keys[j]] = list(decayed_update(*counts.get(keys[j], (0.0, 0.0)), outcomes, options.decay))
        rate = score / options.win_rate_episodes
        self.state.measure_episodes += int(episodes.sum())
        steps = int(getattr(getattr(response, "training", None), "training_steps", 0) or 0)
        extra.learner_steps += steps
        extra.agent_steps[p][a] += steps
        extra.steps[p][a] += steps
        extra.last_win_rate[p][a] = rate
        snapshot, reset = snapshot_rule(extra.roles[a], rate, extra.steps[p][a], options, self._snapshot_steps,
                                        draw=float(rng.random()))
        extra.snapshot[p][a], extra.fresh[p][a] = snapshot, reset
        if snapshot:
            extra.steps[p][a] = 0
        if reset:
            extra.counts[p][a] = {}
