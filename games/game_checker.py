"""``check_game``: validate a user's game before training on it, as Gymnasium's ``check_env`` does.

It accepts an OpenSpiel game (C++ or Python, turn-based or simultaneous), a
:class:`games.SequentialGame` (subclass or instance) and a
:class:`games.NormalFormGame`. For a tree game it walks the whole tree up to a
node budget and, when the tree is bigger, samples seeded random playouts. Every
node it visits is checked; what it finds is returned as a list of
:class:`Problem` objects, each with a stable ``kind`` (see
:data:`PROBLEM_KINDS`), a plain-words message and the history (action
sequence) where it occurred.

Only sound checks are made: a problem reported is a real violation of the
OpenSpiel game contract (or of what the game declares about itself), never a
matter of style. A game that passes is not proven correct when the tree was
only sampled (``report.exhaustive`` is False).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from games.custom_sequential import SequentialGame
from games.normal_form import NormalFormGame
from games.validation import check_int, is_integer

__all__ = ["PROBLEM_KINDS", "GameCheckReport", "Problem", "check_game"]

logger = logging.getLogger(__name__)

#: Every problem kind ``check_game`` reports, with what it means. The names are stable.
PROBLEM_KINDS: dict[str, str] = {
    "exception": "a game method raised an exception",
    "bad_current_player": "current_player is not a valid player id, CHANCE, SIMULTANEOUS or TERMINAL",
    "no_legal_actions": "a decision node has no legal actions",
    "action_out_of_range": "a legal action is outside [0, num_distinct_actions)",
    "unsorted_legal_actions": "legal actions are not in ascending order",
    "duplicate_legal_actions": "the same legal action is listed twice",
    "legal_actions_mask_mismatch": "legal_actions_mask disagrees with legal_actions",
    "no_chance_outcomes": "a chance node has no outcomes",
    "chance_outcome_out_of_range": "a chance outcome is outside [0, max_chance_outcomes)",
    "duplicate_chance_outcomes": "the same chance outcome is listed twice",
    "bad_chance_probabilities": "chance probabilities are negative, not finite or do not sum to 1",
    "returns_wrong_length": "terminal returns do not have one entry per player",
    "returns_not_finite": "terminal returns contain NaN or inf",
    "returns_out_of_bounds": "a terminal return is outside [min_utility, max_utility]",
    "utility_mismatch": "returns break the declared zero-sum, constant-sum or identical utility",
    "infostate_legal_actions_mismatch": "one information state has different legal actions at different nodes",
    "infostate_shared_between_players": "two players' decision nodes have the same information-state string",
    "imperfect_recall": "an information state does not determine the player's own earlier states and actions",
    "perfect_information_aliasing": "a perfect-information game gives two histories the same information state",
    "game_too_long": "a play has more decisions than max_game_length",
    "nondeterministic": "replaying the same actions, or the same seed, gives a different game",
    "clone_mismatch": "a cloned state differs from the original",
    "bad_tensor": "an information-state or observation tensor fails, has a length other than its declared shape's, "
                  "or is not finite",
    "bad_names": "duplicate or missing player or strategy names in a normal-form game",
    "bad_payoffs": "a normal-form game's payoffs are not finite or have the wrong shape",
}


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a game.

    Attributes
    ----------
    kind : str
        A stable name from :data:`PROBLEM_KINDS`.
    message : str
        What is wrong, in plain words.
    history : tuple of int
        The actions leading to the node where it occurred (empty for the root
        or for whole-game problems).

    Examples
    --------
    >>> str(Problem("no_legal_actions", "player 0 has no legal action", (1, 0)))
    'no_legal_actions at history [1, 0]: player 0 has no legal action'
    """

    kind: str
    message: str
    history: tuple = ()

    def __str__(self) -> str:
        where = f" at history {list(self.history)}" if self.history else ""
        return f"{self.kind}{where}: {self.message}"


