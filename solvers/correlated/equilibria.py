"""The correlated-equilibrium family of meta-solvers (CE and CCE) of the JPSRO paper.

Marris et al. 2021, "Multi-Agent Training beyond Zero-Sum with Correlated
Equilibrium Meta-Solvers". Every solver picks one point of the (epsilon-)CE or
CCE polytope built by :mod:`solvers.correlated.correlated_constraints`:

============================  =====================================================
name                          point
============================  =====================================================
``mgce`` / ``mgcce``          maximum Gini impurity (minimum ``||x||^2``; unique)
``ce`` / ``cce``              aliases of ``mgce`` / ``mgcce`` (the JPSRO default)
``mwce`` / ``mwcce``          maximum welfare (sum of payoffs; an LP vertex)
``mece`` / ``mecce``          maximum Shannon entropy (unique)
``min_epsilon_mgce`` / ...cce  the smallest feasible epsilon (an LP), then MG there
``rvce`` / ``rvcce``          a vertex maximising a seeded random objective
============================  =====================================================

Numerical methods (chosen by ``experiments/benchmarks/solver_speed.py``):

- MG and ME: projected Newton on the dual, one multiplier per constraint row
  (:mod:`solvers.correlated.correlated_dual`). The MG dual is piecewise quadratic, so the
  final Newton steps solve the KKT system of the active set exactly. ME first
  removes the profiles that every feasible point leaves at zero (one LP), so
  that its dual optimum is finite.
- MW, RV and the smallest epsilon: HiGHS (dual simplex) on the sparse matrix;
  MW by column generation over it (certified by reduced costs; the restricted
  LPs of the dense CCE rows by primal simplex, on one reused HiGHS instance). MW first
  checks whether a welfare-maximising pure profile is an equilibrium, which
  certifies it optimal without an LP.
- If the dual Newton method does not converge (it reports ``status``), the
  MG QP is re-solved with Clarabel (a high-accuracy interior point) and
  ``info["solver"]`` says so.

Payoffs are divided by the largest deviation gain before solving and
``epsilon`` is given in payoff units, so games with payoffs of any magnitude
are solved alike. The CE or CCE gap of every result is computed independently
by :func:`solvers.make_equilibrium`; solver status, iterations, time and the
epsilon used are in ``info``.
"""

from __future__ import annotations

import logging
import math
import time

import numpy as np
import scipy.sparse as sp

from games.normal_form import NormalFormGame, as_game
from games.validation import check_int, check_tolerance
from solvers.correlated.correlated_constraints import CorrelatedConstraints, correlated_constraints
from solvers.correlated.correlated_dual import solve_regularised_dual
from solvers.correlated.correlated_lp import (
    LP_METHODS,
    maximal_support,
    maximise_linear,
    maximise_linear_by_columns,
    smallest_epsilon,
)
from solvers.equilibrium import Equilibrium
from solvers.registry import make_equilibrium, register

__all__ = [
    "max_gini", "max_entropy", "max_welfare", "random_vertex", "min_epsilon_max_gini",
    "mgce", "mgcce", "ce", "cce", "mwce", "mwcce", "mece", "mecce",
    "min_epsilon_mgce", "min_epsilon_mgcce", "rvce", "rvcce",
]

logger = logging.getLogger(__name__)

_MIN_EPSILON_SLACKS = (0.0, 1e-9)  # scaled slacks tried on the LP's smallest epsilon for the MG solve


# ----------------------------------------------------------------- validation
def _check_epsilon(epsilon) -> float:
    try:
        eps = float(epsilon)
    except (TypeError, ValueError):
        raise TypeError(f"epsilon must be a real number (payoff units); got {epsilon!r}.") from None
    if not math.isfinite(eps):
        raise ValueError(f"epsilon must be finite; got {epsilon!r}. Use 0.0 for exact equilibria.")
    return eps


def _check_tol(tol) -> float:
    return check_tolerance(tol)


def _check_max_iter(max_iter) -> int:
    return check_int(max_iter, "max_iter", minimum=1)


