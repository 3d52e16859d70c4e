"""Maximum-Gini and maximum-entropy points of ``{x in simplex : A x <= e}``.

Both problems minimise a strictly convex regulariser ``R`` over the polytope:

- Gini: ``R(x) = 1/2 ||x||^2`` (maximum Gini impurity ``1 - ||x||^2``);
- entropy: ``R(x) = sum_j x_j log x_j`` (maximum Shannon entropy).

With one multiplier ``lam_r >= 0`` per constraint row, the minimiser of the
Lagrangian over the simplex is a closed-form map of ``v = -A^T lam``: the
Euclidean projection onto the simplex (sparsemax) for Gini, and the softmax for
entropy. The dual is the smooth convex, bound-constrained problem

    min_{lam >= 0}  f(lam) = R*(v) + e^T lam,   grad f = e - A x(lam),

with one variable per constraint row (``sum_p k_p (k_p - 1)`` for CE and
``sum_p k_p`` for CCE, instead of ``prod_p k_p`` primal variables). We solve it
with a projected Newton method (Bertsekas 1982) whose active set follows the
primal-dual active-set rule (Hintermueller, Ito and Kunisch 2003): a row is
fixed at zero when its multiplier is small next to a gradient that pushes it
down; the other rows take a (slightly regularised) Newton step with the
generalised Hessian ``A_F (diag(w) - w w^T / sum w) A_F^T`` and an Armijo search
along the projection arc. The Gini dual is piecewise quadratic, so once the
support and the active rows settle the Newton step solves the KKT system of
the active set exactly: the solution is polished to round-off, not to a solver
tolerance. The primal point is ``x(lam)``; ``lam^T (e - A x)`` is the duality gap.

On degenerate polytopes (the meta-games of JPSRO: near-duplicate policies,
ties, many dependent CE rows, so that the active rows have a rank far below
their number) the Newton steps cross many kinks of the dual and the method can
need hundreds of iterations. For Gini, once Newton has had to shorten a few
steps, we therefore switch to a primal-dual interior point method
(Mehrotra's predictor-corrector) on the QP, whose
iteration count does not depend on the degeneracy, until the support and the
binding rows can be told apart; then the KKT system of that face is solved
exactly (least squares of minimum norm, which copes with the rank deficiency)
and certified by the duality gap ``1/2 ||x||^2 + f(lam) <= 1e-15`` with
``x`` feasible, which bounds ``||x - x*|| <= 5e-8``. If the certificate fails,
the dual Newton method continues from the interior point's multipliers; it
tries the same exact face solve whenever its support settles.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

__all__ = ["DualSolution", "solve_regularised_dual", "project_to_simplex", "REGULARISERS"]

logger = logging.getLogger(__name__)

REGULARISERS = ("gini", "entropy")
_DENSE_FRACTION = 0.25  # use dense products when the matrix is at least this full
_LAMBDA_LIMIT = 1e14  # multipliers beyond this mean the constraints are (numerically) infeasible
_ACTIVE_SCALE = 1e-3  # a row is fixed at zero when lam_r <= _ACTIVE_SCALE * grad_r (and grad_r > 0)
_CERTIFICATE_GAP = 1e-15  # an exact KKT point is accepted when primal minus dual value is below this
_POLISH_START = 1e-4  # try the active-set KKT solve once the projected gradient is below this
_NEWTON_PATIENCE = 6  # Gini: after this many shortened Newton steps, switch to the interior point
_IPM_MAX_ITER = 60  # interior-point iterations before handing over to the dual Newton method
_IPM_DROP = 1e-14  # interior point: profiles with x / (x + z) below this (relative) leave the normal matrix
_POLISH_FACTOR = 1e-3  # after reaching tol, Newton polishes until this factor or until it stops improving


@dataclass(frozen=True)
class DualSolution:
    """The result of :func:`solve_regularised_dual`.

    Attributes
    ----------
    x : ndarray
        The primal point ``x(lam)`` (on the simplex).
    multipliers : ndarray
        The row multipliers ``lam >= 0``.
    converged : bool
        Whether the projected-gradient norm reached ``tol``, or (Gini) an exact
        face solve was certified by a duality gap of at most 1e-15.
    status : str
        ``"optimal"``, ``"max_iter"``, ``"stalled"`` or ``"infeasible"``.
    iterations : int
        Newton iterations taken.
    max_violation : float
        ``max(A x - e, 0)`` (in the units of ``A``).
    duality_gap : float
        ``|lam^T (e - A x)|``.
    time : float
        Wall time in seconds.
    method : str
        ``"interior point + active-set KKT"`` (Gini: the usual path) or
        ``"dual projected Newton"`` (entropy, or Gini when the interior point's
        face is not certified).
    """

    x: np.ndarray
    multipliers: np.ndarray
    converged: bool
    status: str
    iterations: int
    max_violation: float
    duality_gap: float
    time: float
    method: str = "dual projected Newton"


def project_to_simplex(v: np.ndarray) -> np.ndarray:
    """Euclidean projection of ``v`` onto the probability simplex (sparsemax).

    Examples
    --------
    >>> project_to_simplex(np.array([0.5, 0.2, -1.0])).round(12).tolist()
    [0.65, 0.35, 0.0]
    """
    u = np.sort(v)[::-1]
    cumulative = np.cumsum(u) - 1.0
    ranks = np.arange(1, v.size + 1)
    count = int(np.count_nonzero(u - cumulative / ranks > 0))
    tau = cumulative[count - 1] / count
    return np.maximum(v - tau, 0.0)


class _Dual:
    """Values, gradients and Hessian blocks of the dual ``f``."""

    def __init__(self, a, e: np.ndarray, regulariser: str):
        self.regulariser = regulariser
        self.e = e
        m, n = a.shape
        sparse = sp.issparse(a) and a.nnz < _DENSE_FRACTION * max(1, m * n)
        if sparse:
            self.a = sp.csr_matrix(a)
            self.at = self.a.T.tocsr()
            self.a_csc = self.a.tocsc()
        else:
            self.a = np.ascontiguousarray(a.toarray() if sp.issparse(a) else np.asarray(a, dtype=np.float64))
            self.at = self.a.T
        self.dense = not sparse

    def evaluate(self, lam: np.ndarray):
        """``f(lam)``, the primal point ``x`` and ``w``: the shifted scores ``v - tau`` (Gini) or ``x`` (entropy)."""
        v = -(self.at @ lam)
        if self.regulariser == "gini":
            x = project_to_simplex(v)
            support = x > 0
            w = v - float((v[support] - x[support]).mean())  # x = max(w, 0): the margin of every profile
            f = float(x @ v - 0.5 * x @ x)
        else:
            top = v.max()
            z = np.exp(v - top)
            total = z.sum()
            x = z / total
            w = x
            f = float(top + np.log(total))
        return f + float(self.e @ lam), x, w

    def gradient(self, x: np.ndarray) -> np.ndarray:
        return self.e - self.a @ x

    def hessian(self, free: np.ndarray, w: np.ndarray, margin: float) -> np.ndarray:
        """``A_F (diag(w) - w w^T / sum(w)) A_F^T`` as a dense matrix.

        For Gini the weights are the indicator of the support, widened to the
        profiles within ``margin`` of entering it: near a degenerate solution
        (a profile at zero whose score is exactly at the threshold) this keeps
        the Newton steps on one piece of the dual instead of alternating.
        """
        if self.regulariser == "gini":
            # 0/1 weights: only the columns of the (widened) support enter the product
            cols = np.flatnonzero(w > -margin)
            if self.dense:
                a_fs = self.a[np.ix_(np.flatnonzero(free), cols)]
                h = a_fs @ a_fs.T
            else:
                a_fs = self.a_csc[:, cols].tocsr()[free]
                h = (a_fs @ a_fs.T).toarray()
            c = np.asarray(a_fs.sum(axis=1)).ravel()
            return h - np.outer(c, c) / max(cols.size, 1)
        a_f = self.a[free]
        if self.dense:
            h = (a_f * w) @ a_f.T
        else:
            h = (a_f @ sp.diags(w) @ a_f.T).toarray()
        c = a_f @ w
        return h - np.outer(c, c) / w.sum()


def _solve_psd(h: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Solve ``h d = rhs`` for a (regularised) positive semi-definite ``h``; least squares if it is singular."""
    try:
        return sla.cho_solve(sla.cho_factor(h, check_finite=False), rhs, check_finite=False)
    except (sla.LinAlgError, ValueError):
        return np.linalg.lstsq(h, rhs, rcond=None)[0]


