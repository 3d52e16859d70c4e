"""One traversal of an OpenSpiel game into the arrays of the sequence form.

Every player's information states are enumerated once. A tabular policy of
player ``p`` is then a float array ``(num_infostates, num_actions)`` and the
tree is summarised by index arrays:

* the *sequences* of player ``p`` are its (infostate, action) pairs, numbered
  ``s * num_actions + a``, plus the empty sequence numbered
  ``num_infostates * num_actions`` (the last index);
* ``parent[s]`` is the sequence player ``p`` last played before reaching
  infostate ``s`` (unique under perfect recall);
* ``levels`` groups the infostates by how many of its own moves precede them,
  so reach probabilities are computed one level at a time, for a whole
  population at once;
* for every terminal history ``z``: its chance probability, its returns and,
  per player, the last sequence of that player on the path to ``z``.

A player's reach of ``z`` is then a single gather from its realization plan,
and every expected payoff is a sum over terminals.

Simultaneous-move games are walked as they are: a simultaneous node is
expanded as seat 0's decision, then seat 1's at an inner node keyed by the
*same* state's information-state string for seat 1 (which does not show seat
0's pending choice), and so on; the joint action is applied once every seat
has chosen. This is the sequence form of the game itself, with no
``convert_to_turn_based`` in between.

The walk counts histories as it goes and estimates the memory it holds, and
raises :class:`TreeTooLarge` as soon as either passes its budget; a game
whose size, estimated from random playouts first (:func:`estimate_histories`),
is far beyond the budget is refused without walking.
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass

import numpy as np

from games.validation import check_int
from psro.errors import ConfigError

__all__ = ["PlayerInfostates", "GameTree", "TreeTooLarge", "build_game_tree", "estimate_histories", "infostate_tensors",
           "infostate_state", "is_simultaneous", "memory_budget", "LEARNED_REMEDY", "NO_TREE_REMEDY"]

LEARNED_REMEDY = ("use a learned oracle (oracle='model_br', 'ppo' or 'dqn') with evaluator='monte_carlo', which needs "
                  "no tree")
NO_TREE_REMEDY = ("raise the PSROConfig field max_histories (default 1_000_000) if the machine can hold the tree, "
                  f"or {LEARNED_REMEDY}")


class TreeTooLarge(ValueError):
    """The game tree passed its budget of histories or of memory while it was being walked.

    Attributes
    ----------
    game : str
    histories : int
        Histories visited when the walk stopped.
    estimated_bytes : int
        Memory the walk held by then (an estimate).
    reason : str
        The budget that stopped the walk, in words (``"game ... has more than max_histories=... histories"``): the
        message without its remedy.
    """

    def __init__(self, reason: str, *, game: str, histories: int, estimated_bytes: int):
        super().__init__(f"{reason}; it is too large for an exact oracle, an exact evaluator or the exact gap. To go "
                         f"on, {NO_TREE_REMEDY}.")
        self.game, self.histories, self.estimated_bytes, self.reason = game, histories, estimated_bytes, reason


@dataclass(frozen=True, eq=False)
class PlayerInfostates:
    """The information states of one player, in the order they were first met.

    Attributes
    ----------
    player : int
    keys : tuple of str
        OpenSpiel information-state strings.
    legal_mask : ndarray of bool, shape (num_infostates, num_actions)
    parent : ndarray of int, shape (num_infostates,)
        The flat index of the player's own sequence leading to each infostate
        (``empty_sequence`` when the player has not moved before).
    levels : tuple of ndarray
        Infostate indices grouped by own depth (level 0 has no own move before it).
    nodes : ndarray of int, shape (num_infostates,), optional
        For each infostate, the node of :attr:`GameTree.history_parent` where
        it was first met, to rebuild a state there (:func:`infostate_state`).
    """

    player: int
    keys: tuple
    legal_mask: np.ndarray
    parent: np.ndarray
    levels: tuple
    nodes: np.ndarray | None = None

    @property
    def num_infostates(self) -> int:
        return self.legal_mask.shape[0]

    @property
    def num_actions(self) -> int:
        return self.legal_mask.shape[1]

    @property
    def num_sequences(self) -> int:
        """Number of sequences, the empty one included."""
        return self.num_infostates * self.num_actions + 1

    @property
    def empty_sequence(self) -> int:
        return self.num_infostates * self.num_actions

    def index(self, key: str) -> int:
        """Row of the infostate with OpenSpiel string ``key``."""
        lookup = self.__dict__.get("_lookup")
        if lookup is None:
            lookup = {k: i for i, k in enumerate(self.keys)}
            object.__setattr__(self, "_lookup", lookup)
        return lookup[key]


@dataclass(frozen=True, eq=False)
class GameTree:
    """The arrays of a two- or more-player OpenSpiel game (turn-based or simultaneous-move).

    Attributes
    ----------
    game : pyspiel.Game
    infostates : tuple of PlayerInfostates
        One per player.
    terminal_chance : ndarray, shape (num_terminals,)
        Product of the chance probabilities on the path to each terminal.
    terminal_returns : ndarray, shape (num_terminals, num_players)
    terminal_sequence : ndarray of int, shape (num_players, num_terminals)
        Each player's last sequence on the path to each terminal.
    history_parent, history_action : ndarray of int, shape (num_nodes,), optional
        The histories the walk made, as a tree of OpenSpiel actions: node
        ``k`` is node ``history_parent[k]`` followed by ``history_action[k]``
        (node 0 is the initial state; a joint action is one node per seat), so
        ``state.history()`` of any node is read back up to the root.
    num_histories : int
        The histories the walk visited (a simultaneous node once per seat).
    """

    game: object
    infostates: tuple
    terminal_chance: np.ndarray
    terminal_returns: np.ndarray
    terminal_sequence: np.ndarray
    history_parent: np.ndarray | None = None
    history_action: np.ndarray | None = None
    num_histories: int = 0

    @property
    def num_players(self) -> int:
        return len(self.infostates)

    @property
    def num_actions(self) -> int:
        return self.infostates[0].num_actions

    @property
    def num_terminals(self) -> int:
        return self.terminal_chance.shape[0]

    @property
    def simultaneous(self) -> bool:
        """True for a simultaneous-move game (walked natively, seat by seat)."""
        return is_simultaneous(self.game)

    def __repr__(self) -> str:
        sizes = ", ".join(str(p.num_infostates) for p in self.infostates)
        return (f"GameTree({self.game}, infostates=({sizes}), actions={self.num_actions}, "
                f"terminals={self.num_terminals})")


def is_simultaneous(game) -> bool:
    """True when ``game`` (a pyspiel.Game) has simultaneous moves.

    Examples
    --------
    >>> import pyspiel
    >>> is_simultaneous(pyspiel.load_game("goofspiel(num_cards=3)")), is_simultaneous(pyspiel.load_game("kuhn_poker"))
    (True, False)
    """
    import pyspiel

    return game.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS


def _check_supported(game) -> None:
    import pyspiel

    gtype = game.get_type()
    if not gtype.provides_information_state_string:
        raise ValueError(f"game {game} does not provide information-state strings, which exact PSRO needs; "
                         f"{LEARNED_REMEDY}.")
    if gtype.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC:
        raise ValueError(f"game {game} has sampled chance; exact PSRO needs explicit chance outcomes; "
                         f"{LEARNED_REMEDY}.")
    if game.num_players() < 2:
        raise ValueError(f"game {game} has {game.num_players()} player; PSRO needs at least two.")


def memory_budget() -> int:
    """The default memory budget of :func:`build_game_tree`: the toolkit's memory limit, in bytes
    (:func:`games.memory_limit.memory_limit`: ``PSRO_MAX_MEMORY`` when set, else half the memory available now).

    Examples
    --------
    >>> memory_budget() > 0
    True
    """
    from games.memory_limit import memory_limit

    return memory_limit()


# Rough sizes of what the walk keeps, in bytes: a terminal's arrays (chance, returns, sequences, and the copy
# made when they become numpy arrays), an infostate's dict entry, key object, parent, depth and node, a history
# node (parent and action, and their copy), a stack entry (a tuple and its state shared with its siblings).
_TERMINAL_BYTES_PER_PLAYER = 2 * 16
_TERMINAL_BYTES = 2 * 8
_INFOSTATE_BYTES = 200
_STACK_ENTRY_BYTES = 300
_NODE_BYTES = 2 * 16
_CHECK_EVERY = 256
_ESTIMATE_MARGIN = 20   # refuse without walking when the estimate passes this many times max_histories


class _PlayerWalk:
    """What the walk learns about one player's infostates (compact arrays, grown as they are met)."""

    def __init__(self, game, player: int, num_actions: int):
        self.game, self.player, self.num_actions = game, player, num_actions
        self.rows: dict = {}
        self.parent, self.depth = array("q"), array("q")
        self.mask = bytearray()
        self.nodes = array("q")
        self.nbytes = 0

    def visit(self, state, node: int, legal, last: int, depth: int) -> int:
        """Row of the infostate of ``state`` for this player, added when first met; checks perfect recall."""
        key = state.information_state_string(self.player)
        s = self.rows.get(key)
        if s is None:
            s = self.rows[key] = len(self.parent)
            self.parent.append(last)
            self.depth.append(depth)
            mask = bytearray(self.num_actions)
            for a in legal:
                mask[a] = 1
            self.mask += mask
            self.nodes.append(node)
            self.nbytes += _INFOSTATE_BYTES + len(key) + self.num_actions
        elif self.parent[s] != last:
            raise ValueError(_imperfect_recall_message(self.game, self.player, key))
        return s

    def infostates(self) -> PlayerInfostates:
        num, num_a = len(self.parent), self.num_actions
        parent = np.array(self.parent, dtype=np.int64).reshape(num)
        parent[parent < 0] = num * num_a
        depth = np.array(self.depth, dtype=np.int64).reshape(num)
        levels = tuple(np.flatnonzero(depth == d) for d in range(int(depth.max(initial=-1)) + 1))
        mask = np.frombuffer(bytes(self.mask), dtype=np.uint8).reshape(num, num_a).astype(bool)
        nodes = np.array(self.nodes, dtype=np.int64).reshape(num)
        return PlayerInfostates(self.player, tuple(self.rows), mask, parent, levels, nodes)