def _check_concept(concept: str) -> str:
    if concept not in ("ce", "cce"):
        raise ValueError(f"concept must be 'ce' or 'cce'; got {concept!r}.")
    return concept


def _rows_for(constraints: CorrelatedConstraints, rhs: np.ndarray):
    """The rows that can bind at these right-hand sides (a row whose largest entry is <= its side always holds)."""
    keep = constraints.row_max > rhs
    a = constraints.matrix if keep.all() else constraints.matrix[keep]
    return a, np.asarray(rhs, dtype=np.float64)[keep]


def _smallest_epsilon(constraints: CorrelatedConstraints) -> tuple:
    """``(relative, payoff_units)``: the smallest epsilon of the scaled rows, and in payoff units.

    The LP minimises the largest row of ``matrix @ x``, each row relative to its
    player's gain scale; the returned joint then gains at most
    ``relative * row_scale`` per row, whose largest value is the payoff-unit figure.
    """
    lp = smallest_epsilon(constraints.matrix)
    if not lp.converged:
        raise RuntimeError(f"HiGHS failed on the smallest-epsilon LP: {lp.status}")
    rel = float(lp.value)
    scale = float(constraints.row_scale.max() if rel >= 0 else constraints.row_scale.min())
    return rel, rel * scale


def _require_feasible(constraints: CorrelatedConstraints, eps: float) -> None:
    """Raise ``ValueError`` when a negative epsilon is below the smallest feasible one."""
    if eps >= 0 or constraints.num_rows == 0:
        return
    _, smallest = _smallest_epsilon(constraints)
    if eps < smallest - 1e-9 * constraints.scale:
        raise ValueError(
            f"epsilon={eps:g} is infeasible: the smallest epsilon with a {constraints.concept.upper()} is "
            f"{smallest:.6g}. Pass a larger epsilon or use the 'min_epsilon_mg{constraints.concept}' solver."
        )


def _rng(rng, seed) -> np.random.Generator:
    if rng is not None and seed is not None:
        raise ValueError("give either rng or seed, not both.")
    source = rng if rng is not None else seed
    if source is not None and not isinstance(source, (np.random.Generator, int, np.integer, np.random.SeedSequence)):
        raise TypeError(f"rng must be a numpy.random.Generator or an int seed; got {type(source).__name__}.")
    return np.random.default_rng(source)


def _violation(constraints: CorrelatedConstraints, x: np.ndarray, eps: float) -> float:
    if constraints.num_rows == 0:
        return 0.0
    return float(max(0.0, constraints.violations(x, eps).max()))


# ------------------------------------------------------------------- methods
def max_gini(game: NormalFormGame, concept: str = "ce", epsilon: float = 0.0, tol: float = 1e-11,
             max_iter: int = 500, method: str | None = None) -> Equilibrium:
    """The maximum-Gini (minimum-norm) epsilon-CE or CCE: ``min ||x||^2`` over the polytope.

    Parameters
    ----------
    game : NormalFormGame
        The game.
    concept : {"ce", "cce"}
        Correlated or coarse correlated equilibrium.
    epsilon : float
        Relaxation in payoff units: every deviation may gain up to ``epsilon``.
    tol : float
        Dual stopping tolerance (constraint violation relative to the largest gain).
    max_iter : int
        Largest number of Newton iterations.
    method : str, optional
        The name recorded in the result (default ``"mg" + concept``).

    Returns
    -------
    Equilibrium
        ``info`` holds ``converged``, ``status``, ``iterations``, ``epsilon``,
        ``gini`` (``1 - ||x||^2``), ``max_violation`` and ``duality_gap``.

    Examples
    --------
    >>> from games import catalog
    >>> eq = max_gini(catalog.chicken(), "ce")
    >>> (eq.values * 17).round(9).tolist()          # 72/17 each
    [72.0, 72.0]
    """
    game, concept = as_game(game), _check_concept(concept)
    eps, tol, max_iter = _check_epsilon(epsilon), _check_tol(tol), _check_max_iter(max_iter)
    constraints = correlated_constraints(game, concept)
    _require_feasible(constraints, eps)
    return _gini_at(game, constraints, eps, tol, max_iter, method or f"mg{concept}", {})


