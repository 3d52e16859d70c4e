"""Magnetic mirror descent (Sokota et al., ICLR 2023) in tabular form: the sequence form with the dilated entropy.

Each player ``p`` holds a realization plan ``x_p`` over its sequences (:mod:`psro.policies.tabular`: sequence
``s * A + a``, the empty sequence last). With ``A0`` player 0's sequence-form payoff matrix
(``A0[s0, s1] = sum of c(z) u_0(z)`` over the terminals that end both sequences), an iteration of step size
``eta`` and temperature ``alpha`` is the closed form of

``x_p' = argmax_x  eta <x, q_p> - eta alpha psi(x) - B_psi(x; x_p)``,   ``q_0 = A0 x_1``, ``q_1 = -A0^T x_0``,

where ``psi`` is the dilated entropy ``sum_I x(parent(I)) sum_a pi(a|I) log pi(a|I)`` (its minimiser, the
uniform policy, is the magnet) and ``B_psi`` its Bregman divergence. With
``g_p = -(eta q_p + grad psi(x_p)) / (1 + eta alpha)``, it is solved bottom-up over the player's own infostates,
one own-depth level at a time: ``pi'(.|I) = softmax(-g_I)``, and the sequence leading to ``I`` adds
``g_I . pi' - H(pi') = -logsumexp(-g_I)`` to its ``g``. The new plan follows from ``pi'``; the average plan is
the running mean of the plans (the uniform start included), its policy ``x(I, a) / sum_b x(I, b)``.

This is exactly what OpenSpiel's ``open_spiel.python.algorithms.mmd_dilated.MMDDilatedEnt(game, alpha, stepsize)``
computes, ``update_sequences`` per iteration (the same default step size ``alpha / max|A0|^2``, the same gradient
of the dilated entropy, zero below sequences its own plan does not reach), with numpy over whole levels of
infostates instead of a Python walk of the tree: the same policies to round-off (1e-14 after 300 iterations),
about 20 times faster on Kuhn poker and 500 times on Leduc (``experiments/benchmarks/mmd_speed.py``). With
``alpha > 0`` the last iterate converges linearly to the ``alpha``-regularised QRE (its gap:
:func:`regularized_gap`); with ``alpha = 0`` it is mirror descent ascent, whose average approaches a Nash
equilibrium.

Examples
--------
>>> result = magnetic_mirror_descent("kuhn_poker", iterations=100, alpha=0.0, stepsize=1.0)
>>> round(float(result.nash_conv[-1]), 4), round(float(result.average_nash_conv[-1]), 4)   # last iterate, average
(0.3112, 0.0795)
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from games.validation import check_int, check_real
from psro.errors import ConfigError
from psro.measures.metrics import nash_conv_of_plans
from psro.policies import realization_plans, uniform_policy
from psro.sequence_form.game_tree import GameTree, PlayerInfostates, build_game_tree

__all__ = ["MMDProblem", "MMDResult", "mmd_problem", "mmd_step", "magnetic_mirror_descent", "dilated_entropy",
           "dilated_entropy_gradient", "regularized_gap", "sequence_policy"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)
class MMDProblem:
    """What an MMD iteration reads: the tree, player 0's sequence-form payoff matrix and the settings.

    Attributes
    ----------
    tree : GameTree
    payoff : scipy.sparse.csr_matrix, shape (num_sequences_0, num_sequences_1)
        ``payoff[s0, s1]``: the chance-weighted payoff of player 0 summed over the terminals that end both
        sequences (player 1's is its negative).
    num_children : tuple of ndarray
        Per player, how many of its own infostates follow each of its sequences.
    alpha : float
        Weight of the dilated-entropy regulariser (the temperature).
    stepsize : float
    """

    tree: GameTree
    payoff: sp.csr_matrix
    num_children: tuple
    alpha: float
    stepsize: float


@dataclass(frozen=True, eq=False)
class MMDResult:
    """The output of :func:`magnetic_mirror_descent`.

    Attributes
    ----------
    tree : GameTree
    policies, average_policies : tuple of ndarray
        Per player, the last iterate's and the average's behaviour policy ``(num_infostates, num_actions)``, rows
        in the order of ``tree.infostates[p].keys``.
    plans, average_plans : tuple of ndarray
        The same as realization plans ``(num_sequences,)``.
    iterations : int
    alpha, stepsize : float
    trace_iterations, nash_conv, average_nash_conv : ndarray
        The iterations measured and the NashConv of the last iterate and of the average there (empty when not
        measured).
    """

    tree: GameTree
    policies: tuple
    average_policies: tuple
    plans: tuple
    average_plans: tuple
    iterations: int
    alpha: float
    stepsize: float
    trace_iterations: np.ndarray
    nash_conv: np.ndarray
    average_nash_conv: np.ndarray


def _as_tree(game_or_tree, max_histories: int) -> GameTree:
    if isinstance(game_or_tree, GameTree):
        return game_or_tree
    if isinstance(game_or_tree, str):
        import pyspiel

        game_or_tree = pyspiel.load_game(game_or_tree)
    return build_game_tree(game_or_tree, max_histories=max_histories)


def mmd_problem(tree: GameTree, alpha: float, stepsize: float | None = None) -> MMDProblem:
    """The :class:`MMDProblem` of a two-player zero-sum ``tree``.

    Parameters
    ----------
    tree : GameTree
    alpha : float
        ``>= 0``.
    stepsize : float, optional
        ``> 0``; default ``alpha / max|payoff|^2`` (OpenSpiel's), which needs ``alpha > 0``.

    Raises
    ------
    ValueError
        For a game that is not two-player zero-sum, a negative ``alpha`` or a step size that is not positive.

    Examples
    --------
    >>> import pyspiel
    >>> problem = mmd_problem(build_game_tree(pyspiel.load_game("kuhn_poker")), alpha=0.5)
    >>> problem.payoff.shape, round(problem.stepsize, 6)     # max |A0| = 2/6: a bet called with the best card
    ((13, 13), 4.5)
    """
    if tree.num_players != 2:
        raise ConfigError("tree", f"MMD needs a two-player zero-sum game; {tree.game} has {tree.num_players} players.")
    if not np.allclose(tree.terminal_returns.sum(axis=1), 0.0, atol=1e-9):
        raise ConfigError("tree", f"MMD needs a two-player zero-sum game; the returns of {tree.game} do not sum to "
                          "zero at every terminal.")
    alpha = check_real(alpha, "alpha", minimum=0.0)
    s0, s1 = tree.terminal_sequence
    n0, n1 = (info.num_sequences for info in tree.infostates)
    payoff = sp.csr_matrix((tree.terminal_chance * tree.terminal_returns[:, 0], (s0, s1)), shape=(n0, n1))
    if stepsize is None:
        if alpha == 0.0:
            raise ConfigError("stepsize", "with alpha=0 the default step size alpha / max|payoff|^2 is 0; give a "
                              "positive stepsize (e.g. 1.0).")
        stepsize = alpha / float(np.abs(payoff.data).max()) ** 2
    stepsize = check_real(stepsize, "stepsize", minimum=0.0)
    if stepsize == 0.0:
        raise ConfigError("stepsize", "must be positive (a zero step never moves from the uniform policy).")
    children = tuple(np.bincount(info.parent, minlength=info.num_sequences).astype(np.float64)
                     for info in tree.infostates)
    return MMDProblem(tree, payoff, children, alpha, stepsize)


def dilated_entropy(plan: np.ndarray, info: PlayerInfostates) -> float:
    """The dilated entropy ``sum_I x(parent(I)) sum_a q(a|I) log q(a|I)``, ``q = x(I, .) / sum_b x(I, b)``, over
    the infostates that ``plan`` reaches (a negative entropy: 0 for a pure plan).

    Examples
    --------
    >>> import pyspiel
    >>> info = build_game_tree(pyspiel.load_game("kuhn_poker")).infostates[0]
    >>> plan = realization_plans(uniform_policy(info)[None], info)[0]
    >>> bool(np.isclose(dilated_entropy(plan, info), -4.5 * np.log(2)))   # 3 roots, 3 at reach 1/2
    True
    """
    reach = plan[info.parent]
    body = plan[:-1].reshape(info.num_infostates, info.num_actions)
    reached = reach > 0
    total = body[reached].sum(axis=1, keepdims=True)
    q = np.divide(body[reached], total, out=np.zeros_like(body[reached]), where=total > 0)
    neg_entropy = np.where(q > 0, q * np.log(np.where(q > 0, q, 1.0)), 0.0).sum(axis=1)
    return float(reach[reached] @ neg_entropy)


def dilated_entropy_gradient(plan: np.ndarray, info: PlayerInfostates, num_children: np.ndarray) -> np.ndarray:
    """The gradient of the dilated entropy at ``plan``, by sequence: ``log(x(I, a) / x(parent(I))) + 1 -
    (infostates following (I, a))`` where the plan reaches ``I``; zero elsewhere and at the empty sequence.

    Examples
    --------
    >>> import pyspiel
    >>> info = build_game_tree(pyspiel.load_game("kuhn_poker")).infostates[0]
    >>> plan = realization_plans(uniform_policy(info)[None], info)[0]
    >>> grad = dilated_entropy_gradient(plan, info, np.bincount(info.parent, minlength=info.num_sequences))
    >>> bool(np.allclose(grad[:2], 1 - np.log(2) - np.array([1, 0])))   # a pass leads to one more decision
    True
    """
    num_i, num_a = info.num_infostates, info.num_actions
    reach = plan[info.parent][:, None]
    body = plan[:-1].reshape(num_i, num_a)
    live = info.legal_mask & (reach > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log(np.where(live, body, 1.0) / np.where(live, reach, 1.0))
    grad = np.zeros(info.num_sequences)
    grad[:-1] = np.where(live, logs + 1.0 - num_children[:-1].reshape(num_i, num_a), 0.0).ravel()
    return grad


def _descend(g: np.ndarray, info: PlayerInfostates) -> np.ndarray:
    """The behaviour policy that minimises the dilated-entropy-regularised linear form ``g``, bottom-up.

    ``g`` (one entry per sequence) is modified in place: each infostate's ``-logsumexp(-g_I)`` is added to the
    sequence leading to it once the infostate's policy ``softmax(-g_I)`` is known.
    """
    num_i, num_a = info.num_infostates, info.num_actions
    policy = np.zeros((num_i, num_a))
    actions = np.arange(num_a)
    for level in reversed(info.levels):
        logits = np.where(info.legal_mask[level], -g[level[:, None] * num_a + actions], -np.inf)
        top = logits.max(axis=1, keepdims=True)
        weights = np.exp(logits - top)
        total = weights.sum(axis=1, keepdims=True)
        policy[level] = weights / total
        np.add.at(g, info.parent[level], -(top[:, 0] + np.log(total[:, 0])))
    return policy


def mmd_step(problem: MMDProblem, plans: Sequence[np.ndarray]) -> tuple:
    """One MMD iteration (OpenSpiel's ``update_sequences``): ``(policies, plans)`` of both players.

    Examples
    --------
    >>> import pyspiel
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> problem = mmd_problem(tree, alpha=0.0, stepsize=1.0)
    >>> policies, plans = mmd_step(problem, [sequence_policy(info) for info in tree.infostates])
    >>> tree.infostates[0].keys[0]                               # player 0 holds the king
    '2'
    >>> [round(float(p), 4) for p in policies[0][0]]              # and bets more: [pass, bet]
    [0.4455, 0.5545]
    """
    eta, scale = problem.stepsize, 1.0 + problem.stepsize * problem.alpha
    x0, x1 = plans
    values = (problem.payoff @ x1, -(problem.payoff.T @ x0))   # each player's payoff gradient
    policies, new_plans = [], []
    for p, info in enumerate(problem.tree.infostates):
        psi = dilated_entropy_gradient(plans[p], info, problem.num_children[p])
        g = -(eta * values[p] + psi) / scale
        policy = _descend(g, info)
        policies.append(policy)
        new_plans.append(realization_plans(policy[None], info)[0])
    return tuple(policies), tuple(new_plans)


def sequence_policy(info: PlayerInfostates, policy: np.ndarray | None = None) -> np.ndarray:
    """The realization plan of ``policy`` (default uniform): MMD's starting point.

    Examples
    --------
    >>> import pyspiel
    >>> info = build_game_tree(pyspiel.load_game("kuhn_poker")).infostates[1]
    >>> sequence_policy(info).shape
    (13,)
    """
    policy = uniform_policy(info) if policy is None else np.asarray(policy, dtype=np.float64)
    return realization_plans(policy[None], info)[0]


def regularized_gap(problem: MMDProblem, plans: Sequence[np.ndarray]) -> float:
    """The saddle-point gap of the ``alpha``-regularised game at ``plans`` (OpenSpiel's ``get_gap``): zero
    exactly at its QRE, which MMD's last iterate approaches when ``alpha > 0``.

    Raises
    ------
    ValueError
        With ``alpha = 0`` (the regularised game is the game itself; use NashConv).

    Examples
    --------
    >>> import pyspiel
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> problem = mmd_problem(tree, alpha=1.0)
    >>> plans = [sequence_policy(info) for info in tree.infostates]
    >>> for _ in range(200):
    ...     plans = mmd_step(problem, plans)[1]
    >>> regularized_gap(problem, plans) < 1e-9
    True
    """
    if problem.alpha == 0.0:
        raise ConfigError("problem", "the regularised gap needs alpha > 0; with alpha=0 measure NashConv instead.")
    x0, x1 = plans
    infos = problem.tree.infostates
    values = (problem.payoff @ x1, -(problem.payoff.T @ x0))
    responses = [realization_plans(_descend(-values[p] / problem.alpha, infos[p])[None], infos[p])[0]
                 for p in range(2)]
    entropy = [dilated_entropy(x, info) for x, info in zip(plans, infos)]
    response_entropy = [dilated_entropy(x, info) for x, info in zip(responses, infos)]
    gap = float(responses[0] @ (problem.payoff @ x1) - x0 @ (problem.payoff @ responses[1]))
    return gap + problem.alpha * sum(e - r for e, r in zip(entropy, response_entropy))


def _behaviour(plan: np.ndarray, info: PlayerInfostates) -> np.ndarray:
    """``x(I, a) / sum_b x(I, b)`` where the plan reaches ``I``, uniform elsewhere (OpenSpiel's conversion)."""
    body = plan[:-1].reshape(info.num_infostates, info.num_actions)
    total = body.sum(axis=1)
    out = uniform_policy(info)
    reached = total > 0
    out[reached] = body[reached] / total[reached, None]
    return out


def magnetic_mirror_descent(game_or_tree, iterations: int, alpha: float, stepsize: float | None = None, *,
                            nash_conv_every: int | None = 0, max_histories: int = 1_000_000) -> MMDResult:
    """Run tabular MMD with the dilated entropy (OpenSpiel's ``MMDDilatedEnt``) for ``iterations`` iterations.

    Parameters
    ----------
    game_or_tree : GameTree, pyspiel.Game or str
        A two-player zero-sum game with perfect recall (its tree is built once).
    iterations : int
        ``>= 0`` calls of OpenSpiel's ``update_sequences``.
    alpha : float
        Temperature, ``>= 0``: the weight of the dilated entropy (its minimiser, the uniform policy, is the fixed
        magnet). ``alpha > 0`` converges to the ``alpha``-QRE; ``alpha = 0`` is mirror descent ascent.
    stepsize : float, optional
        Default ``alpha / max|A0|^2`` as in OpenSpiel (so it must be given when ``alpha = 0``).
    nash_conv_every : int or None
        Measure the NashConv of the last iterate and of the average at iterations ``0, k, 2k, ...`` and at the
        last; ``0``: at the last only; None: never.
    max_histories : int
        Passed to :func:`psro.sequence_form.game_tree.build_game_tree` when a game is given.

    Returns
    -------
    MMDResult

    Examples
    --------
    >>> result = magnetic_mirror_descent("kuhn_poker", iterations=50, alpha=1.0, nash_conv_every=25)
    >>> result.trace_iterations.tolist(), [p.shape for p in result.policies]
    ([0, 25, 50], [(6, 2), (6, 2)])
    """
    tree = _as_tree(game_or_tree, max_histories)
    problem = mmd_problem(tree, alpha, stepsize)
    iterations = check_int(iterations, "iterations", minimum=0)
    if nash_conv_every is not None:
        nash_conv_every = check_int(nash_conv_every, "nash_conv_every", minimum=0)
    policies = tuple(uniform_policy(info) for info in tree.infostates)
    plans = tuple(sequence_policy(info) for info in tree.infostates)
    average = tuple(x.copy() for x in plans)
    trace = []
    for t in range(iterations + 1):
        if t > 0:
            policies, plans = mmd_step(problem, plans)
            average = tuple((a * t + x) / (t + 1) for a, x in zip(average, plans))   # OpenSpiel's running mean
        if nash_conv_every is not None and (t == iterations or (nash_conv_every and t % nash_conv_every == 0)):
            trace.append((t, nash_conv_of_plans(tree, plans), nash_conv_of_plans(tree, average)))
            logger.debug("MMD iteration %d: NashConv %.6g, of the average %.6g", *trace[-1])
    rows = np.array(trace, dtype=np.float64).reshape(-1, 3)
    return MMDResult(tree=tree, policies=policies,
                     average_policies=tuple(_behaviour(x, info) for x, info in zip(average, tree.infostates)),
                     plans=plans, average_plans=average, iterations=iterations, alpha=problem.alpha,
                     stepsize=problem.stepsize, trace_iterations=rows[:, 0].astype(np.int64), nash_conv=rows[:, 1],
                     average_nash_conv=rows[:, 2])
