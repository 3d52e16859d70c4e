"""Exact best responses against fixed opponent policies.

Two interchangeable oracles return the same :class:`BestResponse`:

* :func:`best_response` works in the sequence form with numpy. The opponents'
  realization plans and chance turn every terminal into a weight for the
  responder's last sequence on its path; backward induction over the
  responder's own infostate tree, one level at a time, then picks the best
  action everywhere.
* :class:`OpenSpielBestResponse` calls pyspiel's C++ ``TabularBestResponse``,
  fed with the opponents' policies as ``{infostate: [(action, prob), ...]}``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from psro.game_tree import GameTree
from psro.policies import to_openspiel_dict

__all__ = ["BestResponse", "best_response", "OpenSpielBestResponse", "ORACLES", "make_oracle"]


@dataclass(frozen=True, eq=False)
class BestResponse:
    """A deterministic best response and its value.

    Attributes
    ----------
    player : int
    policy : ndarray, shape (num_infostates, num_actions)
        One-hot rows.
    value : float
        The responder's expected payoff against the opponents' policies.
    """

    player: int
    policy: np.ndarray
    value: float


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
    >>> from psro.game_tree import build_game_tree
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
    info = tree.infostates[player]
    num_a = info.num_actions
    w = _opponent_terminal_weights(tree, player, opponent_plans)
    # value[s * A + a]: expected payoff collected below sequence (s, a); the last entry is the root
    value = np.bincount(tree.terminal_sequence[player], weights=w, minlength=info.num_sequences)
    policy = np.zeros((info.num_infostates, num_a))
    for level in reversed(info.levels):
        q = value[:-1].reshape(info.num_infostates, num_a)[level]
        q = np.where(info.legal_mask[level], q, -np.inf)
        best = q.argmax(axis=1)
        policy[level, best] = 1.0
        np.add.at(value, info.parent[level], q[np.arange(level.size), best])
    return BestResponse(player=player, policy=policy, value=float(value[-1]))


class OpenSpielBestResponse:
    """pyspiel's C++ ``TabularBestResponse`` behind the same interface as :func:`best_response`.

    One C++ object per responder is built on first use and re-fed with
    ``set_policy`` afterwards.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.game_tree import build_game_tree
    >>> from psro.policies import uniform_policy
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> oracle = OpenSpielBestResponse(tree)
    >>> round(oracle(0, [uniform_policy(i) for i in tree.infostates]).value, 6)
    0.5
    """

    name = "openspiel"

    def __init__(self, tree: GameTree):
        self.tree = tree
        self._responders: dict = {}

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
        info = tree.infostates[player]
        policy = np.zeros((info.num_infostates, info.num_actions))
        for s, key in enumerate(info.keys):
            policy[s, actions[key]] = 1.0
        value = responder.value(tree.game.new_initial_state().history_str())
        return BestResponse(player=player, policy=policy, value=float(value))


ORACLES = ("exact", "openspiel")


def make_oracle(name: str, tree: GameTree):
    """A callable ``(player, opponent_plans, opponent_policies) -> BestResponse`` for oracle ``name``.

    ``"exact"`` is the numpy sequence-form best response; ``"openspiel"`` is
    pyspiel's ``TabularBestResponse``. Both are exact.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.game_tree import build_game_tree
    >>> from psro.policies import realization_plans, uniform_policy
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> pols = [uniform_policy(i) for i in tree.infostates]
    >>> plans = [realization_plans(p[None], i)[0] for p, i in zip(pols, tree.infostates)]
    >>> round(make_oracle("exact", tree)(1, plans, pols).value, 6)
    0.416667
    """
    if name == "exact":
        return lambda player, plans, policies: best_response(tree, player, plans)
    if name == "openspiel":
        oracle = OpenSpielBestResponse(tree)
        return lambda player, plans, policies: oracle(player, policies)
    raise ValueError(f"oracle must be one of {list(ORACLES)}; got {name!r}.")