@dataclass(frozen=True)
class GameCheckReport:
    """What :func:`check_game` found.

    Attributes
    ----------
    game : str
        The game's name.
    problems : tuple of Problem
        At most ``max_problems_per_kind`` examples of each kind.
    num_problems : dict
        The total count of each kind found (including examples not kept).
    num_nodes : int
        Nodes (states) checked, in the traversal and the playouts.
    num_terminals : int
        Terminal states checked.
    exhaustive : bool
        Whether the whole game tree was traversed.
    num_playouts : int
        Random playouts made (0 when the tree fitted the node budget).

    Examples
    --------
    >>> from games import catalog
    >>> report = check_game(catalog.matching_pennies())
    >>> report.ok, report.problems
    (True, ())
    """

    game: str
    problems: tuple = ()
    num_problems: dict = field(default_factory=dict)
    num_nodes: int = 0
    num_terminals: int = 0
    exhaustive: bool = True
    num_playouts: int = 0

    @property
    def ok(self) -> bool:
        """Whether no problem was found."""
        return not self.problems

    @property
    def kinds(self) -> set:
        """The kinds of problems found."""
        return {p.kind for p in self.problems}

    def __str__(self) -> str:
        scope = "the whole tree" if self.exhaustive else f"{self.num_playouts} random playouts and a partial tree"
        head = f"check_game({self.game!r}): {self.num_nodes} nodes, {self.num_terminals} terminals ({scope})"
        if self.ok:
            return head + ": no problems found."
        lines = [head + f": {sum(self.num_problems.values())} problem(s)"]
        for problem in self.problems:
            lines.append(f"  - {problem}")
        for kind, count in self.num_problems.items():
            kept = sum(p.kind == kind for p in self.problems)
            if count > kept:
                lines.append(f"  ({count - kept} more {kind} problem(s) not shown)")
        return "\n".join(lines)


def check_game(
    game: Any,
    *,
    max_nodes: int = 20_000,
    num_playouts: int = 200,
    seed: int = 0,
    raise_on_error: bool = True,
    max_problems_per_kind: int = 5,
) -> GameCheckReport:
    """Validate a game the way Gymnasium's ``check_env`` validates an environment.

    For a tree game it checks, at every node visited: legal actions (non-empty,
    in ``[0, num_distinct_actions)``, ascending, no duplicates, consistent with
    ``legal_actions_mask``); chance outcomes (in range, no duplicates,
    probabilities non-negative and summing to 1); terminal returns (one finite
    value per player, within ``[min_utility, max_utility]``, summing as the
    declared utility says); information states (the same string always has the
    same legal actions and the same acting player, it determines the player's
    own earlier information states and actions, i.e. perfect recall, and it
    is unique per history in a perfect-information game); the declared
    ``max_game_length``; determinism (replaying a history twice, and playing
    twice with the same seed, give identical games; not checked for OpenSpiel's
    sampled-stochastic games, which draw chance internally) and clones. For a
    normal-form game it checks the payoffs and names.

    Parameters
    ----------
    game : pyspiel.Game, str, SequentialGame or NormalFormGame
        The game; a string is loaded with :func:`games.load`, a
        :class:`games.SequentialGame` class or instance is wrapped with
        ``to_pyspiel()`` (no registration needed).
    max_nodes : int
        Budget of tree nodes for the exhaustive traversal (default 20 000).
        When the tree is bigger, the traversal stops there and
        ``num_playouts`` seeded random playouts follow.
    num_playouts : int
        Random playouts when the tree exceeds ``max_nodes``.
    seed : int
        Seed of the random playouts; the same seed gives the same report.
    raise_on_error : bool
        If True (the default, so that ``check_game(game)`` works as an
        assertion in a test), raise ``ValueError`` listing the problems when
        any is found. If False, return the report either way.
    max_problems_per_kind : int
        Examples kept per problem kind (all are counted).

    Returns
    -------
    GameCheckReport

    Raises
    ------
    ValueError
        If ``raise_on_error`` and a problem is found; the message lists them.
    TypeError
        If ``game`` is none of the accepted types.

    Examples
    --------
    >>> import games
    >>> report = games.check_game("kuhn_poker")
    >>> report.ok, report.exhaustive, report.num_terminals
    (True, True, 30)
    >>> from games.examples.trust_dilemma import TrustDilemma
    >>> class Broken(TrustDilemma):
    ...     name = "doc_broken_trust"
    ...     def returns(self, state):
    ...         return [float("nan"), 1.0]
    >>> report = games.check_game(Broken, raise_on_error=False)
    >>> sorted(report.kinds)
    ['returns_not_finite']
    >>> print(report.problems[0])
    returns_not_finite at history [0, 0]: player 0's return is nan; returns must be finite numbers
    """
    for argname, value, minimum in (("max_nodes", max_nodes, 1), ("num_playouts", num_playouts, 0),
                                    ("max_problems_per_kind", max_problems_per_kind, 1)):
        check_int(value, argname, minimum=minimum)
    log = _Log(max_problems_per_kind)
    if isinstance(game, NormalFormGame):
        label = game.name or repr(game)
        _check_normal_form(game, log)
        stats = {"num_nodes": game.num_profiles, "num_terminals": game.num_profiles, "exhaustive": True,
                 "num_playouts": 0}
    else:
        pyspiel_game = _as_pyspiel_game(game)
        label = str(pyspiel_game)
        checker = _TreeChecker(pyspiel_game, log)
        stats = checker.run(int(max_nodes), int(num_playouts), int(seed))
    report = GameCheckReport(game=label, problems=tuple(log.problems), num_problems=dict(log.counts), **stats)
    if raise_on_error and not report.ok:
        raise ValueError(str(report))
    logger.info("%s", report)
    return report


