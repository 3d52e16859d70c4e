"""Dominated strategies and their iterated elimination, n players.

Player ``p``'s action ``a`` is **strictly dominated** by a mixed strategy
``sigma`` of ``p`` (with ``sigma_a = 0``) when
``sum_b sigma_b u_p(b, s) > u_p(a, s)`` at every pure profile ``s`` of the
others, and **weakly dominated** when the inequality holds with ``>=``
everywhere and ``>`` somewhere. Domination by a pure strategy is the case of
a ``sigma`` with one entry. Checking domination by a mixture is one linear
programme (scipy's HiGHS):

- strict: maximise ``eps`` subject to ``sigma U[:, s] - eps >= U[a, s]`` for
  every ``s``; dominated iff ``eps* > tol``;
- weak: maximise ``sum_s (sigma U[:, s] - U[a, s])`` subject to
  ``sigma U[:, s] >= U[a, s]``; dominated iff the optimum is ``> tol``.

Payoffs are first rescaled to ``[0, 1]`` per player, so ``tol`` is relative to
the player's payoff range and the answers do not change when a constant is
added to, or a positive factor multiplies, a player's payoffs.

Iterated elimination removes one dominated action at a time (players in turn,
actions in index order) and re-checks in the reduced game until nothing is
dominated. The result of iterated *strict* elimination does not depend on the
order; that of weak elimination can, and the order used is recorded.
Eliminating strictly dominated strategies keeps every Nash, correlated and
coarse correlated equilibrium; weak elimination keeps at least one Nash
equilibrium, and every equilibrium of the reduced game is one of the full game.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.optimize import linprog

from games.normal_form import NormalFormGame, as_game
from games.validation import check_int, check_real
from solvers.equilibrium import Equilibrium
from solvers.registry import PRODUCT_CONCEPTS, make_equilibrium
from solvers.risk_averse.equilibria import rae_gap

__all__ = ["DEFAULT_TOL", "Elimination", "DominanceResult", "dominating_strategy", "is_dominated",
           "iterated_dominance", "solve_pruned"]

logger = logging.getLogger(__name__)

DEFAULT_TOL = 1e-9


@dataclass(frozen=True)
class Elimination:
    """One step of iterated elimination.

    Attributes
    ----------
    player : int
        Whose action was removed.
    action : int
        Its index in the original game.
    name : str
        Its strategy name.
    round : int
        The pass (from 1) in which it was removed.
    dominator : dict
        The dominating mixed strategy of ``player``: original action index ->
        probability (one entry when a pure strategy dominates).
    """

    player: int
    action: int
    name: str
    round: int
    dominator: dict


@dataclass(frozen=True, eq=False)
class DominanceResult:
    """The outcome of :func:`iterated_dominance`.

    Attributes
    ----------
    game : NormalFormGame
        The reduced game (surviving strategies only, names kept).
    surviving : tuple of tuple of int
        Each player's surviving actions, as indices into the original game.
    eliminated : tuple of Elimination
        The elimination order.
    strict, mixed : bool
        The kind of domination that was eliminated.
    """

    game: NormalFormGame
    surviving: tuple
    eliminated: tuple
    strict: bool
    mixed: bool

    def embed(self, full_game: NormalFormGame, equilibrium: Equilibrium) -> Equilibrium:
        """An equilibrium of the reduced game as one of ``full_game`` (zero weight on eliminated actions).

        The joint (for ``"ce"``/``"cce"``) or the marginals (otherwise) are
        padded with zeros and the gap is recomputed in the full game (the RAE
        gap for ``"rae"``; concepts without a known measure keep theirs).
        Eliminating strictly dominated actions keeps Nash, CE and CCE gaps
        unchanged; if the full game's gap is larger (a risk-averse player may
        prefer a dominated but safer action), ``info["converged"]`` is set to
        False. ``info["reduced_gap"]`` keeps the reduced game's gap.

        Examples
        --------
        >>> from games import catalog
        >>> from solvers import solve
        >>> pd = catalog.prisoners_dilemma()
        >>> red = iterated_dominance(pd)
        >>> eq = red.embed(pd, solve(red.game, "nash"))
        >>> eq.marginals[0].tolist(), eq.gap
        ([0.0, 1.0], 0.0)
        """
        full_game = as_game(full_game, "full_game")
        if full_game.num_players != self.game.num_players or any(
                max(s, default=-1) >= k for s, k in zip(self.surviving, full_game.shape)):
            raise ValueError("full_game is not the game this DominanceResult was computed from: its shape "
                             f"{full_game.shape} does not hold the surviving actions {self.surviving}.")
        if equilibrium.joint.shape != self.game.shape:
            raise ValueError(f"equilibrium has shape {equilibrium.joint.shape} but the reduced game has "
                             f"{self.game.shape}; solve DominanceResult.game and embed that solution.")
        info = dict(equilibrium.info, dominance_surviving=self.surviving,
                    dominance_eliminated=len(self.eliminated), reduced_gap=equilibrium.gap)
        if equilibrium.concept in ("ce", "cce"):
            joint = np.zeros(full_game.shape)
            joint[np.ix_(*self.surviving)] = equilibrium.joint
            eq = make_equilibrium(full_game, joint=joint, concept=equilibrium.concept,
                                  method=equilibrium.method, info=info)
        else:
            marginals = []
            for keep, m, k in zip(self.surviving, equilibrium.marginals, full_game.shape):
                full = np.zeros(k)
                full[list(keep)] = m
                marginals.append(full)
            gap = None
            if equilibrium.concept == "rae":  # its own measure: a pruned action may be less risky
                gap = rae_gap(full_game, marginals, info["risk_aversion"], risk=info.get("risk", "variance"),
                              target=info.get("target", "mean"))
            elif equilibrium.concept not in PRODUCT_CONCEPTS:
                gap = equilibrium.gap  # no full-game measure known for this concept: the reduced game's
            eq = make_equilibrium(full_game, marginals=marginals, concept=equilibrium.concept,
                                  method=equilibrium.method, info=info, gap=gap)
        scale = float(np.ptp(full_game.payoffs.reshape(full_game.num_players, -1), axis=1).max()) or 1.0
        if eq.converged and eq.gap > equilibrium.gap + 1e-9 * scale:
            logger.warning("the embedded solution's gap %.3g in the full game exceeds its gap %.3g in the reduced "
                           "game; it is marked not converged", eq.gap, equilibrium.gap)
            eq.info["converged"] = False
        return eq


def _check_flags(strict, mixed) -> None:
    for name, value in (("strict", strict), ("mixed", mixed)):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name} must be True or False; got {value!r}.")


def _player_rows(game: NormalFormGame, player: int) -> np.ndarray:
    """Player ``player``'s payoffs as ``(k_p, prod(k_-p))`` rows, rescaled to ``[0, 1]``."""
    u = np.moveaxis(game.payoffs[player], player, 0).reshape(game.shape[player], -1)
    lo, hi = float(u.min()), float(u.max())
    return np.zeros_like(u) if hi <= lo else (u - lo) / (hi - lo)


