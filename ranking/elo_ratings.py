"""Elo ratings: online (K-factor) updates, batch maximum likelihood, bootstrap intervals.

The batch estimator is the Bradley-Terry model behind OpenSpiel's
``pyspiel.elo.compute_ratings_from_matrices``: agent ``i`` beats ``j`` with
probability ``gamma_i / (gamma_i + gamma_j)``, a draw counts as half a win for
each side, every ordered pair gets ``smoothing`` extra pseudo-wins, and the
rating is ``scale * log10(gamma)`` shifted so that the lowest rating is 0. Two
solvers of the same likelihood are offered:

``"newton"`` (default)
    Damped Newton on the concave log-likelihood in ``theta = log(gamma)``; it
    converges quadratically to the exact maximiser.
``"mm"``
    Hunter's (2004) minorize-maximize fixed point, with OpenSpiel's
    normalisation and stopping rule (max change of the normalised strengths
    below ``tol``), for bit-level comparisons with the reference.

Both are vectorised over a batch of count matrices, which is how the bootstrap
refits all its resamples at once.

OpenSpiel's stopping rule is absolute in the normalised strengths, which are
tiny for all but the strongest agent when one agent never loses; there its
default 2000 iterations can stop tens of Elo points short of the maximiser
(tests/ranking/test_elo_ratings.py shows a case of over 1 point; 34 points were seen). ``"newton"``
returns the maximiser itself (it agrees to 1e-6 with OpenSpiel run to
convergence); ``"mm"`` reproduces OpenSpiel's numbers, truncation included.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd
from scipy.sparse.csgraph import connected_components
from scipy.special import expit

from games.validation import check_real
from ranking.match_records import (
    MatchCounts,
    ScoreKind,
    as_match_counts,
    match_outcomes,
)

__all__ = ["bradley_terry_strengths", "elo", "elo_win_probabilities", "online_elo", "online_elo_history"]

logger = logging.getLogger(__name__)

LN10 = np.log(10.0)
_DENORM_MIN = np.nextafter(0.0, 1.0)


# --------------------------------------------------------------------------- solvers
def _check_identifiable(scores: np.ndarray) -> None:
    """Without smoothing the MLE exists iff 'i scored against j' is strongly connected."""
    batch = scores.reshape(-1, *scores.shape[-2:])
    n = batch.shape[-1]
    off = ~np.eye(n, dtype=bool)
    if np.all(batch[:, off] > 0):  # every pair scored both ways (e.g. smoothing > 0)
        return
    for b, s in enumerate(batch):
        n_comp, _ = connected_components(off & (s > 0), directed=True, connection="strong")
        if n_comp > 1:
            where = "" if scores.ndim == 2 else f" (bootstrap resample {b})"
            raise ValueError(
                f"the Elo maximum-likelihood estimate does not exist{where}: some agents never scored "
                "against some group of others (or never played it), so their ratings go to +-infinity. "
                "Use smoothing > 0 (OpenSpiel's default is 0.01) or add matches."
            )


def _newton(scores: np.ndarray, tol: float, max_iter: int) -> tuple:
    """Maximise sum_ij S_ij log sigma(theta_i - theta_j) for a batch (B, n, n); mean(theta) = 0.

    The Hessian of the negative log-likelihood is the weighted Laplacian of
    ``V_ij = N_ij p_ij (1 - p_ij)``; adding ``1/n`` to every entry removes its null
    direction (a common shift) and makes every step sum to zero. Steps are damped
    by backtracking on the squared gradient norm, for which the Newton direction is
    always a descent direction; this needs only the win probabilities, which the
    next iteration reuses.
    """
    n = scores.shape[-1]
    games = scores + np.swapaxes(scores, -1, -2)
    won = scores.sum(axis=-1)
    theta = np.zeros(scores.shape[:-1])
    idx = np.arange(n)
    floor = (1e-13 * won.sum(axis=-1)) ** 2  # rounding allowance for the merit function

    def evaluate(th):
        p = expit(th[:, :, None] - th[:, None, :])  # p[b, i, j] = P(i beats j)
        return p, won - (games * p).sum(axis=-1)

    p, grad = evaluate(theta)
    merit = (grad * grad).sum(axis=-1)
    for it in range(1, max_iter + 1):
        v = games * p * (1.0 - p)
        hess = (1.0 / n) - v
        hess[:, idx, idx] += v.sum(axis=-1)
        step = np.linalg.solve(hess, grad[..., None])[..., 0]
        t = np.ones(theta.shape[0])
        for _ in range(60):
            p_trial, grad_trial = evaluate(theta + t[:, None] * step)
            merit_trial = (grad_trial * grad_trial).sum(axis=-1)
            bad = merit_trial > (1.0 - 1e-4 * t) * merit + floor
            if not bad.any():
                break
            t = np.where(bad, 0.5 * t, t)
        theta = theta + t[:, None] * step
        p, grad, merit = p_trial, grad_trial, merit_trial
        if np.abs(t[:, None] * step).max() < tol:
            return theta - theta.mean(axis=-1, keepdims=True), it, True
    logger.warning("Elo Newton solver stopped after max_iter=%d iterations without converging.", max_iter)
    return theta - theta.mean(axis=-1, keepdims=True), max_iter, False


def _mm(scores: np.ndarray, tol: float, max_iter: int) -> tuple:
    """Hunter's MM iteration with OpenSpiel's normalisation and stopping rule, batched."""
    games = scores + np.swapaxes(scores, -1, -2)
    n = scores.shape[-1]
    idx = np.arange(n)
    games[..., idx, idx] = 0.0
    won = scores.sum(axis=-1) - scores[..., idx, idx]
    gamma = np.ones(scores.shape[:-1])
    active = np.ones(scores.shape[:-2], dtype=bool)
    for it in range(1, max_iter + 1):
        g = gamma[active]
        denom = (games[active] / (g[..., :, None] + g[..., None, :])).sum(axis=-1)
        new = won[active] / denom
        new = np.maximum(new / new.sum(axis=-1, keepdims=True), _DENORM_MIN)
        done = np.abs(g - new).max(axis=-1) < tol
        # A converged resample keeps its previous iterate, as the reference does.
        active_idx = np.flatnonzero(active)
        gamma[active_idx[~done]] = new[~done]
        active[active_idx[done]] = False
        if not active.any():
            return np.log(gamma), it, True
    return np.log(gamma), max_iter, False


def bradley_terry_strengths(scores, method: Literal["newton", "mm"] = "newton", tol: float | None = None,
                            max_iter: int | None = None) -> np.ndarray:
    """Maximum-likelihood Bradley-Terry log-strengths for one or a batch of score matrices.

    Parameters
    ----------
    scores : array_like, shape (..., n, n)
        ``scores[..., i, j]``: points ``i`` scored against ``j`` (wins plus half the
        draws plus any smoothing). The diagonal is ignored.
    method : {"newton", "mm"}
        Newton (exact, quadratic convergence; ``theta`` centred at mean 0) or
        OpenSpiel's MM iteration (``theta = log(gamma)`` with ``sum(gamma) = 1``).
    tol, max_iter : optional
        Stopping rule: Newton stops when no log-strength moves by more than ``tol``
        (default 1e-12, 100 iterations); MM when no normalised strength moves by
        more than ``tol`` (default 1e-10, 2000 iterations, as OpenSpiel).

    Returns
    -------
    ndarray, shape (..., n)
        Natural-log strengths ``theta``; ``P(i beats j) = 1 / (1 + exp(theta_j - theta_i))``.

    Examples
    --------
    >>> theta = bradley_terry_strengths([[0, 2], [1, 0]])
    >>> round(float(theta[0] - theta[1]), 12) == round(float(np.log(2.0)), 12)
    True
    """
    s = np.array(scores, dtype=np.float64)
    if s.ndim < 2 or s.shape[-1] != s.shape[-2]:
        raise ValueError(f"scores must have shape (..., n, n); got {s.shape}.")
    if not np.all(np.isfinite(s)) or s.min() < 0:
        raise ValueError("scores must be finite and non-negative.")
    n = s.shape[-1]
    if n < 2:
        raise ValueError(f"scores must be at least 2 x 2 (Elo needs two agents); got shape {s.shape}.")
    batch = s.shape[:-2]
    s = s.reshape(-1, n, n)
    s[:, np.arange(n), np.arange(n)] = 0.0
    # the likelihood's maximiser does not change when every score is multiplied by the same factor, so the
    # scores are brought to a unit peak: counts of 1e300 (or 1e-300) solve as well as counts of 1
    peak = s.max(axis=(-2, -1), keepdims=True)
    s = s / np.where(peak > 0, peak, 1.0)
    _check_identifiable(s if batch else s[0])
    if method == "newton":
        theta, _, _ = _newton(s, 1e-12 if tol is None else tol, 100 if max_iter is None else max_iter)
    elif method == "mm":
        theta, iterations, converged = _mm(s, 1e-10 if tol is None else tol,
                                           2000 if max_iter is None else max_iter)
        if not converged:
            logger.info("Elo MM iteration stopped at max_iter=%d before reaching tol.", iterations)
    else:
        raise ValueError(f"method must be 'newton' or 'mm'; got {method!r}.")
    return theta.reshape(*batch, n)


# --------------------------------------------------------------------------- batch Elo
def _anchor(ratings: np.ndarray, anchor, agents: tuple, offset: float) -> np.ndarray:
    if isinstance(anchor, str) and anchor == "min":
        base = ratings.min(axis=-1, keepdims=True)
    elif isinstance(anchor, str) and anchor == "mean":
        base = ratings.mean(axis=-1, keepdims=True)
    else:
        try:
            i = agents.index(anchor)
        except ValueError:
            raise ValueError(
                f"anchor must be 'min', 'mean' or one of the agents {list(agents)[:5]}...; got {anchor!r}."
            ) from None
        base = ratings[..., i : i + 1]
    return ratings - base + offset


def _resample_counts(counts: MatchCounts, num: int, rng: np.random.Generator) -> np.ndarray:
    """Score matrices of ``num`` bootstrap resamples of the matches, shape (num, n, n)."""
    w, d = counts.wins, counts.draws
    n = w.shape[0]
    off = ~np.eye(n, dtype=bool)
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    cells = np.concatenate([w[off], d[upper]])
    if not np.allclose(cells, np.round(cells)):
        raise ValueError(
            "bootstrap resamples matches, so it needs integer counts; this input has fractional counts "
            "(e.g. a game of win probabilities). Pass match records or integer count matrices."
        )
    cells = np.round(cells)
    total = int(cells.sum())
    if total == 0:
        raise ValueError("bootstrap needs at least one match between two different agents.")
    draws_of_cells = rng.multinomial(total, cells / total, size=num)
    out = np.zeros((num, n, n))
    k = int(off.sum())
    out[:, off] = draws_of_cells[:, :k]
    du = np.zeros((num, n, n))
    du[:, upper] = draws_of_cells[:, k:]
    return out + 0.5 * (du + np.swapaxes(du, 1, 2))


def elo(
    data,
    draws=None,
    *,
    smoothing: float = 0.01,
    scale: float = 400.0,
    anchor="min",
    offset: float = 0.0,
    method: Literal["newton", "mm"] = "newton",
    tol: float | None = None,
    max_iter: int | None = None,
    bootstrap: int = 0,
    confidence: float = 0.95,
    rng: np.random.Generator | int | None = None,
    scores: ScoreKind = "auto",
    agents: Sequence | None = None,
    games_per_pair: float = 1.0,
    single_population: bool | None = None,
) -> pd.DataFrame:
    """Batch maximum-likelihood Elo ratings (Bradley-Terry), optionally with bootstrap intervals.

    Parameters
    ----------
    data : DataFrame, array_like (n, n), NormalFormGame or EmpiricalGame
        Match records (columns ``agent_a``, ``agent_b``, ``score_a``; see
        :mod:`ranking.match_records`), a win matrix ``wins[i, j]`` = matches ``i``
        won against ``j``, or a two-player game of win probabilities or zero-sum
        returns in [-1, 1] (a meta-game; see ``single_population``).
    draws : array_like (n, n), optional
        Symmetric draw counts, only with a win matrix.
    smoothing : float
        Pseudo-wins added to every ordered pair (OpenSpiel's default 0.01); keeps
        ratings finite for agents that never win or never lose.
    scale : float
        Rating points per factor 10 in odds (400 for chess Elo).
    anchor : {"min", "mean"} or agent label
        Which rating is set to ``offset``: the lowest (OpenSpiel's convention),
        the mean, or a named agent's.
    offset : float
        Rating given to the anchor.
    method : {"newton", "mm"}
        Solver; see :func:`bradley_terry_strengths`.
    tol, max_iter : optional
        Solver stopping rule; see :func:`bradley_terry_strengths`.
    bootstrap : int
        Number of bootstrap resamples of the matches (0: none). Adds columns
        ``std``, ``lower`` and ``upper`` (percentile interval at ``confidence``).
    confidence : float
        Coverage of the bootstrap interval, in (0, 1).
    rng : numpy Generator or int, optional
        Randomness for the bootstrap.
    scores : {"auto", "outcome", "return"}
        How match records' scores become results (see :mod:`ranking.match_records`).
    agents : sequence, optional
        Agent order/labels.
    games_per_pair : float
        Weight of a game input: matches per pair that its win probabilities stand for.
    single_population : bool, optional
        Only for a game input: True rates one population playing itself (the
        same strategies in both seats, e.g. a symmetric PSRO run's meta-game),
        False two populations, one per player (a PSRO meta-game: every row and
        every column strategy gets its own rating, and only the cross pairs
        meet). None takes a symmetric game (``payoffs[1] == payoffs[0].T``) as
        one population and refuses any other game with a ``ValueError``.

    Returns
    -------
    DataFrame
        Indexed by agent, with columns ``rating`` and ``matches`` (and ``std``,
        ``lower``, ``upper`` with a bootstrap); with two populations the index is
        ``(population, agent)``, one row per strategy of each player.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"agent_a": ["a", "a", "b"], "agent_b": ["b", "b", "a"], "score_a": [1, 1, 1]})
    >>> elo(df, smoothing=0.0)["rating"].round(3).tolist()  # a beat b twice in three: odds 2
    [120.412, 0.0]
    >>> elo([[0, 2], [1, 0]], smoothing=0.0, anchor="mean")["rating"].round(3).tolist()
    [60.206, -60.206]
    >>> from games import NormalFormGame
    >>> u = np.array([[0.0, 1.0, -1.0], [0.5, 0.0, 0.2], [-0.3, 0.4, 0.0]])   # rows and columns differ
    >>> two = elo(NormalFormGame.from_bimatrix(u, -u), single_population=False)
    >>> two.index.tolist()[:4], len(two)
    ([('p0', 's0'), ('p0', 's1'), ('p0', 's2'), ('p1', 's0')], 6)
    """
    if isinstance(data, (list, tuple)) and _is_ragged(data):
        raise ValueError("data is a ragged win matrix (rows of different lengths); give an (n, n) matrix whose "
                         "row i counts the matches agent i won against each agent.")
    if not isinstance(data, pd.DataFrame) and hasattr(data, "__len__") and np.size(data) == 0:
        raise ValueError(f"data is empty (shape {np.shape(data)}); Elo needs a win matrix of at least two agents "
                         "or match records (a DataFrame with agent_a, agent_b, score_a).")
    # the interval's coverage is checked whether or not a bootstrap asks for it, so a typo is never ignored
    confidence = check_real(confidence, "confidence", minimum=0.0, maximum=1.0, strict=True)
    _check_no_self_matches(data)
    counts = as_match_counts(data, draws, scores=scores, agents=agents, games_per_pair=games_per_pair,
                             argname="data", single_population=single_population)
    if isinstance(data, (np.ndarray, list, tuple)) and np.any(np.diag(counts.wins) != 0):
        i = int(np.flatnonzero(np.diag(counts.wins))[0])
        raise ValueError(f"data[{i}, {i}] = {counts.wins[i, i]:g}: a win matrix's diagonal counts self-matches, "
                         "which say nothing about ratings; set the diagonal to 0.")
    if not (np.isfinite(smoothing) and smoothing >= 0):
        raise ValueError(f"smoothing must be a finite number >= 0; got {smoothing}.")
    if not (np.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be > 0; got {scale}.")
    n = counts.num_agents
    if n < 2:
        raise ValueError(f"Elo needs at least two agents; got {n}.")
    base = counts.scores() + smoothing
    np.fill_diagonal(base, 0.0)
    theta = bradley_terry_strengths(base, method=method, tol=tol, max_iter=max_iter)
    ratings = _anchor(scale * theta / LN10, anchor, counts.agents, offset)
    games = counts.games()
    np.fill_diagonal(games, 0.0)
    two = all(isinstance(a, tuple) and len(a) == 2 for a in counts.agents) and single_population is False
    index = pd.MultiIndex.from_tuples(counts.agents, names=["population", "agent"]) if two else \
        pd.Index(counts.agents, name="agent")
    out = pd.DataFrame({"rating": ratings, "matches": games.sum(axis=1)}, index=index)
    if bootstrap:
        if int(bootstrap) != bootstrap or bootstrap < 2:
            raise ValueError(f"bootstrap must be 0 (off) or an integer >= 2; got {bootstrap}.")
        rng = np.random.default_rng(rng)
        chunk = max(1, int(2_000_000 // (n * n)))
        samples = []
        for start in range(0, int(bootstrap), chunk):
            resampled = _resample_counts(counts, min(chunk, int(bootstrap) - start), rng) + smoothing
            resampled[:, np.arange(n), np.arange(n)] = 0.0
            th = bradley_terry_strengths(resampled, method=method, tol=tol, max_iter=max_iter)
            samples.append(_anchor(scale * th / LN10, anchor, counts.agents, offset))
        samples = np.concatenate(samples)
        out["std"] = samples.std(axis=0, ddof=1)
        out["lower"] = np.quantile(samples, (1 - confidence) / 2, axis=0)
        out["upper"] = np.quantile(samples, (1 + confidence) / 2, axis=0)
    return out


def _is_ragged(rows) -> bool:
    """Whether nested lists have rows of different lengths (numpy would refuse them with its own message)."""
    lengths = {len(r) if isinstance(r, (list, tuple, np.ndarray)) else -1 for r in rows}
    return len(lengths) > 1


def _check_no_self_matches(data) -> None:
    """Refuse match records in which an agent plays itself (Elo rates agents against each other)."""
    if isinstance(data, pd.DataFrame) and {"agent_a", "agent_b"} <= set(data.columns):
        same = (data["agent_a"] == data["agent_b"]).to_numpy()
        if same.any():
            row = int(np.flatnonzero(same)[0])
            raise ValueError(
                f"data row {row} is a self-match ({data['agent_a'].iloc[row]!r} against itself), and "
                f"{int(same.sum())} row(s) in all; Elo rates agents against each other, so drop those rows "
                "(data[data.agent_a != data.agent_b])."
            )


def elo_win_probabilities(ratings, scale: float = 400.0) -> np.ndarray:
    """Elo's predicted probability that ``i`` beats ``j``: ``1 / (1 + 10**((r_j - r_i) / scale))``.

    Parameters
    ----------
    ratings : DataFrame with a "rating" column, Series or array_like (n,)
    scale : float

    Examples
    --------
    >>> elo_win_probabilities([400.0, 0.0]).round(4).tolist()
    [[0.5, 0.9091], [0.0909, 0.5]]
    """
    if isinstance(ratings, pd.DataFrame):
        if "rating" not in ratings.columns:
            raise ValueError("ratings DataFrame needs a 'rating' column (as returned by elo).")
        ratings = ratings["rating"]
    r = np.asarray(ratings, dtype=np.float64)
    if r.ndim != 1 or not np.all(np.isfinite(r)):
        raise ValueError("ratings must be a finite 1-D array of ratings.")
    return 1.0 / (1.0 + 10.0 ** ((r[None, :] - r[:, None]) / scale))


# --------------------------------------------------------------------------- online Elo
def _online(matches: pd.DataFrame, k: float, initial: float, scale: float, scores: ScoreKind,
            agents: Sequence | None):
    if not (np.isfinite(k) and k > 0):
        raise ValueError(f"k must be a positive K factor (e.g. 32); got {k}.")
    if not (np.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be > 0; got {scale}.")
    if not np.isfinite(initial):
        raise ValueError(f"initial must be a finite rating; got {initial}.")
    m = match_outcomes(matches, scores=scores, agents=agents)
    ratings = [float(initial)] * len(m.agents)
    ia, ib, sa = m.index_a.tolist(), m.index_b.tolist(), m.outcome_a.tolist()
    before_a, before_b, expected = [], [], []
    for a, b, s in zip(ia, ib, sa):  # sequential by nature: each update uses the previous ratings
        ra, rb = ratings[a], ratings[b]
        e = 1.0 / (1.0 + 10.0 ** ((rb - ra) / scale))
        delta = k * (s - e)
        ratings[a] += delta
        ratings[b] -= delta
        before_a.append(ra)
        before_b.append(rb)
        expected.append(e)
    return m, np.array(ratings), np.array(before_a), np.array(before_b), np.array(expected)


def online_elo(matches: pd.DataFrame, k: float = 32.0, initial: float = 1500.0, scale: float = 400.0,
               scores: ScoreKind = "auto", agents: Sequence | None = None) -> pd.DataFrame:
    """Classic online Elo: update both ratings after every match, in row order.

    After a match with expected score ``E_a = 1 / (1 + 10**((R_b - R_a) / scale))``
    and result ``S_a`` (1, 0.5, 0): ``R_a += k (S_a - E_a)`` and ``R_b -= k (S_a - E_a)``.

    Parameters
    ----------
    matches : DataFrame
        Match records (see :mod:`ranking.match_records`), in the order played.
    k : float
        K factor.
    initial : float
        Everyone's starting rating.
    scale : float
        Rating points per factor 10 in odds.
    scores, agents
        As in :func:`ranking.match_records.match_outcomes`.

    Returns
    -------
    DataFrame
        Indexed by agent: ``rating`` and ``matches`` played.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"agent_a": ["a"], "agent_b": ["b"], "score_a": [1.0]})
    >>> online_elo(df, k=32)["rating"].tolist()
    [1516.0, 1484.0]
    """
    m, ratings, *_ = _online(matches, k, initial, scale, scores, agents)
    played = np.bincount(m.index_a, minlength=len(m.agents)) + np.bincount(m.index_b, minlength=len(m.agents))
    return pd.DataFrame({"rating": ratings, "matches": played}, index=pd.Index(m.agents, name="agent"))


def online_elo_history(matches: pd.DataFrame, k: float = 32.0, initial: float = 1500.0, scale: float = 400.0,
                       scores: ScoreKind = "auto", agents: Sequence | None = None) -> pd.DataFrame:
    """The rating history of :func:`online_elo`: one row per match, in order.

    Returns
    -------
    DataFrame
        Columns ``agent_a``, ``agent_b``, ``outcome_a``, ``expected_a``,
        ``rating_a_before``, ``rating_b_before``, ``rating_a_after``, ``rating_b_after``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"agent_a": ["a", "a"], "agent_b": ["b", "b"], "score_a": [1.0, 0.0]})
    >>> online_elo_history(df)["rating_a_after"].round(2).tolist()
    [1516.0, 1498.53]
    """
    m, _, ra, rb, e = _online(matches, k, initial, scale, scores, agents)
    delta = k * (m.outcome_a - e)
    labels = np.array(m.agents, dtype=object)
    return pd.DataFrame({
        "agent_a": labels[m.index_a], "agent_b": labels[m.index_b], "outcome_a": m.outcome_a,
        "expected_a": e, "rating_a_before": ra, "rating_b_before": rb,
        "rating_a_after": ra + delta, "rating_b_after": rb - delta,
    })
