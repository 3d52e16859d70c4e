"""Linear programs over the polytope ``{x in simplex : A x <= e}`` (HiGHS through scipy).

Used by the correlated meta-solvers for: maximum welfare and random vertices
(a linear objective), the smallest feasible relaxation epsilon, and the
largest support of a feasible point (the profiles not forced to zero), which
the maximum-entropy solver needs.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from solvers.highs_backend import configure_highs, new_highs

__all__ = ["LPResult", "maximise_linear", "maximise_linear_by_columns", "smallest_epsilon", "maximal_support",
           "LP_METHODS"]

LP_METHODS = ("highs-ds", "highs-ipm", "highs")
# Presolve is off: on these small dense-ish LPs it costs more than it saves (see the benchmark).
_DENSE_FRACTION = 0.25  # column generation works on a dense copy above this fill
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


@dataclass(frozen=True)
class _Duals:
    marginals: np.ndarray


@dataclass(frozen=True)
class _HighsResult:
    """The fields of scipy's ``linprog`` result that this module reads."""

    x: np.ndarray | None
    status: int  # 0 optimal, 2 infeasible, 4 other (scipy's codes)
    message: str
    nit: int
    ineqlin: _Duals
    eqlin: _Duals


_HIGHS_LOCAL = threading.local()


def _shared_highs(highspy):
    """This thread's ``highspy.Highs`` instance, cleared for a new model.

    Making a ``Highs`` object and setting its options costs about as much as
    solving one of these small LPs, so one instance per thread is kept and
    its model and options are reset before each solve.
    """
    h = getattr(_HIGHS_LOCAL, "highs", None)
    if h is None:
        h = new_highs()
        _HIGHS_LOCAL.highs = h
    else:
        h.clearModel()
        h.clearSolver()
        h.resetOptions()
        configure_highs(h)
    h.setOptionValue("presolve", "off")
    h.setOptionValue("primal_feasibility_tolerance", _HIGHS_OPTIONS["primal_feasibility_tolerance"])
    h.setOptionValue("dual_feasibility_tolerance", _HIGHS_OPTIONS["dual_feasibility_tolerance"])
    return h


def _with_equality_row(a_ub, n: int):
    """CSR arrays of ``a_ub`` (or no rows) stacked over one row of ones, without scipy's ``vstack``."""
    if a_ub is None:
        return np.array([0, n], dtype=np.int32), np.arange(n, dtype=np.int32), np.ones(n), 0
    a_ub = a_ub if sp.issparse(a_ub) and a_ub.format == "csr" else sp.csr_matrix(a_ub)
    indptr = np.concatenate([a_ub.indptr, [a_ub.indptr[-1] + n]]).astype(np.int32)
    indices = np.concatenate([a_ub.indices, np.arange(n)]).astype(np.int32)
    data = np.concatenate([a_ub.data, np.ones(n)])
    return indptr, indices, data, a_ub.shape[0]


def _run(c, a_ub, b_ub, a_eq, b_eq, bounds, method: str):
    """``min c x`` s.t. ``a_ub x <= b_ub``, ``a_eq x = b_eq``, bounds; HiGHS called directly when possible.

    scipy's ``linprog`` wrapper validates every option on every call, which
    costs more than HiGHS itself on these small LPs; with ``highspy``
    installed (it comes with cvxpy) the model is passed to HiGHS directly as
    numpy arrays, on one reused ``Highs`` instance. ``a_eq`` must be a single
    row; ``method`` may also be ``"highs-ps"`` (primal simplex, used by
    column generation).
    """
    if method not in LP_METHODS + ("highs-ps",):
        raise ValueError(f"lp_method must be one of {LP_METHODS}; got {method!r}.")
    if a_ub is not None and a_ub.shape[0] == 0:
        a_ub, b_ub = None, None
    try:
        import highspy
    except ImportError:  # pragma: no cover - highspy ships with cvxpy
        method = "highs-ds" if method == "highs-ps" else method
        return linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=bounds, method=method,
                       options=_HIGHS_OPTIONS)
    n = len(c)
    if isinstance(bounds, tuple):
        lower = np.full(n, -np.inf if bounds[0] is None else float(bounds[0]))
        upper = np.full(n, np.inf if bounds[1] is None else float(bounds[1]))
    else:
        lower = np.array([-np.inf if b[0] is None else b[0] for b in bounds], dtype=np.float64)
        upper = np.array([np.inf if b[1] is None else b[1] for b in bounds], dtype=np.float64)
    a_eq = np.asarray(a_eq.toarray() if sp.issparse(a_eq) else a_eq, dtype=np.float64).reshape(1, n)
    if np.all(a_eq == 1.0):
        indptr, indices, data, m_ub = _with_equality_row(a_ub, n)
    else:
        matrix = sp.vstack(([a_ub] if a_ub is not None else []) + [sp.csr_matrix(a_eq)], format="csr")
        indptr, indices, data = matrix.indptr.astype(np.int32), matrix.indices.astype(np.int32), matrix.data
        m_ub = 0 if a_ub is None else a_ub.shape[0]
    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n, m_ub + 1
    lp.col_cost_ = np.asarray(c, dtype=np.float64)
    lp.col_lower_ = np.where(np.isinf(lower), -inf, lower)
    lp.col_upper_ = np.where(np.isinf(upper), inf, upper)
    eq = np.asarray(b_eq, dtype=np.float64)
    lp.row_lower_ = np.concatenate([np.full(m_ub, -inf), eq])
    lp.row_upper_ = np.concatenate([np.asarray(b_ub, dtype=np.float64) if m_ub else np.zeros(0), eq])
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = indptr
    lp.a_matrix_.index_ = indices
    lp.a_matrix_.value_ = data
    h = _shared_highs(highspy)
    if method in ("highs-ds", "highs-ps"):
        h.setOptionValue("solver", "simplex")
        h.setOptionValue("simplex_strategy", 1 if method == "highs-ds" else 4)
    elif method == "highs-ipm":
        h.setOptionValue("solver", "ipm")
    h.passModel(lp)
    h.run()
    model_status = h.getModelStatus()
    info = h.getInfo()
    nit = int(info.simplex_iteration_count) + max(0, int(info.ipm_iteration_count))
    if model_status == highspy.HighsModelStatus.kOptimal:
        sol = h.getSolution()
        duals = np.asarray(sol.row_dual, dtype=np.float64)
        return _HighsResult(np.asarray(sol.col_value, dtype=np.float64), 0, "optimal", nit,
                            _Duals(duals[:m_ub]), _Duals(duals[m_ub:]))
    code = 2 if model_status == highspy.HighsModelStatus.kInfeasible else 4
    return _HighsResult(None, code, h.modelStatusToString(model_status), nit, _Duals(np.zeros(0)),
                        _Duals(np.zeros(0)))


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