def _pure_dominator(rows: np.ndarray, action: int, strict: bool, tol: float):
    diff = rows - rows[action]  # (k, m): how much better each action does than `action`
    worst = diff.min(axis=1)
    ok = worst > tol if strict else (worst >= -tol) & (diff.max(axis=1) > tol)
    ok[action] = False
    hits = np.flatnonzero(ok)
    if len(hits) == 0:
        return None
    sigma = np.zeros(len(rows))
    sigma[hits[int(np.argmax(worst[hits]))]] = 1.0
    return sigma


def _mixed_dominator(rows: np.ndarray, action: int, strict: bool, tol: float):
    others = np.array([b for b in range(len(rows)) if b != action])
    sub = rows[others].T  # (m, k - 1)
    target = rows[action]
    m = sub.shape[0]
    if strict:
        # variables (sigma, eps): max eps  s.t.  -sub sigma + eps <= -target
        c = np.zeros(len(others) + 1)
        c[-1] = -1.0
        a_ub = np.hstack([-sub, np.ones((m, 1))])
        a_eq = np.append(np.ones(len(others)), 0.0)[None, :]
        bounds = [(0, None)] * len(others) + [(None, 1.0)]
    else:
        c = -sub.sum(axis=0)
        a_ub = -sub
        a_eq = np.ones((1, len(others)))
        bounds = [(0, None)] * len(others)
    res = linprog(c, A_ub=a_ub, b_ub=-target, A_eq=a_eq, b_eq=[1.0], bounds=bounds, method="highs")
    if res.status != 0:
        if res.status != 2:  # 2 = infeasible: nothing weakly dominates
            logger.warning("dominance LP ended with status %d (%s); treating the action as undominated",
                           res.status, res.message)
        return None
    sigma_sub = np.clip(res.x[:len(others)], 0.0, None)
    sigma_sub /= sigma_sub.sum()
    slack = sub @ sigma_sub - target  # recomputed, not taken from the solver
    dominated = slack.min() > tol if strict else (slack.min() >= -tol) & (slack.sum() > tol)
    if not dominated:
        return None
    sigma = np.zeros(len(rows))
    sigma[others] = sigma_sub
    return sigma