@dataclass(frozen=True)
class _Certificate:
    """A primal point solved exactly on a guessed active set, with the multipliers that certify it."""

    x: np.ndarray
    multipliers: np.ndarray
    violation: float
    gap: float


def _active_set_kkt(dual: "_Dual", support: np.ndarray, lam_guess: np.ndarray) -> _Certificate | None:
    """Solve the Gini KKT system on a guessed support and set of binding rows, and certify the result.

    On the face ``{x_j = 0 (j not in support), A_B x = e_B, sum x = 1}`` the
    minimum-norm point is the least-squares solution of minimum norm of
    ``[A_BS; 1] x_S = [e_B; 1]`` (``lstsq`` handles the rank deficiency that
    duplicate or dependent rows cause). It is the optimum of the whole problem
    exactly when it is feasible and ``x_S = -A_BS^T lam_B - tau`` for some
    ``lam_B >= 0`` such that no profile outside the support would enter (we
    try the guess's multipliers and their least-squares correction). Both checks are folded into one number: the
    duality gap ``1/2 ||x||^2 + f(lam)``, which bounds ``1/2 ||x - x*||^2``.
    Returns ``None`` when the guess is wrong.
    """
    s_idx = np.flatnonzero(support)
    b_idx = np.flatnonzero(lam_guess > 0)
    if s_idx.size == 0:
        return None
    a_b = dual.a[b_idx]
    a_bs = (a_b[:, s_idx].toarray() if sp.issparse(a_b) else a_b[:, s_idx])
    lhs = np.vstack([a_bs, np.ones((1, s_idx.size))])
    rhs = np.concatenate([dual.e[b_idx], [1.0]])
    x_s = np.linalg.lstsq(lhs, rhs, rcond=None)[0]
    if x_s.min() < -1e-12 or np.abs(lhs @ x_s - rhs).max() > 1e-12:
        return None
    x = np.zeros(dual.a.shape[1])
    x[s_idx] = np.maximum(x_s, 0.0)
    x /= x.sum()
    slack = dual.e - dual.a @ x
    violation = float(max(0.0, -slack.min()))
    if violation > 1e-13:
        return None
    # Multipliers of the rows binding at x with x_S = -A_BS^T lam_B - tau: the iterate's own, and the
    # smallest correction of them that satisfies this exactly (least squares), clipped at zero.
    binding = np.flatnonzero(slack <= 1e-12)
    a_bind = dual.a[binding]
    a_bind_s = (a_bind[:, s_idx].toarray() if sp.issparse(a_bind) else a_bind[:, s_idx])
    system = np.hstack([a_bind_s.T, np.ones((s_idx.size, 1))])
    base = lam_guess[binding]
    tau = -float(np.mean(x[s_idx] + a_bind_s.T @ base))
    correction = np.linalg.lstsq(system, -x[s_idx] - a_bind_s.T @ base - tau, rcond=None)[0]
    gap, lam = np.inf, None
    for values in (base, np.maximum(base + correction[:-1], 0.0)):
        trial = np.zeros(dual.e.size)
        trial[binding] = values
        trial_gap = 0.5 * float(x @ x) + dual.evaluate(trial)[0]
        if trial_gap < gap:
            gap, lam = trial_gap, trial
    logger.debug("active-set KKT: support %d, rows %d (rank %d), duality gap %.3g", s_idx.size, b_idx.size,
                 np.linalg.matrix_rank(lhs) if logger.isEnabledFor(logging.DEBUG) else -1, gap)
    if gap > _CERTIFICATE_GAP:
        return None
    return _Certificate(x=x, multipliers=lam, violation=violation, gap=abs(gap))


