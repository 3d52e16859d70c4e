"""Linear programs over the polytope ``{x in simplex : A x <= e}`` (HiGHS through scipy).

Used by the correlated meta-solvers for: maximum welfare and random vertices
(a linear objective), the smallest feasible relaxation epsilon, and the
largest support of a feasible point (the profiles not forced to zero), which
the maximum-entropy solver needs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

__all__ = ["LPResult", "maximise_linear", "smallest_epsilon", "maximal_support", "LP_METHODS"]

LP_METHODS = ("highs-ds", "highs-ipm", "highs")
# Presolve is off: on these small dense-ish LPs it costs more than it saves (see the benchmark).
_HIGHS_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10, "presolve": False}


@dataclass(frozen=True)
class LPResult:
    """The outcome of one LP.

    Attributes
    ----------
    x : ndarray or None
        The optimal distribution (None when the LP failed).
    value : float
        The optimal objective value (``nan`` when the LP failed).
    converged : bool
        Whether HiGHS reports an optimal solution.
    status : str
        HiGHS' message.
    iterations : int
        Simplex or interior-point iterations.
    time : float
        Wall time in seconds.
    """

    x: np.ndarray | None
    value: float
    converged: bool
    status: str
    iterations: int
    time: float


def _run(c, a_ub, b_ub, a_eq, b_eq, bounds, method: str):
    if method not in LP_METHODS:
        raise ValueError(f"lp_method must be one of {LP_METHODS}; got {method!r}.")
    if a_ub is not None and a_ub.shape[0] == 0:
        a_ub, b_ub = None, None
    return linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=bounds, method=method,
                   options=_HIGHS_OPTIONS)


def maximise_linear(a, e, objective, method: str = "highs-ds") -> LPResult:
    """Maximise ``objective @ x`` over ``{x in simplex : a @ x <= e}``.

    With the dual simplex (the default) the answer is a vertex of the polytope.

    Examples
    --------
    >>> a = sp.csr_matrix(np.array([[1.0, -1.0, 0.0]]))   # x_0 <= x_1
    >>> maximise_linear(a, np.zeros(1), np.array([2.0, 0.0, 1.0])).value
    1.0
    """
    start = time.perf_counter()
    objective = np.asarray(objective, dtype=np.float64)
    n = objective.size
    res = _run(-objective, a, e, np.ones((1, n)), [1.0], (0, None), method)
    ok = res.status == 0
    x = np.maximum(res.x, 0.0) / np.maximum(res.x, 0.0).sum() if ok else None
    return LPResult(x=x, value=float(objective @ x) if ok else float("nan"), converged=ok,
                    status=str(res.message), iterations=int(getattr(res, "nit", 0)),
                    time=time.perf_counter() - start)


def smallest_epsilon(a, method: str = "highs-ds") -> LPResult:
    """The smallest ``t`` with ``a @ x <= t`` for some ``x`` on the simplex, and that ``x``.

    ``value`` is ``t`` (``-inf`` when ``a`` has no rows).

    Examples
    --------
    >>> a = sp.csr_matrix(np.array([[1.0, -1.0], [-1.0, 1.0]]))
    >>> r = smallest_epsilon(a)
    >>> abs(r.value) < 1e-12, r.x.tolist()
    (True, [0.5, 0.5])
    """
    start = time.perf_counter()
    m, n = a.shape
    if m == 0:
        return LPResult(x=np.full(n, 1.0 / n), value=float("-inf"), converged=True, status="no constraints",
                        iterations=0, time=time.perf_counter() - start)
    a_ub = sp.hstack([sp.csr_matrix(a), -np.ones((m, 1))], format="csr")
    a_eq = np.concatenate([np.ones(n), [0.0]])[None, :]
    c = np.zeros(n + 1)
    c[-1] = 1.0
    bounds = [(0, None)] * n + [(None, None)]
    res = _run(c, a_ub, np.zeros(m), a_eq, [1.0], bounds, method)
    ok = res.status == 0
    x = np.maximum(res.x[:n], 0.0) if ok else None
    return LPResult(x=x / x.sum() if ok else None, value=float(res.x[-1]) if ok else float("nan"),
                    converged=ok, status=str(res.message), iterations=int(getattr(res, "nit", 0)),
                    time=time.perf_counter() - start)


def maximal_support(a, e, method: str = "highs-ds") -> np.ndarray:
    """The columns that some point of ``{x in simplex : a @ x <= e}`` puts positive mass on.

    Solves one LP on the homogenised cone ``{(x, t) : x >= 0, 1^T x = t, a x <= e t}``:
    maximise ``sum_j y_j`` with ``0 <= y_j <= min(1, x_j)``. Since the cone is
    closed under sums and positive scaling, ``y_j = 1`` exactly on the largest
    support.

    Raises
    ------
    ValueError
        If the polytope is empty.

    Examples
    --------
    >>> a = sp.csr_matrix(np.array([[1.0, 1.0, 0.0]]))   # x_0 + x_1 <= 0
    >>> maximal_support(a, np.zeros(1)).tolist()
    [False, False, True]
    """
    m, n = a.shape
    if m == 0:
        return np.ones(n, dtype=bool)
    a = sp.csr_matrix(a)
    eye = sp.identity(n, format="csr")
    zeros_mn = sp.csr_matrix((m, n))
    # variables: x (n), y (n), t (1)
    a_ub = sp.vstack([
        sp.hstack([a, zeros_mn, -np.asarray(e, dtype=np.float64)[:, None]]),
        sp.hstack([-eye, eye, sp.csr_matrix((n, 1))]),
    ], format="csr")
    b_ub = np.zeros(m + n)
    a_eq = np.concatenate([np.ones(n), np.zeros(n), [-1.0]])[None, :]
    c = np.concatenate([np.zeros(n), -np.ones(n), [0.0]])
    bounds = [(0, None)] * n + [(0, 1)] * n + [(0, None)]
    res = _run(c, a_ub, b_ub, a_eq, [0.0], bounds, method)
    if res.status != 0:
        raise RuntimeError(f"HiGHS failed on the support LP: {res.message}")
    y = res.x[n:2 * n]
    if y.max() < 0.5:
        raise ValueError("the constraints are infeasible: no distribution satisfies them at this epsilon.")
    return y > 0.5
