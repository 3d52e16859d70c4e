"""pyspiel's C++ best responses, registered as oracle ``"openspiel"``: ``TabularBestResponse`` for product
targets, ``cce_dist`` for joint ones; the same answers as :mod:`psro.oracles.exact`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from psro.oracles.base import BestResponse, Target, register_oracle
from psro.policies import to_openspiel_dict
from psro.sequence_form.game_tree import GameTree

__all__ = ["OpenSpielBestResponse", "OpenSpielOracle"]


class OpenSpielBestResponse:
    """pyspiel's C++ best responses behind the same interface as :func:`best_response`.

    Product targets go to ``TabularBestResponse`` (one C++ object per
    responder, re-fed with ``set_policy``); joint targets to ``pyspiel.cce_dist``
    with one joint tabular policy per support profile.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.policies import uniform_policy
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> oracle = OpenSpielBestResponse(tree)
    >>> round(oracle(0, [uniform_policy(i) for i in tree.infostates]).value, 6)
    0.5
    """

    name = "openspiel"

    def __init__(self, tree: GameTree):
        if tree.simultaneous:
            raise ValueError(f"oracle='openspiel': pyspiel's TabularBestResponse and cce_dist do not walk the "
                             f"simultaneous moves of {tree.game}; use oracle='exact' (the sequence-form best "
                             "response, which does).")
        self.tree = tree
        self._responders: dict = {}
        self._tabular: dict = {}

    def __call__(self, player: int, opponent_policies: Sequence) -> BestResponse:
        """Best response of ``player`` to behaviour policies ``(I_q, A)`` of the others."""
        import pyspiel

        tree = self.tree
        table = {}
        for q, pol in enumerate(opponent_policies):
            if q != player:
                table.update(to_openspiel_dict(np.asarray(pol), tree.infostates[q]))
        if player in self._responders:
            responder = self._responders[player]
            responder.set_policy(table)
        else:
            responder = self._responders[player] = pyspiel.TabularBestResponse(tree.game, player, table)
        actions = responder.get_best_response_actions()
        value = responder.value(tree.game.new_initial_state().history_str())
        return BestResponse(player=player, policy=self._one_hot(player, actions), value=float(value))

    def joint(self, player: int, populations: Sequence, profiles, weights) -> BestResponse:
        """Best response of ``player`` to ``weights`` over joint profiles, with ``pyspiel.cce_dist``."""
        import pyspiel

        tree = self.tree
        mu = []
        for row, w in zip(np.asarray(profiles), np.asarray(weights, dtype=np.float64)):
            if w > 0:
                members = [self._policy(pop, int(i)) for pop, i in zip(populations, row)]
                mu.append((float(w), pyspiel.to_joint_tabular_policy(members, True)))
        info = pyspiel.cce_dist(tree.game, mu, player, prob_cut_threshold=0.0, action_value_tolerance=-1.0)
        table = info.best_response_policies[0].policy_table()
        infostates = tree.infostates[player]
        # cce_dist leaves out the infostates the target makes unreachable; any action is a best response
        # there, and the lowest legal one is what the sequence-form oracle picks (ties go to the lowest index)
        actions = {key: (max(table[key], key=lambda ap: ap[1])[0] if table.get(key)
                         else int(np.flatnonzero(infostates.legal_mask[s])[0]))
                   for s, key in enumerate(infostates.keys)}
        return BestResponse(player=player, policy=self._one_hot(player, actions),
                            value=float(info.best_response_values[0]))

    def _policy(self, pop, i: int):
        import pyspiel

        key = (pop.infostates.player, i)   # a policy never changes once in a population
        if key not in self._tabular:
            self._tabular[key] = pyspiel.TabularPolicy(to_openspiel_dict(pop.policies[i], pop.infostates))
        return self._tabular[key]

    def _one_hot(self, player: int, actions) -> np.ndarray:
        info = self.tree.infostates[player]
        policy = np.zeros((info.num_infostates, info.num_actions))
        for s, key in enumerate(info.keys):
            policy[s, actions[key]] = 1.0
        return policy


@register_oracle("openspiel", normal_form=True)
class OpenSpielOracle:
    """Oracle ``"openspiel"``: :class:`OpenSpielBestResponse` behind the :class:`psro.oracles.base.Oracle` protocol.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.policies import uniform_policy
    >>> from psro.policies.population import Population, Provenance
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> pops = [Population(i) for i in tree.infostates]
    >>> _ = [p.add(uniform_policy(p.infostates), Provenance(0, "initial")) for p in pops]
    >>> target = Target(player=1, populations=pops, mixtures=(np.ones(1),) * 2)
    >>> round(OpenSpielOracle(tree).respond(1, target).value, 6)
    0.416667
    """

    learned = False

    def __init__(self, tree: GameTree, seed: int = 0):
        self.best_response = OpenSpielBestResponse(tree)

    def respond(self, player: int, target: Target, *, key: tuple | None = None) -> BestResponse:
        if target.is_joint:
            return self.best_response.joint(player, target.populations, target.profiles, target.weights)
        return self.best_response(player, target.opponent_policies())
