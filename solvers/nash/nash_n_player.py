"""Approximate Nash equilibria of n-player games, with a certified NashConv.

The method, in three steps:

1. **Pure equilibria** are found exactly and at once, by comparing every
   profile's payoff with the best deviation of each player (vectorised over
   all profiles).
2. **Regret minimisation.** From seeded random starts, L-BFGS minimises the
   smooth regret function ``f(sigma) = sum_p sum_a max(0, u_p(a, sigma_-p) -
   u_p(sigma))^2`` (zero exactly at the Nash equilibria) over the softmax
   parameters of the mixed strategies, with the analytic gradient. Each
   player's payoffs are first rescaled to ``[0, 1]``.
3. **Support refinement.** The supports read off the minimiser fix a square
   polynomial system: every strategy in ``S_p`` earns the same ``v_p`` and the
   probabilities on ``S_p`` sum to one. Newton's method solves it to machine
   precision; the solution is accepted only if its probabilities are valid
   and its NashConv is within ``tol``.

The best profile found is returned with ``info["converged"]`` true only when
its scale-aware NashConv (each player's payoffs rescaled to ``[0, 1]``) is at
most ``tol``; otherwise the budget ran out and ``gap`` shows how far it is.
"""

from __future__ import annotations

import itertools
import logging
import string

import numpy as np
from scipy.optimize import minimize

from games.normal_form import NormalFormGame
from games.validation import check_int, check_tolerance
from solvers.equilibrium import Equilibrium
from solvers.gaps import deviation_gains
from solvers.registry import make_equilibrium, register

__all__ = ["pure_equilibria", "refine_on_support", "regret_objective", "nash_n_player"]

logger = logging.getLogger(__name__)


def _rescaled(payoffs: np.ndarray) -> np.ndarray:
    """Each player's payoff table affinely mapped to [0, 1] (constant tables become zeros)."""
    n = payoffs.shape[0]
    flat = payoffs.reshape(n, -1)
    lo = flat.min(axis=1)
    span = flat.max(axis=1) - lo
    span = np.where(span > 0, span, 1.0)
    return (payoffs - lo.reshape((n,) + (1,) * n)) / span.reshape((n,) + (1,) * n)


def pure_equilibria(payoffs: np.ndarray, tol: float = 0.0) -> np.ndarray:
    """Indices of the pure Nash equilibria, one row per profile (C order).

    Parameters
    ----------
    payoffs : ndarray, shape (n, k_1, ..., k_n)
    tol : float
        A profile counts when no player gains more than ``tol`` by deviating.

    Examples
    --------
    >>> from games import catalog
    >>> pure_equilibria(catalog.stag_hunt().payoffs).tolist()
    [[0, 0], [1, 1]]
    """
    n = payoffs.shape[0]
    ok = np.ones(payoffs.shape[1:], dtype=bool)
    for p in range(n):
        ok &= payoffs[p] >= payoffs[p].max(axis=p, keepdims=True) - tol
    return np.argwhere(ok)


def _pair_matrices(u: np.ndarray, sigma: list) -> list:
    """``m[p][q][a, b]``: player p's payoff for ``(a, b)`` of players ``(p, q)``, others mixing.

    ``m[p][p]`` is None. Every entry contracts one payoff table with ``n - 2`` strategies.
    """
    n = u.shape[0]
    letters = string.ascii_letters[:n]
    out = []
    for p in range(n):
        row = []
        for q in range(n):
            if q == p:
                row.append(None)
                continue
            others = [r for r in range(n) if r not in (p, q)]
            spec = letters + "," + ",".join(letters[r] for r in others) + "->" + letters[p] + letters[q]
            row.append(np.einsum(spec, u[p], *[sigma[r] for r in others]) if others
                       else np.einsum(spec.replace(",->", "->"), u[p]))
        out.append(row)
    return out


def _deviation_payoffs(u: np.ndarray, sigma: list, pairs: list | None = None) -> list:
    n = u.shape[0]
    if n == 1:
        return [u[0].copy()]
    pairs = pairs if pairs is not None else _pair_matrices(u, sigma)
    return [pairs[p][(p + 1) % n] @ sigma[(p + 1) % n] for p in range(n)]


def regret_objective(u: np.ndarray, sigma: list):
    """The smooth regret ``f`` and its gradient with respect to each strategy.

    Parameters
    ----------
    u : ndarray, shape (n, k_1, ..., k_n)
        Payoffs (ideally rescaled to [0, 1]).
    sigma : list of ndarray
        One mixed strategy per player.

    Returns
    -------
    value : float
        ``sum_p sum_a max(0, u_p(a, sigma_-p) - u_p(sigma))^2``.
    grad : list of ndarray
        ``d value / d sigma_q`` for each player q.

    Examples
    --------
    >>> from games import catalog
    >>> u = catalog.three_player_matching_pennies().payoffs
    >>> f, g = regret_objective(u, [np.array([0.5, 0.5])] * 3)
    >>> f
    0.0
    """
    n = u.shape[0]
    pairs = _pair_matrices(u, sigma)
    dev = _deviation_payoffs(u, sigma, pairs)
    values = [float(d @ s) for d, s in zip(dev, sigma)]
    gains = [np.maximum(d - v, 0.0) for d, v in zip(dev, values)]
    f = float(sum(g @ g for g in gains))
    grad = [-2.0 * gains[q].sum() * dev[q] for q in range(n)]
    for p in range(n):
        gp = gains[p]
        total = gp.sum()
        if total == 0.0:
            continue
        for q in range(n):
            if q != p:
                grad[q] = grad[q] + 2.0 * (gp @ pairs[p][q] - total * (sigma[p] @ pairs[p][q]))
    return f, grad