def _imperfect_recall_message(game, player: int, key: str) -> str:
    hint = ""
    if game.get_type().short_name == "goofspiel" and not game.get_parameters().get("imp_info", False):
        hint = (" Without imp_info, goofspiel's information-state strings show the hands, points and who won each "
                "round but not which card was bid when, so a player forgets the order of the other's bids; load it "
                "with imp_info=True (each player sees its own bids and who won), e.g. "
                "'goofspiel(num_cards=4,imp_info=True)'.")
    return (f"game {game} does not have perfect recall: player {player}'s infostate {key!r} follows "
            f"different earlier infostates or moves of its own (it forgets), and the sequence form (exact oracles "
            f"and evaluators) needs perfect recall.{hint} Otherwise {LEARNED_REMEDY}.")


def _too_large(game, visited: int, nbytes: int, max_histories: int, max_bytes: int, budget: str) -> TreeTooLarge:
    if visited > max_histories:
        what = f"has more than max_histories={max_histories:_} histories"
    else:
        what = (f"needs more than {nbytes / 2**30:.2f} GiB for its tree after {visited:_} histories (the budget "
                f"is {budget}={max_bytes / 2**30:.2f} GiB)")
    return TreeTooLarge(f"game {game} {what}", game=str(game), histories=visited, estimated_bytes=nbytes)