@dataclass(frozen=True)
class _InteriorPoint:
    """An approximate primal-dual solution from :func:`_gini_interior_point`."""

    x: np.ndarray
    slack: np.ndarray
    multipliers: np.ndarray
    reduced_costs: np.ndarray
    iterations: int
    mu: float


def _gini_interior_point(dual: "_Dual", tol: float = 1e-13, mu_stop: float = 1e-20,
                         max_iter: int = 60) -> _InteriorPoint:
    """Mehrotra predictor-corrector on ``min 1/2 ||x||^2 : A x + s = e, 1^T x = 1, x, s >= 0``.

    Each iteration factors the ``(m + 1) x (m + 1)`` normal matrix
    ``[A; 1^T] D^{-1} [A; 1^T]^T + diag(s / y, 0)`` with ``D = I + Z / X``
    (one sparse product over the profiles and one Cholesky). Unlike the
    dual Newton method, its iteration count does not grow with the number of
    kinks or the degeneracy of the game. It runs until the complementarity
    ``mu`` is at most ``mu_stop`` (far past the usual tolerances, so that the
    support ``x > z`` and the binding rows ``y > s`` are told apart), and
    :func:`_active_set_kkt` turns it into the exact, certified solution.
    """
    a, e = dual.a, dual.e
    m, n = a.shape
    a_aug = sp.vstack([a, np.ones((1, n))], format="csr") if not dual.dense else np.vstack([a, np.ones((1, n))])
    a_aug_csc = a_aug.tocsc() if not dual.dense else None
    x = np.full(n, 1.0 / n)
    z = np.ones(n)
    s = np.ones(m)
    y = np.ones(m)
    t = 0.0
    scale_e = 1.0 + float(np.abs(e).max(initial=0.0))
    iterations, mu = 0, np.inf
    for iterations in range(1, max_iter + 1):
        r_d = x + a.T @ y + t - z
        r_p = a @ x + s - e
        r_1 = x.sum() - 1.0
        mu = float((x @ z + s @ y) / (n + m))
        # The dual residual stalls at round-off of |A^T y|; it only needs to be small enough to tell the
        # support apart (the active-set KKT solve that follows is exact).
        primal = max(np.abs(r_p).max(initial=0.0) / scale_e, abs(r_1))
        if mu <= mu_stop and primal <= tol and float(np.abs(r_d).max()) <= 1e-9:
            break
        d_inv = 1.0 / (1.0 + z / x)
        # Profiles leaving the support have d_inv ~ x / z -> 0; beyond round-off they do not change the matrix.
        cols = np.flatnonzero(d_inv > _IPM_DROP * d_inv.max())
        if dual.dense:
            sub = a_aug[:, cols]
            k = (sub * d_inv[cols]) @ sub.T
        else:
            sub = a_aug_csc[:, cols]
            k = (sub.multiply(d_inv[cols][None, :]).tocsc() @ sub.T).toarray()
        k[np.diag_indices_from(k)] += 1e-14 * max(1.0, float(np.abs(np.diag(k)).max()))
        k[np.arange(m), np.arange(m)] += s / y
        try:
            factor = sla.cho_factor(k, check_finite=False)
            solve_k = lambda rhs: sla.cho_solve(factor, rhs, check_finite=False)  # noqa: E731
        except (sla.LinAlgError, ValueError):
            solve_k = lambda rhs: np.linalg.lstsq(k, rhs, rcond=None)[0]  # noqa: E731

        def direction(r_xz, r_sy):
            q = -r_d - r_xz / x
            r2 = -r_p + r_sy / y
            u = solve_k(a_aug @ (d_inv * q) - np.concatenate([r2, [-r_1]]))
            dy, dt = u[:m], u[m]
            dx = d_inv * (q - a.T @ dy - dt)
            dz = (-r_xz - z * dx) / x
            ds = (-r_sy - s * dy) / y
            return dx, ds, dy, dt, dz

        def longest(v, dv):
            neg = dv < 0
            return min(1.0, float((-v[neg] / dv[neg]).min())) if neg.any() else 1.0

        dx, ds, dy, dt, dz = direction(x * z, s * y)
        alpha = min(longest(x, dx), longest(s, ds), longest(y, dy), longest(z, dz))
        mu_aff = float(((x + alpha * dx) @ (z + alpha * dz) + (s + alpha * ds) @ (y + alpha * dy)) / (n + m))
        sigma = (mu_aff / mu) ** 3
        dx, ds, dy, dt, dz = direction(x * z + dx * dz - sigma * mu, s * y + ds * dy - sigma * mu)
        alpha = min(1.0, 0.99 * min(longest(x, dx), longest(s, ds), longest(y, dy), longest(z, dz)))
        x, s, y, t, z = x + alpha * dx, s + alpha * ds, y + alpha * dy, t + alpha * dt, z + alpha * dz
    return _InteriorPoint(x=x, slack=s, multipliers=y, reduced_costs=z, iterations=iterations, mu=mu)