def _scaled_nash_conv(u: np.ndarray, sigma: list) -> float:
    return float(deviation_gains(_deviation_payoffs(u, sigma), sigma).sum())


def refine_on_support(u: np.ndarray, sigma: list, supports: list, max_iter: int = 50):
    """Newton's method on the indifference equations of the given supports.

    Unknowns: the probabilities on each support ``S_p`` and each player's value
    ``v_p``. Equations: ``u_p(a, sigma_-p) = v_p`` for ``a`` in ``S_p`` and
    ``sum(sigma_p[S_p]) = 1``.

    Returns
    -------
    list of ndarray or None
        The refined strategies (zero off the supports), or None when Newton
        fails to converge or leaves the probability simplex.

    Examples
    --------
    >>> from games import catalog
    >>> u = catalog.three_player_matching_pennies().payoffs
    >>> s = refine_on_support(u, [np.array([0.6, 0.4])] * 3, [np.array([0, 1])] * 3)
    >>> [x.round(12).tolist() for x in s]
    [[0.5, 0.5], [0.5, 0.5], [0.5, 0.5]]
    """
    n = u.shape[0]
    shape = u.shape[1:]
    sizes = [len(s) for s in supports]
    if min(sizes) == 0:
        return None
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    m = int(offsets[-1])
    sig = []
    for p in range(n):
        x = np.zeros(shape[p])
        x[supports[p]] = np.maximum(sigma[p][supports[p]], 1e-3)
        sig.append(x / x.sum())
    vals = np.zeros(n)
    for it in range(max_iter):
        pairs = _pair_matrices(u, sig) if n > 1 else None
        dev = _deviation_payoffs(u, sig, pairs)
        if it == 0:
            vals = np.array([float(d @ s) for d, s in zip(dev, sig)])
        res = np.concatenate([np.concatenate([dev[p][supports[p]] - vals[p] for p in range(n)]),
                              [sig[p].sum() - 1.0 for p in range(n)]])
        if np.abs(res).max() < 1e-14:
            break
        jac = np.zeros((m + n, m + n))
        for p in range(n):
            rows = slice(offsets[p], offsets[p + 1])
            for q in range(n):
                if q != p:
                    jac[rows, offsets[q]:offsets[q + 1]] = pairs[p][q][np.ix_(supports[p], supports[q])]
            jac[rows, m + p] = -1.0
            jac[m + p, offsets[p]:offsets[p + 1]] = 1.0
        try:
            step = np.linalg.solve(jac, -res)
        except np.linalg.LinAlgError:
            return None
        if not np.all(np.isfinite(step)) or np.abs(step).max() > 1e3:  # diverging: wrong support
            return None
        for p in range(n):
            sig[p][supports[p]] += step[offsets[p]:offsets[p + 1]]
        vals = vals + step[m:]
    else:
        return None
    if min(float(s.min()) for s in sig) < -1e-12:
        return None
    return [np.clip(s, 0.0, None) / np.clip(s, 0.0, None).sum() for s in sig]


def _minimise_from(u: np.ndarray, theta0: np.ndarray, sizes: list, max_iter: int) -> list:
    splits = np.cumsum(sizes)[:-1]

    def unpack(theta):
        parts = np.split(theta, splits)
        out = []
        for t in parts:
            e = np.exp(t - t.max())
            out.append(e / e.sum())
        return out

    def fun(theta):
        sigma = unpack(theta)
        f, grad = regret_objective(u, sigma)
        # Chain rule through the softmax: d sigma / d theta = diag(sigma) - sigma sigma^T.
        g = np.concatenate([s * (gq - s @ gq) for s, gq in zip(sigma, grad)])
        return f, g

    res = minimize(fun, theta0, jac=True, method="L-BFGS-B",
                   options={"maxiter": max_iter, "ftol": 1e-20, "gtol": 1e-10})
    return unpack(res.x)


def support_profiles(shape: tuple, limit: int):
    """Support profiles in the order of Porter, Nudelman and Shoham (2004), at most ``limit`` of them.

    Smaller total support first, then more balanced sizes; pure profiles are
    skipped (they are checked exactly beforehand).

    Examples
    --------
    >>> [tuple(s.tolist() for s in sup) for sup in support_profiles((2, 2), 10)][:2]
    [([0], [0, 1]), ([1], [0, 1])]
    """
    n = len(shape)
    size_profiles = [sizes for sizes in itertools.product(*[range(1, k + 1) for k in shape]) if max(sizes) > 1]
    size_profiles.sort(key=lambda sz: (sum(sz), max(sz) - min(sz)))
    count = 0
    for sizes in size_profiles:
        for combo in itertools.product(*[itertools.combinations(range(k), s) for k, s in zip(shape, sizes)]):
            if count >= limit:
                return
            count += 1
            yield [np.array(c, dtype=np.intp) for c in combo[:n]]