def estimate_histories(game, playouts: int = 64, seed: int = 0) -> float:
    """Knuth's (1975) unbiased estimate of the number of histories of ``game``, from random playouts.

    Each playout picks uniformly among the moves (chance outcomes of positive
    probability included) and adds the product of the branching factors met so
    far at every step; the mean over playouts estimates the number of nodes
    :func:`build_game_tree` visits (a simultaneous node counts once per seat).
    Exact for trees whose branching depends on the depth only.

    Examples
    --------
    >>> import pyspiel
    >>> estimate_histories(pyspiel.load_game("matrix_rps"))   # the root, 3 inner seat-1 nodes, 9 terminals
    13.0
    """
    playouts = check_int(playouts, "playouts", minimum=1)
    rng = np.random.default_rng(seed)
    n = game.num_players()
    total = 0.0
    for _ in range(playouts):
        state, weight, count = game.new_initial_state(), 1.0, 1.0
        while not state.is_terminal():
            if state.is_chance_node():
                moves = [[a for a, p in state.chance_outcomes() if p > 0]]
            elif state.is_simultaneous_node():
                moves = [state.legal_actions(p) for p in range(n)]
            else:
                moves = [state.legal_actions()]
            chosen = []
            for legal in moves:
                weight *= len(legal)
                count += weight
                chosen.append(legal[int(rng.integers(len(legal)))])
            if state.is_simultaneous_node():
                state.apply_actions(chosen)
            else:
                state.apply_action(chosen[0])
        total += count
    return total / playouts


