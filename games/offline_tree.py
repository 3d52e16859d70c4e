"""The empirical tree of an offline dataset and what is counted on it (:mod:`games.offline_model` builds its
:class:`games.offline_model.GameModel` from these): the tree of the histories the episodes visit, visit counts and
mean returns under episode weights, and the :class:`games.SequentialGame` that plays the tree with given leaf
values."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from games.custom_sequential import CHANCE, TERMINAL, SequentialGame

__all__ = ["EmpiricalTree", "NodeCounts", "node_counts", "model_game_class", "CHANCE_NODE", "DECISION_NODE",
           "TERMINAL_NODE", "UNKNOWN_NODE"]

#: What a node of the tree is
CHANCE_NODE, DECISION_NODE, TERMINAL_NODE, UNKNOWN_NODE = 0, 1, 2, 3
_CHANCE, _DECISION, _TERMINAL, _UNKNOWN = CHANCE_NODE, DECISION_NODE, TERMINAL_NODE, UNKNOWN_NODE


class EmpiricalTree:
    """The empirical tree: node arrays, children in a flat edge list, and the episodes' paths."""

    def __init__(self, eps: list, num_players: int) -> None:
        index: dict[tuple, int] = {}
        kind, player, infostate, legal, parent, action = [], [], [], [], [], []
        path_ep, path_node = [], []

        def node(history: tuple, k: int, p: int, info: str, acts: tuple, ep: int) -> int:
            n = index.get(history)
            if n is None:
                n = index[history] = len(kind)
                kind.append(k)
                player.append(p)
                infostate.append(info)
                legal.append(acts)
                parent.append(index[history[:-1]] if history else -1)
                action.append(history[-1] if history else -1)
            elif (kind[n], player[n], infostate[n], legal[n]) != (k, p, info, acts):
                raise ValueError(
                    f"trajectory table: episode {ep}: history {' '.join(map(str, history))!r} was recorded "
                    f"differently in an earlier episode (player {player[n]}, infostate {infostate[n]!r}, "
                    f"legal actions {legal[n]}); the column 'infostate' / 'legal_actions' / 'player' must be "
                    "a function of the history."
                )
            return n

        for e, ep in enumerate(eps):
            for hist, p, info, acts in zip(ep.histories, ep.players, ep.infostates, ep.legal_actions):
                path_node.append(node(hist, _CHANCE if p == CHANCE else _DECISION, p, info, acts, ep.episode))
                path_ep.append(e)
            path_node.append(node(ep.terminal, _TERMINAL, TERMINAL, "", (), ep.episode))
            path_ep.append(e)
        num_observed = len(kind)
        for n in range(num_observed):  # unknown leaves: legal actions never taken at an observed decision
            if kind[n] == _DECISION:
                for a in legal[n]:
                    history = self._history_of(n, parent, action) + (a,)
                    if history not in index:
                        index[history] = len(kind)
                        kind.append(_UNKNOWN)
                        player.append(TERMINAL)
                        infostate.append("")
                        legal.append(())
                        parent.append(n)
                        action.append(a)
        self.index = index
        self.kind = np.array(kind, dtype=np.int8)
        self.player = np.array(player, dtype=np.int64)
        self.infostate = infostate
        self.legal = legal
        self.parent = np.array(parent, dtype=np.int64)
        self.action = np.array(action, dtype=np.int64)
        self.num_players = num_players
        self.path_ep = np.array(path_ep, dtype=np.int64)
        self.path_node = np.array(path_node, dtype=np.int64)
        self.returns = np.array([ep.returns for ep in eps], dtype=np.float64).reshape(len(eps), num_players)
        n = len(kind)
        depth = np.zeros(n, dtype=np.int64)
        for i in range(1, n):  # parents come before children
            depth[i] = depth[self.parent[i]] + 1
        self.depth = depth
        order = np.argsort(depth, kind="stable")
        self.levels = [order[depth[order] == d] for d in range(int(depth.max()) + 1)]
        self.children: dict[tuple[int, int], int] = {}
        for i in range(1, n):
            self.children[(int(self.parent[i]), int(self.action[i]))] = i
        # own depth: how many decisions of each player lie above a node
        own = np.zeros((num_players, n), dtype=np.int64)
        for i in range(1, n):
            own[:, i] = own[:, self.parent[i]]
            if self.kind[self.parent[i]] == _DECISION:
                own[self.player[self.parent[i]], i] += 1
        self.own_depth = own
        # infostates per player, in order of first visit
        self.infosets: list[list[str]] = [[] for _ in range(num_players)]
        self.infoset_index: list[dict[str, int]] = [{} for _ in range(num_players)]
        self.node_infoset = np.full(n, -1, dtype=np.int64)
        for i in np.flatnonzero(self.kind == _DECISION):
            p, s = int(self.player[i]), self.infostate[i]
            j = self.infoset_index[p].get(s)
            if j is None:
                j = self.infoset_index[p][s] = len(self.infosets[p])
                self.infosets[p].append(s)
            self.node_infoset[i] = j

    @staticmethod
    def _history_of(n: int, parent: list, action: list) -> tuple:
        out = []
        while parent[n] != -1:
            out.append(action[n])
            n = parent[n]
        return tuple(reversed(out))

    def history(self, n: int) -> tuple:
        return self._history_of(n, self.parent, self.action)