def _gini_at(game, constraints, eps, tol, max_iter, method, extra, sol=None, rhs=None) -> Equilibrium:
    a, e = _rows_for(constraints, constraints.rhs(eps) if rhs is None else rhs)
    if sol is None:
        sol = solve_regularised_dual(a, e, "gini", tol=tol, max_iter=max_iter)
    x, converged, status, solver = sol.x, sol.converged, sol.status, sol.method
    if not converged:
        logger.info("falling back to Clarabel for the maximum-Gini QP (dual Newton status %s)", sol.status)
        x_fb, status_fb = _gini_by_interior_point(a, e)
        if x_fb is not None:
            x, converged, status, solver = x_fb, True, status_fb, "clarabel (after dual Newton: " + sol.status + ")"
    info = {
        "converged": converged, "status": status, "iterations": sol.iterations,
        "solver": solver, "solver_time": sol.time, "epsilon": eps,
        "num_constraints": int(a.shape[0]), "gini": float(1.0 - x @ x),
        "max_violation": _violation(constraints, x, eps), "duality_gap": sol.duality_gap * constraints.scale,
        **extra,
    }
    return make_equilibrium(game, joint=x.reshape(game.shape), concept=constraints.concept, method=method, info=info)


def _gini_by_interior_point(a, e):
    """``min ||x||^2`` on the polytope with Clarabel (a high-accuracy interior point), or ``(None, status)``."""
    import cvxpy as cp

    n = a.shape[1]
    x = cp.Variable(n, nonneg=True)
    cons = [cp.sum(x) == 1] + ([a @ x <= e] if a.shape[0] else [])
    problem = cp.Problem(cp.Minimize(cp.sum_squares(x)), cons)
    try:
        problem.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    except cp.error.SolverError as exc:  # pragma: no cover - depends on the solver build
        return None, f"clarabel failed: {exc}"
    if problem.status != cp.OPTIMAL or x.value is None:
        return None, f"clarabel: {problem.status}"
    value = np.maximum(x.value, 0.0)
    return value / value.sum(), "optimal"


def max_entropy(game: NormalFormGame, concept: str = "ce", epsilon: float = 0.0, tol: float = 1e-11,
                max_iter: int = 500, method: str | None = None) -> Equilibrium:
    """The maximum-entropy epsilon-CE or CCE: ``max -sum x log x`` over the polytope.

    One LP finds the profiles that every feasible point leaves at zero; on the
    others the entropy dual (a log-sum-exp with one multiplier per constraint
    row) has a finite minimiser, found by projected Newton.

    Parameters
    ----------
    game, concept, epsilon, tol, max_iter, method
        As for :func:`max_gini`.

    Returns
    -------
    Equilibrium
        ``info["entropy"]`` is the entropy in nats.

    Examples
    --------
    >>> from games import catalog
    >>> eq = max_entropy(catalog.matching_pennies(), "cce")   # uniform is the max-entropy point
    >>> eq.joint.round(9).tolist()
    [[0.25, 0.25], [0.25, 0.25]]
    """
    game, concept = as_game(game), _check_concept(concept)
    eps, tol, max_iter = _check_epsilon(epsilon), _check_tol(tol), _check_max_iter(max_iter)
    constraints = correlated_constraints(game, concept)
    _require_feasible(constraints, eps)
    a, e = _rows_for(constraints, constraints.rhs(eps))
    start = time.perf_counter()
    support_failure = None
    try:
        support = maximal_support(a, e) if a.shape[0] else np.ones(game.num_profiles, dtype=bool)
    except RuntimeError as exc:  # HiGHS can fail on this LP; the max-Gini point's support is a feasible face
        logger.info("max_entropy: %s; maximising the entropy on the max-Gini point's support instead", exc)
        support_failure = str(exc)
        support = max_gini(game, concept, eps, tol, max_iter).joint.reshape(-1) > 0
    a_s = sp.csr_matrix(a[:, support]) if a.shape[0] else a[:, support]
    if a_s.shape[0]:
        keep = a_s.max(axis=1).toarray().ravel() > e if e.size else np.zeros(0, dtype=bool)
        a_s, e = a_s[keep], e[keep]
    sol = solve_regularised_dual(a_s, e, "entropy", tol=tol, max_iter=max_iter)
    x = np.zeros(game.num_profiles)
    x[support] = sol.x
    positive = x[x > 0]
    info = {
        # on a face that may not be the largest, the point need not be the maximum-entropy one
        "converged": sol.converged and support_failure is None,
        "status": sol.status if support_failure is None else f"{support_failure}; entropy on the max-Gini support",
        "iterations": sol.iterations,
        "solver": "support LP + dual projected Newton", "solver_time": time.perf_counter() - start,
        "epsilon": eps, "num_constraints": int(a_s.shape[0]), "support_size": int(support.sum()),
        "entropy": float(-(positive * np.log(positive)).sum()),
        "max_violation": _violation(constraints, x, eps), "duality_gap": sol.duality_gap * constraints.scale,
    }
    return make_equilibrium(game, joint=x.reshape(game.shape), concept=concept, method=method or f"me{concept}",
                            info=info)