def build_game_tree(game, max_histories: int = 1_000_000, *, max_bytes: int | None = None) -> GameTree:
    """Walk the whole tree of ``game`` once and return its sequence-form arrays.

    Parameters
    ----------
    game : pyspiel.Game
        A turn-based or simultaneous-move game with perfect recall and explicit chance.
    max_histories : int
        Stop with :class:`TreeTooLarge` as soon as the walk passes this many
        histories (a simultaneous node counts once per seat).
    max_bytes : int, optional
        Stop with :class:`TreeTooLarge` as soon as the memory the walk holds
        (estimated) passes this; default :func:`memory_budget` (half the
        memory available).

    Raises
    ------
    TreeTooLarge
        A ``ValueError`` naming the options that exist for games too large for a tree.
    ValueError
        A game without information-state strings, with sampled chance, one
        player, or without perfect recall.

    Examples
    --------
    >>> import pyspiel
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> [p.num_infostates for p in tree.infostates], tree.num_terminals
    ([6, 6], 30)
    >>> round(float(tree.terminal_chance[0]), 6)   # each deal of two of three cards
    0.166667

    A simultaneous move is a decision of each seat at the same state:

    >>> tree = build_game_tree(pyspiel.load_game("matrix_rps"))
    >>> [p.num_infostates for p in tree.infostates], tree.num_terminals
    ([1, 1], 9)
    >>> build_game_tree(pyspiel.load_game("leduc_poker"), max_histories=1000)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    psro.sequence_form.game_tree.TreeTooLarge: game leduc_poker() has more than max_histories=1_000 histories; ...
    """
    _check_supported(game)
    max_histories = check_int(max_histories, "max_histories", minimum=1)
    budget = "max_bytes" if max_bytes is not None else "the memory limit, PSRO_MAX_MEMORY or half the available memory"
    max_bytes = memory_budget() if max_bytes is None else check_int(max_bytes, "max_bytes", minimum=1)
    estimate = estimate_histories(game)
    if estimate > _ESTIMATE_MARGIN * max_histories:   # far too large: no need to walk up to the budget to know
        raise TreeTooLarge(f"game {game} has about {estimate:.2g} histories (estimated from random playouts), "
                           f"far more than max_histories={max_histories:_}", game=str(game), histories=0,
                           estimated_bytes=0)
    n = game.num_players()
    num_actions = game.num_distinct_actions()
    walks = [_PlayerWalk(game, p, num_actions) for p in range(n)]
    t_chance, t_returns, t_seq = array("d"), array("d"), array("q")
    terminal_bytes = _TERMINAL_BYTES + n * _TERMINAL_BYTES_PER_PLAYER
    # history nodes: node 0 is the initial state; every move adds one node per action (a joint action one per seat)
    node_parent, node_action = array("q", [-1]), array("q", [-1])
    # (parent state, its node, the move to make from it or None, chance probability, each player's last sequence,
    # each player's own depth, the seats' pending choices at a simultaneous node or None); -1 is the empty
    # sequence until the counts are known. A child is made only when it is popped: the stack holds a state per level.
    stack = [(game.new_initial_state(), 0, None, 1.0, (-1,) * n, (0,) * n, None)]
    visited = 0
    while stack:
        state, node, move, prob, last, depth, pending = stack.pop()
        visited += 1
        if visited > max_histories or (visited % _CHECK_EVERY == 0 and _walk_bytes(
                walks, len(t_chance), terminal_bytes, len(node_parent), len(stack)) > max_bytes):
            raise _too_large(game, visited, _walk_bytes(walks, len(t_chance), terminal_bytes, len(node_parent),
                                                        len(stack)), max_histories, max_bytes, budget)
        if move is not None:
            if isinstance(move, list):   # every seat has chosen: the joint action
                state = state.clone()
                state.apply_actions(move)
            else:
                state = state.child(move)
                move = (move,)
            for action in move:
                node_parent.append(node)
                node_action.append(action)
                node = len(node_parent) - 1
        if pending is None:
            if state.is_terminal():
                t_chance.append(prob)
                t_returns.extend(state.returns())
                t_seq.extend(last)
                continue
            if state.is_chance_node():
                for action, p in state.chance_outcomes():
                    if p > 0:
                        stack.append((state, node, action, prob * p, last, depth, None))
                continue
            if state.is_simultaneous_node():
                pending = ()
        player = state.current_player() if pending is None else len(pending)
        legal = state.legal_actions(player)
        if not legal:
            raise ValueError(f"game {game}: player {player} has no legal action at a simultaneous node "
                             f"({state.history_str()}); build_game_tree needs one action per seat.")
        s = walks[player].visit(state, node, legal, last[player], depth[player])
        child_depth = depth[:player] + (depth[player] + 1,) + depth[player + 1:]
        for action in legal:
            child_last = last[:player] + (s * num_actions + action,) + last[player + 1:]
            if pending is None:
                stack.append((state, node, action, prob, child_last, child_depth, None))
            elif player < n - 1:   # the next seat decides at the same state
                stack.append((state, node, None, prob, child_last, child_depth, pending + (action,)))
            else:
                stack.append((state, node, [*pending, action], prob, child_last, child_depth, None))

    infostates = tuple(walk.infostates() for walk in walks)
    num_terminals = len(t_chance)
    seq = np.array(t_seq, dtype=np.int64).reshape(num_terminals, n).T.copy()
    for p in range(n):
        seq[p][seq[p] < 0] = infostates[p].empty_sequence
    return GameTree(
        game=game,
        infostates=infostates,
        terminal_chance=np.array(t_chance, dtype=np.float64),
        terminal_returns=np.array(t_returns, dtype=np.float64).reshape(num_terminals, n),
        terminal_sequence=seq,
        history_parent=np.array(node_parent, dtype=np.int64),
        history_action=np.array(node_action, dtype=np.int64),
        num_histories=visited,
    )


