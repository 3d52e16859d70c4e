"""Oracle ``"team_pg"``: a team's response learned by its members, each its own softmax policy-gradient learner.

Registered here, with the built-in oracles, so that a config naming it validates; team games themselves (the
team view, team exploitability) are :mod:`psro.family.teams`.
"""

from __future__ import annotations

import math

import numpy as np

from games.validation import check_int, check_real
from psro.errors import ConfigError
from psro.oracles.base import BestResponse, Target, register_oracle

__all__ = ["TeamPolicyGradient", "member_marginals"]


def member_marginals(policy, sizes) -> list:
    """Each member's marginal of a team strategy over joint actions (C order over the members' ``sizes``).

    Examples
    --------
    >>> [m.tolist() for m in member_marginals(np.array([0.0, 0.25, 0.0, 0.75]), (2, 2))]
    [[0.25, 0.75], [0.0, 1.0]]
    """
    joint = np.asarray(policy, dtype=np.float64).ravel()[:math.prod(sizes)].reshape(sizes)
    return [joint.sum(axis=tuple(a for a in range(len(sizes)) if a != m)) for m in range(len(sizes))]



@register_oracle("team_pg", normal_form=True, teams=True)
class TeamPolicyGradient:
    """Oracle ``"team_pg"``: a team response learned by the team's members, each its own softmax policy gradient.

    For a game whose every player has one infostate (a normal-form game, or its team view,
    :func:`psro.sequence_form.team_view.team_payoffs`), the responder's payoff of each of its actions against the
    target's fixed opponents is exact (sequence form). A responder that is a team of ``m`` members (``members``) plays
    the joint action ``(a_1, ..., a_m)`` (C order) with probability ``prod_i pi_i(a_i)``; member ``i`` holds its own
    logits and ascends its own exact gradient of the shared expected payoff ``V``, ``pi_i * (Q_i - V)`` (``Q_i(a)``:
    the team's value when member ``i`` plays ``a`` and its teammates their policies), for ``steps`` steps of size
    ``learning_rate``, all members at once. No member sees the others' parameters: a decentralised learner, which
    may stop at a local optimum of the team payoff.

    The start: ``target.initial_policy`` (a tabular policy of the responder; its members' marginals, clipped to
    ``[1e-3, 1]``, give the logits), else logits drawn ``N(0, init_scale^2)`` from a generator seeded by
    ``(seed, player, *key)``, so a response is a pure function of the run's seed and its call's key.

    Parameters
    ----------
    tree : psro.sequence_form.game_tree.GameTree
    seed : int
    members : list of list of int, optional
        Per player of the game, the action counts of its members (``[[2, 2, 2], [2, 2, 2]]`` for the team view
        of ``fxp_example``); None: every player is one learner over its own actions.
    steps : int
    learning_rate : float
    init_scale : float
        Standard deviation of a fresh start's logits.

    Examples
    --------
    >>> from games import catalog
    >>> from psro.sequence_form.team_view import team_payoffs
    >>> from psro.sequence_form.matrix_game import to_openspiel_game
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.policies.population import Population, Provenance
    >>> view = team_payoffs(catalog.fxp_example(), catalog.fxp_teams(3))
    >>> tree = build_game_tree(to_openspiel_game(view))
    >>> pops = [Population(i) for i in tree.infostates]
    >>> _ = [pop.add(np.eye(8)[[7]], Provenance(0, "initial")) for pop in pops]   # both teams all-1
    >>> oracle = TeamPolicyGradient(tree, members=[[2, 2, 2], [2, 2, 2]])
    >>> uniform = np.full((1, 8), 1 / 8)
    >>> br = oracle.respond(0, Target(0, pops, mixtures=(np.ones(1),) * 2, initial_policy=uniform))
    >>> int(br.policy.argmax()), bool(br.policy.max() > 0.99)   # from uniform, the members drift to all-1
    (7, True)
    """

    learned = False   # (its values are exact for its policy; the loop's ``learned`` means sampled play)
    exact = False     # not a best response: the gap is measured with exact ones

    def __init__(self, tree, seed: int = 0, members=None, steps: int = 2000, learning_rate: float = 1.0,
                 init_scale: float = 2.0):
        self.tree, self.seed = tree, int(seed)
        self.steps = check_int(steps, "steps", minimum=1)
        self.learning_rate = check_real(learning_rate, "learning_rate", minimum=0.0, strict=True)
        self.init_scale = check_real(init_scale, "init_scale", minimum=0.0)
        sizes = [int(info.legal_mask[0].sum()) for info in tree.infostates]
        if any(info.num_infostates != 1 for info in tree.infostates):
            raise ValueError("oracle 'team_pg' learns on games whose players have one infostate each (normal-form "
                             "games and their team views); for sequential games use oracle='dqn' or 'ppo'.")
        members = [[k] for k in sizes] if members is None else [[int(k) for k in m] for m in members]
        if len(members) != len(sizes) or any(math.prod(m) != k for m, k in zip(members, sizes)):
            raise ConfigError("members", f"give per player the action counts of its members, whose product is the "
                              f"player's action count {sizes}; got {members}.")
        self.members = members

    def respond(self, player: int, target: Target, *, key: tuple | None = None) -> BestResponse:
        if target.is_joint:
            raise ValueError("oracle 'team_pg' answers product targets (PSRO-style meta-solvers), not JPSRO's joint "
                             "ones.")
        info, sizes = self.tree.infostates[player], self.members[player]
        tree = self.tree
        weight = tree.terminal_chance * tree.terminal_returns[:, player]
        for q, plan in enumerate(target.opponent_plans()):
            if q != player:
                weight = weight * plan[tree.terminal_sequence[q]]
        values = np.bincount(tree.terminal_sequence[player], weights=weight, minlength=info.num_sequences)
        payoff = values[:math.prod(sizes)].reshape(sizes)   # the team's value of each joint action (one infostate)
        logits = _ascend(payoff.ravel(), sizes, self._start(player, target, key, sizes), self.steps,
                         self.learning_rate)
        joint = np.exp(_joint_log_probs(logits, sizes).sum(axis=1))
        policy = np.zeros((1, info.num_actions))
        policy[0, :joint.size] = joint
        return BestResponse(player=player, policy=policy, value=float(payoff.ravel() @ joint))

    def _start(self, player: int, target: Target, key, sizes) -> np.ndarray:
        """The members' initial logits: the warm start's marginals, or a fresh draw from the seed and key."""
        logits = np.full((len(sizes), max(sizes)), -np.inf)
        initial = target.initial_policy
        if initial is not None:
            marginals = member_marginals(np.asarray(initial, dtype=np.float64)[0], sizes)
        else:
            entropy = [self.seed, int(player), *(int(k) for k in (key or ()))]
            rng = np.random.default_rng(np.random.SeedSequence(entropy))
        for m, k in enumerate(sizes):
            logits[m, :k] = np.log(np.clip(marginals[m], 1e-3, 1.0)) if initial is not None \
                else rng.normal(0.0, self.init_scale, size=k)
        return logits


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax of ``(members, max_actions)`` logits (padded entries are ``-inf``)."""
    top = logits.max(axis=1, keepdims=True)
    return logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))


def _joint_log_probs(logits: np.ndarray, sizes) -> np.ndarray:
    """``G[J, m] = log pi_m(J_m)`` for every joint action ``J`` (C order over ``sizes``) and member ``m``."""
    actions = np.indices(sizes).reshape(len(sizes), -1).T   # (K, M): member m's action in joint action J
    return _log_softmax(logits)[np.arange(len(sizes)), actions]


def _ascend(payoff: np.ndarray, sizes, logits: np.ndarray, steps: int, learning_rate: float) -> np.ndarray:
    """``steps`` simultaneous steps of every member's own exact policy gradient of the shared ``payoff`` (flat,
    one entry per joint action): member ``m`` moves its logits by ``pi_m * (Q_m - V)``."""
    actions = np.indices(sizes).reshape(len(sizes), -1).T
    onehot = (actions[:, :, None] == np.arange(logits.shape[1])).astype(np.float64)   # (K, M, A)
    members = np.arange(len(sizes))
    for _ in range(steps):
        logp = _log_softmax(logits)
        gathered = logp[members, actions]                                  # (K, M)
        others = np.exp(gathered.sum(axis=1, keepdims=True) - gathered)   # prod over the other members
        q = np.einsum("j,jm,jma->ma", payoff, others, onehot)             # Q_m(a)
        probs = np.exp(logp)
        value = (probs * q).sum(axis=1, keepdims=True)                    # V (the same for every member)
        logits = logits + learning_rate * probs * (q - value)
    return logits