def _linear(game, constraints, eps, objective, lp_method, method, extra, columns=False) -> Equilibrium:
    a, e = _rows_for(constraints, constraints.rhs(eps))
    solver = maximise_linear_by_columns if columns else maximise_linear
    lp = solver(a, e, objective, method=lp_method)
    if not lp.converged:
        raise RuntimeError(f"HiGHS failed on the {method} LP: {lp.status}")
    info = {"converged": lp.converged, "status": lp.status, "iterations": lp.iterations, "solver": lp_method,
            "solver_time": lp.time, "epsilon": eps, "num_constraints": int(a.shape[0]),
            "max_violation": _violation(constraints, lp.x, eps), **extra}
    return make_equilibrium(game, joint=lp.x.reshape(game.shape), concept=constraints.concept, method=method,
                            info=info)


def max_welfare(game: NormalFormGame, concept: str = "ce", epsilon: float = 0.0, lp_method: str = "auto",
                method: str | None = None) -> Equilibrium:
    """A maximum-welfare epsilon-CE or CCE (the sum of the players' payoffs), by one LP.

    The maximiser need not be unique; the welfare is.

    Parameters
    ----------
    game, concept, epsilon, method
        As for :func:`max_gini`.
    lp_method : {"auto", "highs-ds", "highs-ipm", "highs"}
        scipy's HiGHS variant on the whole LP. ``"auto"`` runs the dual
        simplex by column generation
        (:func:`solvers.correlated.correlated_lp.maximise_linear_by_columns`): an optimal
        vertex has few non-zeros, and this is several times faster than the
        whole LP on the games of ``experiments/benchmarks/solver_speed.py``.

    Returns
    -------
    Equilibrium
        ``info["welfare"]`` is the optimal welfare. When a welfare-maximising
        pure profile is itself an equilibrium it is returned without an LP.

    Examples
    --------
    >>> from games import catalog
    >>> eq = max_welfare(catalog.chicken(), "ce")
    >>> eq.values.round(9).tolist(), eq.info["welfare"]
    ([5.25, 5.25], 10.5)
    """
    game, concept = as_game(game), _check_concept(concept)
    eps = _check_epsilon(epsilon)
    columns = lp_method == "auto"
    if lp_method == "auto":
        lp_method = "highs-ds"
    if lp_method not in LP_METHODS:
        raise ValueError(f"lp_method must be 'auto' or one of {LP_METHODS}; got {lp_method!r}.")
    name = method or f"mw{concept}"
    constraints = correlated_constraints(game, concept)
    _require_feasible(constraints, eps)
    welfare = game.payoffs.reshape(game.num_players, -1).sum(axis=0)
    pure = _best_pure_equilibrium(constraints, eps, welfare)
    if pure is not None:
        # No distribution has more welfare than the best profile, so a best profile that is itself an
        # equilibrium is optimal: the LP is not needed.
        x = np.zeros(game.num_profiles)
        x[pure] = 1.0
        info = {"converged": True, "status": "optimal (a welfare-maximising profile is an equilibrium)",
                "iterations": 0, "solver": "pure-profile check", "epsilon": eps,
                "num_constraints": constraints.num_rows, "max_violation": _violation(constraints, x, eps)}
        eq = make_equilibrium(game, joint=x.reshape(game.shape), concept=concept, method=name, info=info)
    else:
        welfare_scale = float(np.abs(welfare).max()) or 1.0
        eq = _linear(game, constraints, eps, welfare / welfare_scale, lp_method, name, {}, columns)
    eq.info["welfare"] = float(eq.values.sum())
    return eq


