"""How a policy acts: the acting protocol, the uniform policy and tabular policies looked up by infostate.

A policy acts in one of three ways, and :func:`policy_input` says which:

* :class:`BatchPolicy`: ``probabilities_np(obs, mask)`` (or ``probabilities(obs, mask)``) on a batch of
  observations, one call per batch (neural policies, :class:`UniformPolicy`);
* :class:`TabularStatePolicy`: a tabular array looked up by information-state strings;
* :class:`StatePolicy`: ``action_probabilities(state, player)``, asked state by state.

:func:`batch_probabilities` asks any of them for a batch of decisions. A user's policy class acts by defining one
of these methods; to be saved in a checkpoint and sent to workers it also needs the codec's methods
(:mod:`psro.policies.codec`).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from games.validation import is_integer
from psro.policies.tabular import check_policy, uniform_policy
from psro.sequence_form.game_tree import PlayerInfostates

__all__ = ["BatchPolicy", "StatePolicy", "TabularStatePolicy", "UniformPolicy", "batch_probabilities",
           "policy_input"]


@runtime_checkable
class BatchPolicy(Protocol):
    """A policy that acts on a batch of observations at once."""

    def probabilities_np(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """``(b, num_actions)`` probabilities for observations ``obs`` ``(b, obs_dim)`` and legal ``mask``
        ``(b, num_actions)``, zero on illegal actions."""


@runtime_checkable
class StatePolicy(Protocol):
    """Anything that gives action probabilities at a pyspiel state: tabular or neural policies."""

    def action_probabilities(self, state, player: int) -> np.ndarray:
        """Probabilities over all ``num_distinct_actions`` (zero on illegal ones)."""


class TabularStatePolicy:
    """A tabular policy array ``(num_infostates, num_actions)`` looked up by information-state string.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.policies import uniform_policy
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> policy = TabularStatePolicy(uniform_policy(tree.infostates[1]), tree.infostates[1])
    >>> state = tree.game.new_initial_state(); state.apply_action(0); state.apply_action(1); state.apply_action(0)
    >>> policy.action_probabilities(state, 1).tolist()
    [0.5, 0.5]
    """

    def __init__(self, policy: np.ndarray, infostates: PlayerInfostates):
        table = check_policy(policy, infostates, argname="policy")[0]
        self.policy = table
        self.infostates = infostates
        self._rows = dict(zip(infostates.keys, table))

    def action_probabilities(self, state, player: int) -> np.ndarray:
        """The row of the infostate of ``player`` at ``state``."""
        return self.rows([state.information_state_string(player)])[0]

    def rows(self, keys) -> np.ndarray:
        """The rows ``(len(keys), num_actions)`` of the information-state strings ``keys``.

        Examples
        --------
        >>> import pyspiel
        >>> from psro.sequence_form.game_tree import build_game_tree
        >>> from psro.policies import uniform_policy
        >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
        >>> TabularStatePolicy(uniform_policy(tree.infostates[0]), tree.infostates[0]).rows(["0", "2"]).shape
        (2, 2)
        """
        try:
            return np.array([self._rows[key] for key in keys], dtype=np.float64).reshape(len(keys), -1)
        except KeyError as exc:
            raise ValueError(f"infostate {exc.args[0]!r} is not in this policy's table; "
                             "was it built for another game?") from None


class UniformPolicy:
    """The policy that plays every legal action with equal probability (the first member of a population).

    Parameters
    ----------
    num_actions : int
        Width of the action masks it is asked about.

    Examples
    --------
    >>> mask = np.array([[True, True, False], [True, True, True]])
    >>> UniformPolicy(3).probabilities_np(np.zeros((2, 5), np.float32), mask).round(3).tolist()
    [[0.5, 0.5, 0.0], [0.333, 0.333, 0.333]]
    """

    def __init__(self, num_actions: int):
        if not is_integer(num_actions) or num_actions < 1:
            raise ValueError(f"num_actions must be a positive int; got {num_actions!r}.")
        self.num_actions = int(num_actions)

    def __repr__(self) -> str:
        return f"UniformPolicy({self.num_actions})"

    def __eq__(self, other) -> bool:
        return isinstance(other, UniformPolicy) and other.num_actions == self.num_actions

    def __hash__(self) -> int:
        return hash(("UniformPolicy", self.num_actions))

    def probabilities_np(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """``(b, num_actions)`` float64: uniform over each row's legal actions (``obs`` is not read)."""
        mask = np.asarray(mask, dtype=bool)
        if mask.ndim != 2 or mask.shape[1] != self.num_actions:
            raise ValueError(f"mask must have shape (b, {self.num_actions}); got {mask.shape}.")
        legal = mask.sum(axis=1, keepdims=True)
        if np.any(legal == 0):
            raise ValueError("every row of mask needs a legal action.")
        return mask / legal

    probabilities = probabilities_np

    def action_probabilities(self, state, player: int) -> np.ndarray:
        """Uniform over ``state``'s legal actions for ``player`` (the per-state interface)."""
        out = np.zeros(self.num_actions)
        legal = state.legal_actions(player)
        out[legal] = 1.0 / len(legal)
        return out

    def to_tabular(self, tree, player: int) -> np.ndarray:
        """The uniform policy over ``tree``'s infostates of ``player`` (:func:`psro.policies.uniform_policy`).

        Examples
        --------
        >>> import pyspiel
        >>> from psro.sequence_form.game_tree import build_game_tree
        >>> UniformPolicy(2).to_tabular(build_game_tree(pyspiel.load_game("kuhn_poker")), 1).shape
        (6, 2)
        """
        info = tree.infostates[player]
        if info.num_actions != self.num_actions:
            raise ValueError(f"the tree has {info.num_actions} actions but the policy {self.num_actions}; "
                             "use a policy built for this game.")
        return uniform_policy(info)


