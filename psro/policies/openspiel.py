"""Policies to and from OpenSpiel: one ``TabularPolicy`` holding every player's tabular policy.

Our tabular policy of player ``p`` is an array ``(num_infostates, num_actions)``
whose rows follow ``tree.infostates[p].keys``, OpenSpiel's information-state
strings. OpenSpiel's :class:`open_spiel.python.policy.TabularPolicy` keeps one
row per information state of all players, looked up by the same strings
(``state_lookup``). Export writes our rows into a fresh ``TabularPolicy`` of
``tree.game``; import reads them back, checked, so that
``from_openspiel_policy(to_openspiel_policy(p, tree), tree)`` gives ``p``
exactly. A population member, or a meta-strategy's mixture of members (the
behaviour policy :meth:`psro.policies.population.Population.aggregate` computes), is
exported the same way; :meth:`psro.PSRO.openspiel_policy` does it for the
run's meta-strategy.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from games.validation import is_integer
from psro.policies.tabular import check_policy
from psro.sequence_form.game_tree import GameTree

__all__ = ["to_openspiel_policy", "from_openspiel_policy", "members_policy"]


def _rows(tabular, tree: GameTree, player: int) -> np.ndarray:
    """The ``TabularPolicy`` rows of player ``player``'s infostates, in the tree's order (checked)."""
    lookup, own = tabular.state_lookup, set(tabular.states_per_player[player])
    keys = tree.infostates[player].keys
    missing = [key for key in keys if key not in own]
    if missing:
        raise ValueError(f"policy has no row for player {player}'s information state {missing[0]!r} "
                         f"({len(missing)} missing); was it made for another game than {tree.game}?")
    rows = np.fromiter((lookup[key] for key in keys), dtype=np.intp, count=len(keys))
    if not np.array_equal(np.asarray(tabular.legal_actions_mask[rows], dtype=bool), tree.infostates[player].legal_mask):
        raise ValueError(f"policy's legal actions differ from {tree.game}'s at player {player}'s information "
                         "states; was it made for another game?")
    return rows


def _check_tabular(tabular, tree: GameTree) -> None:
    from open_spiel.python.policy import TabularPolicy

    if not isinstance(tabular, TabularPolicy):
        raise TypeError(f"policy must be an open_spiel.python.policy.TabularPolicy; got {type(tabular).__name__}. "
                        "Tabulate another policy first: open_spiel.python.policy.tabular_policy_from_callable"
                        "(game, policy).")
    players = len(tabular.states_per_player)
    if players != tree.num_players:
        raise ValueError(f"policy is for a {players}-player game but {tree.game} has {tree.num_players} players.")
    width = tabular.action_probability_array.shape[1]
    if width != tree.num_actions:
        raise ValueError(f"policy has {width} actions per state but {tree.game} has {tree.num_actions}; "
                         "was it made for another game?")


def to_openspiel_policy(policies: Sequence, tree: GameTree):
    """One OpenSpiel ``TabularPolicy`` of ``tree.game`` that plays ``policies[p]`` for every player ``p``.

    Parameters
    ----------
    policies : sequence of (ndarray or None)
        One entry per player: a tabular policy ``(num_infostates_p, num_actions)``
        (a population member, ``population.policies[i]``, or a mixture of
        members, ``population.aggregate(weights)``), or None to leave that
        player uniform random (OpenSpiel's default).
    tree : psro.sequence_form.game_tree.GameTree
        The game's tree (``PSRO.tree``), whose infostate keys order the rows.

    Returns
    -------
    open_spiel.python.policy.TabularPolicy
        A new policy, all players merged, usable with any OpenSpiel algorithm
        (``exploitability.nash_conv``, ``expected_game_score``, ...).

    Raises
    ------
    ValueError
        For a wrong number of entries, or an entry that is not a policy of its
        player (shape, negative entries, mass on illegal actions, rows not
        summing to one).

    Examples
    --------
    >>> import pyspiel
    >>> from open_spiel.python.algorithms import exploitability
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> always_bet = [np.eye(2)[[1] * info.num_infostates] for info in tree.infostates]
    >>> policy = to_openspiel_policy(always_bet, tree)
    >>> policy.policy_for_key(tree.infostates[0].keys[0]).tolist()
    [0.0, 1.0]
    >>> round(float(exploitability.nash_conv(tree.game, policy)), 6)   # each player's best response gains 1/3
    0.666667
    """
    from open_spiel.python.policy import TabularPolicy

    if len(policies) != tree.num_players:
        raise ValueError(f"policies needs one entry per player ({tree.num_players}), None for uniform; "
                         f"got {len(policies)}.")
    tabular = TabularPolicy(tree.game)
    _check_tabular(tabular, tree)
    for p, policy in enumerate(policies):
        if policy is None:
            continue
        arr = check_policy(policy, tree.infostates[p], argname=f"policies[{p}]")
        if arr.shape[0] != 1:
            raise ValueError(f"policies[{p}] must be one policy (num_infostates, num_actions); got a stack of "
                             f"{arr.shape[0]}. Mix a population first: population.aggregate(weights).")
        tabular.action_probability_array[_rows(tabular, tree, p)] = arr[0]
    return tabular


def from_openspiel_policy(policy, tree: GameTree) -> list:
    """Every player's tabular policy ``(num_infostates_p, num_actions)`` from an OpenSpiel ``TabularPolicy``.

    Parameters
    ----------
    policy : open_spiel.python.policy.TabularPolicy
        A policy of ``tree.game`` (all players' states, as ``TabularPolicy(game)`` makes it).
    tree : psro.sequence_form.game_tree.GameTree

    Returns
    -------
    list of ndarray
        One float64 array per player, rows in the order of ``tree.infostates[p].keys``;
        ready for ``population.add(...)`` or :func:`to_openspiel_policy`.

    Raises
    ------
    TypeError
        When ``policy`` is not a ``TabularPolicy`` (tabulate it first).
    ValueError
        When it lacks a row for one of the tree's information states, has another
        action count, or a row is not a distribution over the legal actions.

    Examples
    --------
    >>> import pyspiel
    >>> from open_spiel.python.policy import TabularPolicy
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> policies = from_openspiel_policy(TabularPolicy(tree.game), tree)   # uniform random
    >>> [p.shape for p in policies], float(policies[1][0, 0])
    ([(6, 2), (6, 2)], 0.5)
    >>> all(np.array_equal(a, b) for a, b in zip(from_openspiel_policy(to_openspiel_policy(policies, tree), tree),
    ...                                          policies))
    True
    """
    _check_tabular(policy, tree)
    out = []
    for p, info in enumerate(tree.infostates):
        rows = np.array(policy.action_probability_array[_rows(policy, tree, p)], dtype=np.float64)
        out.append(check_policy(rows, info, argname=f"policy (player {p}'s rows)")[0])
    return out


def members_policy(populations: Sequence, aggregates, members, tree: GameTree):
    """One OpenSpiel ``TabularPolicy`` of chosen population members (what :meth:`psro.PSRO.openspiel_policy` gives).

    Parameters
    ----------
    populations : sequence of psro.policies.population.Population
    aggregates : sequence of ndarray, or None
        Each player's meta-strategy aggregate (:meth:`psro.PSRO.aggregate_policies`); needed when some member is
        None. Under JPSRO the aggregates mix each player's marginal only: a ``TabularPolicy`` cannot correlate
        players.
    members : sequence of (int or None), optional
        Per player, the index of a population member to export, or None for that player's aggregate (default:
        every player's aggregate, whose NashConv in OpenSpiel is the run's ``gap`` under a product meta-solver).
    tree : GameTree

    Returns
    -------
    open_spiel.python.policy.TabularPolicy
        See :func:`to_openspiel_policy`; read back with :func:`from_openspiel_policy`.

    Examples
    --------
    >>> from psro import PSRO
    >>> solver = PSRO("kuhn_poker", progress=False)
    >>> _ = solver.run(iterations=4)
    >>> members_policy(solver.populations, solver.aggregate_policies(), [0, None], solver.tree).policy_for_key(
    ...     solver.tree.infostates[0].keys[0]).tolist()
    [0.5, 0.5]
    """
    n = len(populations)
    members = [None] * n if members is None else list(members)
    if len(members) != n:
        raise ValueError(f"members needs one entry per player ({n}), None for the aggregate; got {len(members)}.")
    chosen = []
    for p, (m, pop) in enumerate(zip(members, populations)):
        if m is None:
            chosen.append(aggregates[p])
        elif is_integer(m) and 0 <= m < len(pop):
            chosen.append(pop.policies[m])
        else:
            raise ValueError(f"members[{p}] must be None or a member index in [0, {len(pop)}); got {m!r}.")
    return to_openspiel_policy(chosen, tree)
