"""How far a profile of tabular policies, or a meta-strategy, is from equilibrium in the full game."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from psro.best_response import best_response
from psro.evaluation import SequenceFormEvaluator
from psro.game_tree import GameTree
from psro.policies import check_policy, realization_plans

__all__ = ["nash_conv_of_plans", "nash_conv", "meta_strategy_nash_conv"]


def nash_conv_of_plans(tree: GameTree, plans: Sequence[np.ndarray]) -> float:
    """NashConv ``sum_p (best-response value_p - value_p)`` of one realization plan per player.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.game_tree import build_game_tree
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
    >>> from psro.game_tree import build_game_tree
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
    >>> from psro.game_tree import build_game_tree
    >>> from psro.policies import uniform_policy
    >>> from psro.population import Population, Provenance
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> pops = [Population(i) for i in tree.infostates]
    >>> _ = [p.add(uniform_policy(p.infostates), Provenance(0, "initial")) for p in pops]
    >>> round(meta_strategy_nash_conv(tree, pops, [[1.0], [1.0]]), 6)
    0.916667
    """
    plans = [np.asarray(w, dtype=np.float64) @ pop.plans for pop, w in zip(populations, marginals)]
    return nash_conv_of_plans(tree, plans)
