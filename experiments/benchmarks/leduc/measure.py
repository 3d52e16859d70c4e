"""Exact NashConv of a learned run's output on Leduc poker, measured off the clock, and the rows a comparison records.

The measurement is the same for every side of a comparison; each row is also logged, so that a run's rows can be
read back from its log.

Every side's output, a mixture of population members (or one policy per player), is tabulated over the information
states of a game tree built only for measuring (never given to a solver) and measured with exact best responses in
the sequence form (:class:`Measure`). It equals OpenSpiel's ``policy_aggregator`` + ``exploitability.nash_conv`` of
the same members (:func:`check_measure`) and takes milliseconds where that takes seconds at 200 members.
"""

from __future__ import annotations

import logging
import math
import re

import numpy as np

from experiments.clock import Clock

__all__ = ["GAME", "Measure", "NetworkPolicy", "openspiel_meta_nash_conv", "check_measure", "population_members",
           "row", "ROW_LINE",
           "rows_from_log", "ROW_COLUMNS"]

logger = logging.getLogger("deep_psro_leduc")

#: The game every comparison plays.
GAME = "leduc_poker"
#: The columns of a comparison's rows (its CSV).
ROW_COLUMNS = ["side", "seed", "wall_s", "iteration", "nash_conv", "cpu_s", "env_steps"]


class Measure:
    """Exact NashConv of a meta-strategy over population members, in the sequence form of the game tree built for
    measuring (never given to a solver): each member is tabulated once over the tree's information states and kept
    as its realization plan (:func:`psro.policies.realization_plans`); a meta-strategy's mixture of members is the
    weighted sum of their plans (Kuhn's theorem), measured by :func:`psro.measures.metrics.nash_conv_of_plans` (exact
    best
    responses on the tree). It equals OpenSpiel's ``policy_aggregator`` + ``exploitability.nash_conv`` of the same
    members (:func:`openspiel_meta_nash_conv`, the check in ``--check-measure``) and takes milliseconds where that
    takes seconds at 200 members.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.policies import uniform_policy
    >>> measure = Measure(pyspiel.load_game("kuhn_poker"))
    >>> uniform = [uniform_policy(measure.tree.infostates[p]) for p in range(2)]
    >>> round(measure.nash_conv([[measure.plan(("u", p), p, lambda u=u: u)] for p, u in enumerate(uniform)],
    ...                         [[1.0], [1.0]]), 6)
    0.916667
    """

    def __init__(self, game):
        from psro.sequence_form.game_tree import build_game_tree

        self.game, self.tree, self._plans = game, build_game_tree(game), {}

    def plan(self, key, player: int, table) -> np.ndarray:
        """The realization plan of the member ``key`` of ``player`` whose tabular policy ``table()`` gives,
        computed the first time ``key`` is seen (:meth:`plan_of`)."""
        if key not in self._plans:
            self._plans[key] = self.plan_of(player, table())
        return self._plans[key]

    def plan_of(self, player: int, table: np.ndarray) -> np.ndarray:
        """The realization plan of ``player``'s tabular policy ``table`` (an array ``(infostates, actions)`` in the
        tree's order), not kept."""
        from psro.policies import check_policy, realization_plans

        info = self.tree.infostates[player]
        return realization_plans(check_policy(table, info, argname="table"), info)[0]

    def nash_conv(self, plans: list, weights: list) -> float:
        """NashConv of each player's ``plans`` mixed with ``weights[player]``."""
        from psro.measures.metrics import nash_conv_of_plans

        return nash_conv_of_plans(self.tree, [np.asarray(w, dtype=np.float64) @ np.stack(ps)
                                              for ps, w in zip(plans, weights)])

    def network_table(self, player: int, probabilities) -> np.ndarray:
        """The tabular policy of a network: ``probabilities(player, obs, mask)`` on the tree's information-state
        tensors of ``player``, masked and renormalised (:class:`NetworkPolicy`)."""
        from psro.sequence_form.game_tree import infostate_tensors

        mask = self.tree.infostates[player].legal_mask.astype(bool)
        obs = np.asarray(infostate_tensors(self.tree, player), dtype=np.float32)
        return NetworkPolicy(probabilities, player).probabilities_np(obs, mask)