def _walk_bytes(walks, num_terminals: int, terminal_bytes: int, num_nodes: int, stack_size: int) -> int:
    return (num_terminals * terminal_bytes + sum(walk.nbytes for walk in walks) + num_nodes * _NODE_BYTES
            + stack_size * _STACK_ENTRY_BYTES)


def infostate_state(tree: GameTree, player: int, index: int):
    """A pyspiel state at which ``player`` is to move in infostate ``index`` (rebuilt from its history).

    At a simultaneous node it is the state before any seat's choice, as every seat sees it.

    Examples
    --------
    >>> import pyspiel
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> state = infostate_state(tree, 1, 0)
    >>> state.information_state_string(1) == tree.infostates[1].keys[0]
    True
    """
    info = _player_infostates(tree, player)
    index = check_int(index, "index", minimum=0, maximum=info.num_infostates - 1)
    n = tree.num_players
    history = []
    node = int(info.nodes[index])
    while node > 0:
        history.append(int(tree.history_action[node]))
        node = int(tree.history_parent[node])
    history.reverse()
    state = tree.game.new_initial_state()
    i = 0
    while i < len(history):
        if state.is_simultaneous_node():
            state.apply_actions(history[i:i + n])
            i += n
        else:
            state.apply_action(history[i])
            i += 1
    return state


