"""The double oracle: PSRO on a normal-form game with exact pure best responses.

Each player keeps a restricted set of pure strategies. Every iteration solves
the restricted game with the meta-solver, lifts its solution to the full
game (zero weight outside the sets), and computes every pure strategy's payoff
against the others' mixtures with one call to
:meth:`games.NormalFormGame.deviation_payoffs`. The best of them joins its
player's set. It stops once no player can gain more than ``tol`` by deviating
in the full game: the restricted solution is then an equilibrium of the full
game (the exact Nash equilibrium for two-player zero-sum games, McMahan,
Gordon and Blum 2003).

The restricted sets are kept as index arrays in the order strategies were
added, so a restricted game is one ``np.ix_`` gather of the payoff tensor and
extends the previous one by a row and a column. For two-player constant-sum
games with ``meta_solver="nash"`` the restricted LP is therefore kept in HiGHS
and warm-started (:class:`psro.meta.warm_start_lp.WarmStartZeroSumLP`); once no
player can improve, the last restricted game is re-solved from scratch by the
exact LP of :mod:`solvers`, so the answer has that solver's accuracy.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from games.normal_form import NormalFormGame, as_game
from games.validation import check_int, check_real
from psro.meta.solvers import WARM_STARTED
from psro.meta.warm_start_lp import WarmStartZeroSumLP
from solvers import make_equilibrium, solve
from solvers.equilibrium import Equilibrium
from solvers.registry import PRODUCT_CONCEPTS, method_info

__all__ = ["DoubleOracleResult", "double_oracle"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)
class DoubleOracleResult:
    """What :func:`double_oracle` returns.

    Attributes
    ----------
    equilibrium : solvers.Equilibrium
        The last restricted solution in the full game's strategy space; its
        ``gap`` is the NashConv in the full game.
    supports : tuple of tuple of ndarray
        ``supports[t][p]``: player p's restricted strategy indices (in the order
        they were added) at iteration ``t``.
    history : pandas.DataFrame
        One row per iteration: ``iteration``, ``nash_conv`` (in the full game),
        ``gain_<p>`` (player p's best deviation gain), ``size_<p>`` (restricted
        set size), ``value_<p>`` (restricted-game value) and ``time`` (cumulative
        seconds).
    converged : bool
        Whether it stopped because no player could gain more than ``tol``.
    """

    equilibrium: Equilibrium
    supports: tuple
    history: pd.DataFrame
    converged: bool

    @property
    def iterations(self) -> int:
        """Number of restricted games solved."""
        return len(self.supports)

    @property
    def restricted_sets(self) -> tuple:
        """The final restricted sets, one sorted index array per player."""
        return tuple(np.sort(s) for s in self.supports[-1])


def _resolve_meta_solver(meta_solver) -> Callable[[NormalFormGame], Equilibrium]:
    if callable(meta_solver):
        return meta_solver
    if not isinstance(meta_solver, str):
        raise TypeError(f"meta_solver must be a solver name or a callable game -> Equilibrium; got {meta_solver!r}.")
    spec = method_info(meta_solver)  # unknown names raise ValueError with suggestions
    if spec.concept not in PRODUCT_CONCEPTS:
        raise ValueError(
            f"meta_solver={meta_solver!r} returns a {spec.concept!r} joint distribution; the double oracle "
            f"responds to independent mixtures, so use a product solver such as 'nash'."
        )
    return lambda game: solve(game, meta_solver)


def _initial_sets(game: NormalFormGame, initial) -> list:
    if initial is None:
        return [np.zeros(1, dtype=np.intp) for _ in game.shape]
    if len(initial) != game.num_players:
        raise ValueError(f"initial must give one list of strategy indices per player ({game.num_players}); "
                         f"got {len(initial)}.")
    sets = []
    for p, (idx, k) in enumerate(zip(initial, game.shape)):
        arr = np.atleast_1d(np.asarray(idx))
        if arr.size == 0 or not np.issubdtype(arr.dtype, np.integer) or arr.min() < 0 or arr.max() >= k:
            raise ValueError(f"initial[{p}] must be a non-empty list of strategy indices in [0, {k}); got {idx!r}.")
        sets.append(np.unique(arr).astype(np.intp))
    return sets


def double_oracle(game, meta_solver="nash", initial: Sequence | None = None, max_iterations: int | None = None,
                  tol: float = 1e-10) -> DoubleOracleResult:
    """Grow restricted strategy sets by pure best responses until no player can improve.

    Parameters
    ----------
    game : NormalFormGame or array_like
        The full game (or its payoff array ``(num_players, k_1, ..., k_n)``).
    meta_solver : str or callable
        A product-concept method of :func:`solvers.solve` (``"nash"`` picks the
        exact LP for two-player zero-sum games) or a function
        ``NormalFormGame -> Equilibrium``.
    initial : sequence of sequences of int, optional
        Each player's starting strategy indices; default ``[0]`` for everyone.
    max_iterations : int, optional
        Stop after this many restricted solves (default: until converged; at
        most ``sum(k_p)`` are ever needed).
    tol : float
        A player improves when its best deviation gain exceeds
        ``tol * max(1, max |payoff|)``.

    Returns
    -------
    DoubleOracleResult

    Raises
    ------
    ValueError
        For a joint meta-solver, a bad ``initial`` or ``max_iterations``.

    Examples
    --------
    >>> from games import catalog
    >>> res = double_oracle(catalog.rock_paper_scissors())
    >>> res.equilibrium.marginals[0].round(6).tolist(), res.converged
    ([0.333333, 0.333333, 0.333333], True)
    >>> res.history[["iteration", "size_0", "size_1"]].values.tolist()
    [[0, 1, 1], [1, 2, 2], [2, 3, 3]]
    """
    game = as_game(game)
    solver = _resolve_meta_solver(meta_solver)
    max_iterations = check_int(max_iterations, "max_iterations", minimum=1, none_ok=True)
    tol = check_real(tol, "tol", minimum=0.0)
    n = game.num_players
    threshold = tol * max(1.0, float(np.abs(game.payoffs).max()))
    limit = max_iterations if max_iterations is not None else sum(game.shape) + 1
    sets = _initial_sets(game, initial)
    warm = isinstance(meta_solver, str) and meta_solver in WARM_STARTED   # (the meta-solver registry says which)
    warm_lp = WarmStartZeroSumLP() if warm and n == 2 and game.is_constant_sum() else None

    def lift(marginals):
        """The restricted solution in the full game, every pure strategy's payoff against it, and the gains."""
        full = []
        for idx, m, k in zip(sets, marginals, game.shape):
            x = np.zeros(k)
            x[idx] = m
            full.append(x)
        deviation = game.deviation_payoffs(full)
        values = np.array([d @ x for d, x in zip(deviation, full)])
        best = [int(d.argmax()) for d in deviation]
        gains = np.maximum(np.array([d[b] for d, b in zip(deviation, best)]) - values, 0.0)
        return full, deviation, values, best, gains

    supports, rows = [], []
    start = time.perf_counter()
    converged = False
    for t in range(limit):
        sub = game.payoffs[(slice(None), *np.ix_(*sets))]
        marginals = None
        if warm_lp is not None:
            try:
                sol = warm_lp.solve(sub[0])
                marginals = [sol.x, sol.y]
            except RuntimeError as exc:
                logger.info("warm-started LP failed (%s); solving from scratch from now on", exc)
                warm_lp = None
        if marginals is not None:
            full, deviation, values, best, gains = lift(marginals)
            if np.all(gains <= threshold):   # looks converged: confirm with the exact solver
                marginals = None
        if marginals is None:
            marginals = solver(NormalFormGame(sub)).marginals
            full, deviation, values, best, gains = lift(marginals)
        supports.append(tuple(s.copy() for s in sets))
        row = {"iteration": t, "nash_conv": float(gains.sum())}
        row.update({f"gain_{p}": float(g) for p, g in enumerate(gains)})
        row.update({f"size_{p}": len(s) for p, s in enumerate(sets)})
        row.update({f"value_{p}": float(v) for p, v in enumerate(values)})
        row["time"] = time.perf_counter() - start
        rows.append(row)
        logger.debug("double oracle iteration %d: NashConv %.3e, sizes %s", t, row["nash_conv"],
                     [len(s) for s in sets])

        grew = False
        for p in range(n):
            if gains[p] <= threshold:
                continue
            if best[p] in sets[p]:
                # the meta-solver's answer is not an equilibrium of the restricted game; add the best new strategy
                outside = np.setdiff1d(np.arange(game.shape[p]), sets[p])
                better = outside[deviation[p][outside] > values[p] + threshold]
                if better.size == 0:
                    continue
                best[p] = int(better[deviation[p][better].argmax()])
                logger.warning("meta-solver left player %d a gain of %.3g inside the restricted game", p, gains[p])
            sets[p] = np.append(sets[p], best[p])
            grew = True
        if not grew:
            converged = bool(np.all(gains <= threshold))
            break

    equilibrium = make_equilibrium(game, marginals=full, concept="nash", method="double_oracle",
                                   info={"meta_solver": meta_solver if isinstance(meta_solver, str) else
                                         getattr(meta_solver, "__name__", "callable"),
                                         "warm_started": warm_lp is not None,
                                         "iterations": len(supports), "converged": converged,
                                         "time": time.perf_counter() - start})
    return DoubleOracleResult(equilibrium=equilibrium, supports=tuple(supports), history=pd.DataFrame(rows),
                              converged=converged)
