"""Exact best responses against fixed opponent policies.

Two interchangeable oracles return the same :class:`BestResponse`:

* :func:`best_response` works in the sequence form with numpy. The opponents'
  realization plans and chance turn every terminal into a weight for the
  responder's last sequence on its path; backward induction over the
  responder's own infostate tree, one level at a time, then picks the best
  action everywhere.
* :class:`OpenSpielBestResponse` calls pyspiel's C++ ``TabularBestResponse``,
  fed with the opponents' policies as ``{infostate: [(action, prob), ...]}``.

What a player responds to is a :class:`Target`: either a *product* of the
other players' mixtures over their populations (Nash-style and alpha-Rank
PSRO), or a distribution over the others' *joint* profiles (JPSRO: the
conditional joint of CCE-JPSRO, or one conditional per recommendation of
CE-JPSRO). For a joint target the opponents' weight of a terminal ``z`` is
``sum_k w_k prod_{q != p} x_q^{(k)}(sigma_q(z))``: a weighted sum over the
support profiles of products of gathered realization plans, computed as one
matrix product.

The oracle interface
--------------------
An *oracle* is any callable ``oracle(player, target) -> BestResponse``
(:func:`make_oracle` builds the exact ones). ``target`` is a :class:`Target`;
the returned :class:`BestResponse` holds the new tabular policy
``(num_infostates, num_actions)`` of ``player`` and its expected payoff
against the target. Learned oracles plug in by returning the same type.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from psro.game_tree import GameTree
from psro.policies import behaviour_from_plan, to_openspiel_dict

__all__ = ["BestResponse", "Target", "meta_targets", "best_response", "joint_best_response", "joint_terminal_weights",
           "OpenSpielBestResponse", "ORACLES", "make_oracle"]


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


@dataclass(frozen=True, eq=False)
class Target:
    """What one player best-responds to: the others' policies, as a product or as a joint distribution.

    Attributes
    ----------
    player : int
        The responder.
    populations : sequence of psro.population.Population
        Every player's population (the responder's own is not used).
    mixtures : tuple of ndarray, optional
        Product target: one probability vector per player over its
        population (the responder's entry is ignored).
    profiles : ndarray of int, shape (K, num_players), optional
        Joint target: the support, one population index per player and row
        (the responder's column is ignored) ...
    weights : ndarray, shape (K,), optional
        ... and the probability of each row (summing to one).
    recommendation : int, optional
        CE-JPSRO: the responder's recommended policy this target conditions on.
    mass : float
        Probability of this target's condition (the recommendation) under the
        meta-distribution; 1 for product and CCE targets.
    on_policy_value : float
        The responder's meta-game value under the target when it follows the
        recommendation (NaN when not known); a best response's gain over it is
        the deviation incentive.
    """

    player: int
    populations: Sequence
    mixtures: tuple | None = None
    profiles: np.ndarray | None = None
    weights: np.ndarray | None = None
    recommendation: int | None = None
    mass: float = 1.0
    on_policy_value: float = float("nan")

    @property
    def is_joint(self) -> bool:
        return self.profiles is not None

    def opponent_plans(self) -> list:
        """Product target: each player's mixed realization plan ``w @ plans`` (the responder's entry too)."""
        if self.is_joint:
            raise ValueError("opponent_plans() needs a product target; this target is joint.")
        return [np.asarray(w, dtype=np.float64) @ pop.plans for w, pop in zip(self.mixtures, self.populations)]

    def opponent_policies(self) -> list:
        """Product target: each player's mixture as one behaviour policy ``(I_q, A)``."""
        return [behaviour_from_plan(x, pop.infostates) for x, pop in zip(self.opponent_plans(), self.populations)]


SUPPORT_TOL = 1e-12  # joint-target entries at or below this probability are dropped (solver round-off)


def meta_targets(solution, kind: str, populations: Sequence, payoffs: np.ndarray, player: int) -> list:
    """The best-response targets of ``player`` that a meta-game solution defines.

    Parameters
    ----------
    solution : solvers.Equilibrium
        The meta-strategy (``marginals`` for product kinds, ``joint`` for JPSRO).
    kind : {"product", "cce", "ce"}
        ``"product"``: one target, the others' marginals (Nash-style PSRO).
        ``"cce"``: one target, the joint's marginal over the others' profiles.
        ``"ce"``: one target per recommended policy ``i`` of ``player`` with
        positive mass: the others' profiles conditioned on ``player`` being
        recommended ``i``.
    populations : sequence of Population
    payoffs : ndarray, shape (num_players, k_1, ..., k_n)
        The meta-game payoffs (for each target's on-policy value).
    player : int

    Returns
    -------
    list of Target

    Examples
    --------
    >>> import numpy as np
    >>> from games import catalog
    >>> from solvers import make_equilibrium
    >>> game = catalog.matching_pennies()
    >>> eq = make_equilibrium(game, joint=np.array([[0.5, 0.0], [0.0, 0.5]]), concept="ce", method="example")
    >>> [(t.recommendation, t.mass, t.profiles.tolist(), t.on_policy_value)
    ...  for t in meta_targets(eq, "ce", [None, None], game.payoffs, 0)]
    [(0, 0.5, [[0, 0]], 1.0), (1, 0.5, [[1, 1]], 1.0)]
    """
    n = payoffs.shape[0]
    if kind == "product":
        return [Target(player=player, populations=populations, mixtures=tuple(solution.marginals),
                       on_policy_value=float(solution.values[player]))]
    joint = np.asarray(solution.joint, dtype=np.float64)
    if kind == "cce":
        others = joint.sum(axis=player, keepdims=True)          # shape 1 along the responder's axis
        return [_joint_target(player, populations, others, payoffs, mass=1.0, value=float(solution.values[player]))]
    if kind == "ce":
        masses = joint.sum(axis=tuple(q for q in range(n) if q != player))
        targets = []
        for i in np.flatnonzero(masses > SUPPORT_TOL):
            conditional = np.take(joint, [i], axis=player) / masses[i]
            value = float(np.sum(conditional * np.take(payoffs[player], [i], axis=player)))
            targets.append(_joint_target(player, populations, conditional, payoffs, mass=float(masses[i]),
                                         value=value, recommendation=int(i)))
        return targets
    raise ValueError(f"kind must be 'product', 'cce' or 'ce'; got {kind!r}.")


def _joint_target(player, populations, dist, payoffs, mass, value, recommendation=None) -> Target:
    """A joint target from a distribution with a length-1 responder axis; ``recommendation`` fills that column."""
    profiles = np.argwhere(dist > SUPPORT_TOL)
    weights = dist[tuple(profiles.T)]
    profiles[:, player] = 0 if recommendation is None else recommendation
    return Target(player=player, populations=populations, profiles=profiles, weights=weights / weights.sum(),
                  recommendation=recommendation, mass=mass, on_policy_value=value)


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
    >>> from psro.game_tree import build_game_tree
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
    reach = np.ones((profiles.shape[0], tree.num_terminals))
    for q in range(tree.num_players):
        if q != player:
            used, inverse = np.unique(profiles[:, q], return_inverse=True)
            gathered = np.asarray(plans[q])[used][:, tree.terminal_sequence[q]]   # (distinct, Z)
            reach *= gathered[inverse.reshape(-1)]
    return weights @ reach


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
    >>> from psro.game_tree import build_game_tree
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


class OpenSpielBestResponse:
    """pyspiel's C++ best responses behind the same interface as :func:`best_response`.

    Product targets go to ``TabularBestResponse`` (one C++ object per
    responder, re-fed with ``set_policy``); joint targets to ``pyspiel.cce_dist``
    with one joint tabular policy per support profile.

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


ORACLES = ("exact", "openspiel", "dqn", "ppo")
LEARNED = ("dqn", "ppo")


def make_oracle(name: str, tree: GameTree, seed: int = 0, **options):
    """The oracle called ``name``: a callable ``oracle(player, target) -> BestResponse``.

    ``"exact"`` is the numpy sequence-form best response; ``"openspiel"`` is
    pyspiel's ``TabularBestResponse`` (product targets) or ``cce_dist`` (joint
    targets). Both are exact and deterministic. ``"dqn"`` and ``"ppo"`` are
    learned oracles (:func:`psro.oracles_rl.make_learned_oracle`, configured
    with ``options``: config fields and ``target_mode``); each call's training
    seed is derived from ``seed`` and the call's iteration, player and target
    index (:func:`psro.oracle_jobs.job_seed`). A learned oracle implements
    the same call: it reads the target (:class:`Target`: the populations and
    either per-player mixtures or a joint distribution over profiles) and
    returns a :class:`BestResponse` with the new policy of ``player`` and its
    (estimated) value against the target.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.game_tree import build_game_tree
    >>> from psro.policies import uniform_policy
    >>> from psro.population import Population, Provenance
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> pops = [Population(i) for i in tree.infostates]
    >>> _ = [p.add(uniform_policy(p.infostates), Provenance(0, "initial")) for p in pops]
    >>> target = Target(player=1, populations=pops, mixtures=(np.ones(1), np.ones(1)))
    >>> round(make_oracle("exact", tree)(1, target).value, 6)
    0.416667
    """
    if name in LEARNED:
        from psro.oracles_rl import make_learned_oracle

        return make_learned_oracle(name, tree, seed=seed, **options)
    if options:
        raise TypeError(f"oracle {name!r} takes no options; got {sorted(options)}.")
    if name == "exact":
        def exact(player: int, target: Target) -> BestResponse:
            if target.is_joint:
                plans = [pop.plans for pop in target.populations]
                return joint_best_response(tree, player, plans, target.profiles, target.weights)
            return best_response(tree, player, target.opponent_plans())
        return exact
    if name == "openspiel":
        oracle = OpenSpielBestResponse(tree)

        def openspiel(player: int, target: Target) -> BestResponse:
            if target.is_joint:
                return oracle.joint(player, target.populations, target.profiles, target.weights)
            return oracle(player, target.opponent_policies())
        return openspiel
    raise ValueError(f"oracle must be one of {list(ORACLES)}; got {name!r}.")