def maximise_linear_by_columns(a, e, objective, method: str = "highs-ds", reduced_cost_tol: float = 1e-11,
                               max_rounds: int = 50) -> LPResult:
    """:func:`maximise_linear` by column generation (sifting), for LPs with few rows and many columns.

    An optimal vertex has at most ``rows + 1`` non-zeros, so the LP is solved
    on a small set of columns (the best ``2 (rows + 1)`` by objective and as
    many of the least violating ones); the row prices of that LP give every
    column's reduced cost, the columns that would improve it are added, and
    the LP is solved again. It stops when no reduced cost exceeds
    ``reduced_cost_tol``: the restricted optimum is then optimal for the full
    LP (HiGHS's duals certify it). If the restricted LP is infeasible, more
    columns are added; in the worst case the full LP is solved.
    Dense constraint rows (CCE) are handled as numpy arrays and their
    restricted LPs solved by the primal simplex, which is several times faster
    than the dual one there.

    Examples
    --------
    >>> a = sp.csr_matrix(np.array([[1.0, -1.0, 0.0, 0.5]]))   # x_0 + x_3 / 2 <= x_1
    >>> r = maximise_linear_by_columns(a, np.zeros(1), np.array([3.0, 0.0, 1.0, 1.5]))
    >>> round(r.value, 12), r.x.round(12).tolist()
    (1.5, [0.5, 0.5, 0.0, 0.0])
    """
    start = time.perf_counter()
    objective = np.asarray(objective, dtype=np.float64)
    a = sp.csr_matrix(a)
    m, n = a.shape
    batch = 2 * (m + 1)
    if m == 0 or n <= 2 * batch:
        return maximise_linear(a, e, objective, method)
    # CCE rows are dense (every profile appears in every row): numpy arrays beat scipy's slicing there.
    dense = a.nnz >= _DENSE_FRACTION * m * n
    cols_of = a.toarray() if dense else a.tocsc()
    column_max = cols_of.max(axis=0) if dense else cols_of.max(axis=0).toarray().ravel()
    # On the dense (CCE) shapes the primal simplex is several times faster than the dual one on the
    # restricted LPs; on the sparse CE ones it is not.
    restricted_method = "highs-ps" if dense and method == "highs-ds" else method
    by_objective = np.argsort(-objective, kind="stable")
    by_slack = np.argsort(column_max, kind="stable")
    chosen = np.zeros(n, dtype=bool)
    chosen[by_objective[:batch]] = True
    chosen[by_slack[:batch]] = True
    iterations = 0
    for _ in range(max_rounds):
        cols = np.flatnonzero(chosen)
        sub = sp.csr_matrix(cols_of[:, cols]) if dense else cols_of[:, cols].tocsr()
        res = _run(-objective[cols], sub, e, np.ones((1, cols.size)), [1.0], (0, None), restricted_method)
        iterations += int(getattr(res, "nit", 0))
        if res.status == 2:  # restricted LP infeasible: add the least violating columns not yet in
            extra = by_slack[~chosen[by_slack]][:batch]
            if extra.size == 0:
                break
            chosen[extra] = True
            continue
        if res.status != 0:
            break
        prices = -res.ineqlin.marginals
        shift = -res.eqlin.marginals[0]
        reduced = objective - (prices @ cols_of if dense else cols_of.T @ prices) - shift
        reduced[cols] = -np.inf
        entering = np.flatnonzero(reduced > reduced_cost_tol)
        if entering.size == 0:
            x = np.zeros(n)
            x[cols] = np.maximum(res.x, 0.0)
            x /= x.sum()
            return LPResult(x=x, value=float(objective @ x), converged=True,
                            status=f"optimal (column generation, {cols.size} of {n} columns)",
                            iterations=iterations, time=time.perf_counter() - start)
        chosen[entering[np.argsort(-reduced[entering])][:batch]] = True
    # Safety net: the whole LP.
    full = maximise_linear(a, e, objective, method)
    return LPResult(x=full.x, value=full.value, converged=full.converged, status=full.status,
                    iterations=iterations + full.iterations, time=time.perf_counter() - start)


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