def _best_pure_equilibrium(constraints: CorrelatedConstraints, eps: float, welfare: np.ndarray):
    """Index of a welfare-maximising pure profile that satisfies every row, or None."""
    best = np.flatnonzero(welfare == welfare.max())
    if constraints.num_rows == 0:
        return int(best[0])
    columns = constraints.matrix[:, best].toarray()
    ok = np.flatnonzero((columns <= constraints.rhs(eps)[:, None]).all(axis=0))
    return int(best[ok[0]]) if ok.size else None


def random_vertex(game: NormalFormGame, concept: str = "ce", epsilon: float = 0.0, rng=None, seed=None,
                  method: str | None = None) -> Equilibrium:
    """A vertex of the epsilon-CE or CCE polytope: the LP optimum for a Gaussian random objective.

    Parameters
    ----------
    game, concept, epsilon, method
        As for :func:`max_gini`.
    rng : numpy.random.Generator or int, optional
        Source of the random objective.
    seed : int, optional
        Alternative to ``rng``.

    Examples
    --------
    >>> from games import catalog
    >>> eq = random_vertex(catalog.prisoners_dilemma(), "ce", seed=0)   # the unique CE
    >>> eq.joint.tolist()
    [[0.0, 0.0], [0.0, 1.0]]
    """
    game, concept = as_game(game), _check_concept(concept)
    eps = _check_epsilon(epsilon)
    generator = _rng(rng, seed)
    constraints = correlated_constraints(game, concept)
    _require_feasible(constraints, eps)
    objective = generator.standard_normal(game.num_profiles)
    return _linear(game, constraints, eps, objective, "highs-ds", method or f"rv{concept}", {})


def min_epsilon_max_gini(game: NormalFormGame, concept: str = "ce", tol: float = 1e-11, max_iter: int = 500,
                         method: str | None = None) -> Equilibrium:
    """The maximum-Gini point at the smallest epsilon for which the CE or CCE polytope is non-empty.

    One LP finds ``epsilon* = min_x max_r (A x)_r`` over the simplex (at most 0,
    since an exact CE always exists; negative when a strict one exists); the
    maximum-Gini point is then computed at ``epsilon*`` (retrying with a slack
    of ``1e-9`` times the largest gain if the dual Newton method does not
    converge there, since the LP is exact only to its tolerance, and then with
    Clarabel: the polytope at ``epsilon*`` is often a single point or a thin
    face, where the dual is degenerate).

    Returns
    -------
    Equilibrium
        ``info["epsilon"]`` is ``epsilon*`` in payoff units and
        ``info["epsilon_used"]`` the relaxation of the MG solve.

    Examples
    --------
    >>> from games import catalog
    >>> eq = min_epsilon_max_gini(catalog.prisoners_dilemma(), "ce")
    >>> eq.joint.round(6).tolist(), abs(eq.info["epsilon"]) < 1e-9
    ([[0.0, 0.0], [0.0, 1.0]], True)
    """
    game, concept = as_game(game), _check_concept(concept)
    tol, max_iter = _check_tol(tol), _check_max_iter(max_iter)
    constraints = correlated_constraints(game, concept)
    name = method or f"min_epsilon_mg{concept}"
    if constraints.num_rows == 0:
        return _gini_at(game, constraints, 0.0, tol, max_iter, name, {"epsilon_used": 0.0, "lp_time": 0.0})
    start = time.perf_counter()
    rel, eps_star = _smallest_epsilon(constraints)
    lp_time = time.perf_counter() - start
    # The polytope at epsilon* may be a single point; the dual is solvable there, but the LP value is
    # exact only to its tolerance, so if the dual reports trouble, retry with a small slack.
    for slack in _MIN_EPSILON_SLACKS:
        rhs = np.full(constraints.num_rows, rel + slack)
        a, e = _rows_for(constraints, rhs)
        sol = solve_regularised_dual(a, e, "gini", tol=tol, max_iter=min(max_iter, 100))
        if sol.converged:
            break
    eps_used = (rel + slack) * float(constraints.row_scale.max() if rel + slack >= 0 else constraints.row_scale.min())
    eq = _gini_at(game, constraints, eps_used, tol, max_iter, name, {"lp_time": lp_time}, sol, rhs=rhs)
    eq.info["epsilon"] = eps_star
    eq.info["epsilon_used"] = eps_used
    eq.info["max_violation"] = _violation(constraints, eq.joint.reshape(-1), eps_star)
    return eq