def solve_regularised_dual(a, e, regulariser: str = "gini", tol: float = 1e-11, max_iter: int = 500,
                           ridge: float = 1e-3, interior_point: bool = True) -> DualSolution:
    """Minimise ``R(x)`` over ``{x in simplex : a @ x <= e}`` through its dual.

    Parameters
    ----------
    a : scipy.sparse matrix or ndarray, shape (m, n)
        Constraint rows, ideally scaled so that ``|a| <= 1``.
    e : ndarray, shape (m,)
        Right-hand sides.
    regulariser : {"gini", "entropy"}
        ``1/2 ||x||^2`` or ``sum x log x``. For entropy the polytope must contain
        a point with full support (remove the columns forced to zero first).
    tol : float
        Stop when the projected dual gradient (the largest constraint violation
        and the slack of the rows with positive multipliers) is at most ``tol``.
    max_iter : int
        Largest number of iterations (interior point and Newton together).
    ridge : float
        The Newton system is regularised by ``ridge * ||projected gradient||``
        (a Levenberg-Marquardt term that vanishes at the solution).
    interior_point : bool
        Gini only: when the Newton line search has had to shorten
        ``_NEWTON_PATIENCE`` steps (a degenerate polytope, e.g. the meta-games
        of JPSRO with near-duplicate policies), switch to a primal-dual
        interior point method and an exact KKT solve on the face it
        identifies; Newton continues from its multipliers only if that face is
        not certified. ``False``: dual Newton only.

    Returns
    -------
    DualSolution

    Examples
    --------
    >>> a = np.array([[1.0, -1.0]])      # x_0 <= x_1
    >>> sol = solve_regularised_dual(a, np.zeros(1))
    >>> sol.x.round(15).tolist(), sol.converged
    ([0.5, 0.5], True)
    >>> a = np.array([[2.0, -1.0]])      # 2 x_0 <= x_1
    >>> solve_regularised_dual(a, np.zeros(1)).x.round(12).tolist()
    [0.333333333333, 0.666666666667]
    """
    if regulariser not in REGULARISERS:
        raise ValueError(f"regulariser must be one of {REGULARISERS}; got {regulariser!r}.")
    start = time.perf_counter()
    e = np.asarray(e, dtype=np.float64)
    m = e.size
    dual = _Dual(a, e, regulariser)
    lam = np.zeros(m)
    f, x, w = dual.evaluate(lam)
    status = "max_iter"
    used = 0            # iterations so far, Newton and interior point together
    damped = 0          # Newton steps the line search had to shorten
    switch = regulariser == "gini" and interior_point and m > 0
    method = "dual projected Newton"
    best_pg = np.inf
    polishes = 0
    tried = last_support = None
    while True:
        g = dual.gradient(x)
        pg = np.where(lam > 0, g, np.minimum(g, 0.0))
        pg_norm = float(np.abs(pg).max()) if m else 0.0
        if pg_norm <= tol:
            # Within tolerance; keep polishing while Newton still improves (it is exact on the final piece).
            if pg_norm <= _POLISH_FACTOR * tol or (best_pg <= tol and pg_norm >= 0.5 * best_pg) or polishes >= 3:
                status = "optimal"
                break
            polishes += 1
        best_pg = min(best_pg, pg_norm)
        support = x > 0
        if regulariser == "gini" and pg_norm <= _POLISH_START and (
                pg_norm <= tol or np.array_equal(support, last_support)):
            # The support has settled: solve the KKT system of the face it and the positive multipliers
            # define, exactly, and stop if the duality gap certifies the result.
            key = (support.tobytes(), (lam > 0).tobytes())
            if key != tried:
                tried = key
                certificate = _active_set_kkt(dual, support, lam)
                if certificate is not None:
                    x, lam, status = certificate.x, certificate.multipliers, "optimal"
                    break
        last_support = support
        if used >= max_iter:
            break
        if lam.size and lam.max() > _LAMBDA_LIMIT:
            status = "infeasible"
            break
        if switch and damped >= _NEWTON_PATIENCE and pg_norm > tol:
            # Newton keeps crossing kinks (a degenerate polytope): hand over to the interior point.
            switch = False
            ipm = _gini_interior_point(dual, max_iter=min(_IPM_MAX_ITER, max_iter - used))
            used += ipm.iterations
            guess = np.where(ipm.multipliers > ipm.slack, ipm.multipliers, 0.0)
            certificate = _active_set_kkt(dual, ipm.x > ipm.reduced_costs, guess)
            if certificate is not None:
                x, lam, status = certificate.x, certificate.multipliers, "optimal"
                method = "interior point + active-set KKT"
                break
            logger.debug("interior point (%d iterations, mu %.3g) did not give a certified face; "
                         "dual Newton from its multipliers", ipm.iterations, ipm.mu)
            f_ipm, x_ipm, w_ipm = dual.evaluate(guess)
            if f_ipm < f:
                lam, f, x, w = guess, f_ipm, x_ipm, w_ipm
            continue
        used += 1
        found = _damped_step(dual, lam, f, g, w, pg_norm, ridge)
        if found is None or np.array_equal(found[0], lam):
            status = "optimal" if pg_norm <= tol else "stalled"
            break
        trial, f_new, x_new, w_new, newton, alpha, free = found
        damped += not newton or alpha < 1.0
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug("Newton %d: projected gradient %.3e, f %.12e, free rows %d, step %.3g (%s), support %d",
                         used, pg_norm, f, free, alpha, "newton" if newton else "gradient", int((x_new > 0).sum()))
        lam, f, x, w = trial, f_new, x_new, w_new
    return _finish(dual, x, lam, status, used, regulariser, start, method)