def _player_infostates(tree: GameTree, player: int) -> PlayerInfostates:
    player = check_int(player, "player", minimum=0, maximum=tree.num_players - 1)
    info = tree.infostates[player]
    if info.nodes is None or tree.history_parent is None:
        raise ConfigError("tree", "it carries no histories; build it with "
                          "psro.sequence_form.game_tree.build_game_tree.")
    return info


def infostate_tensors(tree: GameTree, player: int, observation: str = "information_state") -> np.ndarray:
    """The tensors a network policy of ``player`` reads, one row per infostate in the tree's order.

    Each row is OpenSpiel's ``information_state_tensor(player)`` (any shape,
    flattened) at a state of that infostate; for a simultaneous-move game it is
    the state before any seat has chosen. Computed once per tree, player and
    kind, then returned read-only.

    Parameters
    ----------
    tree : GameTree
    player : int
    observation : {"information_state", "observation"}
        ``"observation"`` reads ``observation_tensor(player)`` instead (as
        ``games.make_env(..., observation="observation")`` does), for games such
        as tic-tac-toe that have no information-state tensor; it is one row per
        infostate only where the observation is a function of the infostate
        (perfect-information games, or perfect-recall observations).

    Returns
    -------
    ndarray of float32, shape (num_infostates, obs_dim)

    Raises
    ------
    ValueError
        For a game without tensors of that kind.

    Examples
    --------
    >>> import pyspiel
    >>> tree = build_game_tree(pyspiel.load_game("goofspiel(num_cards=3,imp_info=True)"))
    >>> infostate_tensors(tree, 1).shape == (tree.infostates[1].num_infostates, 41)
    True
    """
    info = _player_infostates(tree, player)
    gtype, game = tree.game.get_type(), tree.game
    if observation == "information_state":
        provided, shape, method = (gtype.provides_information_state_tensor, game.information_state_tensor_shape,
                                   "information_state_tensor")
    elif observation == "observation":
        provided, shape, method = gtype.provides_observation_tensor, game.observation_tensor_shape, "observation_tensor"
    else:
        raise ValueError(f"observation must be 'information_state' or 'observation'; got {observation!r}.")
    if not provided:
        raise ValueError(f"game {game} does not provide {observation.replace('_', '-')} tensors; a network policy "
                         "needs them" + (" (try observation='observation')." if observation == "information_state"
                                         and gtype.provides_observation_tensor else "."))
    cache = tree.__dict__.setdefault("_infostate_tensors", {})
    if (player, observation) not in cache:
        out = np.empty((info.num_infostates, math.prod(shape())), dtype=np.float32)
        for s in range(info.num_infostates):
            out[s] = getattr(infostate_state(tree, player, s), method)(player)
        out.flags.writeable = False
        cache[player, observation] = out
    return cache[player, observation]
