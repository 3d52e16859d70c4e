"""Exact best responses against fixed opponent policies.

The numpy sequence-form best response, registered as oracle ``"exact"``.

:func:`best_response` works in the sequence form. The opponents' realization
plans and chance turn every terminal into a weight for the responder's last
sequence on its path; backward induction over the responder's own infostate
tree, one level at a time, then picks the best action everywhere
(:class:`psro.oracles.openspiel.OpenSpielBestResponse` answers the same with
pyspiel's C++).

What a player responds to is a :class:`psro.oracles.base.Target`: either a
*product* of the other players' mixtures over their populations (Nash-style
and alpha-Rank PSRO), or a distribution over the others' *joint* profiles
(JPSRO: the conditional joint of CCE-JPSRO, or one conditional per
recommendation of CE-JPSRO). For a joint target the opponents' weight of a
terminal ``z`` is ``sum_k w_k prod_{q != p} x_q^{(k)}(sigma_q(z))``: a weighted
sum over the support profiles of products of gathered realization plans,
computed as one matrix product.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from psro.oracles.base import BestResponse, Target, register_oracle
from psro.sequence_form.game_tree import GameTree

__all__ = ["best_response", "joint_best_response", "joint_terminal_weights", "opponents_reach", "ExactOracle"]


def _backward_induction(tree: GameTree, player: int, terminal_weights: np.ndarray) -> BestResponse:
    """Best response of ``player`` given ``c(z) u_p(z) * (opponents' weight of z)`` for every terminal."""
    info = tree.infostates[player]
    num_a = info.num_actions
    # value[s * A + a]: expected payoff collected below sequence (s, a); the last entry is the root
    value = np.bincount(tree.terminal_sequence[player], weights=terminal_weights, minlength=info.num_sequences)
    policy = np.zeros((info.num_infostates, num_a))
    for level in reversed(info.levels):
        q = value[:-1].reshape(info.num_infostates, num_a)[level]
        q = np.where(info.legal_mask[level], q, -np.inf)
        best = q.argmax(axis=1)
        policy[level, best] = 1.0
        np.add.at(value, info.parent[level], q[np.arange(level.size), best])
    return BestResponse(player=player, policy=policy, value=float(value[-1]))


def _opponent_terminal_weights(tree: GameTree, player: int, opponent_plans: Sequence) -> np.ndarray:
    """``c(z) u_p(z) prod_{q != p} x_q(sigma_q(z))`` for every terminal ``z``."""
    w = tree.terminal_chance * tree.terminal_returns[:, player]
    for q, plan in enumerate(opponent_plans):
        if q != player:
            w = w * np.asarray(plan)[tree.terminal_sequence[q]]
    return w


def best_response(tree: GameTree, player: int, opponent_plans: Sequence) -> BestResponse:
    """Exact best response of ``player`` by backward induction in the sequence form.

    Parameters
    ----------
    tree : GameTree
    player : int
    opponent_plans : sequence of ndarray
        One realization plan ``(num_sequences_q,)`` per player; the
        responder's own entry is ignored (may be ``None``). Use the plan of an
        aggregate policy, or directly the mixture ``weights @ plans``.

    Returns
    -------
    BestResponse
        Ties are broken towards the lowest action index.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.policies import realization_plans, uniform_policy
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> plans = [realization_plans(uniform_policy(i)[None], i)[0] for i in tree.infostates]
    >>> round(best_response(tree, 0, plans).value, 6)   # against a uniform player 1
    0.5
    """
    if not 0 <= player < tree.num_players:
        raise ValueError(f"player must be in [0, {tree.num_players}); got {player}.")
    if len(opponent_plans) != tree.num_players:
        raise ValueError(f"opponent_plans needs one entry per player ({tree.num_players}); got {len(opponent_plans)}.")
    return _backward_induction(tree, player, _opponent_terminal_weights(tree, player, opponent_plans))


def joint_terminal_weights(tree: GameTree, player: int, plans: Sequence, profiles, weights) -> np.ndarray:
    """Opponents' weight of every terminal under a distribution over joint profiles.

    ``sum_k weights[k] prod_{q != player} plans[q][profiles[k, q]][sigma_q(z)]``,
    computed as gathered plans ``(K, Z)`` multiplied elementwise over the
    opponents and contracted with the weights (one matrix-vector product).

    Parameters
    ----------
    tree : GameTree
    player : int
    plans : sequence of ndarray
        Player q's realization plans ``(k_q, num_sequences_q)``.
    profiles : array_like of int, shape (K, num_players)
    weights : array_like, shape (K,)

    Returns
    -------
    ndarray, shape (num_terminals,)

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.policies import realization_plans, uniform_policy
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> plans = [realization_plans(uniform_policy(i)[None], i) for i in tree.infostates]
    >>> w = joint_terminal_weights(tree, 0, plans, [[0, 0]], [1.0])
    >>> bool(np.allclose(w, plans[1][0][tree.terminal_sequence[1]]))
    True
    """
    profiles = np.asarray(profiles, dtype=np.intp)
    weights = np.asarray(weights, dtype=np.float64)
    if profiles.ndim != 2 or profiles.shape[1] != tree.num_players or weights.shape != (profiles.shape[0],):
        raise ValueError(f"profiles must have shape (K, {tree.num_players}) and weights shape (K,); got "
                         f"{profiles.shape} and {weights.shape}.")
    return weights @ opponents_reach(tree, player, plans, profiles)


def opponents_reach(tree: GameTree, player: int, plans: Sequence, profiles) -> np.ndarray:
    """The others' reach of every terminal under each joint profile.

    ``reach[k, z] = prod_{q != player} plans[q][profiles[k, q]][sigma_q(z)]``. Each opponent's distinct
    plans are gathered once, then spread over the profiles that use them.

    Parameters
    ----------
    tree : GameTree
    player : int
    plans : sequence of ndarray
        Player q's realization plans ``(k_q, num_sequences_q)``.
    profiles : array_like of int, shape (K, num_players)

    Returns
    -------
    ndarray, shape (K, num_terminals)

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.policies import realization_plans, uniform_policy
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> plans = [realization_plans(uniform_policy(i)[None], i) for i in tree.infostates]
    >>> opponents_reach(tree, 0, plans, [[0, 0]]).shape == (1, tree.num_terminals)
    True
    """
    profiles = np.asarray(profiles, dtype=np.intp)
    reach = np.ones((profiles.shape[0], tree.num_terminals))
    for q in range(tree.num_players):
        if q != player:
            used, inverse = np.unique(profiles[:, q], return_inverse=True)
            gathered = np.asarray(plans[q])[used][:, tree.terminal_sequence[q]]   # (distinct, Z)
            reach *= gathered[inverse.reshape(-1)]
    return reach


def joint_best_response(tree: GameTree, player: int, plans: Sequence, profiles, weights) -> BestResponse:
    """Exact best response of ``player`` to a distribution over the others' joint policy profiles.

    This is the target of JPSRO: ``weights[k]`` is the probability that the
    others play the profile ``profiles[k]`` (indices into their realization
    plans ``plans[q]``), correlated, not as a product of marginals.

    Parameters
    ----------
    tree : GameTree
    player : int
    plans : sequence of ndarray
        Player q's realization plans ``(k_q, num_sequences_q)`` (the responder's entry is unused).
    profiles : array_like of int, shape (K, num_players)
        The responder's column is ignored.
    weights : array_like, shape (K,)
        Non-negative, summing to one.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.policies import realization_plans
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> info = tree.infostates[1]
    >>> pure = np.zeros((2, info.num_infostates, 2)); pure[0, :, 0] = 1; pure[1, :, 1] = 1
    >>> plans = [None, realization_plans(pure, info)]
    >>> # half "always pass", half "always bet": the same as their 50/50 mixture for one opponent
    >>> round(joint_best_response(tree, 0, plans, [[0, 0], [0, 1]], [0.5, 0.5]).value, 6)
    0.5
    """
    if not 0 <= player < tree.num_players:
        raise ValueError(f"player must be in [0, {tree.num_players}); got {player}.")
    weights = np.asarray(weights, dtype=np.float64)
    if np.any(weights < 0) or not np.isclose(weights.sum(), 1.0, atol=1e-6):
        raise ValueError("weights must be a probability vector (non-negative, summing to one).")
    w = tree.terminal_chance * tree.terminal_returns[:, player]
    return _backward_induction(tree, player, w * joint_terminal_weights(tree, player, plans, profiles, weights))


@register_oracle("exact", normal_form=True)
class ExactOracle:
    """Oracle ``"exact"``: :func:`best_response` for product targets, :func:`joint_best_response` for joint ones.

    Deterministic and exact; ``seed`` and ``key`` are not used.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.policies import uniform_policy
    >>> from psro.policies.population import Population, Provenance
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> pops = [Population(i) for i in tree.infostates]
    >>> _ = [p.add(uniform_policy(p.infostates), Provenance(0, "initial")) for p in pops]
    >>> round(ExactOracle(tree).respond(0, Target(player=0, populations=pops, mixtures=(np.ones(1),) * 2)).value, 6)
    0.5
    """

    learned = False

    def __init__(self, tree: GameTree, seed: int = 0):
        self.tree = tree

    def respond(self, player: int, target: Target, *, key: tuple | None = None) -> BestResponse:
        if target.is_joint:
            plans = [pop.plans for pop in target.populations]
            return joint_best_response(self.tree, player, plans, target.profiles, target.weights)
        return best_response(self.tree, player, target.opponent_plans())
