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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["PlayerInfostates", "GameTree", "build_game_tree"]


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
    """

    player: int
    keys: tuple
    legal_mask: np.ndarray
    parent: np.ndarray
    levels: tuple

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
    """The arrays of a two- or more-player sequential OpenSpiel game.

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
    """

    game: object
    infostates: tuple
    terminal_chance: np.ndarray
    terminal_returns: np.ndarray
    terminal_sequence: np.ndarray

    @property
    def num_players(self) -> int:
        return len(self.infostates)

    @property
    def num_actions(self) -> int:
        return self.infostates[0].num_actions

    @property
    def num_terminals(self) -> int:
        return self.terminal_chance.shape[0]

    def __repr__(self) -> str:
        sizes = ", ".join(str(p.num_infostates) for p in self.infostates)
        return (f"GameTree({self.game}, infostates=({sizes}), actions={self.num_actions}, "
                f"terminals={self.num_terminals})")


def _check_supported(game) -> None:
    import pyspiel

    gtype = game.get_type()
    if gtype.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
        raise ValueError(
            f"game {game} has simultaneous moves; load its turn-based version, e.g. "
            f"pyspiel.convert_to_turn_based(game), before running PSRO on it (a one-shot matrix game can "
            f"also be given as games.NormalFormGame.from_pyspiel(game))."
        )
    if not gtype.provides_information_state_string:
        raise ValueError(f"game {game} does not provide information-state strings, which exact PSRO needs.")
    if gtype.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC:
        raise ValueError(f"game {game} has sampled chance; exact PSRO needs explicit chance outcomes.")
    if game.num_players() < 2:
        raise ValueError(f"game {game} has {game.num_players()} player; PSRO needs at least two.")


def build_game_tree(game, max_histories: int = 5_000_000) -> GameTree:
    """Walk the whole tree of ``game`` once and return its sequence-form arrays.

    Parameters
    ----------
    game : pyspiel.Game
        A sequential game with perfect recall and explicit chance.
    max_histories : int
        Give up (``ValueError``) beyond this many histories, for games too large
        to enumerate.

    Examples
    --------
    >>> import pyspiel
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> [p.num_infostates for p in tree.infostates], tree.num_terminals
    ([6, 6], 30)
    >>> round(float(tree.terminal_chance[0]), 6)   # each deal of two of three cards
    0.166667
    """
    _check_supported(game)
    n = game.num_players()
    num_actions = game.num_distinct_actions()
    keys = [dict() for _ in range(n)]
    parents = [[] for _ in range(n)]
    depths = [[] for _ in range(n)]
    masks = [[] for _ in range(n)]
    t_chance, t_returns, t_seq = [], [], []
    empty = [-1] * n  # resolved to num_infostates * num_actions once the counts are known
    stack = [(game.new_initial_state(), 1.0, tuple(empty), (0,) * n)]
    visited = 0
    while stack:
        state, prob, last, depth = stack.pop()
        visited += 1
        if visited > max_histories:
            raise ValueError(
                f"game {game} has more than max_histories={max_histories} histories; it is too large for "
                "exact PSRO. Raise max_histories or use a sampled evaluator."
            )
        if state.is_terminal():
            t_chance.append(prob)
            t_returns.append(state.returns())
            t_seq.append(last)
            continue
        if state.is_chance_node():
            for action, p in state.chance_outcomes():
                if p > 0:
                    stack.append((state.child(action), prob * p, last, depth))
            continue
        player = state.current_player()
        key = state.information_state_string(player)
        s = keys[player].get(key)
        if s is None:
            s = keys[player][key] = len(parents[player])
            parents[player].append(last[player])
            depths[player].append(depth[player])
            mask = np.zeros(num_actions, dtype=bool)
            mask[state.legal_actions()] = True
            masks[player].append(mask)
        elif parents[player][s] != last[player]:
            raise ValueError(f"game {game} does not have perfect recall (infostate {key!r}); exact PSRO needs it.")
        child_depth = depth[:player] + (depth[player] + 1,) + depth[player + 1:]
        for action in state.legal_actions():
            child_last = last[:player] + (s * num_actions + action,) + last[player + 1:]
            stack.append((state.child(action), prob, child_last, child_depth))

    infostates = []
    for p in range(n):
        num = len(parents[p])
        parent = np.array(parents[p], dtype=np.int64).reshape(num)
        parent[parent < 0] = num * num_actions
        depth = np.array(depths[p], dtype=np.int64).reshape(num)
        levels = tuple(np.flatnonzero(depth == d) for d in range(int(depth.max(initial=-1)) + 1))
        mask = np.array(masks[p], dtype=bool).reshape(num, num_actions)
        infostates.append(PlayerInfostates(p, tuple(keys[p]), mask, parent, levels))
    seq = np.array(t_seq, dtype=np.int64).T.copy()
    for p in range(n):
        seq[p][seq[p] < 0] = infostates[p].empty_sequence
    return GameTree(
        game=game,
        infostates=tuple(infostates),
        terminal_chance=np.array(t_chance, dtype=np.float64),
        terminal_returns=np.array(t_returns, dtype=np.float64).reshape(-1, n),
        terminal_sequence=seq,
    )