def _candidate_supports(u: np.ndarray, sigma: list) -> list:
    """Support guesses for a near-equilibrium: large probabilities, at two thresholds."""
    out = []
    for thr in (1e-3, 1e-6):
        sup = [np.flatnonzero(s > thr * s.max()) for s in sigma]
        if not any(all(np.array_equal(a, b) for a, b in zip(sup, o)) for o in out):
            out.append(sup)
    return out


@register("nash_n_player", concept="nash", min_players=1, tol_option="tol")
def nash_n_player(game: NormalFormGame, tol: float = 1e-9, max_restarts: int = 10, rng=None,
                  max_iter: int = 200, max_supports: int = 3000) -> Equilibrium:
    """An approximate Nash equilibrium of an n-player game with its certified NashConv.

    Pure equilibria are checked first (exactly). Then, alternately: a seeded
    random start of the regret minimisation (L-BFGS on the softmax
    parameters, followed by Newton on the supports it suggests), and a slice of
    a support-profile search (Newton on the indifference equations of each
    support profile, smallest and most balanced first, at most
    ``max_supports`` profiles in all). The first profile whose scale-aware
    NashConv is within ``tol`` is returned; otherwise the best one found.

    Parameters
    ----------
    game : NormalFormGame
        Any number of players.
    tol : float
        Target scale-aware NashConv (each player's payoffs rescaled to ``[0, 1]``).
    max_restarts : int
        Number of random starts of the regret minimisation.
    rng : numpy.random.Generator or int, optional
        Seed or generator for the starting points.
    max_iter : int
        L-BFGS iterations per start.
    max_supports : int
        Budget of support profiles for the Newton search (0 disables it).

    Returns
    -------
    Equilibrium
        ``info``: ``converged`` (scale-aware NashConv <= tol), ``scaled_nash_conv``,
        ``restarts`` and ``supports_tried`` used, ``pure`` (a pure equilibrium), ``tol``.

    Raises
    ------
    ValueError
        If ``tol``, ``max_restarts``, ``max_iter`` or ``max_supports`` are out of range.

    Examples
    --------
    >>> from games import catalog
    >>> eq = nash_n_player(catalog.three_player_matching_pennies(), rng=0)
    >>> [m.round(9).tolist() for m in eq.marginals], eq.info["converged"]
    ([[0.5, 0.5], [0.5, 0.5], [0.5, 0.5]], True)
    """
    if not isinstance(game, NormalFormGame):
        raise TypeError(f"game must be a games.NormalFormGame; got {type(game).__name__}.")
    tol = check_tolerance(tol)
    for name, val, least in (("max_restarts", max_restarts, 1), ("max_iter", max_iter, 1),
                             ("max_supports", max_supports, 0)):
        check_int(val, name, minimum=least)
    rng = np.random.default_rng(rng)
    u = _rescaled(game.payoffs)
    sizes = list(game.shape)
    restarts = tried = 0

    def finish(sigma, pure=False):
        gap = _scaled_nash_conv(u, sigma)
        return make_equilibrium(game, marginals=sigma, concept="nash", method="nash_n_player",
                                info={"converged": gap <= tol, "scaled_nash_conv": gap, "restarts": restarts,
                                      "supports_tried": tried, "pure": pure, "tol": tol})

    pure = pure_equilibria(u)
    if len(pure):
        return finish([np.eye(k)[a] for k, a in zip(sizes, pure[0])], pure=True)
    best, best_gap = [np.full(k, 1.0 / k) for k in sizes], np.inf
    supports = support_profiles(tuple(sizes), max_supports)
    per_round = max(1, -(-max_supports // max_restarts))
    uniform = [np.full(k, 1.0 / k) for k in sizes]

    def consider(candidates):
        nonlocal best, best_gap
        for cand in candidates:
            gap = _scaled_nash_conv(u, cand)
            if gap < best_gap:
                best, best_gap = cand, gap
        return best_gap <= tol

    for restarts in range(1, max_restarts + 1):
        theta0 = np.zeros(sum(sizes)) if restarts == 1 else rng.normal(size=sum(sizes))
        sigma = _minimise_from(u, theta0, sizes, max_iter)
        refined = [refine_on_support(u, sigma, sup) for sup in _candidate_supports(u, sigma)]
        if consider([sigma] + [r for r in refined if r is not None]):
            break
        found = False
        for sup in itertools.islice(supports, per_round):
            tried += 1
            r = refine_on_support(u, uniform, sup)
            if r is not None and consider([r]):
                found = True
                break
        if found:
            break
    if best_gap > tol:
        logger.info("n-player search stopped above tolerance: scaled NashConv %.3g > %.3g after %d restarts "
                    "and %d support profiles", best_gap, tol, restarts, tried)
    return finish(best)