class NetworkPolicy:
    """An OpenSpiel agent's network as a policy the toolkit's exact evaluator asks
    (:func:`psro.exact_nash_conv`): ``probabilities(player, obs, mask)`` on a batch of information-state tensors,
    masked and renormalised (uniform over the legal actions where its mass is zero).

    Examples
    --------
    >>> policy = NetworkPolicy(lambda player, obs, mask: np.array([[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]]), 0)
    >>> policy.probabilities_np(np.zeros((2, 4), np.float32), np.array([[True, False, True], [True, True, False]]))
    array([[1. , 0. , 0. ],
           [0.5, 0.5, 0. ]])
    """

    def __init__(self, probabilities, player: int):
        self.probabilities, self.player = probabilities, player

    def probabilities_np(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        mask = np.asarray(mask, dtype=bool)
        probs = np.asarray(self.probabilities(self.player, obs, mask), dtype=np.float64) * mask
        total = probs.sum(axis=1, keepdims=True)
        return np.where(total > 0, probs / np.where(total > 0, total, 1.0), mask / mask.sum(axis=1, keepdims=True))


def openspiel_meta_nash_conv(measure: Measure, tables: list, weights: list) -> float:
    """The same NashConv by OpenSpiel alone (the reference :class:`Measure` is checked against): each member's
    tabular policy (``tables[p]``: arrays over ``measure.tree``'s information states of ``p``) as an OpenSpiel
    policy, mixed with ``weights`` by ``policy_aggregator``, measured by ``exploitability.nash_conv``."""
    from open_spiel.python.algorithms import exploitability, policy_aggregator

    from psro.policies.openspiel import to_openspiel_policy

    game, members = measure.game, []
    for p, arrays in enumerate(tables):
        members.append([])
        for array in arrays:
            profile = [None] * game.num_players()
            profile[p] = array
            members[p].append(to_openspiel_policy(profile, measure.tree))
    weights = [[float(w) for w in np.asarray(ws)] for ws in weights]
    aggregated = policy_aggregator.PolicyAggregator(game).aggregate(range(game.num_players()), members, weights)
    return float(exploitability.nash_conv(game, aggregated, use_cpp_br=True))


def check_measure(trials: int = 5, members: int = 6, rng=0) -> None:
    """:class:`Measure` against :func:`openspiel_meta_nash_conv` on ``trials`` random populations of Leduc
    (``members`` random tabular policies per player, some nearly deterministic, random meta-strategies); raises
    if they differ by more than 1e-9."""
    import pyspiel

    rng = np.random.default_rng(rng)
    measure = Measure(pyspiel.load_game(GAME))
    for trial in range(trials):
        tables, plans, weights = [], [], []
        for p, info in enumerate(measure.tree.infostates):
            mask = info.legal_mask.astype(bool)
            arrays = [rng.dirichlet(np.full(mask.shape[1], 0.1 if k % 2 else 1.0), size=mask.shape[0]) * mask
                      for k in range(members)]
            arrays = [a / a.sum(axis=1, keepdims=True) for a in arrays]
            tables.append(arrays)
            plans.append([measure.plan((trial, p, k), p, lambda a=a: a) for k, a in enumerate(arrays)])
            weights.append(rng.dirichlet(np.ones(members)))
        ours, reference = measure.nash_conv(plans, weights), openspiel_meta_nash_conv(measure, tables, weights)
        logger.info("trial %d: NashConv %.12f (sequence form), %.12f (OpenSpiel)", trial, ours, reference)
        if abs(ours - reference) > 1e-9:
            raise AssertionError(f"the measures differ: {ours!r} against {reference!r}")



def population_members(population) -> list:
    """A population's members in order (an array of tabular policies, or a list of policy objects)."""
    policies = population.policies
    return list(policies) if not isinstance(policies, np.ndarray) else [policies[i] for i in range(len(policies))]


def row(side, seed, clock: Clock, iteration, nash_conv, env_steps=None) -> dict:
    logger.info("%s seed %d: iteration %d at %.1f s (CPU %.1f s), NashConv %.4f", side, seed, iteration,
                clock.wall, clock.cpu, nash_conv)
    return {"side": side, "seed": seed, "wall_s": clock.wall, "iteration": iteration, "nash_conv": nash_conv,
            "cpu_s": clock.cpu, "env_steps": math.nan if env_steps is None else env_steps}


#: A row as :func:`row` logs it (``--from-log`` reads the rows back from a run's log)
ROW_LINE = re.compile(r"(?P<side>\w+) seed (?P<seed>\d+): iteration (?P<iteration>\d+) at (?P<wall_s>[\d.]+) s "
                      r"\(CPU (?P<cpu_s>[\d.]+) s\), NashConv (?P<nash_conv>[\d.eE+-]+|nan)")


def rows_from_log(text: str) -> list:
    """The rows of a run from its log (the lines :func:`row` writes; ``env_steps`` is not logged: NaN).

    Examples
    --------
    >>> rows_from_log("2026-12-03 14:59:44,715 ours seed 0: iteration 18 at 53.3 s (CPU 52.7 s), NashConv 1.4173")
    [{'side': 'ours', 'seed': 0, 'wall_s': 53.3, 'iteration': 18, 'nash_conv': 1.4173, 'cpu_s': 52.7, 'env_steps': nan}]
    """
    return [{"side": m["side"], "seed": int(m["seed"]), "wall_s": float(m["wall_s"]),
             "iteration": int(m["iteration"]), "nash_conv": float(m["nash_conv"]), "cpu_s": float(m["cpu_s"]),
             "env_steps": math.nan} for m in ROW_LINE.finditer(text)]
