"""Which best responses join the populations: whose (``update_players``) and which of a player's several
(``br_selection``), and when the loop is at a fixed point.

A best response *gains nothing* when its mass-weighted gain over its target,
``mass * max(value - on_policy_value, 0)`` (its term in the gap), is at most
:data:`ZERO_GAIN_RTOL` (1e-12) times the player's payoff scale
(:func:`gain_tolerances`). Such a response cannot lower the gap, but joining
would change the meta-game and its solution, and the gap can rise again (on
``sheriff`` it went from 1e-14 back to 0.4-0.9). So:

* ``"novel"`` and ``"largest_gap"``: a response that gains nothing never joins
  (nor one already in the population); when none is left the player adds
  nothing. With an equilibrium meta-solver the loop still converges in a
  finite game: its exact meta-solution leaves no gain to the population's
  members, so a response that gains something is new, and every iteration with
  a positive gap adds a new pure policy.
* ``"all"``: as in the JPSRO paper and OpenSpiel's ``jpsro``, every distinct
  response joins, those that gain nothing included, except at the fixed point
  (:func:`at_fixed_point`): when no player's exact best response gains
  anything, the meta-strategy is already an equilibrium of the full game, so
  nothing joins and the populations, the meta-game and the gap stay where they
  are. With a learned oracle there is no fixed point (its values only bound the
  best response from below).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["UPDATE_PLAYERS", "BR_SELECTIONS", "ZERO_GAIN_RTOL", "gain_tolerances", "gain", "gains_nothing",
           "at_fixed_point", "select_responses", "players_to_update"]

UPDATE_PLAYERS = ("all", "cycle", "random")
BR_SELECTIONS = ("all", "novel", "largest_gap")

#: A best response gains nothing when its mass-weighted gain over its target is at most this times the
#: player's payoff scale (:func:`gain_tolerances`): round-off in the values, not a deviation incentive.
ZERO_GAIN_RTOL = 1e-12


def gain_tolerances(terminal_returns: np.ndarray) -> np.ndarray:
    """Per player, :data:`ZERO_GAIN_RTOL` times the larger of the span and the magnitude of its terminal payoffs.

    Every value in the loop is an average of terminal payoffs, so its round-off
    is relative to their magnitude, and a gain is measured against their span.

    Examples
    --------
    >>> gain_tolerances(np.array([[2.0, -2.0], [-1.0, 1.0], [1e3, -1e3]])).tolist()
    [1.001e-09, 1.001e-09]
    """
    returns = np.asarray(terminal_returns, dtype=np.float64)
    scale = np.maximum(np.ptp(returns, axis=0), np.abs(returns).max(axis=0))
    return ZERO_GAIN_RTOL * scale


def gain(target, br) -> float:
    """The mass-weighted deviation incentive of ``br`` over ``target`` (NaN when the on-policy value is unknown)."""
    value = br.value - target.on_policy_value
    return math.nan if math.isnan(value) else target.mass * max(value, 0.0)


def gains_nothing(tolerance: float, target, br) -> bool:
    """True when ``br`` gains at most ``tolerance`` over ``target``; an unknown (NaN) gain gains something."""
    return gain(target, br) <= tolerance


def at_fixed_point(tolerances: Sequence, targets: Sequence, responses: Sequence) -> bool:
    """True when no player's (exact) best response gains anything: the meta-strategy is an equilibrium (Nash,
    CCE or CE) of the full game. ``targets[p][i]`` and ``responses[p][i]`` belong together."""
    return all(gains_nothing(tolerances[p], target, br)
               for p, (player_targets, player_responses) in enumerate(zip(targets, responses))
               for target, br in zip(player_targets, player_responses))


def select_responses(rule: str, population_policies: np.ndarray, targets: Sequence, responses: Sequence,
                     tolerance: float, fixed_point: bool = False) -> list:
    """The ``(policy, value)`` pairs of one player that join its population under ``rule`` (``br_selection``).

    Parameters
    ----------
    rule : {"all", "novel", "largest_gap"}
    population_policies : ndarray, shape (k, num_infostates, num_actions)
        The player's population now.
    targets, responses : sequence
        The player's targets and its best response to each.
    tolerance : float
        The player's zero-gain tolerance (:func:`gain_tolerances`).
    fixed_point : bool
        :func:`at_fixed_point` of the whole iteration (only ``"all"`` reads it).

    Examples
    --------
    >>> from psro.oracles import BestResponse, Target
    >>> left, right = np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])
    >>> targets = [Target(0, [], mass=0.25, on_policy_value=0.0), Target(0, [], mass=0.75, on_policy_value=0.0)]
    >>> responses = [BestResponse(0, left, 0.4), BestResponse(0, right, 0.2)]
    >>> [value for _, value in select_responses("largest_gap", left[None] * 0, targets, responses, 1e-12)]
    [0.2]
    """
    if rule == "all" and fixed_point:
        return []
    chosen, seen = [], []
    for target, br in zip(targets, responses):
        if any(np.array_equal(br.policy, other) for other in seen):
            continue
        seen.append(br.policy)
        if rule != "all":
            known = bool(np.any(np.all(population_policies == br.policy, axis=(1, 2))))
            if known or gains_nothing(tolerance, target, br):
                continue
        chosen.append((br, gain(target, br)))
    if rule == "largest_gap" and chosen:
        # the first one among equals; an unknown (NaN) gain ranks last
        chosen = [max(chosen, key=lambda pair: -math.inf if math.isnan(pair[1]) else pair[1])]
    return [(br.policy, br.value) for br, _ in chosen]


def players_to_update(rule: str, iteration: int, num_players: int, rng: np.random.Generator) -> list:
    """The players whose new best responses join at the next step (``update_players``).

    Examples
    --------
    >>> players_to_update("cycle", 5, 3, None), players_to_update("all", 5, 3, None)
    ([2], [0, 1, 2])
    """
    if rule == "cycle":
        return [iteration % num_players]
    if rule == "random":
        return [int(rng.integers(num_players))]
    return list(range(num_players))
