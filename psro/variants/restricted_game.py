"""The restricted game of extensive-form double oracle (XDO) and CFR+ on it, vectorised on the sequence form.

A restricted game is the game itself with fewer actions at some information states: at each infostate, only
the actions some member of the population takes there (:func:`restricted_masks`). It is a
:class:`psro.sequence_form.game_tree.GameTree` whose infostates carry the restricted legal masks
(:func:`restricted_tree`), so
the sequence-form code (exact best responses, NashConv, realization plans) works on it unchanged: a best response
in the restricted game is one among the restricted actions.

:func:`cfr_plus` solves a two-player zero-sum restricted game with CFR+ (Tammelin 2014; Tammelin, Burch, Johanson
& Bowling 2015): alternating updates, regrets floored at zero, and the average of the iterates weighted by the
iteration number. The counterfactual values of every (infostate, action) of a player come from one pass up its
own infostate levels: the opponent's realization plan and chance weigh every terminal, as in
:func:`psro.oracles.exact.best_response`, but the player's own continuation is its current policy instead of the
best action. It stops as soon as the average's NashConv *in the restricted game* is at most ``precision``.

Examples
--------
>>> import pyspiel
>>> from psro.sequence_form.game_tree import build_game_tree
>>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
>>> solution = cfr_plus(tree, precision=1e-3)
>>> solution.nash_conv <= 1e-3, solution.iterations < 300
(True, True)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from games.validation import check_int, check_real
from psro.errors import ConfigError
from psro.measures.metrics import nash_conv_of_plans
from psro.oracles.base import Target
from psro.policies import behaviour_from_plan, realization_plans
from psro.sequence_form.game_tree import GameTree

__all__ = ["RestrictedSolution", "restricted_masks", "restricted_tree", "counterfactual_values", "cfr_plus",
           "fixed_solution", "solution_targets"]


@dataclasses.dataclass(frozen=True, eq=False)
class RestrictedSolution:
    """An approximate equilibrium of a (restricted) game found by :func:`cfr_plus`.

    Attributes
    ----------
    policies : tuple of ndarray
        Per player, the average behaviour policy ``(num_infostates, num_actions)``; zero off the restricted
        actions (where the player never reaches an infostate, uniform over its restricted actions).
    plans : tuple of ndarray
        Their realization plans ``(num_sequences,)``.
    values : ndarray, shape (2,)
        Each player's expected payoff under the solution.
    nash_conv : float
        Its NashConv in the game it solved (the restricted one).
    iterations : int
        CFR+ iterations run.
    """

    policies: tuple
    plans: tuple
    values: np.ndarray
    nash_conv: float
    iterations: int


def restricted_masks(tree: GameTree, populations: Sequence) -> list:
    """Per player, the restricted game's legal mask: at each infostate, the actions any of ``populations[p]``'s
    policies (arrays ``(k, num_infostates, num_actions)``) plays with positive probability there.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> passes = [np.eye(2)[np.zeros(6, int)][None]] * 2      # "always pass", both players
    >>> restricted_masks(tree, passes)[0].sum(axis=1).tolist()
    [1, 1, 1, 1, 1, 1]
    """
    masks = []
    for p, info in enumerate(tree.infostates):
        policies = np.asarray(populations[p], dtype=np.float64)
        if policies.ndim != 3 or policies.shape[1:] != info.legal_mask.shape or policies.shape[0] == 0:
            raise ValueError(f"populations[{p}] must be a non-empty stack of policies of shape (k, "
                             f"{info.num_infostates}, {info.num_actions}); got shape {policies.shape}.")
        masks.append((policies > 0).any(axis=0) & info.legal_mask)
    return masks


def restricted_tree(tree: GameTree, masks: Sequence) -> GameTree:
    """``tree`` with each player's legal mask replaced by ``masks[p]`` (every infostate keeps at least one
    legal action of the game): the restricted game, for the sequence-form code.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.oracles.exact import best_response
    >>> from psro.policies import uniform_policy
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> only_pass = [np.eye(2, dtype=bool)[np.zeros(6, int)]] * 2
    >>> small = restricted_tree(tree, only_pass)
    >>> plans = [realization_plans(uniform_policy(i)[None], i)[0] for i in small.infostates]
    >>> float(best_response(small, 0, plans).policy[:, 1].sum())   # never bets: not in the restricted game
    0.0
    """
    if len(masks) != tree.num_players:
        raise ValueError(f"masks needs one mask per player ({tree.num_players}); got {len(masks)}.")
    infostates = []
    for p, (info, mask) in enumerate(zip(tree.infostates, masks)):
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != info.legal_mask.shape or np.any(mask & ~info.legal_mask) or not mask.any(axis=1).all():
            raise ValueError(f"masks[{p}] must be a boolean array of shape {info.legal_mask.shape} within the "
                             "game's legal actions, with at least one action at every infostate.")
        infostates.append(dataclasses.replace(info, legal_mask=mask))
    return dataclasses.replace(tree, infostates=tuple(infostates))


def _terminal_weights(tree: GameTree, player: int, opponent_plan: np.ndarray) -> np.ndarray:
    """``c(z) u_p(z) x_q(sigma_q(z))`` for every terminal ``z`` (two players)."""
    other = 1 - player
    return tree.terminal_chance * tree.terminal_returns[:, player] * opponent_plan[tree.terminal_sequence[other]]


def counterfactual_values(tree: GameTree, player: int, policy: np.ndarray, opponent_plan: np.ndarray) -> np.ndarray:
    """Counterfactual values ``(num_infostates, num_actions)`` of ``player``'s actions when it plays ``policy`` below
    them and the opponent plays the realization plan ``opponent_plan`` (two-player games).

    ``Q[s, a]`` is the expected payoff collected below the sequence ``(s, a)``, weighted by chance and the
    opponent's reach but not by ``player``'s own reach of ``s``; ``(policy * Q).sum()`` over the root infostates
    is ``player``'s value.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.policies import uniform_policy
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> info0, info1 = tree.infostates
    >>> y = realization_plans(uniform_policy(info1)[None], info1)[0]
    >>> q = counterfactual_values(tree, 0, uniform_policy(info0), y)
    >>> roots = info0.levels[0]
    >>> round(float((uniform_policy(info0)[roots] * q[roots]).sum()), 6)   # player 0's value, both uniform
    0.125
    """
    info = tree.infostates[player]
    num_i, num_a = info.num_infostates, info.num_actions
    value = np.bincount(tree.terminal_sequence[player], weights=_terminal_weights(tree, player, opponent_plan),
                        minlength=info.num_sequences)
    q = np.zeros((num_i, num_a))
    for level in reversed(info.levels):
        q[level] = value[:-1].reshape(num_i, num_a)[level]
        np.add.at(value, info.parent[level], (policy[level] * q[level]).sum(axis=1))
    return q


def _regret_policy(regrets: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Regret matching on non-negative regrets; uniform over ``mask`` where no regret is positive."""
    total = regrets.sum(axis=1, keepdims=True)
    uniform = mask / mask.sum(axis=1, keepdims=True)
    return np.where(total > 0, regrets / np.where(total > 0, total, 1.0), uniform)