# ----------------------------------------------------------------- registry
@register("mgce", concept="ce", normalise=False)
def mgce(game: NormalFormGame, epsilon: float = 0.0, tol: float = 1e-11, max_iter: int = 500) -> Equilibrium:
    """Maximum-Gini correlated equilibrium (unique; the minimum-norm point of the CE polytope).

    Examples
    --------
    >>> from games import catalog
    >>> (mgce(catalog.bach_or_stravinsky()).values * 43).round(9).tolist()   # 60/43 each
    [60.0, 60.0]
    """
    return max_gini(game, "ce", epsilon, tol, max_iter, "mgce")


@register("mgcce", concept="cce", normalise=False)
def mgcce(game: NormalFormGame, epsilon: float = 0.0, tol: float = 1e-11, max_iter: int = 500) -> Equilibrium:
    """Maximum-Gini coarse correlated equilibrium (unique).

    Examples
    --------
    >>> from games import catalog
    >>> mgcce(catalog.matching_pennies()).joint.round(9).tolist()
    [[0.25, 0.25], [0.25, 0.25]]
    """
    return max_gini(game, "cce", epsilon, tol, max_iter, "mgcce")


@register("ce", concept="ce", normalise=False)
def ce(game: NormalFormGame, epsilon: float = 0.0, tol: float = 1e-11, max_iter: int = 500) -> Equilibrium:
    """Correlated equilibrium; the default objective is maximum Gini (same as ``mgce``), as in JPSRO.

    Examples
    --------
    >>> from games import catalog
    >>> ce(catalog.prisoners_dilemma()).joint.round(9).tolist()
    [[0.0, 0.0], [0.0, 1.0]]
    """
    return max_gini(game, "ce", epsilon, tol, max_iter, "ce")


@register("cce", concept="cce", normalise=False)
def cce(game: NormalFormGame, epsilon: float = 0.0, tol: float = 1e-11, max_iter: int = 500) -> Equilibrium:
    """Coarse correlated equilibrium; the default objective is maximum Gini (same as ``mgcce``).

    Examples
    --------
    >>> from games import catalog
    >>> cce(catalog.prisoners_dilemma()).joint.round(9).tolist()
    [[0.0, 0.0], [0.0, 1.0]]
    """
    return max_gini(game, "cce", epsilon, tol, max_iter, "cce")


@register("mwce", concept="ce", normalise=False)
def mwce(game: NormalFormGame, epsilon: float = 0.0, lp_method: str = "auto") -> Equilibrium:
    """Maximum-welfare correlated equilibrium (one HiGHS LP).

    Examples
    --------
    >>> from games import catalog
    >>> mwce(catalog.chicken()).values.round(9).tolist()
    [5.25, 5.25]
    """
    return max_welfare(game, "ce", epsilon, lp_method, "mwce")


