"""The alpha-Rank Markov chain: fixation probabilities and transition rates, vectorised.

The chain of Omidshafiei et al. (2019) lives on pure strategy profiles (one
monomorphic population per player). From profile ``s`` one population ``p``
tries a mutant strategy ``a != s_p`` with probability ``eta = 1 / sum_p (k_p - 1)``
and the mutant takes over that population with the fixation probability
``rho``. Every function here builds these quantities with array operations:
there is no Python loop over profiles.

Fixation probability
--------------------
With selection intensity ``alpha``, population size ``m`` and the mutant's
fitness advantage ``f_r - f_s``, the Fermi (logistic) imitation process gives

    rho(u) = (1 - exp(-u)) / (1 - exp(-m u)),   u = alpha (f_r - f_s),

with ``rho(0) = 1/m`` (neutral drift). :func:`fixation` and :func:`log_fixation`
evaluate it in a form that neither overflows nor loses digits:
``-expm1(-u) / -expm1(-m u)`` for ``u > 0`` and the identity
``rho(-v) = exp(-(m - 1) v) rho(v)`` for ``u < 0``.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp

__all__ = [
    "ChainMoves",
    "PayoffTables",
    "chain_moves",
    "fixation",
    "from_lines",
    "in_threads",
    "infinite_alpha_rates",
    "line_rates",
    "lines",
    "log_fixation",
    "multi_population_moves",
    "single_population_fixation",
]

#: Payoff differences at most this (relative to the payoff scale) count as ties
#: in the infinite-alpha chain.
TIE_RTOL = 1e-12

#: Exponents below ``-UNDERFLOW`` give rates treated as 0 in :func:`line_rates`
#: (``exp(-708)`` is about the smallest normal double).
UNDERFLOW = 708.0


def log_fixation(u: np.ndarray, m: int) -> np.ndarray:
    """Natural log of the fixation probability ``rho(u) = (1 - e^-u) / (1 - e^-(m u))``.

    Parameters
    ----------
    u : ndarray
        Selection-weighted fitness advantage of the mutant, ``alpha * (f_r - f_s)``.
    m : int
        Population size (``m >= 1``).

    Returns
    -------
    ndarray
        ``log rho(u)``, finite for every finite ``u``, also where ``rho``
        itself underflows (``(m - 1) |u|`` above about 745).

    Examples
    --------
    >>> import numpy as np
    >>> np.exp(log_fixation(np.array([0.0, 1e-30, 50.0]), m=4)).round(6).tolist()
    [0.25, 0.25, 1.0]
    >>> float(np.exp(log_fixation(np.array([-2000.0]), m=50))[0])
    0.0
    """
    u = np.asarray(u, dtype=np.float64)
    v = np.abs(u)
    with np.errstate(divide="ignore", invalid="ignore"):
        # log rho(|u|) for |u| > 0; -expm1(-x) = 1 - e^-x is accurate for small and large x.
        log_pos = np.log(-np.expm1(-v)) - np.log(-np.expm1(-m * v))
    log_pos = np.where(v == 0.0, -np.log(m), log_pos)
    return np.where(u < 0.0, log_pos - (m - 1) * v, log_pos)


def fixation(u: np.ndarray, m: int) -> np.ndarray:
    """The fixation probability ``rho(u)``, without logarithms (see :func:`log_fixation`).

    ``rho(|u|) = -expm1(-|u|) / -expm1(-m |u|)`` lies in ``[1/m, 1]``, and for
    ``u < 0`` the identity ``rho(u) = rho(|u|) exp(-(m - 1) |u|)`` underflows
    gracefully to 0.

    Examples
    --------
    >>> import numpy as np
    >>> fixation(np.array([0.0, np.log(2.0)]), m=2).tolist()
    [0.5, 0.6666666666666666]
    >>> fixation(np.array([-1e4, 1e4]), m=50).tolist()
    [0.0, 1.0]
    """
    u = np.asarray(u, dtype=np.float64)
    v = np.abs(u)
    num = np.expm1(-v)
    den = np.expm1(-m * v)
    out = np.divide(num, den, out=np.full_like(v, 1.0 / m), where=den != 0.0)
    np.minimum(u, 0.0, out=v)  # reuse: v = min(u, 0) = -|u| where u < 0
    v *= m - 1
    np.exp(v, out=v)
    out *= v
    return out


def single_population_fixation(table: np.ndarray, alpha: float, m: int, selection: str,
                               max_block: int = 4_000_000, log: bool = False) -> np.ndarray:
    """``rho[s, r]``: a mutant ``r`` taking over a monomorphic population playing ``s``.

    Parameters
    ----------
    table : ndarray, shape (k, k)
        ``table[r, s]`` is the payoff of strategy ``r`` against ``s``.
    alpha, m :
        Selection intensity and population size.
    selection : {"local", "population"}
        ``"local"``: the mutant's fitness is its payoff against the resident and
        the resident's its payoff against the mutant, ``u = alpha (A[r, s] - A[s, r])``.
        ``"population"``: fitness is the average payoff against the rest of the
        finite population, which depends on the number ``l`` of mutants, so
        ``rho = 1 / sum_{l=0}^{m-1} exp(-alpha S_l)`` with ``S_l`` the summed
        fitness differences for 1..l mutants (a quadratic in ``l``); it is
        evaluated with log-sum-exp in row blocks of at most ``max_block`` terms.

    log : bool
        Return ``log rho`` (finite even where ``rho`` underflows), diagonal 0.

    Returns
    -------
    ndarray, shape (k, k)
        Fixation probabilities, with zeros on the diagonal.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([[0.0, -1.0], [1.0, 0.0]])  # strategy 1 beats 0
    >>> single_population_fixation(a, 1.0, 2, "local").round(4).tolist()
    [[0.0, 0.8808], [0.1192, 0.0]]
    """
    a = np.asarray(table, dtype=np.float64)
    k = a.shape[0]
    if selection == "local" or m == 1:
        u = a.T - a  # u[s, r] = A[r, s] - A[s, r]
        u *= alpha
        out = log_fixation(u, m) if log else fixation(u, m)
        np.fill_diagonal(out, 0.0)
        return out
    # Population model. With p mutants r among m, the r-player's fitness is
    # ((p-1) A_rr + (m-p) A_rs) / (m-1), the s-player's ((m-p-1) A_ss + p A_sr) / (m-1).
    # Their difference is c0 + c1 p; S_l = c0 l + c1 l (l+1) / 2.
    diag = np.diag(a)
    a_rs = a.T  # indexed [s, r]
    a_sr = a
    a_rr = diag[None, :]
    a_ss = diag[:, None]
    c1 = (a_rr - a_rs + a_ss - a_sr) / (m - 1)
    c0 = (-a_rr + m * a_rs - (m - 1) * a_ss) / (m - 1)
    ls = np.arange(m, dtype=np.float64)
    lin, quad = ls, ls * (ls + 1.0) / 2.0
    out = np.empty((k, k))
    rows = max(1, max_block // max(1, k * m))
    for start in range(0, k, rows):  # blocks of rows bound the memory of the (rows, k, m) tensor
        stop = min(k, start + rows)
        expo = -alpha * (c0[start:stop, :, None] * lin + c1[start:stop, :, None] * quad)
        out[start:stop] = -logsumexp(expo, axis=-1)
    if not log:
        np.exp(out, out=out)
    np.fill_diagonal(out, 0.0)
    return out


def multi_population_moves(payoff_tables: np.ndarray):
    """Every single-population move of the multi-population chain, as flat arrays.

    Parameters
    ----------
    payoff_tables : ndarray, shape (n, k_1, ..., k_n)
        ``payoff_tables[p]`` is population ``p``'s payoff at each profile.

    Returns
    -------
    source, target : ndarray of int
        Flat (C-order) indices of the profile before and after the move; there
        are ``prod(k) * sum(k_p - 1)`` moves.
    gain : ndarray
        The moving population's payoff at ``target`` minus at ``source``.
    population : ndarray of int
        Which population moved.

    Examples
    --------
    >>> import numpy as np
    >>> src, dst, gain, pop = multi_population_moves(np.arange(8.0).reshape(2, 2, 2))
    >>> src.tolist(), dst.tolist(), gain.tolist()
    ([0, 1, 2, 3, 0, 1, 2, 3], [2, 3, 0, 1, 1, 0, 3, 2], [2.0, 2.0, -2.0, -2.0, 1.0, -1.0, 1.0, -1.0])
    """
    tables = np.asarray(payoff_tables, dtype=np.float64)
    shape = tables.shape[1:]
    n_states = int(np.prod(shape))
    states = np.arange(n_states)
    strides = np.array([int(np.prod(shape[p + 1:])) for p in range(len(shape))], dtype=np.int64)
    sources, targets, gains, pops = [], [], [], []
    for p, k in enumerate(shape):  # loop over populations, not profiles
        if k < 2:
            continue
        flat = tables[p].reshape(-1)
        own = (states // strides[p]) % k
        offsets = np.arange(1, k)[:, None]
        dst = states + ((own + offsets) % k - own) * strides[p]  # (k - 1, n): offset-major
        sources.append(np.broadcast_to(states, dst.shape).ravel())
        targets.append(dst.ravel())
        gains.append((flat[dst] - flat).ravel())
        pops.append(np.full(dst.size, p, dtype=np.int64))
    if not sources:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0), empty
    return (np.concatenate(sources), np.concatenate(targets), np.concatenate(gains),
            np.concatenate(pops))


def infinite_alpha_rates(gain: np.ndarray, scale: float, eps: float) -> np.ndarray:
    """Relative transition rates of the infinite-alpha chain perturbed by ``eps``.

    A move that raises the moving population's payoff fixates with ``1 - eps``,
    one that lowers it with ``eps``, and a tie (``|gain| <= 1e-12 * scale``)
    with ``1/2`` (as in OpenSpiel's ``use_inf_alpha``).

    Examples
    --------
    >>> import numpy as np
    >>> infinite_alpha_rates(np.array([1.0, -1.0, 0.0]), 1.0, 0.1).tolist()
    [0.9, 0.1, 0.5]
    """
    gain = np.asarray(gain, dtype=np.float64)
    tie = np.abs(gain) <= TIE_RTOL * max(1.0, scale)
    return np.where(tie, 0.5, np.where(gain > 0, 1.0 - eps, eps))



def lines(x: np.ndarray, shape: tuple, p: int) -> np.ndarray:
    """A vector over profiles (C order) as the lines of population ``p``: shape ``(-1, k_p)``.

    Row ``L`` holds the profiles that differ only in population ``p``'s strategy,
    in the order of that strategy; rows follow the C order of the other populations.

    Examples
    --------
    >>> import numpy as np
    >>> lines(np.arange(6), (2, 3), 0).tolist()  # population 0 moves along columns
    [[0, 3], [1, 4], [2, 5]]
    >>> from_lines(lines(np.arange(6), (2, 3), 0), (2, 3), 0).tolist()
    [0, 1, 2, 3, 4, 5]
    """
    return np.moveaxis(np.asarray(x).reshape(shape), p, -1).reshape(-1, shape[p])


def from_lines(z: np.ndarray, shape: tuple, p: int) -> np.ndarray:
    """The inverse of :func:`lines`: population ``p``'s lines back to a vector over profiles.

    Examples
    --------
    >>> import numpy as np
    >>> from_lines(np.array([[0, 3], [1, 4], [2, 5]]), (2, 3), 0).tolist()
    [0, 1, 2, 3, 4, 5]
    """
    rest = [k for q, k in enumerate(shape) if q != p]
    return np.moveaxis(np.asarray(z).reshape(*rest, shape[p]), -1, p).reshape(-1)


def _fast_fixation(u: np.ndarray, m: int, v: np.ndarray, num: np.ndarray, span: float = np.inf) -> None:
    """``rho(u)`` in place of ``u``, with ``exp`` where it is exact enough and :func:`fixation` elsewhere.

    For ``|u| >= 1/2``, ``1 - exp(-|u|)`` and ``1 - exp(-m |u|)`` lose no digits,
    so two ``exp`` replace the two slower ``expm1``; the few entries nearer a
    tie take :func:`fixation`'s exact path. Where ``m * span`` (``span`` bounds
    ``|u|``) exceeds ``UNDERFLOW``, exponents are clipped at ``-UNDERFLOW``
    (``exp`` is slow where it underflows into subnormals) and a rate below
    ``exp(-UNDERFLOW)`` is set to 0. ``v`` and ``num`` are scratch of ``u``'s shape.
    """
    np.abs(u, out=v)
    small = v < 0.5
    exact = fixation(u[small], m)
    stiff = m * span > UNDERFLOW
    np.minimum(u, 0.0, out=u)
    u *= m - 1
    if stiff:
        vanish = u < -UNDERFLOW
        np.maximum(u, -UNDERFLOW, out=u)
    np.exp(u, out=u)  # exp(-(m - 1) |u|) where u < 0, else 1
    np.negative(v, out=v)
    if span > UNDERFLOW:  # beyond it 1 - exp(-|u|) and 1 - exp(-m |u|) round to 1 anyway
        np.maximum(v, -UNDERFLOW, out=v)
    np.exp(v, out=num)  # exp(-|u|)
    v *= m
    if stiff:
        np.maximum(v, -UNDERFLOW, out=v)
    np.exp(v, out=v)  # exp(-m |u|)
    np.subtract(1.0, num, out=num)
    np.subtract(1.0, v, out=v)
    with np.errstate(invalid="ignore"):  # 0 / 0 at exact ties, overwritten below
        num /= v
    u *= num
    if stiff:
        u[vanish] = 0.0
    u[small] = exact


def num_threads() -> int:
    """Threads for the block computations: the CPUs this process may use, at most 4.

    Examples
    --------
    >>> 1 <= num_threads() <= 4
    True
    """
    try:
        return max(1, min(4, len(os.sched_getaffinity(0))))
    except AttributeError:  # not on Linux
        return max(1, min(4, os.cpu_count() or 1))


def in_threads(fn, total: int, step: int) -> None:
    """Run ``fn(start, stop)`` over ``range(0, total, step)`` on :func:`num_threads` threads.

    numpy releases the GIL inside ufuncs and matrix products, so chunks of
    array work run in parallel.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.zeros(10)
    >>> in_threads(lambda a, b: x.__setitem__(slice(a, b), a), 10, 4)
    >>> x.tolist()
    [0.0, 0.0, 0.0, 0.0, 4.0, 4.0, 4.0, 4.0, 8.0, 8.0]
    """
    starts = range(0, total, step)
    workers = min(num_threads(), len(starts))
    if workers <= 1:
        for a in starts:
            fn(a, min(total, a + step))
        return
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for f in [pool.submit(fn, a, min(total, a + step)) for a in starts]:
            f.result()


def line_rates(tables: np.ndarray, p: int, alpha: float, m: int, inf_alpha: bool = False,
               eps: float = 0.0, scale: float = 1.0, perturbation: float = 0.0,
               chunk: int = 1 << 18, callback=None) -> np.ndarray:
    """The rates of population ``p``'s moves, one ``k_p x k_p`` block per line of the others' profile.

    ``blocks[L, s, t]`` is the rate (fixation probability) at which population
    ``p``, on line ``L`` (see :func:`lines`), moves from strategy ``s`` to ``t``;
    the diagonal is zero. With the other populations fixed, a line's payoff
    differences form this block, so the multi-population chain is held in
    ``prod(k) * k_p`` numbers per population and no index arrays.

    Parameters
    ----------
    tables : ndarray, shape (n, k_1, ..., k_n)
    p : int
        The moving population.
    alpha, m :
        Selection intensity and population size.
    inf_alpha, eps, scale :
        The infinite-alpha rates (:func:`infinite_alpha_rates`) instead of ``rho``.
    perturbation : float
        Mix ``(1 - perturbation) rho + perturbation / m`` (a uniform mutation).
    chunk : int
        Entries computed at a time (bounds the scratch memory).
    callback : callable, optional
        Called with the number of lines done after each chunk (e.g. a progress
        bar's ``update``), possibly from several threads.

    Examples
    --------
    >>> import numpy as np
    >>> t = np.array([[[0.0, 1.0], [2.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]])
    >>> line_rates(t, 0, 1.0, 2).round(4).tolist()  # lines: population 1 plays 0, then 1
    [[[0.0, 0.8808], [0.1192, 0.0]], [[0.0, 0.2689], [0.7311, 0.0]]]
    """
    k = tables.shape[1 + p]
    u = lines(tables[p], tables.shape[1:], p)
    if not inf_alpha:
        u = alpha * u
    span = u.max(axis=-1) - u.min(axis=-1)  # the largest |u_t - u_s| of each line
    num_lines = u.shape[0]
    blocks = np.empty((num_lines, k, k))
    step = max(1, chunk // (k * k))

    def fill(a, b):
        out = blocks[a:b]
        np.subtract(u[a:b, None, :], u[a:b, :, None], out=out)  # out[L, s, t] = u[L, t] - u[L, s]
        if inf_alpha:
            out[...] = infinite_alpha_rates(out, scale, eps)
        else:
            _fast_fixation(out, m, np.empty_like(out), np.empty_like(out), float(span[a:b].max()))
        if perturbation:
            out *= 1.0 - perturbation
            out += perturbation / m
        if callback is not None:
            callback(b - a)

    in_threads(fill, num_lines, step)  # chunks of lines bound the scratch memory
    diag = np.arange(k)
    blocks[:, diag, diag] = 0.0
    return blocks


# --------------------------------------------------- the chain of a set of payoff tables
@dataclass(frozen=True)
class PayoffTables:
    """The input of alpha-Rank, normalised.

    Attributes
    ----------
    tables : ndarray
        Single population: ``(1, k, k)`` with ``tables[0][r, s]`` the payoff of
        ``r`` against ``s``. Multi-population: ``(n, k_1, ..., k_n)``.
    single_population : bool
    population_names : tuple of str
    strategy_names : tuple of tuple of str
        One tuple per population.
    """

    tables: np.ndarray
    single_population: bool
    population_names: tuple
    strategy_names: tuple

    @property
    def shape(self) -> tuple:
        """Strategies per population."""
        if self.single_population:
            return (self.tables.shape[1],)
        return tuple(self.tables.shape[1:])

    @property
    def num_profiles(self) -> int:
        return int(np.prod(self.shape))


@dataclass(frozen=True, eq=False)
class ChainMoves:
    """The moves ``s -> t`` of an alpha-Rank chain with their fixation probabilities and rates.

    A single-population chain moves between every pair of strategies, so it is
    kept as dense ``(k, k)`` matrices (``source`` and ``target`` are None); a
    multi-population chain is kept as flat arrays, one entry per move.

    Attributes
    ----------
    source, target : ndarray of int or None
        Profile indices (C order) before and after each move.
    population : ndarray of int or None
        The population that moves (None for a single population).
    fixation : ndarray
        Fixation probability ``rho`` of each move (dense: ``fixation[s, t]``,
        zero diagonal).
    rate : ndarray
        Relative rate used in the chain, same layout: ``rho``, the
        infinite-alpha rates, or the perturbed ones.
    eta : float
        ``1 / sum_p (k_p - 1)``, the probability of proposing a given move.
    num_profiles : int
    """

    source: np.ndarray | None
    target: np.ndarray | None
    population: np.ndarray | None
    fixation: np.ndarray
    rate: np.ndarray
    eta: float
    num_profiles: int

    @property
    def dense(self) -> bool:
        return self.source is None

    def sparse(self, values: np.ndarray) -> sp.csr_array:
        """``values`` (laid out like ``fixation``) as a sparse matrix over profiles."""
        n = self.num_profiles
        if self.dense:
            return sp.csr_array(values)
        return sp.csr_array((values, (self.source, self.target)), shape=(n, n))

    def with_rate(self, rate: np.ndarray) -> ChainMoves:
        return ChainMoves(self.source, self.target, self.population, self.fixation, rate, self.eta,
                          self.num_profiles)


def chain_moves(tables: PayoffTables, alpha: float, m: int, selection: str, inf_alpha: bool,
                eps: float) -> ChainMoves:
    """The moves of the chain with fixation probabilities and rates (rho, or the eps-rates)."""
    shape = tables.shape
    scale = float(np.abs(tables.tables).max(initial=0.0))
    eta = 1.0 / sum(k - 1 for k in shape) if tables.num_profiles > 1 else 1.0
    if tables.single_population:
        a = tables.tables[0]
        if inf_alpha:
            gain = a.T - a  # gain[s, r] = A[r, s] - A[s, r]
            rho, rate = _limit_fixation(gain, scale, m), infinite_alpha_rates(gain, scale, eps)
            np.fill_diagonal(rho, 0.0)
            np.fill_diagonal(rate, 0.0)
        else:
            rho = single_population_fixation(a, alpha, m, selection)
            rate = rho
        return ChainMoves(None, None, None, rho, rate, eta, tables.num_profiles)
    src, dst, gain, pop = multi_population_moves(tables.tables)
    if inf_alpha:
        rho, rate = _limit_fixation(gain, scale, m), infinite_alpha_rates(gain, scale, eps)
    else:
        rho = fixation(alpha * gain, m)
        rate = rho
    return ChainMoves(src, dst, pop, rho, rate, eta, tables.num_profiles)


def _limit_fixation(gain: np.ndarray, scale: float, m: int) -> np.ndarray:
    """Fixation probabilities as alpha -> inf: 1 (better), 0 (worse), 1/m (tie)."""
    neutral = infinite_alpha_rates(gain, scale, 0.0) == 0.5
    return np.where(neutral, 1.0 / m, (gain > 0).astype(float))