@dataclass(frozen=True)
class NodeCounts:
    """One model of the ensemble: node visit counts and mean returns under episode weights."""

    count: np.ndarray  # (nodes,)
    mean_return: np.ndarray  # (nodes, players); NaN where unvisited
    return_spread: np.ndarray  # (nodes,) True where a terminal's observed returns disagree


def node_counts(tree: EmpiricalTree, weights: np.ndarray) -> NodeCounts:
    """Visit counts, mean returns and where terminal returns disagree, under the episode ``weights``."""
    n = len(tree.kind)
    w = weights[tree.path_ep]
    count = np.bincount(tree.path_node, weights=w, minlength=n)
    sums = np.stack([np.bincount(tree.path_node, weights=w * tree.returns[tree.path_ep, p], minlength=n)
                     for p in range(tree.num_players)], axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = sums / count[:, None]
    spread = np.zeros(n, dtype=bool)
    terminal = tree.kind[tree.path_node] == _TERMINAL
    keep = terminal & (w > 0)
    if keep.any():
        nodes, eps = tree.path_node[keep], tree.path_ep[keep]
        dev = np.abs(tree.returns[eps] - mean[nodes]).max(axis=1)
        spread[nodes[dev > 1e-12 * (1 + np.abs(mean[nodes]).max(axis=1))]] = True
    return NodeCounts(count=count, mean_return=mean, return_spread=spread)


def model_game_class(model, counts: NodeCounts, values: np.ndarray, kind) -> type:
    """A SequentialGame subclass playing the model's tree with these leaf values."""
    t = model._tree
    active = counts.count > 0
    leaf = ~np.isnan(values[:, 0])
    leaves = values[leaf]
    sums = leaves.sum(axis=1)
    zero_sum = bool(len(sums) and np.allclose(sums, 0.0, atol=1e-9))
    constant = bool(len(sums) and np.allclose(sums, sums[0], atol=1e-9))
    outcomes = {}
    for n in np.flatnonzero((t.kind == _CHANCE) & active):
        kids = [(a, c) for a in t.legal[n] if (c := t.children.get((int(n), a))) is not None and active[c]]
        total = sum(counts.count[c] for _, c in kids)
        outcomes[int(n)] = [(int(a), float(counts.count[c] / total)) for a, c in kids]
    decisions = (t.kind == _DECISION) & active
    own_total = t.own_depth.sum(axis=0)
    length = int(own_total[leaf].max()) if leaf.any() else 1
    chance_actions = [a for n in outcomes for a, _ in outcomes[n]]

    class OfflineModelGame(SequentialGame):
        name = "offline_model"
        long_name = f"offline model ({kind})"
        num_players = model.num_players
        num_distinct_actions = model.num_actions
        max_chance_outcomes = (max(chance_actions) + 1) if chance_actions else 0
        max_game_length = max(1, length)
        min_utility = float(min(model.min_utility, leaves.min())) if len(leaves) else model.min_utility
        max_utility = float(max(model.max_utility, leaves.max())) if len(leaves) else model.max_utility
        utility = "zero_sum" if zero_sum else ("constant_sum" if constant else "general_sum")
        utility_sum = float(sums[0]) if constant and not zero_sum else None

        def initial_state(self):
            return 0

        def current_player(self, state):
            if leaf[state]:
                return TERMINAL
            return CHANCE if t.kind[state] == _CHANCE else int(t.player[state])

        def legal_actions(self, state):
            return list(t.legal[state]) if decisions[state] else []

        def chance_outcomes(self, state):
            return outcomes[state]

        def apply_action(self, state, action):
            return t.children[(state, int(action))]

        def returns(self, state):
            return [float(v) for v in values[state]]

        def information_state(self, state, player):
            if decisions[state] and t.player[state] == player:
                return t.infostate[state]
            return f"p{player} (offline model: known only to the acting player) @{state}"

        def state_to_string(self, state):
            return " ".join(map(str, t.history(state)))

    return OfflineModelGame