def _check_two_player(tree: GameTree) -> None:
    if tree.num_players != 2:
        raise ConfigError("tree", f"CFR+ here solves two-player zero-sum games; {tree.game} has {tree.num_players} "
                          "players.")


def cfr_plus(tree: GameTree, precision: float, max_iterations: int = 100_000, check_every: int = 10) -> \
        RestrictedSolution:
    """Solve a two-player zero-sum game (a :func:`restricted_tree`, or a whole game) with CFR+, until the average
    policies' NashConv in that game is at most ``precision`` (or ``max_iterations``).

    Parameters
    ----------
    tree : GameTree
        Its legal masks are the game's actions (a restricted tree: the restricted actions).
    precision : float
        Stop once the average's NashConv is at most this (> 0).
    max_iterations : int
        Stop after this many iterations even if ``precision`` is not reached.
    check_every : int
        Measure the NashConv every this many iterations (a best response per player).

    Returns
    -------
    RestrictedSolution

    Examples
    --------
    Rock-paper-scissors, whose only equilibrium is uniform:

    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> tree = build_game_tree(pyspiel.load_game("matrix_rps"))
    >>> solution = cfr_plus(tree, precision=1e-6)
    >>> np.round(solution.policies[0], 4).tolist(), bool(solution.nash_conv <= 1e-6)
    ([[0.3333, 0.3333, 0.3333]], True)
    """
    _check_two_player(tree)
    precision = check_real(precision, "precision", minimum=0.0, strict=True)
    max_iterations = check_int(max_iterations, "max_iterations", minimum=1)
    check_every = check_int(check_every, "check_every", minimum=1)
    infos = tree.infostates
    masks = [info.legal_mask.astype(np.float64) for info in infos]
    regrets = [np.zeros(m.shape) for m in masks]
    policies = [m / m.sum(axis=1, keepdims=True) for m in masks]
    plans = [realization_plans(pi[None], info)[0] for pi, info in zip(policies, infos)]
    plan_sums = [np.zeros(info.num_sequences) for info in infos]
    weight, t, gap, average = 0.0, 0, np.inf, plans
    while t < max_iterations:
        t += 1
        for p in (0, 1):   # alternating updates: p answers the opponent's newest policy
            q = counterfactual_values(tree, p, policies[p], plans[1 - p])
            value = (policies[p] * q).sum(axis=1, keepdims=True)
            regrets[p] = np.maximum(regrets[p] + (q - value) * masks[p], 0.0)
            policies[p] = _regret_policy(regrets[p], masks[p])
            plans[p] = realization_plans(policies[p][None], infos[p])[0]
            plan_sums[p] += t * plans[p]
        weight += t
        if t % check_every == 0 or t == max_iterations:
            average = [x / weight for x in plan_sums]
            gap = nash_conv_of_plans(tree, average)
            if gap <= precision:
                break
    return _solution(tree, average, gap, t)