def _check_player_action(game: NormalFormGame, player, action) -> tuple:
    n = game.num_players
    player = check_int(player, "player", minimum=0, maximum=n - 1)
    k = game.shape[player]
    action = check_int(action, f"action (player {player} has {k} actions)", minimum=0, maximum=k - 1)
    return player, action


def dominating_strategy(game, player: int, action: int, strict: bool = True, mixed: bool = True,
                        tol: float = DEFAULT_TOL):
    """A strategy of ``player`` that dominates ``action``, or ``None``.

    Parameters
    ----------
    game : NormalFormGame
        Any number of players.
    player, action : int
        The action to test.
    strict : bool
        Strict (``>`` at every profile of the others) or weak domination.
    mixed : bool
        Allow dominating mixtures (one LP); otherwise pure strategies only.
    tol : float
        Margin, relative to ``player``'s payoff range.

    Returns
    -------
    ndarray or None
        The dominating mixed strategy over ``player``'s actions (pure ones are
        tried first), whose margin was recomputed from the payoffs.

    Examples
    --------
    >>> from games import NormalFormGame
    >>> g = NormalFormGame.from_bimatrix([[3, 0], [0, 3], [1, 1]], [[0, 0], [0, 0], [0, 0]])
    >>> dominating_strategy(g, 0, 2).tolist()
    [0.5, 0.5, 0.0]
    >>> dominating_strategy(g, 0, 2, mixed=False) is None
    True
    """
    game = as_game(game)
    _check_flags(strict, mixed)
    player, action = _check_player_action(game, player, action)
    tol = check_real(tol, "tol", minimum=0.0)
    rows = _player_rows(game, player)
    if len(rows) == 1:
        return None
    sigma = _pure_dominator(rows, action, strict, tol)
    if sigma is None and mixed and len(rows) > 2:
        sigma = _mixed_dominator(rows, action, strict, tol)
    return sigma


def is_dominated(game, player: int, action: int, strict: bool = True, mixed: bool = True,
                 tol: float = DEFAULT_TOL) -> bool:
    """Whether ``player``'s ``action`` is dominated (see :func:`dominating_strategy` for the options).

    Examples
    --------
    >>> from games import catalog
    >>> pd = catalog.prisoners_dilemma()   # (cooperate, defect)
    >>> is_dominated(pd, 0, 0), is_dominated(pd, 0, 1)
    (True, False)
    >>> from games import NormalFormGame
    >>> g = NormalFormGame.from_bimatrix([[1, 1], [1, 0]], [[0, 0], [0, 0]])
    >>> is_dominated(g, 0, 1), is_dominated(g, 0, 1, strict=False)
    (False, True)
    """
    return dominating_strategy(game, player, action, strict=strict, mixed=mixed, tol=tol) is not None