# --------------------------------------------------------------------- inputs
def _as_pyspiel_game(game: Any):
    import pyspiel

    if isinstance(game, pyspiel.Game):
        return game
    if isinstance(game, str):
        from games.openspiel_games import load

        return load(game)
    if isinstance(game, type) and issubclass(game, SequentialGame):
        game = game()
    if isinstance(game, SequentialGame):
        return game.to_pyspiel()
    raise TypeError(
        "game must be a pyspiel.Game, an OpenSpiel game string, a games.SequentialGame (class or "
        f"instance) or a games.NormalFormGame; got {type(game).__name__}."
    )


class _Log:
    """Collects problems, keeping a few examples of each kind."""

    def __init__(self, per_kind: int) -> None:
        self.per_kind = per_kind
        self.problems: list[Problem] = []
        self.counts: dict[str, int] = {}

    def add(self, kind: str, message: str, history=()) -> None:
        assert kind in PROBLEM_KINDS, kind
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if self.counts[kind] <= self.per_kind:
            self.problems.append(Problem(kind, message, tuple(int(a) for a in history)))


# ------------------------------------------------------------ normal form
def _check_normal_form(game: NormalFormGame, log: _Log) -> None:
    payoffs = np.asarray(game.payoffs)
    if payoffs.shape != (game.num_players, *game.shape) or payoffs.ndim != game.num_players + 1:
        log.add("bad_payoffs", f"payoffs have shape {payoffs.shape} for {game.num_players} players")
        return
    if not np.all(np.isfinite(payoffs)):
        log.add("bad_payoffs", "payoffs contain NaN or inf")
    if len(set(game.player_names)) != game.num_players:
        log.add("bad_names", f"player names are not distinct: {list(game.player_names)}")
    for p, names in enumerate(game.strategy_names):
        if len(names) != game.shape[p]:
            log.add("bad_names", f"player {p} has {game.shape[p]} strategies but {len(names)} names")
        elif len(set(names)) != len(names):
            log.add("bad_names", f"player {p}'s strategy names are not distinct: {list(names)}")


# --------------------------------------------------------------- tree games
@dataclass
class _Facts:
    num_players: int
    num_actions: int
    max_chance: int
    max_length: int
    min_utility: float
    max_utility: float
    utility: str
    utility_sum: float | None
    has_infostate: bool
    perfect_information: bool
    sampled_chance: bool
    simultaneous: bool
    max_chance_nodes: int | None

    @property
    def chance_cap(self) -> int:
        """Chance nodes in one play beyond which the chance nodes are taken to loop (with ample slack)."""
        return 10_000 if self.max_chance_nodes is None else 2 * self.max_chance_nodes + 100


