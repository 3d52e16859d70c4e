"""Batched Monte Carlo play of tabular policy profiles over a flattened game tree.

The whole history tree of a small sequential game is flattened once into index
arrays (:class:`PlayTree`): for every history node its kind (chance, a player,
terminal), the row of its information state, its children by action slot and,
at chance nodes, the outcome probabilities. A profile of tabular policies
(arrays ``(num_infostates, num_actions)`` from the populations) then becomes one
table of cumulative distributions: one row per chance node, one row per
(player, policy, infostate).

Episodes are played in lockstep: at each depth, for all unfinished episodes at
once, the current node's row in that table is looked up (an integer gather),
one uniform draw per episode picks the action (count of the cumulative
probabilities below it), and the episode moves to the child. Finished episodes
drop out. Episodes of many profiles are played together, so the cost is a few
numpy operations per depth, not a Python step per move.

Randomness: every *segment* of episodes (a profile and the episodes with
numbers ``start .. start + count - 1`` of that profile) draws its uniforms from
its own generator ``default_rng(SeedSequence(seed, spawn_key=(*profile, start)))``,
so an estimate does not depend on how segments are grouped into tasks, on the
executor or on the number of workers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from psro.sequence_form.game_tree import GameTree

__all__ = ["PlayTree", "ProfileSampler", "SampleStatistics", "build_play_tree", "segment_generator"]

CHANCE_ROW = -1
TERMINAL_ROW = -2


@dataclass(frozen=True, eq=False)
class PlayTree:
    """The history tree of a game as flat arrays (node 0 is the root).

    Attributes
    ----------
    tree : GameTree
        The sequence-form tree whose infostate numbering the policies use.
    actor : ndarray of int, shape (num_nodes,)
        The player to move, ``num_players`` at chance nodes, ``-1`` at terminals.
    infostate : ndarray of int, shape (num_nodes,)
        The actor's infostate row at player nodes; the chance-node number at
        chance nodes; ``-1`` at terminals.
    children : ndarray of int, shape (num_nodes, width)
        The child reached through each action slot (player nodes: the action
        id; chance nodes: the outcome's position in ``chance_outcomes()``);
        ``-1`` where there is none.
    chance_cdf : ndarray, shape (num_chance_nodes, width)
        Cumulative outcome probabilities of every chance node.
    returns : ndarray, shape (num_nodes, num_players)
        The players' returns at terminal nodes (zero elsewhere).
    is_terminal : ndarray of bool, shape (num_nodes,)
    max_depth : int
        The most moves (chance included) on any path from the root.
    """

    tree: GameTree
    actor: np.ndarray
    infostate: np.ndarray
    children: np.ndarray
    chance_cdf: np.ndarray
    returns: np.ndarray
    is_terminal: np.ndarray
    max_depth: int

    @property
    def num_players(self) -> int:
        return self.tree.num_players

    @property
    def num_nodes(self) -> int:
        return self.actor.shape[0]

    @property
    def width(self) -> int:
        return self.children.shape[1]

    def __repr__(self) -> str:
        return (f"PlayTree({self.tree.game}, nodes={self.num_nodes}, terminals={int(self.is_terminal.sum())}, "
                f"max_depth={self.max_depth})")


def build_play_tree(tree: GameTree) -> PlayTree:
    """Flatten the history tree of ``tree.game`` for lockstep play.

    Parameters
    ----------
    tree : GameTree
        From :func:`psro.sequence_form.game_tree.build_game_tree`; its infostate numbering is reused.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> play = build_play_tree(build_game_tree(pyspiel.load_game("kuhn_poker")))
    >>> play.num_nodes, int(play.is_terminal.sum()), play.max_depth   # 1 deal root, 6 deals, 30 terminals
    (58, 30, 5)
    """
    game = tree.game
    n = tree.num_players
    actors, infos, kids, cdfs, rets, depths = [], [], [], [], [], []
    width = game.num_distinct_actions()
    # (state, parent node, slot, depth, the seats' pending choices at a simultaneous node or None): a simultaneous
    # move is seat 0's node, then seat 1's at the same state, ..., as in psro.sequence_form.game_tree
    stack = [(game.new_initial_state(), -1, -1, 0, None)]
    while stack:
        state, parent, slot, depth, pending = stack.pop()
        node = len(actors)
        if parent >= 0:
            kids[parent][slot] = node
        depths.append(depth)
        if state.is_terminal():
            actors.append(-1)
            infos.append(-1)
            kids.append({})
            rets.append((node, state.returns()))
            continue
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            actors.append(n)
            infos.append(len(cdfs))
            probs = np.array([p for _, p in outcomes], dtype=np.float64)
            cdfs.append(probs)
            width = max(width, len(outcomes))
            kids.append({})
            for pos, (action, _) in enumerate(outcomes):
                stack.append((state.child(action), node, pos, depth + 1, None))
            continue
        if pending is None and state.is_simultaneous_node():
            pending = ()
        player = state.current_player() if pending is None else len(pending)
        actors.append(player)
        infos.append(tree.infostates[player].index(state.information_state_string(player)))
        kids.append({})
        for action in state.legal_actions(player):
            if pending is None:
                stack.append((state.child(action), node, action, depth + 1, None))
            elif player < n - 1:   # the next seat decides at the same state
                stack.append((state, node, action, depth + 1, pending + (action,)))
            else:
                child = state.clone()
                child.apply_actions([*pending, action])
                stack.append((child, node, action, depth + 1, None))

    num = len(actors)
    children = np.full((num, width), -1, dtype=np.int64)
    for node, slots in enumerate(kids):
        for s, child in slots.items():
            children[node, s] = child
    chance_cdf = np.ones((len(cdfs), width))
    for i, probs in enumerate(cdfs):
        chance_cdf[i] = _cumulative(np.pad(probs, (0, width - len(probs)))[None])[0]
    returns = np.zeros((num, n))
    for node, r in rets:
        returns[node] = r
    actor = np.array(actors, dtype=np.int64)
    return PlayTree(tree=tree, actor=actor, infostate=np.array(infos, dtype=np.int64), children=children,
                    chance_cdf=chance_cdf, returns=returns, is_terminal=actor < 0,
                    max_depth=int(max(depths)))


def _cumulative(probs: np.ndarray) -> np.ndarray:
    """Row-wise cumulative distributions that never select a zero-probability trailing slot.

    Every slot from the last one with positive probability onwards is set to
    exactly 1, so ``sum(u >= cdf)`` with ``u`` in ``[0, 1)`` is always a slot
    with positive probability, whatever the rounding of the cumulative sum.
    """
    cdf = np.cumsum(probs, axis=-1)
    positive = probs > 0
    last = probs.shape[-1] - 1 - np.argmax(positive[..., ::-1], axis=-1)
    beyond = np.arange(probs.shape[-1]) >= last[..., None]
    cdf[beyond] = 1.0
    return cdf


@dataclass(frozen=True)
class SampleStatistics:
    """Per-segment sample statistics: the episode count, and each player's sum and sum of squares.

    Attributes
    ----------
    count : ndarray of int, shape (num_segments,)
    total, total_sq : ndarray, shape (num_segments, num_players)
    """

    count: np.ndarray
    total: np.ndarray
    total_sq: np.ndarray


def segment_generator(seed: int, profile, start: int) -> np.random.Generator:
    """The generator of the episodes ``start, start + 1, ...`` of ``profile`` under ``seed``.

    Examples
    --------
    >>> a = segment_generator(3, (0, 1), 0).random()
    >>> a == segment_generator(3, (0, 1), 0).random(), a == segment_generator(3, (0, 1), 100).random()
    (True, False)
    """
    key = tuple(int(a) for a in profile) + (int(start),)
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=key))


class ProfileSampler:
    """Plays episodes of profiles drawn from fixed populations; picklable, so it can be shipped to workers.

    Parameters
    ----------
    play : PlayTree
    policies : sequence of ndarray
        ``policies[p]`` is player p's population ``(k_p, num_infostates_p, num_actions)``.
    seed : int
        Root of the per-segment generators (:func:`segment_generator`).

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.policies import uniform_policy
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> sampler = ProfileSampler(build_play_tree(tree), [uniform_policy(i)[None] for i in tree.infostates], seed=0)
    >>> stats = sampler(np.array([[0, 0, 0, 4000]]))     # segments: (profile..., start, count)
    >>> int(stats.count[0]), bool(abs(stats.total[0, 0] / 4000 - 0.125) < 0.1)
    (4000, True)
    """

    def __init__(self, play: PlayTree, policies, seed: int):
        n = play.num_players
        if len(policies) != n:
            raise ValueError(f"policies needs one population per player ({n}); got {len(policies)}.")
        self.seed = int(seed)
        self.shape = tuple(int(np.shape(pol)[0]) for pol in policies)
        width = play.width
        # One table of cumulative distributions: players' (policy, infostate) rows, then the chance rows.
        blocks, offsets, strides = [], [], []
        offset = 0
        for p, pol in enumerate(policies):
            pol = np.asarray(pol, dtype=np.float64)
            k, num_i, num_a = pol.shape
            padded = np.zeros((k * num_i, width))
            padded[:, :num_a] = pol.reshape(k * num_i, num_a)
            blocks.append(_cumulative(padded))
            offsets.append(offset)
            strides.append(num_i)
            offset += k * num_i
        blocks.append(play.chance_cdf)
        offsets.append(offset)
        strides.append(0)
        self.table_t = np.ascontiguousarray(np.concatenate(blocks, axis=0).T)   # (width, rows)
        node_actor = np.where(play.is_terminal, 0, play.actor)
        self.node_actor = node_actor
        self.node_base = np.asarray(offsets)[node_actor] + np.maximum(play.infostate, 0)
        self.node_stride = np.asarray(strides)[node_actor]
        self.children_flat = play.children.ravel()
        self.is_terminal = play.is_terminal
        self.returns = play.returns
        self.max_depth = play.max_depth
        self.num_players = n

    def play(self, strategies: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
        """Returns of one episode per row of ``strategies`` ``(E, num_players)``.

        ``uniforms`` ``(max_depth, E)`` holds the uniform draw of every episode at every depth.
        """
        num = strategies.shape[0]
        n1 = self.num_players + 1
        ext = np.zeros((num, n1), dtype=np.int64)
        ext[:, :-1] = strategies
        ext = ext.ravel()
        out = np.empty((num, self.num_players))
        alive = np.arange(num)
        cur = np.zeros(num, dtype=np.int64)
        width = self.table_t.shape[0]
        depth = 0
        while alive.size:
            rows = self.node_base[cur] + self.node_stride[cur] * ext[alive * n1 + self.node_actor[cur]]
            u = uniforms[depth][alive]
            action = cur * width
            for column in self.table_t:   # action slot = number of cumulative probabilities <= u
                action += column[rows] <= u
            cur = self.children_flat[action]
            done = self.is_terminal[cur]
            if done.any():
                out[alive[done]] = self.returns[cur[done]]
                keep = ~done
                alive, cur = alive[keep], cur[keep]
            depth += 1
        return out

    def __call__(self, segments: np.ndarray) -> SampleStatistics:
        """Play every segment ``(a_0, ..., a_{n-1}, start, count)``; return its statistics.

        Parameters
        ----------
        segments : ndarray of int, shape (num_segments, num_players + 2)
        """
        segments = np.asarray(segments, dtype=np.int64).reshape(-1, self.num_players + 2)
        n = self.num_players
        counts = segments[:, -1]
        uniforms = np.empty((self.max_depth, int(counts.sum())))
        at = 0
        for seg in segments:   # one generator per segment; a Python loop over segments, not episodes
            uniforms[:, at : at + seg[n + 1]] = segment_generator(self.seed, seg[:n], seg[n]).random(
                (self.max_depth, seg[n + 1]))
            at += seg[n + 1]
        owner = np.repeat(np.arange(len(segments)), counts)
        returns = self.play(segments[owner, :n], uniforms)
        total = np.stack([np.bincount(owner, weights=returns[:, p], minlength=len(segments)) for p in range(n)], 1)
        total_sq = np.stack([np.bincount(owner, weights=returns[:, p] ** 2, minlength=len(segments))
                             for p in range(n)], 1)
        return SampleStatistics(count=counts.copy(), total=total, total_sq=total_sq)