def iterated_dominance(game, strict: bool = True, mixed: bool = True, tol: float = DEFAULT_TOL,
                       max_rounds: int | None = None) -> DominanceResult:
    """Iterated elimination of dominated strategies.

    Parameters
    ----------
    game : NormalFormGame
        Any number of players.
    strict, mixed, tol
        As in :func:`dominating_strategy`; ``tol`` is relative to each
        player's payoff range in the current reduced game.
    max_rounds : int, optional
        Stop after this many passes (default: until nothing is dominated).

    Returns
    -------
    DominanceResult
        The reduced game, the surviving actions (original indices) and the
        elimination order.

    Examples
    --------
    >>> from games import NormalFormGame
    >>> # Osborne and Rubinstein's example: iterated strict dominance solves it.
    >>> g = NormalFormGame.from_bimatrix([[1, 1, 0], [0, 0, 2]], [[0, 2, 1], [3, 1, 0]])
    >>> res = iterated_dominance(g)
    >>> res.surviving, [(e.player, e.action) for e in res.eliminated]
    (((0,), (1,)), [(1, 2), (0, 1), (1, 0)])
    """
    game = as_game(game)
    _check_flags(strict, mixed)
    check_int(max_rounds, "max_rounds", minimum=1, none_ok=True)
    surviving = [list(range(k)) for k in game.shape]
    eliminated = []
    current = game
    rnd = 0
    while max_rounds is None or rnd < max_rounds:
        rnd += 1
        removed_this_round = False
        for p in range(game.num_players):
            pos = 0
            while pos < len(surviving[p]) and len(surviving[p]) > 1:
                sigma = dominating_strategy(current, p, pos, strict=strict, mixed=mixed, tol=tol)
                if sigma is None:
                    pos += 1
                    continue
                orig = surviving[p][pos]
                dominator = {surviving[p][b]: float(sigma[b]) for b in np.flatnonzero(sigma > 0)}
                eliminated.append(Elimination(p, orig, game.strategy_names[p][orig], rnd, dominator))
                logger.debug("round %d: player %d's action %d eliminated", rnd, p, orig)
                del surviving[p][pos]
                current = _restrict(game, surviving)
                removed_this_round = True
        if not removed_this_round:
            break
    return DominanceResult(game=current, surviving=tuple(tuple(s) for s in surviving),
                           eliminated=tuple(eliminated), strict=bool(strict), mixed=bool(mixed))


def solve_pruned(game, solver: Callable, strict: bool = True, mixed: bool = True,
                 tol: float = DEFAULT_TOL) -> Equilibrium:
    """Solve the game left after iterated elimination of dominated strategies, embedded in the full game.

    For a PSRO meta-game: dominated policies are pruned before the meta-solver
    runs, and get zero weight in the meta-strategy.

    Parameters
    ----------
    game : NormalFormGame
    solver : callable
        ``solver(reduced_game) -> Equilibrium`` (a registry solver, a PSRO
        meta-solver, ``lambda g: solve(g, "nash")``, ...).
    strict, mixed, tol
        As in :func:`iterated_dominance`.

    Returns
    -------
    Equilibrium
        On the full game, with the gap recomputed there; ``info`` adds
        ``dominance_surviving`` and ``dominance_eliminated`` (a count).

    Examples
    --------
    >>> from games import catalog
    >>> from solvers import solve
    >>> eq = solve_pruned(catalog.prisoners_dilemma(), lambda g: solve(g, "nash"))
    >>> eq.marginals[1].tolist(), eq.info["dominance_eliminated"]
    ([0.0, 1.0], 2)
    """
    game = as_game(game)
    if not callable(solver):
        raise TypeError(f"solver must be a callable taking a NormalFormGame; got {type(solver).__name__}.")
    reduced = iterated_dominance(game, strict=strict, mixed=mixed, tol=tol)
    eq = solver(reduced.game)
    if not isinstance(eq, Equilibrium):
        raise TypeError(f"solver must return a solvers.Equilibrium; it returned {type(eq).__name__}.")
    return reduced.embed(game, eq)


def _restrict(game: NormalFormGame, keep: list) -> NormalFormGame:
    payoffs = game.payoffs[np.ix_(range(game.num_players), *keep)]
    names = tuple(tuple(game.strategy_names[p][a] for a in ks) for p, ks in enumerate(keep))
    return NormalFormGame(payoffs, game.player_names, names, game.name)