@register("mwcce", concept="cce", normalise=False)
def mwcce(game: NormalFormGame, epsilon: float = 0.0, lp_method: str = "auto") -> Equilibrium:
    """Maximum-welfare coarse correlated equilibrium (one HiGHS LP).

    Examples
    --------
    >>> from games import catalog
    >>> mwcce(catalog.prisoners_dilemma()).values.tolist()
    [-2.0, -2.0]
    """
    return max_welfare(game, "cce", epsilon, lp_method, "mwcce")


@register("mece", concept="ce", normalise=False)
def mece(game: NormalFormGame, epsilon: float = 0.0, tol: float = 1e-11, max_iter: int = 500) -> Equilibrium:
    """Maximum-entropy correlated equilibrium (unique).

    Examples
    --------
    >>> from games import catalog
    >>> mece(catalog.rock_paper_scissors()).joint.round(9).tolist()[0]   # uniform over the 9 profiles
    [0.111111111, 0.111111111, 0.111111111]
    """
    return max_entropy(game, "ce", epsilon, tol, max_iter, "mece")


@register("mecce", concept="cce", normalise=False)
def mecce(game: NormalFormGame, epsilon: float = 0.0, tol: float = 1e-11, max_iter: int = 500) -> Equilibrium:
    """Maximum-entropy coarse correlated equilibrium (unique).

    Examples
    --------
    >>> from games import catalog
    >>> mecce(catalog.prisoners_dilemma()).joint.round(9).tolist()
    [[0.0, 0.0], [0.0, 1.0]]
    """
    return max_entropy(game, "cce", epsilon, tol, max_iter, "mecce")


@register("min_epsilon_mgce", concept="ce", normalise=False)
def min_epsilon_mgce(game: NormalFormGame, tol: float = 1e-11, max_iter: int = 500) -> Equilibrium:
    """Maximum-Gini CE at the smallest feasible epsilon (``info["epsilon"]``, at most 0).

    Examples
    --------
    >>> from games import catalog
    >>> eq = min_epsilon_mgce(catalog.matching_pennies())
    >>> eq.joint.round(6).tolist()
    [[0.25, 0.25], [0.25, 0.25]]
    """
    return min_epsilon_max_gini(game, "ce", tol, max_iter, "min_epsilon_mgce")


@register("min_epsilon_mgcce", concept="cce", normalise=False)
def min_epsilon_mgcce(game: NormalFormGame, tol: float = 1e-11, max_iter: int = 500) -> Equilibrium:
    """Maximum-Gini CCE at the smallest feasible epsilon (``info["epsilon"]``, at most 0).

    Examples
    --------
    >>> from games import catalog
    >>> eq = min_epsilon_mgcce(catalog.chicken())
    >>> eq.info["epsilon"] < 0        # chicken has a strict CCE
    True
    """
    return min_epsilon_max_gini(game, "cce", tol, max_iter, "min_epsilon_mgcce")


@register("rvce", concept="ce", normalise=False)
def rvce(game: NormalFormGame, epsilon: float = 0.0, rng=None, seed=None) -> Equilibrium:
    """A random vertex of the CE polytope (seeded by ``rng`` or ``seed``).

    Examples
    --------
    >>> from games import catalog
    >>> eq = rvce(catalog.chicken(), seed=3)
    >>> eq.gap < 1e-9
    True
    """
    return random_vertex(game, "ce", epsilon, rng, seed, "rvce")


@register("rvcce", concept="cce", normalise=False)
def rvcce(game: NormalFormGame, epsilon: float = 0.0, rng=None, seed=None) -> Equilibrium:
    """A random vertex of the CCE polytope (seeded by ``rng`` or ``seed``).

    Examples
    --------
    >>> from games import catalog
    >>> eq = rvcce(catalog.chicken(), seed=3)
    >>> eq.gap < 1e-9
    True
    """
    return random_vertex(game, "cce", epsilon, rng, seed, "rvcce")
