"""Behaviour cloning of a dataset of trajectories: per information state, the empirical action frequencies.

The dataset is the table of :mod:`games.trajectories` (one row per step). For every player and every
information state the players' rows show, the cloned policy plays each legal action with probability

    (count(action) + smoothing) / (count(all legal actions) + smoothing * number of legal actions),

and at an information state the data never shows, uniformly over the legal actions. It is the baseline an
offline learner has to beat: it reproduces the behaviour policy where the data is dense and knows nothing
elsewhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from games.validation import check_real

__all__ = ["ClonedPolicy", "clone_behaviour", "policy_on_tree"]


def policy_on_tree(table: Mapping, tree, player: int) -> np.ndarray:
    """A policy given as ``{infostate string: action probabilities}`` as the array ``(num_infostates,
    num_actions)`` over ``tree``'s infostates of ``player``: each row renormalised over the legal actions, and
    uniform where ``table`` has no entry (or no mass on a legal action).

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> key = tree.infostates[0].keys[0]
    >>> policy = policy_on_tree({key: [0.25, 0.75]}, tree, 0)
    >>> policy[0].tolist(), policy[1].tolist()
    ([0.25, 0.75], [0.5, 0.5])
    """
    info = tree.infostates[player]
    mask = info.legal_mask.astype(np.float64)
    out = mask.copy()
    for row, key in enumerate(info.keys):
        probs = table.get(key)
        if probs is not None:
            probs = np.asarray(probs, dtype=np.float64)[: info.num_actions] * mask[row]
            if probs.sum() > 0:
                out[row] = probs
    return out / out.sum(axis=1, keepdims=True)


@dataclass(frozen=True, eq=False)
class ClonedPolicy:
    """The behaviour-cloned policy of every player.

    Attributes
    ----------
    counts : tuple of dict
        Per player, ``{infostate string: action counts (num_actions,)}`` over the dataset's rows.
    legal : tuple of dict
        Per player, ``{infostate string: legal-action mask (num_actions,) of bool}``.
    num_actions : int
    smoothing : float
        The additive (Laplace) smoothing of the counts.

    A ``ClonedPolicy`` is a :class:`psro.policies.Policy` (:meth:`to_tabular`) and also a behaviour policy for
    :func:`games.datasets.collect` (:meth:`action_probabilities`).
    """

    counts: tuple
    legal: tuple
    num_actions: int
    smoothing: float

    @property
    def num_players(self) -> int:
        return len(self.counts)

    def probabilities(self, player: int, infostate: str, legal_mask=None) -> np.ndarray:
        """The cloned action probabilities at ``infostate`` (uniform over ``legal_mask`` where it is unseen)."""
        counts = self.counts[player].get(infostate)
        mask = self.legal[player].get(infostate) if legal_mask is None else np.asarray(legal_mask, dtype=bool)
        if mask is None:
            raise ValueError(f"infostate {infostate!r} of player {player} is not in the dataset; give legal_mask.")
        weights = mask.astype(np.float64) * ((counts if counts is not None else 0.0) + self.smoothing)
        if weights.sum() <= 0:   # (unseen and no smoothing)
            weights = mask.astype(np.float64)
        return weights / weights.sum()

    def table(self, player: int) -> dict:
        """``{infostate: probabilities}`` over the infostates the dataset shows for ``player``."""
        return {key: self.probabilities(player, key) for key in self.counts[player]}

    def to_tabular(self, tree, player: int) -> np.ndarray:
        """The policy over ``tree``'s infostates of ``player`` (:func:`policy_on_tree`: unseen ones uniform)."""
        return policy_on_tree(self.table(player), tree, player)

    def tabular(self, tree) -> list:
        """:meth:`to_tabular` for every player."""
        return [self.to_tabular(tree, p) for p in range(self.num_players)]

    def action_probabilities(self, state, player: int | None = None) -> np.ndarray:
        """Probabilities over ``num_distinct_actions`` at an OpenSpiel ``state`` (the acting player's when
        ``player`` is None): a behaviour policy for :func:`games.datasets.collect`."""
        player = state.current_player() if player is None else int(player)
        mask = np.zeros(self.num_actions, dtype=bool)
        mask[state.legal_actions(player)] = True
        return self.probabilities(player, state.information_state_string(player), mask)


def clone_behaviour(dataset, smoothing: float = 1.0, num_players: int | None = None,
                      num_actions: int | None = None) -> ClonedPolicy:
    """Clone the behaviour of ``dataset``: per player and infostate, the smoothed empirical action frequencies.

    Parameters
    ----------
    dataset : pandas.DataFrame
        A table of :mod:`games.trajectories` (validated first by
        :func:`games.trajectories.validate_trajectories`).
    smoothing : float
        Added to every legal action's count (>= 0; 0 gives the raw frequencies).
    num_players, num_actions : int, optional
        The game's numbers of players and of distinct actions (default: the length of the reward vectors, and
        one more than the largest legal action the dataset shows).

    Returns
    -------
    ClonedPolicy

    Examples
    --------
    >>> import pyspiel
    >>> from games.datasets import collect
    >>> game = pyspiel.load_game("kuhn_poker")
    >>> data = collect(game, pyspiel.UniformRandomPolicy(game), episodes=200, seed=0)
    >>> cloned = clone_behaviour(data, smoothing=0.0, num_players=2, num_actions=2)
    >>> probs = cloned.probabilities(0, "0")   # player 0 holding the jack, first to act
    >>> bool(abs(probs[0] - 0.5) < 0.2), float(probs.sum())
    (True, 1.0)
    """
    from games.trajectories import parse_floats, parse_ints, validate_trajectories

    smoothing = check_real(smoothing, "smoothing", minimum=0.0)
    table = validate_trajectories(dataset)
    rows = table[table["player"] >= 0]
    if num_actions is None:
        num_actions = 1 + max((max(parse_ints(a)) for a in rows["legal_actions"]), default=0)
    if num_players is None:   # (every reward vector has one entry per player)
        num_players = len(parse_floats(table["reward"].iloc[0]))
    counts: list = [{} for _ in range(num_players)]
    legal: list = [{} for _ in range(num_players)]
    for player, key, actions, action in zip(rows["player"].to_numpy(), rows["infostate"].to_numpy(),
                                            rows["legal_actions"].to_numpy(), rows["action"].to_numpy()):
        player = int(player)
        if player >= num_players:
            raise ValueError(f"num_players={num_players} but the dataset has rows of player {player}; give the "
                             "game's number of players.")
        if key not in counts[player]:
            counts[player][key] = np.zeros(num_actions)
            mask = np.zeros(num_actions, dtype=bool)
            mask[list(parse_ints(actions))] = True
            legal[player][key] = mask
        counts[player][key][int(action)] += 1.0
    return ClonedPolicy(tuple(counts), tuple(legal), int(num_actions), float(smoothing))
