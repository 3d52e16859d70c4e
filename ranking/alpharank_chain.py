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

import numpy as np
from scipy.special import logsumexp

__all__ = [
    "fixation",
    "infinite_alpha_rates",
    "log_fixation",
    "multi_population_moves",
    "single_population_fixation",
]

#: Payoff differences at most this (relative to the payoff scale) count as ties
#: in the infinite-alpha chain.
TIE_RTOL = 1e-12


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

