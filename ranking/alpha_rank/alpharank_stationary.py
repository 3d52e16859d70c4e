"""Stationary distributions of the alpha-Rank chain: recurrent classes and well-posed solves.

The chain is given by its off-diagonal transition rates ``R[s, t] >= 0``; the
self-loops do not change the stationary distribution, so the generator is
``Q = R - diag(R 1)`` and ``pi`` solves ``pi Q = 0``, ``sum(pi) = 1``.

When the chain has a single recurrent class, ``pi`` is unique. The solvers
work with the outflows ``y = pi * out`` (``out`` = total exit rate of each
profile), the stationary distribution of the embedded jump chain ``P =
diag(1/out) R``: a profile that is hard to leave (a strict local optimum at
large alpha) has a huge ``pi`` but an ordinary outflow, so the unknowns stay
comparable however stiff the chain is, and ``pi = y / out`` is recovered
componentwise. One profile ``j`` of the recurrent class is pinned (``y_j = 1``)
and the rest solve ``(P^T - I) y = 0``; that matrix is column diagonally
dominant, so LU with partial pivoting is backward stable. No difference
``1 - sum(...)`` is ever formed.

Small chains use a dense LU solve. Large multi-population chains use GMRES
preconditioned by one block Gauss-Seidel sweep over the populations (each block
is one population's ``k_p x k_p`` sub-chain at fixed opponents, inverted
exactly); the answer is accepted only if every profile's balance equation
(inflow = outflow) holds to ``BALANCE_TOL`` relative, else a direct solve is
used.

Every answer's residual ``||pi Q||_1 / max(out)`` (an upper bound of
``||pi C - pi||_1`` for the transition matrix ``C``) is recomputed from the
rates. Where the dense LU solve leaves a residual above ``RESIDUAL_TOL`` or an
imbalance above ``BALANCE_TOL``, the Grassmann-Taksar-Heyman elimination
(:func:`gth`), which only adds, multiplies and divides non-negative numbers and
so is accurate entry by entry however stiff the chain, gives the answer.

Chains too large to list their moves (``prod(k) * sum(k_p - 1)`` of them:
2.5e8 for two populations of 500) are held by blocks
(:func:`ranking.alpha_rank.alpharank_chain.line_rates`: one ``k_p x k_p`` block per line
of population ``p``) and solved by :func:`solve_blocks`: restarted GMRES on the
pinned outflow system, whose matrix-vector product is one batched
vector-matrix product per population, until the recomputed residual is below
``RESIDUAL_TOL``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.sparse.csgraph import connected_components
from scipy.special import logsumexp

from ranking.alpha_rank.alpharank_chain import from_lines, in_threads, lines, num_threads

__all__ = ["Stationary", "aggregate_classes", "block_inflow", "gth", "recurrent_classes", "solve_blocks",
           "solve_dense", "solve_sparse"]

logger = logging.getLogger(__name__)

#: Multi-population chains with at most this many profiles use a dense solve.
DENSE_LIMIT = 600

#: Where GMRES falls short, chains up to this many profiles fall back to a dense solve.
DENSE_FALLBACK_LIMIT = 5000

#: Largest accepted residual ``||pi Q||_1 / max(out)`` of an answer.
RESIDUAL_TOL = 1e-9

#: Chains up to this many profiles fall back to GTH elimination (O(n^3)) when LU falls short.
GTH_LIMIT = 2500


@dataclass(frozen=True)
class Stationary:
    """A stationary distribution and how it was found.

    Attributes
    ----------
    pi : ndarray
        The distribution (non-negative, sums to one).
    method : str
        ``"dense-lu"``, ``"gth"``, ``"gmres-block-gs"``, ``"gmres-blocks"`` or ``"sparse-lu"``.
    residual : float
        ``||pi Q||_1 / max(out)`` with ``out`` the exit rates: an upper bound of
        ``||pi C - pi||_1`` for the chain's transition matrix ``C``.
    balance : float
        The largest relative imbalance ``|inflow - outflow| / (inflow + outflow)``
        of the balance equation of any profile holding more than ``1e-12 max(pi)``:
        a componentwise check that stays meaningful when rates span many orders
        of magnitude (where ``residual`` can be tiny for a wrong ``pi``).
    """

    pi: np.ndarray
    method: str
    residual: float
    balance: float


def recurrent_classes(rates) -> list[np.ndarray]:
    """The closed communicating classes of the chain with positive rates ``rates``.

    A recurrent class is a strongly connected component of the graph of
    positive transitions that no positive transition leaves.

    Parameters
    ----------
    rates : ndarray or sparse matrix, shape (n, n)
        Off-diagonal transition rates (the diagonal is ignored).

    Returns
    -------
    list of ndarray
        The states of each class, sorted; classes ordered by their first state.

    Examples
    --------
    >>> import numpy as np
    >>> r = np.array([[0, 1, 0], [0, 0, 0], [0, 0, 0.0]])  # 0 -> 1; 1 and 2 absorbing
    >>> [c.tolist() for c in recurrent_classes(r)]
    [[1], [2]]
    """
    graph = sp.csr_array(rates)
    graph.eliminate_zeros()
    n = graph.shape[0]
    _, labels = connected_components(graph, directed=True, connection="strong")
    coo = graph.tocoo()
    leaving = labels[coo.row] != labels[coo.col]
    has_exit = np.zeros(labels.max() + 1 if n else 0, dtype=bool)
    has_exit[labels[coo.row[leaving]]] = True
    closed = np.flatnonzero(~has_exit)
    classes = [np.flatnonzero(labels == c) for c in closed]
    return sorted(classes, key=lambda c: int(c[0]))


def _pin_state(out_rate: np.ndarray, candidates: np.ndarray) -> int:
    """A state to pin: among ``candidates``, the one hardest to leave (likely heavy in pi)."""
    return int(candidates[np.argmin(out_rate[candidates])])


#: Largest accepted componentwise imbalance of an iterative solution.
BALANCE_TOL = 1e-9


def _finish(x: np.ndarray, out: np.ndarray, inflow_fn, method: str) -> Stationary:
    """Normalise ``x`` and measure how well it balances the chain."""
    x = np.where(x > 0.0, x, 0.0)  # rounding can leave -1e-17 where pi is 0
    total = x.sum()
    if not np.isfinite(total) or total <= 0.0:
        return Stationary(np.full(len(x), 1.0 / len(x)), method, np.inf, np.inf)
    pi = x / total
    inflow, outflow = inflow_fn(pi), pi * out
    res = float(np.abs(inflow - outflow).sum()) / max(float(out.max(initial=0.0)), np.finfo(float).tiny)
    heavy = (pi > 1e-12 * pi.max()) & (inflow + outflow > 0)
    balance = float((np.abs(inflow - outflow)[heavy] / (inflow + outflow)[heavy]).max(initial=0.0))
    return Stationary(pi, method, res, balance)


def solve_dense(rates: np.ndarray, pin_candidates: np.ndarray | None = None) -> Stationary:
    """Stationary distribution of a chain with dense off-diagonal ``rates`` (LU solve).

    Parameters
    ----------
    rates : ndarray, shape (n, n)
        ``rates[s, t]``: rate of moving from ``s`` to ``t``; the diagonal is ignored.
    pin_candidates : ndarray of int, optional
        States of the (unique) recurrent class; the pinned state is chosen among
        them. Defaults to all states (the chain must then be irreducible).

    Returns
    -------
    Stationary
        From the LU solve, or, where its residual exceeds ``RESIDUAL_TOL`` or
        its imbalance ``BALANCE_TOL``, from :func:`gth` (chains up to
        ``GTH_LIMIT`` profiles).

    Examples
    --------
    >>> import numpy as np
    >>> solve_dense(np.array([[0, 1.0], [3.0, 0]])).pi.tolist()
    [0.75, 0.25]
    """
    r = np.asarray(rates, dtype=np.float64)
    result = _solve_lu(r, pin_candidates)
    n = r.shape[0]
    if (result.residual <= RESIDUAL_TOL and result.balance <= BALANCE_TOL) or n > GTH_LIMIT:
        if result.residual > RESIDUAL_TOL:
            logger.warning("the dense solve of a %d-profile chain left a residual of %.1e (above %.0e)",
                           n, result.residual, RESIDUAL_TOL)
        return result
    logger.info("LU left a residual of %.1e and an imbalance of %.1e on %d profiles; solving by GTH "
                "elimination", result.residual, result.balance, n)
    stable = gth(r, pin_candidates)
    return stable if stable.residual <= result.residual or not np.isfinite(result.residual) else result


def _solve_lu(r: np.ndarray, pin_candidates) -> Stationary:
    """The LU solve of :func:`solve_dense` (pinning one state of the recurrent class)."""
    n = r.shape[0]
    out = r.sum(axis=1) - np.diagonal(r)
    candidates = np.arange(n) if pin_candidates is None else np.asarray(pin_candidates)
    j = _pin_state(out, candidates)
    # Solve for the outflows y = pi * out (see solve_sparse): the system is Q^T diag(1/out)
    # = P^T - I, with row and column j replaced by the unit vector. q holds its transpose.
    d = np.maximum(out, np.finfo(float).tiny)
    q = r / d[:, None]
    np.fill_diagonal(q, -out / d)
    b = -q[j, :].copy()
    q[j, :] = 0.0
    q[:, j] = 0.0
    q[j, j] = 1.0
    b[j] = 1.0
    # LU of the column-diagonally-dominant P^T - I (partial pivoting is backward stable), in place.
    y = la.lu_solve(la.lu_factor(q.T, overwrite_a=True, check_finite=False), b, check_finite=False)
    x = y / d
    diag_r = np.diagonal(r)
    return _finish(x, out, lambda p: p @ r - p * diag_r, "dense-lu")


def solve_sparse(source: np.ndarray, target: np.ndarray, rate: np.ndarray, population: np.ndarray,
                 shape: tuple, pin_candidates: np.ndarray | None = None, method: str = "auto",
                 rtol: float = 1e-13) -> Stationary:
    """Stationary distribution of a multi-population chain given by its moves.

    Parameters
    ----------
    source, target, rate, population : ndarray
        One entry per single-population move (see
        :func:`ranking.alpha_rank.alpharank_chain.multi_population_moves`).
    shape : tuple of int
        Strategies per population; states are profiles in C order.
    pin_candidates : ndarray of int, optional
        States of the unique recurrent class.
    method : {"auto", "dense", "iterative", "direct"}
        ``"auto"`` uses a dense LU solve up to ``DENSE_LIMIT`` profiles and
        preconditioned GMRES above; if GMRES's answer fails the componentwise
        balance check (``BALANCE_TOL``) it falls back to a dense LU solve (up to
        ``DENSE_FALLBACK_LIMIT`` profiles) or a sparse LU solve (``"direct"``,
        slow for large chains: the LU factors fill in heavily).
    rtol : float
        GMRES's relative residual tolerance.

    Examples
    --------
    >>> import numpy as np
    >>> from ranking.alpha_rank.alpharank_chain import multi_population_moves
    >>> s, t, g, p = multi_population_moves(np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [1.0, 0.0]]]))
    >>> solve_sparse(s, t, np.ones_like(g), p, (2, 2), method="iterative").pi.round(6).tolist()
    [0.25, 0.25, 0.25, 0.25]
    """
    n = int(np.prod(shape))
    if method not in ("auto", "dense", "iterative", "direct"):
        raise ValueError(f"method must be 'auto', 'dense', 'iterative' or 'direct'; got {method!r}.")
    if method == "dense" or (method == "auto" and n <= DENSE_LIMIT):
        dense = np.zeros((n, n))
        dense[source, target] = rate  # one move per (source, target) pair
        return solve_dense(dense, pin_candidates)
    out = np.bincount(source, weights=rate, minlength=n)
    candidates = np.arange(n) if pin_candidates is None else np.asarray(pin_candidates)
    j = _pin_state(out, candidates)
    # Unknowns: the outflows y = pi * out (the stationary distribution of the embedded
    # jump chain), which stay comparable where pi spans many orders of magnitude (a
    # profile that is hard to leave has a huge pi but an ordinary outflow). The system is
    # Q^T diag(1/out) = P^T - I, with row and column j replaced by the unit vector (y_j = 1).
    d = np.maximum(out, np.finfo(float).tiny)
    keep = (source != j) & (target != j)
    diag = -out / d
    diag[j] = 1.0
    states = np.arange(n)
    m = sp.csr_array((np.concatenate([rate[keep] / d[source[keep]], diag]),
                      (np.concatenate([target[keep], states]), np.concatenate([source[keep], states]))),
                     shape=(n, n))
    b = np.zeros(n)
    from_j = source == j
    b[target[from_j]] = -rate[from_j] / d[j]
    b[j] = 1.0

    def inflow(p):
        return np.bincount(target, weights=rate * p[source], minlength=n)

    if method in ("auto", "iterative"):
        y = _gmres_block_gs(m, b, source, target, rate / d[source], population, out / d, shape, j, rtol)
        result = _finish(y / d, out, inflow, "gmres-block-gs")
        # A tiny normwise residual does not make a stiff chain's pi right: profiles that are
        # hard to leave get their mass from neighbours whose own mass is below GMRES's
        # resolution. The componentwise balance catches that; then solve directly.
        if result.balance <= BALANCE_TOL or method == "iterative":
            return result
        logger.info("GMRES left a relative imbalance of %.1e on %d profiles; falling back to a direct "
                    "solve", result.balance, n)
        if n <= DENSE_FALLBACK_LIMIT:
            dense = np.zeros((n, n))
            dense[source, target] = rate
            return solve_dense(dense, pin_candidates)
    y = spla.spsolve(m.tocsc(), b)
    return _finish(y / d, out, inflow, "sparse-lu")


def gth(rates: np.ndarray, pin_candidates: np.ndarray | None = None) -> Stationary:
    """Stationary distribution by Grassmann-Taksar-Heyman elimination.

    States are eliminated one by one (censoring the chain on the rest); each
    step only adds, multiplies and divides non-negative rates, never
    subtracts, so every entry of ``pi`` is accurate to a few units of
    rounding relative to itself, however stiff the chain (O'Cinneide 1993).
    It costs ``n^3 / 3`` operations, vectorised per eliminated state.

    Parameters
    ----------
    rates : ndarray, shape (n, n)
        Off-diagonal transition rates (the diagonal is ignored).
    pin_candidates : ndarray of int, optional
        The states of the chain's unique recurrent class (the rest are
        transient and get 0). Defaults to all states (an irreducible chain).

    Examples
    --------
    >>> import numpy as np
    >>> gth(np.array([[0, 1.0, 0], [0, 0, 2.0], [4.0, 0, 0]])).pi.tolist()  # a cycle: pi ~ 1 / rate
    [0.5714285714285714, 0.2857142857142857, 0.14285714285714285]
    """
    r = np.asarray(rates, dtype=np.float64)
    n = r.shape[0]
    states = np.arange(n) if pin_candidates is None else np.asarray(pin_candidates)
    a = r[np.ix_(states, states)].copy()
    k = len(states)
    np.fill_diagonal(a, 0.0)
    exits = np.zeros(k)
    for i in range(k - 1, 0, -1):  # one state per step; the work of a step is vectorised
        exits[i] = a[i, :i].sum()
        if exits[i] > 0.0:
            a[:i, :i] += np.multiply.outer(a[:i, i], a[i, :i] / exits[i])
    x = np.zeros(k)
    x[0] = 1.0
    for i in range(1, k):
        x[i] = x[:i] @ a[:i, i] / exits[i] if exits[i] > 0.0 else 0.0
    full = np.zeros(n)
    full[states] = x
    out = r.sum(axis=1) - np.diagonal(r)
    diag_r = np.diagonal(r)
    return _finish(full, out, lambda p: p @ r - p * diag_r, "gth")


def block_inflow(blocks: list, shape: tuple, x: np.ndarray) -> np.ndarray:
    """``x R`` for the chain held by blocks: the inflow of every profile under the masses ``x``.

    Parameters
    ----------
    blocks : list of ndarray or None
        Per population, its :func:`ranking.alpha_rank.alpharank_chain.line_rates` (None
        where the population has one strategy).
    shape : tuple of int
    x : ndarray, shape (prod(shape),)

    Examples
    --------
    >>> import numpy as np
    >>> from ranking.alpha_rank.alpharank_chain import line_rates
    >>> blocks = [line_rates(np.zeros((2, 2, 2)), p, 1.0, 5) for p in range(2)]  # every rate 1/5
    >>> block_inflow(blocks, (2, 2), np.ones(4)).tolist()  # two moves into each profile
    [0.4, 0.4, 0.4, 0.4]
    """
    z = np.zeros(len(x))
    for p, b in enumerate(blocks):
        if b is None:
            continue
        xl = lines(x, shape, p)
        zl = np.empty_like(xl)

        def product(a, c, xl=xl, zl=zl, b=b):
            np.matmul(xl[a:c, None, :], b[a:c], out=zl[a:c, None, :])

        in_threads(product, len(xl), -(-len(xl) // num_threads()))
        z += from_lines(zl, shape, p)
    return z


def _block_out(blocks: list, shape: tuple) -> np.ndarray:
    """Total exit rate of every profile."""
    out = np.zeros(int(np.prod(shape)))
    for p, b in enumerate(blocks):
        if b is not None:
            out += from_lines(b.sum(axis=-1), shape, p)
    return out


def solve_blocks(blocks: list, shape: tuple, tol: float = RESIDUAL_TOL, restart: int = 60,
                 max_cycles: int = 10, progress: bool | None = None,
                 pin_candidates: np.ndarray | None = None) -> Stationary:
    """Stationary distribution of a multi-population chain held by blocks (matrix-free GMRES).

    The unknowns are the outflows ``y = pi * out`` (see the module
    docstring). One profile ``j`` is pinned (``y_j = 1``): the one with the
    largest outflow after a few steps of the jump chain from uniform outflows.
    Restarted GMRES runs on ``(P^T - I) y = 0`` with row and column ``j``
    replaced by the unit vector, each product costing one batched
    vector-matrix product per population; after every restart cycle the
    residual ``||pi Q||_1 / max(out)`` is recomputed from the blocks, and the
    solve stops once it is at most ``tol / 10`` (``tol * 1e-4`` on chains of
    up to 50,000 profiles, where the extra digits are cheap), after
    ``max_cycles``, or after two cycles in a row that did not halve it.

    Parameters
    ----------
    blocks : list of ndarray or None
        Per population, ``line_rates(tables, p, ...)`` (None for a population
        with one strategy).
    shape : tuple of int
    tol : float
        The residual an answer must reach to count as stationary.
    restart, max_cycles : int
        GMRES's restart length and the most restart cycles.
    progress : bool, optional
        A ``tqdm.auto`` bar over GMRES iterations; ``None`` shows it on a terminal only.
    pin_candidates : ndarray of int, optional
        The states of the unique recurrent class (the pinned state is one of them).

    Returns
    -------
    Stationary
        ``method="gmres-blocks"``; check ``residual`` against ``tol``.

    Examples
    --------
    >>> import numpy as np
    >>> from ranking.alpha_rank.alpharank_chain import line_rates
    >>> t = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [1.0, 0.0]]])  # matching pennies
    >>> r = solve_blocks([line_rates(t, p, 1.0, 10) for p in range(2)], (2, 2), progress=False)
    >>> r.pi.round(6).tolist(), r.residual < 1e-9
    ([0.25, 0.25, 0.25, 0.25], True)
    """
    from tqdm.auto import tqdm

    start = time.perf_counter()
    n = int(np.prod(shape))
    out = _block_out(blocks, shape)
    scale = max(float(out.max(initial=0.0)), np.finfo(float).tiny)
    d = np.maximum(out, np.finfo(float).tiny)

    def jump(y):  # P^T y: the jump chain's next outflows
        return block_inflow(blocks, shape, y / d)

    y = np.full(n, 1.0 / n)
    for _ in range(3):
        y = jump(y)
    candidates = np.arange(n) if pin_candidates is None else np.asarray(pin_candidates)
    j = int(candidates[np.argmax(y[candidates])])
    y = y / y[j]

    def matvec(v):
        w = v.copy()
        w[j] = 0.0
        z = jump(w) - w
        z[j] = v[j]
        return z

    e = np.zeros(n)
    e[j] = 1.0
    b = -jump(e)
    b[j] = 1.0
    op = spla.LinearOperator((n, n), matvec=matvec, dtype=np.float64)

    def finish(v):
        return _finish(v / d, out, lambda p: block_inflow(blocks, shape, p), "gmres-blocks")

    result = finish(y)
    bar = tqdm(total=max_cycles * restart, desc=f"alpha-Rank ({n} profiles)", unit="it", leave=False,
               disable=None if progress is None else not progress)
    target = tol / 10 if n > 50_000 else tol * 1e-4  # extra digits are cheap on smaller chains
    stalled = 0
    try:
        for cycle in range(max_cycles):
            if result.residual <= target or stalled >= 2:  # done, or two cycles that barely helped
                break
            before = result.residual
            # ||pi Q||_1 / max(out) is the 1-norm of GMRES's residual over sum(y / out) max(out),
            # and the 1-norm is at most sqrt(n) times the 2-norm GMRES watches.
            atol = target * float(np.sum(np.maximum(y, 0.0) / d)) * scale / np.sqrt(n)
            y, _ = spla.gmres(op, b, x0=y, rtol=0.0, atol=atol, restart=restart, maxiter=1,
                              callback=lambda _r: bar.update(1), callback_type="pr_norm")
            result = finish(y)
            stalled = stalled + 1 if result.residual > 0.5 * before else 0
            bar.set_postfix(residual=f"{result.residual:.1e}")
            logger.debug("alpha-Rank GMRES cycle %d: residual %.2e", cycle + 1, result.residual)
    finally:
        bar.close()
    logger.info("alpha-Rank chain of %d profiles solved by blocks in %.1f s: residual %.1e, imbalance %.1e",
                n, time.perf_counter() - start, result.residual, result.balance)
    return result


def _line_index(shape: tuple, p: int) -> np.ndarray:
    """``idx[L, i]``: the profile on line ``L`` of population ``p`` where ``p`` plays ``i``."""
    n = int(np.prod(shape))
    return np.moveaxis(np.arange(n).reshape(shape), p, -1).reshape(-1, shape[p])


def _gmres_block_gs(m, b, source, target, scaled_rate, population, scaled_out, shape, j, rtol, x0=None):
    """GMRES on ``m x = b`` preconditioned by a block Gauss-Seidel sweep over populations.

    ``m`` is the scaled system of :func:`solve_sparse`; ``scaled_rate[i]`` is
    its entry for move ``i`` and ``-scaled_out`` its diagonal.
    """
    n = m.shape[0]
    shift = 1e-12
    sweeps = []
    for p, k in enumerate(shape):
        if k < 2:
            continue
        idx = _line_index(shape, p)
        nb = idx.shape[0]
        line_of = np.empty(n, dtype=np.int64)
        line_of[idx.ravel()] = np.repeat(np.arange(nb), k)
        stride = int(np.prod(shape[p + 1:]))
        pos = (np.arange(n) // stride) % k
        blocks = np.zeros((nb, k, k))
        sel = population == p
        s, t = source[sel], target[sel]
        blocks[line_of[s], pos[t], pos[s]] = scaled_rate[sel]  # m[t, s], move s -> t
        flat = idx.ravel()
        blocks[line_of[flat], pos[flat], pos[flat]] = -scaled_out[flat] - shift
        lj, pj = line_of[j], pos[j]
        blocks[lj, pj, :] = 0.0
        blocks[lj, :, pj] = 0.0
        blocks[lj, pj, pj] = 1.0
        sweeps.append((idx, np.linalg.inv(blocks)))

    def precondition(res):
        z = np.zeros(n)
        for i, (idx, inv) in enumerate(sweeps):
            resid = res if i == 0 else res - m @ z
            z[idx] += np.einsum("bij,bj->bi", inv, resid[idx])
        return z

    op = spla.LinearOperator((n, n), matvec=precondition, dtype=np.float64)
    x = x0
    bnorm = float(np.linalg.norm(b))
    for _ in range(3):  # GMRES, then up to two restarts from the current iterate
        x, _info = spla.gmres(m, b, x0=x, M=op, rtol=rtol, atol=0.0, restart=60, maxiter=5)
        if float(np.linalg.norm(m @ x - b)) <= 10 * rtol * bnorm:
            break
    return x


def _log_gth(log_rates: np.ndarray) -> np.ndarray | None:
    """Log stationary distribution of a small chain given by log transition rates (GTH).

    The Grassmann-Taksar-Heyman elimination uses only sums, products and
    quotients of non-negative numbers, so it runs unchanged in the log domain,
    where rates like ``exp(-5000)`` are representable. Returns None when the
    chain is reducible (an elimination step finds no way out).
    """
    lr = np.array(log_rates, dtype=np.float64)
    k = lr.shape[0]
    np.fill_diagonal(lr, -np.inf)
    exits = np.empty(k)
    for i in range(k - 1, 0, -1):  # loop over the (few) classes, not over profiles
        exits[i] = logsumexp(lr[i, :i])
        if not np.isfinite(exits[i]):
            return None
        update = lr[:i, i, None] + lr[None, i, :i] - exits[i]
        lr[:i, :i] = np.logaddexp(lr[:i, :i], update)
        np.fill_diagonal(lr, -np.inf)
    log_pi = np.empty(k)
    log_pi[0] = 0.0
    for i in range(1, k):
        log_pi[i] = logsumexp(log_pi[:i] + lr[:i, i]) - exits[i]
    return log_pi - logsumexp(log_pi)


def aggregate_classes(n: int, source: np.ndarray, target: np.ndarray, rate: np.ndarray,
                      log_rate: np.ndarray, classes: list, max_dense: int = 3000) -> np.ndarray | None:
    """Stationary distribution of a chain whose tiny rates underflowed into several closed classes.

    ``rate`` are the rates as computed in floating point (some exactly 0) and
    ``log_rate`` their exact logarithms (finite). Each closed class ``k`` of the
    floating-point chain gets its own stationary distribution ``pi_k``; the
    weights of the classes come from the chain between classes whose log rate
    ``k -> l`` is ``log sum_{s in k, t not in k} pi_k(s) rate(s, t) h_l(t)``,
    with ``h_l(t)`` the probability that the floating-point chain started at
    ``t`` is absorbed in class ``l``. That chain is solved in the log domain.
    This is exact up to terms of the relative size of the underflowed rates.

    Returns None when the reduction does not apply (a class or the transient
    set is larger than ``max_dense``, or the class chain is itself reducible).

    Examples
    --------
    >>> import numpy as np
    >>> # Two absorbing states 0 and 1 whose exits are e^-2000 and e^-2001.
    >>> src, dst = np.array([0, 1]), np.array([1, 0])
    >>> log_rate = np.array([-2000.0, -2001.0])
    >>> pi = aggregate_classes(2, src, dst, np.exp(log_rate), log_rate, [np.array([0]), np.array([1])])
    >>> pi.round(4).tolist()  # pi_0 / pi_1 = e^-2001 / e^-2000
    [0.2689, 0.7311]
    """
    labels = np.full(n, -1, dtype=np.int64)
    for k, members in enumerate(classes):
        labels[members] = k
    num = len(classes)
    transient = np.flatnonzero(labels < 0)
    if max(len(c) for c in classes) > max_dense or len(transient) > max_dense:
        return None
    out = np.bincount(source, weights=rate, minlength=n)

    # Within each class: its own stationary distribution.
    pi_class = np.zeros(n)
    inside = labels[source] == labels[target]
    for k, members in enumerate(classes):  # loop over classes
        if len(members) == 1:
            pi_class[members] = 1.0
            continue
        local = np.full(n, -1, dtype=np.int64)
        local[members] = np.arange(len(members))
        sel = inside & (labels[source] == k)
        sub = np.zeros((len(members), len(members)))
        sub[local[source[sel]], local[target[sel]]] = rate[sel]
        pi_class[members] = solve_dense(sub).pi

    # Absorption probabilities of the transient states: (diag(out) - R_TT) H = R_T,classes.
    h = np.zeros((n, num))
    h[labels >= 0, labels[labels >= 0]] = 1.0
    if len(transient):
        pos = np.full(n, -1, dtype=np.int64)
        pos[transient] = np.arange(len(transient))
        from_t = pos[source] >= 0
        a = np.zeros((len(transient), len(transient)))
        b = np.zeros((len(transient), num))
        tt = from_t & (pos[target] >= 0)
        np.add.at(a, (pos[source[tt]], pos[target[tt]]), -rate[tt])
        a[np.diag_indices(len(transient))] += out[transient]
        tc = from_t & (labels[target] >= 0)
        np.add.at(b, (pos[source[tc]], labels[target[tc]]), rate[tc])
        h[transient] = np.clip(np.linalg.solve(a, b), 0.0, 1.0)

    # Log rates of the chain between classes.
    leaving = (labels[source] >= 0) & (labels[source] != labels[target])
    with np.errstate(divide="ignore"):
        base = np.log(pi_class[source[leaving]]) + log_rate[leaving]
        log_h = np.log(h[target[leaving]])
    from_class = labels[source[leaving]]
    between = np.full((num, num), -np.inf)
    for k in range(num):  # loop over classes
        rows = from_class == k
        if np.any(rows):
            between[k] = logsumexp(base[rows, None] + log_h[rows], axis=0)
    log_w = _log_gth(between)
    if log_w is None:
        return None
    w = np.exp(log_w)
    pi = pi_class * w[np.maximum(labels, 0)] * (labels >= 0)
    return pi / pi.sum()