def policy_input(policy) -> str:
    """What :func:`batch_probabilities` needs for ``policy``: ``"obs"``, ``"keys"`` or ``"states"``.

    Examples
    --------
    >>> policy_input(UniformPolicy(2))
    'obs'
    """
    if hasattr(policy, "probabilities_np"):
        return "obs"
    if isinstance(policy, TabularStatePolicy):
        return "keys"
    if hasattr(policy, "action_probabilities"):
        return "states"
    if hasattr(policy, "probabilities"):
        return "obs"
    raise TypeError(f"{type(policy).__name__} cannot act: a policy needs probabilities_np(obs, mask), "
                    "probabilities(obs, mask) or action_probabilities(state, player).")


def batch_probabilities(policy, obs: np.ndarray, mask: np.ndarray, *, keys=None, states=None,
                        players=None) -> np.ndarray:
    """Action probabilities ``(b, num_actions)`` of ``policy`` for a batch of decisions, in one call where it can.

    Parameters
    ----------
    policy
        A policy with ``probabilities_np(obs, mask)`` (neural policies,
        :class:`UniformPolicy`) or ``probabilities(obs, mask)`` on numpy arrays:
        one call for the batch. A :class:`TabularStatePolicy` looks its rows up
        by ``keys``; any other :class:`StatePolicy` is asked state by state (its
        ``action_probabilities`` may return an array over all actions or, as
        OpenSpiel's ``policy.Policy`` does, a dict ``{action: probability}``).
    obs : ndarray, float32, shape (b, obs_dim)
    mask : ndarray of bool, shape (b, num_actions)
    keys : sequence of str, optional
        The acting seat's information-state strings (tabular policies).
    states : sequence of pyspiel.State, optional
        The states, with ``players`` the acting seats (other state policies).

    Returns
    -------
    ndarray, float64
        Rows that put all their mass on legal actions.

    Examples
    --------
    >>> batch_probabilities(UniformPolicy(2), np.zeros((1, 3), np.float32), np.array([[True, True]])).tolist()
    [[0.5, 0.5]]
    """
    mask = np.asarray(mask, dtype=bool)
    kind = policy_input(policy)
    if kind == "obs":
        method = getattr(policy, "probabilities_np", None) or policy.probabilities
        probs = np.asarray(method(obs, mask), dtype=np.float64)
    elif kind == "keys":
        if keys is None:
            raise ValueError("a TabularStatePolicy needs keys (the information-state strings).")
        probs = policy.rows(keys)
    else:
        if states is None or players is None:
            raise ValueError(f"{type(policy).__name__} acts on states; pass states and players.")
        probs = np.array([_dense(policy.action_probabilities(s, int(p)), mask.shape[1])
                          for s, p in zip(states, players)], dtype=np.float64).reshape(len(states), -1)
    if probs.shape != mask.shape:
        raise ValueError(f"{type(policy).__name__} returned probabilities of shape {probs.shape}; expected "
                         f"{mask.shape} (was it built for this game?).")
    return probs


def _dense(probabilities, num_actions: int):
    """A dict ``{action: probability}`` (OpenSpiel's policies) as a vector over ``num_actions``; else as given."""
    if not isinstance(probabilities, dict):
        return probabilities
    out = np.zeros(num_actions)
    for action, p in probabilities.items():
        out[int(action)] = p
    return out
