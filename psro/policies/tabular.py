"""Tabular policies as arrays: realization plans, mixtures and conversion to OpenSpiel.

A policy of player ``p`` is a float array ``(num_infostates, num_actions)``
whose rows are distributions over the legal actions; a population is an array
``(num_policies, num_infostates, num_actions)``. Its *realization plan* gives
every sequence (infostate, action) the probability that the policy itself
plays all of its own moves on the path to it, with the empty sequence last
(always 1). Mixtures of policies are mixtures of realization plans, which is
what makes aggregation a matrix product. :func:`to_openspiel_dict` lists one
player's policy as pyspiel's ``{infostate: [(action, probability)]}``; a whole
``TabularPolicy`` of all players, and back, is :mod:`psro.policies.openspiel`.

What populations hold, and oracles and evaluators consume, is a :class:`Policy`:
today the tabular array itself; any object with ``to_tabular(tree, player)``
(such as :class:`psro.oracles.learned.networks.NeuralPolicy`) is one too, and
:func:`as_tabular` turns either into the array the sequence-form code reads.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from psro.errors import ConfigError
from psro.sequence_form.game_tree import PlayerInfostates

__all__ = [
    "Policy",
    "as_tabular",
    "uniform_policy",
    "random_policies",
    "realization_plans",
    "own_reach",
    "behaviour_from_plan",
    "aggregate",
    "to_openspiel_dict",
    "check_policy",
    "starting_policies",
]


@runtime_checkable
class Policy(Protocol):
    """A policy that is not (yet) a tabular array: it gives its tabular form over a game tree's infostates of
    ``player``, an array ``(num_infostates, num_actions)`` (a tabular array is a policy as it is)."""

    def to_tabular(self, tree, player: int) -> np.ndarray:
        ...


def as_tabular(policy, tree, player: int) -> np.ndarray:
    """The tabular array of ``policy``: an array as it is (checked against the player's infostates), a
    :class:`Policy` through its ``to_tabular``.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> as_tabular(uniform_policy(tree.infostates[1]), tree, 1).shape
    (6, 2)
    >>> class FirstAction:
    ...     def to_tabular(self, tree, player):
    ...         info = tree.infostates[player]
    ...         return np.eye(info.num_actions)[info.legal_mask.argmax(axis=1)]
    >>> isinstance(FirstAction(), Policy), as_tabular(FirstAction(), tree, 0)[0].tolist()
    (True, [1.0, 0.0])
    """
    table = policy.to_tabular(tree, player) if isinstance(policy, Policy) else np.asarray(policy, dtype=np.float64)
    check_policy(table, tree.infostates[player])
    return table


def uniform_policy(infostates: PlayerInfostates) -> np.ndarray:
    """The policy that plays every legal action with equal probability.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> uniform_policy(tree.infostates[0])[0].tolist()
    [0.5, 0.5]
    """
    mask = infostates.legal_mask.astype(np.float64)
    return mask / mask.sum(axis=1, keepdims=True)


def random_policies(infostates: PlayerInfostates, k: int, rng: np.random.Generator,
                    sparsity: float = 0.0) -> np.ndarray:
    """``k`` random tabular policies ``(k, num_infostates, num_actions)``, each row uniform on the simplex of the
    legal actions' weights drawn from ``rng``; with ``sparsity > 0`` each legal action is left out with that
    probability (the first legal action stays when none is left), so policies with zeros are covered too.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> info = build_game_tree(pyspiel.load_game("kuhn_poker")).infostates[0]
    >>> policies = random_policies(info, 3, np.random.default_rng(0), sparsity=0.5)
    >>> policies.shape, bool(np.allclose(policies.sum(-1), 1.0)), bool((policies[:, ~info.legal_mask] == 0).all())
    ((3, 6, 2), True, True)
    """
    r = rng.random((k, infostates.num_infostates, infostates.num_actions)) * infostates.legal_mask
    if sparsity:
        r *= rng.random(r.shape) >= sparsity
        first = infostates.legal_mask.argmax(axis=1)
        for i, s in zip(*np.nonzero(r.sum(-1) == 0)):
            r[i, s, first[s]] = 1.0
    return r / r.sum(-1, keepdims=True)


def starting_policies(given, infostates: Sequence) -> list:
    """Each player's first policies from ``given`` (per player a list of pure strategies, as action indices, for a
    player with one information state, or of tabular policies ``(I, A)``), as the loop's pending list
    ``[[(policy, nan), ...], ...]``. Errors name ``initial_policies``, the player and the fix.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> tree = build_game_tree(pyspiel.load_game("matrix_rps"))
    >>> [[policy.tolist() for policy, _ in player] for player in starting_policies([[0], [1, 2]], tree.infostates)]
    [[[[1.0, 0.0, 0.0]]], [[[0.0, 1.0, 0.0]], [[0.0, 0.0, 1.0]]]]
    """
    if not isinstance(given, (list, tuple)) or len(given) != len(infostates):
        raise ConfigError("initial_policies", f"give one list of policies per player ({len(infostates)} lists); got "
                          f"{given!r}.")
    pending = []
    for p, (policies, info) in enumerate(zip(given, infostates)):
        if not isinstance(policies, (list, tuple)) or len(policies) == 0:
            raise ConfigError("initial_policies", f"player {p}'s entry must be a non-empty list of policies; got "
                              f"{policies!r}.")
        mine = []
        for policy in policies:
            if isinstance(policy, numbers.Integral) and not isinstance(policy, bool):
                if info.num_infostates != 1:
                    raise ConfigError("initial_policies", f"player {p} decides at {info.num_infostates} information "
                                      "states, so an action index is not a pure strategy; give a tabular policy "
                                      f"of shape ({info.num_infostates}, {info.num_actions}).")
                if not (0 <= policy < info.num_actions and info.legal_mask[0, policy]):
                    legal = np.flatnonzero(info.legal_mask[0]).tolist()
                    raise ConfigError("initial_policies", f"player {p}'s pure strategy {policy} is not one of its "
                                      f"actions {legal}.")
                table = np.zeros((1, info.num_actions))
                table[0, policy] = 1.0
            else:
                table = check_policy(policy, info, argname=f"initial_policies[{p}]")[0]
            mine.append((table, math.nan))
        pending.append(mine)
    return pending


def check_policy(policies, infostates: PlayerInfostates, atol: float = 1e-9,
                 argname: str = "policies") -> np.ndarray:
    """Validate one policy ``(I, A)`` or a stack ``(n, I, A)``; return a float64 stack ``(n, I, A)``.

    Raises
    ------
    ValueError
        On a wrong shape, negative or non-finite entries, mass on illegal
        actions, or rows that do not sum to one.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> info = build_game_tree(pyspiel.load_game("kuhn_poker")).infostates[0]
    >>> check_policy(uniform_policy(info), info).shape
    (1, 6, 2)
    """
    arr = np.asarray(policies, dtype=np.float64)
    if arr.ndim == 2:
        arr = arr[None]
    shape = (infostates.num_infostates, infostates.num_actions)
    if arr.ndim != 3 or arr.shape[1:] != shape:
        raise ValueError(f"{argname} must have shape (num_policies, {shape[0]}, {shape[1]}); got {arr.shape}.")
    if not np.all(np.isfinite(arr)) or np.any(arr < -atol):
        raise ValueError(f"{argname} must hold finite, non-negative probabilities.")
    if np.any(np.abs(arr[:, ~infostates.legal_mask]) > atol):
        raise ValueError(f"{argname} puts probability on illegal actions; zero them out.")
    sums = arr.sum(axis=2)
    if np.any(np.abs(sums - 1.0) > 1e-6):
        worst = sums.flat[np.abs(sums - 1).argmax()]
        raise ValueError(f"every row of {argname} must sum to one; the worst sums to {worst}.")
    return arr


def realization_plans(policies: np.ndarray, infostates: PlayerInfostates) -> np.ndarray:
    """Realization plans of a stack of policies, one own-depth level at a time.

    Parameters
    ----------
    policies : ndarray, shape (n, num_infostates, num_actions)
    infostates : PlayerInfostates

    Returns
    -------
    ndarray, shape (n, num_sequences)
        ``x[i, s * A + a]`` is policy i's own probability of reaching ``s``
        times ``policies[i, s, a]``; the last column (empty sequence) is 1.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> info = build_game_tree(pyspiel.load_game("kuhn_poker")).infostates[0]
    >>> x = realization_plans(uniform_policy(info)[None], info)
    >>> x.shape, float(x[0, -1]), float(x[0, :-1].max())
    ((1, 13), 1.0, 0.5)
    """
    n = policies.shape[0]
    num_a = infostates.num_actions
    plans = np.empty((n, infostates.num_sequences))
    plans[:, -1] = 1.0
    actions = np.arange(num_a)
    for level in infostates.levels:
        reach = plans[:, infostates.parent[level]]  # parents lie on shallower levels, already filled
        sequences = level[:, None] * num_a + actions
        plans[:, sequences] = reach[:, :, None] * policies[:, level, :]
    return plans


def own_reach(plans: np.ndarray, infostates: PlayerInfostates) -> np.ndarray:
    """Own reach probability of every infostate, ``(n, num_infostates)``, from realization plans.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> info = build_game_tree(pyspiel.load_game("kuhn_poker")).infostates[0]
    >>> own_reach(realization_plans(uniform_policy(info)[None], info), info).round(2).tolist()
    [[1.0, 0.5, 1.0, 0.5, 1.0, 0.5]]
    """
    return plans[..., infostates.parent]


def behaviour_from_plan(plan: np.ndarray, infostates: PlayerInfostates, fallback: np.ndarray | None = None,
                        tol: float = 0.0) -> np.ndarray:
    """The behaviour policy ``x(s, a) / x(parent(s))`` of a realization plan.

    Where the plan does not reach an infostate (reach ``<= tol``) the row of
    ``fallback`` is used (uniform when not given); any choice there is
    behaviourally equivalent.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> info = build_game_tree(pyspiel.load_game("kuhn_poker")).infostates[0]
    >>> pi = uniform_policy(info)
    >>> bool(np.allclose(behaviour_from_plan(realization_plans(pi[None], info)[0], info), pi))
    True
    """
    num_i, num_a = infostates.num_infostates, infostates.num_actions
    reach = plan[infostates.parent]
    body = plan[:-1].reshape(num_i, num_a)
    reached = reach > tol
    out = uniform_policy(infostates) if fallback is None else np.array(fallback, dtype=np.float64)
    out[reached] = body[reached] / reach[reached, None]
    return out


def aggregate(plans: np.ndarray, weights, infostates: PlayerInfostates,
              policies: np.ndarray | None = None) -> np.ndarray:
    """The behaviour policy equivalent to playing policy ``i`` with probability ``weights[i]``.

    At each infostate ``s`` it is ``sum_i w_i r_i(s) pi_i(.|s) / sum_i w_i r_i(s)``
    with ``r_i`` policy i's own reach: one matrix-vector product of the
    weights with the realization plans. Infostates that no policy in the
    support reaches get the weight-averaged policy (if ``policies`` is given)
    or the uniform one.

    Parameters
    ----------
    plans : ndarray, shape (n, num_sequences)
    weights : array_like, shape (n,)
        A probability vector.
    infostates : PlayerInfostates
    policies : ndarray, shape (n, num_infostates, num_actions), optional

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> info = build_game_tree(pyspiel.load_game("kuhn_poker")).infostates[0]
    >>> pure = np.zeros((2, 6, 2)); pure[0, :, 0] = 1; pure[1, :, 1] = 1   # always pass / always bet
    >>> agg = aggregate(realization_plans(pure, info), [0.25, 0.75], info)
    >>> agg[0].tolist()
    [0.25, 0.75]
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (plans.shape[0],):
        raise ValueError(f"weights must have one entry per policy ({plans.shape[0]}); got shape {w.shape}.")
    if np.any(w < 0) or not np.isclose(w.sum(), 1.0, atol=1e-6):
        raise ValueError("weights must be a probability vector (non-negative, summing to one).")
    fallback = None if policies is None else np.tensordot(w, policies, axes=1)
    return behaviour_from_plan(w @ plans, infostates, fallback=fallback)


def to_openspiel_dict(policy: np.ndarray, infostates: PlayerInfostates) -> dict:
    """``{infostate string: [(action, probability), ...]}`` over legal actions, as pyspiel accepts.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> info = build_game_tree(pyspiel.load_game("kuhn_poker")).infostates[0]
    >>> d = to_openspiel_dict(uniform_policy(info), info)
    >>> d[info.keys[0]]
    [(0, 0.5), (1, 0.5)]
    """
    mask = infostates.legal_mask
    actions = [np.flatnonzero(row).tolist() for row in mask]
    rows = policy.tolist()
    return {key: [(a, row[a]) for a in acts] for key, acts, row in zip(infostates.keys, actions, rows)}
