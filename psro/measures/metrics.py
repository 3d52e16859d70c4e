"""How far a profile of tabular policies, or a meta-strategy, is from equilibrium in the full game.

The gap of a meta-strategy comes from best responses in the full game to the
targets it defines (:func:`psro.oracles.exact.meta_targets`):

* PSRO (product): NashConv ``sum_p (BR_p - v_p)`` of the mixture;
* CCE-JPSRO: ``sum_p max(0, BR_p - v_p)``, where ``BR_p`` responds to the
  joint's marginal over the others and ``v_p`` is p's value under the joint;
* CE-JPSRO: ``sum_p sum_i P(i) max(0, BR_{p,i} - v_{p,i})`` over p's
  recommended policies ``i``, where ``BR_{p,i}`` responds to the others'
  profiles conditioned on ``i`` and ``v_{p,i}`` is p's conditional value.

This is what OpenSpiel's ``jpsro`` reports as the gap (its ``find_best_response``),
except that it also zeroes per-target incentives below ``1e-8``; we do not.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from psro.evaluation.exact import SequenceFormEvaluator
from psro.meta.targets import meta_targets
from psro.oracles.exact import ExactOracle, best_response
from psro.policies import check_policy, realization_plans
from psro.sequence_form.game_tree import GameTree

__all__ = ["nash_conv_of_plans", "nash_conv", "meta_strategy_nash_conv", "gap_from_responses", "joint_gap"]


def nash_conv_of_plans(tree: GameTree, plans: Sequence[np.ndarray]) -> float:
    """NashConv ``sum_p (best-response value_p - value_p)`` of one realization plan per player.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.policies import uniform_policy
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> plans = [realization_plans(uniform_policy(i)[None], i)[0] for i in tree.infostates]
    >>> round(nash_conv_of_plans(tree, plans), 6)   # 0.5 - 0.125 + 0.416667 + 0.125
    0.916667
    """
    plans = [np.asarray(x, dtype=np.float64) for x in plans]
    values = SequenceFormEvaluator(tree).payoffs([x[None] for x in plans]).reshape(tree.num_players)
    responses = [best_response(tree, p, plans).value for p in range(tree.num_players)]
    return float(np.sum(responses) - values.sum())


def nash_conv(tree: GameTree, policies: Sequence[np.ndarray]) -> float:
    """NashConv of a profile of behaviour policies, one ``(num_infostates, num_actions)`` array per player.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.policies import uniform_policy
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> round(nash_conv(tree, [uniform_policy(i) for i in tree.infostates]), 6)
    0.916667
    """
    if len(policies) != tree.num_players:
        raise ValueError(f"policies needs one policy per player ({tree.num_players}); got {len(policies)}.")
    plans = [realization_plans(check_policy(pol, info, argname=f"policies[{p}]"), info)[0]
             for p, (pol, info) in enumerate(zip(policies, tree.infostates))]
    return nash_conv_of_plans(tree, plans)


def meta_strategy_nash_conv(tree: GameTree, populations, marginals: Sequence) -> float:
    """NashConv in the full game of each population mixed with its meta-strategy.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.policies import uniform_policy
    >>> from psro.policies.population import Population, Provenance
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> pops = [Population(i) for i in tree.infostates]
    >>> _ = [p.add(uniform_policy(p.infostates), Provenance(0, "initial")) for p in pops]
    >>> round(meta_strategy_nash_conv(tree, pops, [[1.0], [1.0]]), 6)
    0.916667
    """
    plans = [np.asarray(w, dtype=np.float64) @ pop.plans for pop, w in zip(populations, marginals)]
    return nash_conv_of_plans(tree, plans)


def gap_from_responses(kind: str, targets: Sequence, responses: Sequence) -> float:
    """The gap of a meta-strategy from its targets and the best responses to them.

    Parameters
    ----------
    kind : {"product", "cce", "ce"}
    targets, responses : sequence of lists
        Per player, its :class:`~psro.oracles.exact.Target` list and the
        :class:`~psro.oracles.exact.BestResponse` to each.

    Examples
    --------
    >>> from psro.oracles import BestResponse, Target
    >>> t = [[Target(0, [], mass=0.25, on_policy_value=1.0), Target(0, [], mass=0.75, on_policy_value=2.0)]]
    >>> r = [[BestResponse(0, None, 3.0), BestResponse(0, None, 1.0)]]
    >>> gap_from_responses("ce", t, r)   # 0.25 * (3 - 1) + 0.75 * max(0, 1 - 2)
    0.5
    """
    total = 0.0
    for player_targets, player_responses in zip(targets, responses):
        for target, br in zip(player_targets, player_responses):
            gain = br.value - target.on_policy_value
            total += gain if kind == "product" else target.mass * max(gain, 0.0)
    return float(total)


def joint_gap(tree: GameTree, populations, solution, kind: str, payoffs: np.ndarray) -> float:
    """The gap in the full game of a meta-game solution (NashConv, CCE gap or CE gap), with exact best responses.

    Parameters
    ----------
    tree : GameTree
    populations : sequence of Population
    solution : solvers.Equilibrium
        A solution of the meta-game whose payoffs are ``payoffs``.
    kind : {"product", "cce", "ce"}
    payoffs : ndarray, shape (num_players, k_1, ..., k_n)

    Examples
    --------
    >>> import pyspiel
    >>> from games import NormalFormGame
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.policies import uniform_policy
    >>> from psro.policies.population import Population, Provenance
    >>> from solvers import make_equilibrium
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> pops = [Population(i) for i in tree.infostates]
    >>> _ = [p.add(uniform_policy(p.infostates), Provenance(0, "initial")) for p in pops]
    >>> game = NormalFormGame(np.array([0.125, -0.125]).reshape(2, 1, 1))
    >>> eq = make_equilibrium(game, joint=np.ones((1, 1)), concept="cce", method="example")
    >>> round(joint_gap(tree, pops, eq, "cce", game.payoffs), 6)   # a single profile: its NashConv
    0.916667
    """
    oracle = ExactOracle(tree)
    targets = [meta_targets(solution, kind, populations, payoffs, p) for p in range(tree.num_players)]
    responses = [[oracle.respond(p, t) for t in ts] for p, ts in enumerate(targets)]
    return gap_from_responses(kind, targets, responses)