def _damped_step(dual: "_Dual", lam: np.ndarray, f: float, g: np.ndarray, w, pg_norm: float,
                 ridge: float) -> tuple | None:
    """One step of the dual from ``lam`` (value ``f``, gradient ``g``): ``(lam', f', x', w', newton, alpha, free
    rows)``, or None when no step of the Newton direction nor of the gradient's decreases the dual enough.

    Rows whose multiplier is small next to a gradient that pushes it to zero are fixed at zero (an epsilon-active
    set in the style of the primal-dual active-set method); the rest take a Newton step on the current piece of the
    dual. An Armijo backtracking search shortens it (then the negative gradient's) up to 60 halvings."""
    fixed = (lam <= _ACTIVE_SCALE * g) & (g > 0)
    free = ~fixed
    step = np.zeros(lam.size)
    step[fixed] = -lam[fixed]
    if free.any():
        h = dual.hessian(free, w, pg_norm)
        h[np.diag_indices_from(h)] += ridge * pg_norm + 1e-15 * max(1.0, float(np.abs(np.diag(h)).max()))
        step[free] = -_solve_psd(h, g[free])
    for direction in (step, -g):
        alpha = 1.0
        for _ in range(60):
            trial = np.maximum(lam + alpha * direction, 0.0)
            f_new, x_new, w_new = dual.evaluate(trial)
            if f_new <= f + 1e-4 * float(g @ (trial - lam)) + 1e-15 * max(1.0, abs(f)):
                return trial, f_new, x_new, w_new, direction is step, alpha, int(free.sum())
            alpha *= 0.5
    return None


def _finish(dual: "_Dual", x: np.ndarray, lam: np.ndarray, status: str, iterations: int, regulariser: str,
            start: float, method: str) -> DualSolution:
    m = dual.e.size
    violation = float(max(0.0, (dual.a @ x - dual.e).max())) if m else 0.0
    gap = float(abs(lam @ (dual.e - dual.a @ x))) if m else 0.0
    converged = status == "optimal"
    if not converged:
        logger.warning("dual Newton (%s) stopped with status %s after %d iterations; violation %.3g",
                       regulariser, status, iterations, violation)
    return DualSolution(x=x, multipliers=lam, converged=converged, status=status, iterations=iterations,
                        max_violation=violation, duality_gap=gap, time=time.perf_counter() - start, method=method)