def _facts(game) -> _Facts:
    import pyspiel

    gt = game.get_type()
    U = pyspiel.GameType.Utility
    utility = {U.ZERO_SUM: "zero_sum", U.CONSTANT_SUM: "constant_sum", U.IDENTICAL: "identical"}.get(
        gt.utility, "general_sum"
    )
    utility_sum = None
    if utility in ("zero_sum", "constant_sum"):
        try:
            utility_sum = float(game.utility_sum())
        except Exception:  # noqa: BLE001 - a constant-sum game without a declared sum
            utility_sum = 0.0 if utility == "zero_sum" else None
    try:
        max_chance_nodes = int(game.max_chance_nodes_in_history())
    except Exception:  # noqa: BLE001 - not every game declares it
        max_chance_nodes = None
    return _Facts(
        num_players=game.num_players(),
        num_actions=game.num_distinct_actions(),
        max_chance=game.max_chance_outcomes(),
        max_length=game.max_game_length(),
        min_utility=float(game.min_utility()),
        max_utility=float(game.max_utility()),
        utility=utility,
        utility_sum=utility_sum,
        has_infostate=bool(gt.provides_information_state_string),
        perfect_information=gt.information == pyspiel.GameType.Information.PERFECT_INFORMATION,
        sampled_chance=gt.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC,
        simultaneous=gt.dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS,
        max_chance_nodes=max_chance_nodes,
    )


class _MethodError(Exception):
    """A game method raised; already logged."""