def _solution(tree: GameTree, plans: Sequence, gap: float, iterations: int) -> RestrictedSolution:
    """The :class:`RestrictedSolution` of average realization plans (behaviour policies uniform over the
    restricted actions where a player never goes)."""
    infos = tree.infostates
    fallback = [info.legal_mask / info.legal_mask.sum(axis=1, keepdims=True) for info in infos]
    policies = [behaviour_from_plan(x, info, fallback=f) for x, info, f in zip(plans, infos, fallback)]
    return dataclasses.replace(fixed_solution(tree, policies), nash_conv=float(gap), iterations=iterations)


def fixed_solution(tree: GameTree, policies: Sequence) -> RestrictedSolution:
    """A :class:`RestrictedSolution` holding the given behaviour policies, one per player (two players), with their
    realization plans and values; its NashConv is not measured (NaN) and it ran no iteration.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.policies import uniform_policy
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> fixed_solution(tree, [uniform_policy(i) for i in tree.infostates]).values.round(6).tolist()
    [0.125, -0.125]
    """
    _check_two_player(tree)
    plans = [realization_plans(np.asarray(pi, dtype=np.float64)[None], info)[0]
             for pi, info in zip(policies, tree.infostates)]
    weights = tree.terminal_chance * plans[0][tree.terminal_sequence[0]] * plans[1][tree.terminal_sequence[1]]
    return RestrictedSolution(policies=tuple(np.asarray(pi, dtype=np.float64) for pi in policies), plans=tuple(plans),
                              values=weights @ tree.terminal_returns, nash_conv=math.nan, iterations=0)


def solution_targets(tree: GameTree, solution: RestrictedSolution, iteration: int = 0) -> list:
    """Per player, one best-response target: the other player's policy of ``solution`` (as a population of one,
    with weight one), its on-policy value the player's value under the solution.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.oracles.exact import ExactOracle
    >>> from psro.policies import uniform_policy
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> targets = solution_targets(tree, fixed_solution(tree, [uniform_policy(i) for i in tree.infostates]))
    >>> [round(ExactOracle(tree).respond(p, ts[0]).value - ts[0].on_policy_value, 6) for p, ts in enumerate(targets)]
    [0.375, 0.541667]
    """
    from psro.policies.population import Population, Provenance

    pops = []
    for p, info in enumerate(tree.infostates):
        pop = Population(info, capacity=1)
        pop.add(solution.policies[p], Provenance(iteration, "restricted"))
        pops.append(pop)
    one = (np.ones(1),) * 2
    return [[Target(player=p, populations=pops, mixtures=one, on_policy_value=float(solution.values[p]))]
            for p in range(2)]