class _TreeChecker:
    """Checks the nodes of an OpenSpiel game tree (turn-based or simultaneous)."""

    CHANCE, SIMULTANEOUS, TERMINAL = -1, -2, -4

    def __init__(self, game, log: _Log) -> None:
        self.game = game
        self.log = log
        self.f = _facts(game)
        self.infostates: dict[tuple, tuple] = {}  # (player, infostate) -> (legal actions, own sequence, history)
        self.infostate_owner: dict[str, int] = {}
        self.reported: set = set()  # information states already reported (one problem each)
        self.bad_tensors: set = set()  # tensor kinds already reported
        self.num_nodes = 0
        self.terminal_returns: dict[tuple, tuple] = {}  # history -> returns (a sample kept for replays)
        self.num_terminals = 0

    # -------------------------------------------------------------- driver
    def run(self, max_nodes: int, num_playouts: int, seed: int) -> dict:
        exhaustive = self._traverse(max_nodes)
        rng = np.random.default_rng(seed)
        playouts = 0
        if not exhaustive:
            for _ in range(num_playouts):
                self._playout(rng, record=True)
                playouts += 1
        if not self.f.sampled_chance:  # sampled-stochastic games draw chance internally, by design
            self._check_replays(seed, budget=max(max_nodes // 2, 1))
        return {"num_nodes": self.num_nodes, "num_terminals": self.num_terminals, "exhaustive": exhaustive,
                    "num_playouts": playouts}

    def _call(self, what: str, fn: Callable, history, *args):
        try:
            return fn(*args)
        except Exception as exc:  # noqa: BLE001 - any failure of user code is a finding
            self.log.add("exception", f"{what} raised {type(exc).__name__}: {exc}", history)
            raise _MethodError from None

    def _root(self):
        return self._call("new_initial_state()", self.game.new_initial_state, ())

    def _traverse(self, max_nodes: int) -> bool:
        """Depth-first traversal of at most ``max_nodes`` nodes; True if the whole tree was seen."""
        try:
            root = self._root()
            frames = [(root, self._visit(root, 0, {}, record=True))]
        except _MethodError:
            return True
        frames = [(state, children, iter(children)) for state, children in frames]
        while frames:
            state, children, actions = frames[-1]
            action = next(actions, None)
            if action is None:
                frames.pop()
                continue
            if self.num_nodes >= max_nodes:
                return False
            try:
                child = self._call(f"apply_action({action})", _child, tuple(state.history()), state, action)
                grandchildren = self._visit(child, *children.child_info(action), record=True)
            except _MethodError:
                continue
            if grandchildren:
                frames.append((child, grandchildren, iter(grandchildren)))
        return True

    def _playout(self, rng: np.random.Generator, record: bool) -> list:
        """One random play from the root; returns the trajectory of node signatures."""
        trajectory = []
        try:
            state = self._root()
            depth, own = 0, {}
            while True:
                children = self._visit(state, depth, own, record=record)
                trajectory.append(self._call("a game method", self._signature, (), state))
                if not children:
                    return trajectory
                action = children.sample(rng)
                depth, own = children.child_info(action)
                self._call(f"apply_action({action})", _apply, tuple(state.history()), state, action)
        except _MethodError:
            return trajectory

    # ---------------------------------------------------------- node checks
    def _visit(self, state, depth: int, own: dict, record: bool) -> _Children:
        """Check one node and return its children (empty at terminals or where a problem stops the walk)."""
        f = self.f
        history = tuple(self._call("history()", state.history, ()))
        self.num_nodes += record
        player = self._call("current_player()", state.current_player, history)
        if player == self.TERMINAL or self._call("is_terminal()", state.is_terminal, history):
            if player != self.TERMINAL:
                self.log.add("bad_current_player",
                             f"is_terminal() is True but current_player() is {player}, not TERMINAL", history)
            self._check_returns(state, history, record)
            return _Children.leaf()
        if player not in (self.CHANCE, self.SIMULTANEOUS) and not (
            is_integer(player) and 0 <= player < f.num_players
        ):
            self.log.add("bad_current_player",
                         f"current_player() is {player!r}; expected 0..{f.num_players - 1}, CHANCE (-1), "
                         "SIMULTANEOUS (-2) or TERMINAL (-4)", history)
            return _Children.leaf()
        if player == self.CHANCE:
            chance_steps = len(history) - depth * (f.num_players if f.simultaneous else 1)
            if chance_steps > f.chance_cap:
                self.log.add("game_too_long",
                             f"{chance_steps} chance nodes in one play (the game declares at most "
                             f"{f.max_chance_nodes}): do the chance nodes never end?", history[:20])
                return _Children.leaf()
            outcomes, probs = self._check_chance(state, history)
            return _Children(player, [outcomes], [None], own, depth, probs)
        if depth >= f.max_length:
            self.log.add("game_too_long",
                         f"a decision node follows {depth} decisions, but max_game_length is {f.max_length}",
                         history)
            return _Children.leaf()
        if player == self.SIMULTANEOUS:
            per_player = [self._check_decision(state, p, history, own, record, simultaneous=True)
                          for p in range(f.num_players)]
            infos = [self._infostate(state, p, history) for p in range(f.num_players)]
            return _Children(player, per_player, infos, own, depth + 1)
        legal = self._check_decision(state, player, history, own, record)
        return _Children(player, [legal], [self._infostate(state, player, history)], own, depth + 1)

    def _infostate(self, state, player: int, history):
        if not self.f.has_infostate:
            return None
        return self._call(f"information_state_string({player})", state.information_state_string, history, player)

    def _check_decision(self, state, player: int, history, own: dict, record: bool,
                        simultaneous: bool = False) -> list:
        f, log = self.f, self.log
        legal = list(self._call(f"legal_actions({player})", state.legal_actions, history, player))
        if not legal:
            log.add("no_legal_actions", f"player {player} has no legal action at a decision node", history)
        bad = [a for a in legal if not (is_integer(a) and 0 <= a < f.num_actions)]
        if bad:
            log.add("action_out_of_range",
                    f"player {player}'s legal actions {legal} include {bad}, outside "
                    f"[0, num_distinct_actions={f.num_actions})", history)
        if len(set(legal)) != len(legal):
            log.add("duplicate_legal_actions", f"player {player}'s legal actions {legal} repeat an action", history)
        elif legal != sorted(legal):
            log.add("unsorted_legal_actions",
                    f"player {player}'s legal actions {legal} are not in ascending order", history)
        if not bad:
            mask = list(self._call(f"legal_actions_mask({player})", state.legal_actions_mask, history, player))
            from_mask = [a for a, m in enumerate(mask) if m]
            if len(mask) != f.num_actions or from_mask != sorted(set(legal)):
                log.add("legal_actions_mask_mismatch",
                        f"legal_actions_mask({player}) marks {from_mask} (length {len(mask)}) but legal_actions "
                        f"is {legal}", history)
        if record and f.has_infostate:
            self._check_infostate(state, player, legal, history, own.get(player, ()), simultaneous)
        if record:
            self._check_tensors(state, player, history)
        return [a for a in legal if a not in bad]

    def _check_tensors(self, state, player: int, history) -> None:
        """The information-state and observation tensors the game declares: each one's length equals its declared
        shape's size, and every entry is a finite number (one problem per tensor kind)."""
        gt = self.game.get_type()
        for what, provided, size in (
            ("information_state_tensor", gt.provides_information_state_tensor,
             self.game.information_state_tensor_size),
            ("observation_tensor", gt.provides_observation_tensor, self.game.observation_tensor_size),
        ):
            if not provided or what in self.bad_tensors:
                continue
            try:
                declared = int(size())
                values = np.asarray(getattr(state, what)(player), dtype=float)
            except Exception as exc:  # noqa: BLE001 - any failure of user code is a finding
                problem = f"{what}({player}) failed: {type(exc).__name__}: {exc}"
            else:
                problem = None
                if values.size != declared:
                    problem = (f"{what}({player}) has {values.size} entries but the game declares "
                               f"{what}_size {declared}")
                elif not np.isfinite(values).all():
                    problem = f"{what}({player}) has entries that are NaN or infinite"
            if problem is not None:
                self.bad_tensors.add(what)
                self.log.add("bad_tensor", problem, history)

    def _check_infostate(self, state, player: int, legal: list, history, own_sequence: tuple,
                         simultaneous: bool) -> None:
        info = self._infostate(state, player, history)
        log = self.log
        if not isinstance(info, str):
            log.add("exception", f"information_state_string({player}) returned {type(info).__name__}, not str",
                    history)
            return
        owner = self.infostate_owner.setdefault(info, player)
        if owner != player and not simultaneous and info not in self.reported:
            # (players moving together at a simultaneous node may share a public string)
            self.reported.add(info)
            log.add("infostate_shared_between_players",
                    f"players {owner} and {player} both act at information state {info!r}; OpenSpiel's tabular "
                    "policies key on the string alone, so include the player in it", history)
        key = (player, info)
        seen = self.infostates.get(key)
        if seen is None:
            self.infostates[key] = (tuple(legal), own_sequence, history)
            return
        seen_legal, seen_own, seen_history = seen
        if key in self.reported:  # one problem per information state is enough
            return
        if seen_legal != tuple(legal):
            kind, message = "infostate_legal_actions_mismatch", (
                f"player {player}'s information state {info!r} has legal actions {list(seen_legal)} after "
                f"history {list(seen_history)} but {legal} here; a player must not be able to tell the "
                "nodes of one information state apart")
        elif seen_own != own_sequence:
            kind, message = "imperfect_recall", (
                f"player {player}'s information state {info!r} is reached after their own moves "
                f"{_describe(seen_own)} (history {list(seen_history)}) and after {_describe(own_sequence)}; "
                "information states must remember the player's own past information states and actions")
        elif self.f.perfect_information and seen_history != history:
            kind, message = "perfect_information_aliasing", (
                f"the game declares perfect information but histories {list(seen_history)} and "
                f"{list(history)} share player {player}'s information state {info!r}")
        else:
            return
        self.reported.add(key)
        log.add(kind, message, history)

    def _check_chance(self, state, history) -> list:
        f, log = self.f, self.log
        outcomes = list(self._call("chance_outcomes()", state.chance_outcomes, history))
        if not outcomes:
            log.add("no_chance_outcomes", "a chance node has no outcomes", history)
            return [], []
        actions = [a for a, _ in outcomes]
        probs = np.array([p for _, p in outcomes], dtype=float)
        bad = [a for a in actions if not (is_integer(a) and 0 <= a < max(f.max_chance, 1))]
        if bad:
            log.add("chance_outcome_out_of_range",
                    f"chance outcomes {bad} are outside [0, max_chance_outcomes={f.max_chance})", history)
        if len(set(actions)) != len(actions):
            log.add("duplicate_chance_outcomes", f"chance outcomes {actions} repeat an outcome", history)
        if not np.all(np.isfinite(probs)) or probs.min() < 0:
            log.add("bad_chance_probabilities",
                    f"chance probabilities {probs.tolist()} must be finite and non-negative", history)
        elif abs(probs.sum() - 1.0) > 1e-6:
            log.add("bad_chance_probabilities",
                    f"chance probabilities {probs.tolist()} sum to {probs.sum():.6g}, not 1", history)
        keep = [i for i, a in enumerate(actions) if a not in bad]
        return [actions[i] for i in keep], [float(probs[i]) for i in keep]

    def _check_returns(self, state, history, record: bool) -> None:
        f, log = self.f, self.log
        self.num_terminals += record
        returns = list(self._call("returns()", state.returns, history))
        if len(returns) != f.num_players:
            log.add("returns_wrong_length",
                    f"returns {returns} have {len(returns)} entries; the game has {f.num_players} players", history)
            return
        values = np.array(returns, dtype=float)
        if record and len(self.terminal_returns) < 64:
            self.terminal_returns[history] = tuple(values.tolist())
        if not np.all(np.isfinite(values)):
            p = int(np.flatnonzero(~np.isfinite(values))[0])
            log.add("returns_not_finite",
                    f"player {p}'s return is {values[p]}; returns must be finite numbers", history)
            return
        tol = 1e-6 * max(1.0, abs(f.min_utility), abs(f.max_utility))
        out = np.flatnonzero((values < f.min_utility - tol) | (values > f.max_utility + tol))
        if out.size:
            p = int(out[0])
            log.add("returns_out_of_bounds",
                    f"player {p}'s return {values[p]:g} is outside the declared "
                    f"[min_utility={f.min_utility:g}, max_utility={f.max_utility:g}]", history)
        if f.utility in ("zero_sum", "constant_sum") and f.utility_sum is not None:
            if abs(values.sum() - f.utility_sum) > tol:
                log.add("utility_mismatch",
                        f"returns {values.tolist()} sum to {values.sum():g} but the game declares "
                        f"{f.utility.replace('_', '-')} utility with sum {f.utility_sum:g}", history)
        elif f.utility == "identical" and np.ptp(values) > tol:
            log.add("utility_mismatch",
                    f"returns {values.tolist()} differ but the game declares identical utility", history)

    # -------------------------------------------------------- determinism
    def _signature(self, state) -> tuple:
        """What a player or algorithm can observe of a node."""
        player = state.current_player()
        if state.is_terminal():
            return ("terminal", tuple(float(r) for r in state.returns()))
        if player == self.CHANCE:
            return ("chance", tuple((int(a), float(p)) for a, p in state.chance_outcomes()))
        players = range(self.f.num_players) if player == self.SIMULTANEOUS else [player]
        return (int(player),) + tuple(
            (tuple(state.legal_actions(p)), state.information_state_string(p) if self.f.has_infostate else None)
            for p in players
        )

    def _replay(self, history: tuple, check_clones: bool = False) -> list:
        """Node signatures along ``history`` replayed from a fresh root (as ``repr`` strings, so NaN == NaN)."""
        state = self.game.new_initial_state()
        signatures = [repr(self._signature(state))]
        for action in _group_simultaneous(self.game, history):
            clone = state.clone() if check_clones else None
            _apply(state, action)
            signatures.append(repr(self._signature(state)))
            if clone is not None:
                _apply(clone, action)
                if repr(self._signature(clone)) != signatures[-1]:
                    self.log.add("clone_mismatch",
                                 "a clone of the state, given the same action, reached a different node "
                                 f"({self._signature(clone)!r} vs {signatures[-1]})", tuple(state.history()))
                    return signatures
        return signatures

    def _check_replays(self, seed: int, budget: int) -> None:
        """Replay recorded histories twice, and play twice with one seed: both must give identical games.

        Then replay once more, cloning at each node: a clone given the same action must match.
        """
        log, samples = self.log, []
        for history, returns in list(self.terminal_returns.items())[:20]:
            if budget <= 0:
                break
            budget -= 3 * (len(history) + 1)
            samples.append((history, returns))
        quiet, self.log = self.log, _Log(1)  # the nodes were checked already: find differences only
        try:
            for history, returns in samples:
                first, second = self._replay(history), self._replay(history)
                if first != second or first[-1] != repr(("terminal", returns)):
                    log.add("nondeterministic",
                            "replaying the same actions from the root gave a different game (different legal "
                            "actions, information states, chance outcomes or returns); transitions must not "
                            "use hidden randomness such as Python's global `random`", history)
                    return
            runs = [repr([self._playout(np.random.default_rng(seed + i), record=False) for i in range(5)])
                    for _ in range(2)]
            if runs[0] != runs[1]:
                log.add("nondeterministic",
                        f"two random playouts with the same seed ({seed}) differed; transitions must not use "
                        "hidden randomness such as Python's global `random`")
                return
            self.log = quiet
            for history, _ in samples:
                self._replay(history, check_clones=True)
        except Exception as exc:  # noqa: BLE001 - a replay failing where the first pass did not
            log.add("nondeterministic", f"replaying a recorded history raised {type(exc).__name__}: {exc}")
        finally:
            self.log = quiet


class _Children:
    """The moves out of a node: one list of actions per acting player (one list at chance nodes)."""

    def __init__(self, player: int, options: list, infos: list, own: dict, depth: int, probs=None) -> None:
        self.player, self.options, self.infos, self.own, self.depth, self.probs = (
            player, options, infos, own, depth, probs)

    @classmethod
    def leaf(cls) -> _Children:
        return cls(-4, [], [], {}, 0)

    def __bool__(self) -> bool:
        return bool(self.options) and all(self.options)

    def __iter__(self):
        if len(self.options) == 1:
            return iter(self.options[0])
        return (list(joint) for joint in itertools.product(*self.options))

    def sample(self, rng: np.random.Generator):
        if self.player == -1:  # chance: by the declared probabilities when they are valid, else uniformly
            probs = np.array(self.probs, dtype=float)
            valid = np.all(np.isfinite(probs)) and probs.min() >= 0 and probs.sum() > 0
            probs = probs / probs.sum() if valid else None
            return self.options[0][int(rng.choice(len(self.options[0]), p=probs))]
        picks = [options[int(rng.integers(len(options)))] for options in self.options]
        return picks[0] if len(picks) == 1 else picks

    def child_info(self, action) -> tuple:
        """(decisions so far, own sequences) at the child reached by ``action``."""
        if self.player == -1:
            return self.depth, self.own
        joint = action if isinstance(action, list) else [action]
        players = range(len(joint)) if isinstance(action, list) else [self.player]
        own = dict(self.own)
        for p, info, a in zip(players, self.infos, joint):
            own[p] = own.get(p, ()) + ((info, a),)
        return self.depth, own


def _describe(own_sequence: tuple) -> str:
    return "[" + ", ".join(f"{a} at {s!r}" for s, a in own_sequence) + "]" if own_sequence else "[] (none)"


def _apply(state, action) -> None:
    if isinstance(action, list):
        state.apply_actions(action)
    else:
        state.apply_action(action)


def _child(state, action):
    child = state.clone()
    _apply(child, action)
    return child


def _group_simultaneous(game, history: tuple) -> list:
    """Split a flat history into the actions to apply (joint lists at simultaneous nodes)."""
    import pyspiel

    if game.get_type().dynamics != pyspiel.GameType.Dynamics.SIMULTANEOUS:
        return list(history)
    state, out, i = game.new_initial_state(), [], 0
    while i < len(history):
        if state.is_simultaneous_node():
            joint = list(history[i:i + game.num_players()])
            i += game.num_players()
        else:
            joint = history[i]
            i += 1
        _apply(state, joint)
        out.append(joint)
    return out
