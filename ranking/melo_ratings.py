"""Multidimensional Elo (mElo) of Balduzzi et al. (2018), "Re-evaluating Evaluation".

mElo_2k gives each agent ``i`` a rating ``r_i`` and a vector ``c_i`` in R^{2k} and
predicts

    P(i beats j) = sigma(r_i - r_j + c_i^T Omega c_j),

where ``sigma`` is the logistic function and ``Omega = sum_l (e_{2l} e_{2l+1}^T -
e_{2l+1} e_{2l}^T)`` is the block antisymmetric matrix. The ``c`` term captures
cyclic (intransitive) structure such as rock-paper-scissors, which Elo cannot.

Units: ``r`` and ``c`` live in logits internally; the reported ``rating`` column
is ``r`` in Elo points, ``rating = scale / ln(10) * r`` (400 per factor 10 in
odds), with mean 0. The vectors ``c`` stay in logit units.

Two fits:

* :func:`melo`: batch maximum likelihood on the win/draw counts (draws count as
  half a win each), by L-BFGS with the analytic gradient.
* :func:`online_melo`: the paper's online update, match by match.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import minimize
from scipy.special import expit

from ranking.match_records import ScoreKind, as_match_counts, match_outcomes

__all__ = ["MElo", "melo", "omega", "online_melo"]

logger = logging.getLogger(__name__)
LN10 = np.log(10.0)


def omega(k: int) -> np.ndarray:
    """The ``2k x 2k`` block antisymmetric matrix ``Omega`` of mElo_2k.

    Examples
    --------
    >>> omega(1).tolist()
    [[0.0, 1.0], [-1.0, 0.0]]
    """
    if int(k) != k or k < 1:
        raise ValueError(f"k (number of 2-D blocks) must be an integer >= 1; got {k}.")
    k = int(k)
    out = np.zeros((2 * k, 2 * k))
    even = np.arange(0, 2 * k, 2)
    out[even, even + 1] = 1.0
    out[even + 1, even] = -1.0
    return out


@dataclass(frozen=True)
class MElo:
    """A fitted mElo_2k model.

    Attributes
    ----------
    agents : tuple
        Agent labels.
    rating : ndarray, shape (n,)
        Transitive ratings in Elo points (mean 0).
    vectors : ndarray, shape (n, 2k)
        The cyclic vectors ``c_i`` (logit units).
    scale : float
        Elo points per factor 10 in odds.
    info : dict
        Fit details: ``method``, ``log_likelihood``, ``converged``, ``iterations``.
    """

    agents: tuple
    rating: np.ndarray
    vectors: np.ndarray
    scale: float = 400.0
    info: dict | None = None

    def logits(self) -> np.ndarray:
        """Predicted log-odds ``r_i - r_j + c_i^T Omega c_j`` (antisymmetric), shape (n, n)."""
        r = self.rating * LN10 / self.scale
        c = self.vectors
        return r[:, None] - r[None, :] + c @ omega(c.shape[1] // 2) @ c.T

    def win_probabilities(self) -> np.ndarray:
        """Predicted ``P(i beats j)``, shape (n, n); ``P + P.T = 1``.

        Examples
        --------
        >>> m = MElo(("a", "b"), np.array([200.0, -200.0]), np.zeros((2, 2)))
        >>> m.win_probabilities().round(4).tolist()
        [[0.5, 0.9091], [0.0909, 0.5]]
        """
        return expit(self.logits())

    def to_frame(self) -> pd.DataFrame:
        """Ratings and vectors as a DataFrame indexed by agent (columns ``rating``, ``c0``, ``c1``, ...)."""
        cols = {"rating": self.rating}
        cols.update({f"c{d}": self.vectors[:, d] for d in range(self.vectors.shape[1])})
        return pd.DataFrame(cols, index=pd.Index(self.agents, name="agent"))


def _unpack(x: np.ndarray, n: int, k: int) -> tuple:
    return x[:n], x[n:].reshape(n, 2 * k)


def _objective(x: np.ndarray, scores: np.ndarray, om: np.ndarray, l2: float) -> tuple:
    """Negative log-likelihood sum_ij S_ij log sigma(L_ij) (+ ridge on c) and its gradient."""
    n = scores.shape[0]
    r, c = _unpack(x, n, om.shape[0] // 2)
    logits = r[:, None] - r[None, :] + c @ om @ c.T
    nll = (scores * np.logaddexp(0.0, -logits)).sum() + 0.5 * l2 * (c * c).sum()
    m = scores * expit(-logits)  # d(-nll)/dL_ij
    grad_r = m.sum(axis=0) - m.sum(axis=1)
    grad_c = -(m.T - m) @ c @ om + l2 * c
    return nll, np.concatenate([grad_r, grad_c.ravel()])


def melo(
    data,
    draws=None,
    *,
    k: int = 1,
    smoothing: float = 0.01,
    l2: float = 0.0,
    scale: float = 400.0,
    restarts: int = 3,
    rng: np.random.Generator | int | None = 0,
    tol: float = 1e-10,
    max_iter: int = 5000,
    scores: ScoreKind = "auto",
    agents: Sequence | None = None,
    games_per_pair: float = 1.0,
) -> MElo:
    """Fit mElo_2k by maximum likelihood on win/draw counts.

    Parameters
    ----------
    data : DataFrame, array_like (n, n), NormalFormGame or EmpiricalGame
        As in :func:`ranking.elo`: match records, a win matrix (with ``draws``) or
        a symmetric game of win probabilities.
    draws : array_like (n, n), optional
        Symmetric draw counts, only with a win matrix.
    k : int
        Number of 2-D blocks (the vectors have ``2k`` entries).
    smoothing : float
        Pseudo-wins added to every ordered pair, as in :func:`ranking.elo`.
    l2 : float
        Ridge penalty ``l2/2 * ||C||^2`` on the vectors (0: pure likelihood).
    scale : float
        Elo points per factor 10 in odds, for the ``rating`` output.
    restarts : int
        Random initialisations of ``C`` (the likelihood is not concave in ``C``;
        ``C = 0`` is a saddle point); the best fit is kept.
    rng : numpy Generator or int, optional
        Randomness of the initialisations.
    tol, max_iter
        L-BFGS stopping rule (projected-gradient tolerance and iteration cap).
    scores, agents, games_per_pair
        As in :func:`ranking.elo`.

    Returns
    -------
    MElo

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([[0.5, 0.9, 0.1], [0.1, 0.5, 0.9], [0.9, 0.1, 0.5]])  # cyclic
    >>> fit = melo(100 * p * (1 - np.eye(3)), smoothing=0.0)
    >>> bool(np.allclose(fit.win_probabilities(), p, atol=1e-6))
    True
    """
    counts = as_match_counts(data, draws, scores=scores, agents=agents, games_per_pair=games_per_pair,
                             argname="data")
    if int(k) != k or k < 1:
        raise ValueError(f"k (number of 2-D blocks) must be an integer >= 1; got {k}.")
    if not (np.isfinite(smoothing) and smoothing >= 0):
        raise ValueError(f"smoothing must be a finite number >= 0; got {smoothing}.")
    if not (np.isfinite(l2) and l2 >= 0):
        raise ValueError(f"l2 must be a finite number >= 0; got {l2}.")
    if int(restarts) != restarts or restarts < 1:
        raise ValueError(f"restarts must be an integer >= 1; got {restarts}.")
    n = counts.num_agents
    if n < 2:
        raise ValueError(f"mElo needs at least two agents; got {n}.")
    s = counts.scores() + smoothing
    np.fill_diagonal(s, 0.0)
    om = omega(int(k))
    rng = np.random.default_rng(rng)
    best = None
    for _ in range(int(restarts)):
        x0 = np.concatenate([np.zeros(n), 0.5 * rng.standard_normal(n * 2 * int(k))])
        res = minimize(_objective, x0, args=(s, om, l2), jac=True, method="L-BFGS-B",
                       options={"maxiter": max_iter, "gtol": tol, "ftol": 1e-15, "maxcor": 30})
        if best is None or res.fun < best.fun:
            best = res
    r, c = _unpack(best.x, n, int(k))
    r = r - r.mean()
    grad_norm = float(np.abs(_objective(best.x, s, om, l2)[1]).max())
    converged = bool(best.success) or grad_norm < 1e-6 * max(1.0, float(s.sum()))
    if not converged:
        logger.warning("mElo L-BFGS stopped without converging: %s (max |grad| %.3g).", best.message, grad_norm)
    return MElo(agents=counts.agents, rating=scale * r / LN10, vectors=c.copy(), scale=float(scale),
                info={"method": "maximum_likelihood", "log_likelihood": -float(best.fun),
                      "converged": converged, "iterations": int(best.nit), "max_abs_gradient": grad_norm})


def online_melo(
    matches: pd.DataFrame,
    *,
    k: int = 1,
    lr_rating: float = 16.0,
    lr_vector: float = 0.05,
    scale: float = 400.0,
    init_scale: float = 0.1,
    rng: np.random.Generator | int | None = 0,
    scores: ScoreKind = "auto",
    agents: Sequence | None = None,
) -> MElo:
    """Fit mElo_2k online with the update rule of Balduzzi et al. (2018), one match at a time.

    For a match ``i`` vs ``j`` with result ``S`` (1, 0.5, 0) and prediction
    ``p = sigma(r_i - r_j + c_i^T Omega c_j)``, with ``delta = S - p``::

        r_i += a * delta,            r_j -= a * delta
        c_i += lr_vector * delta * Omega c_j
        c_j -= lr_vector * delta * Omega c_i       (old c_i, c_j on the right)

    where ``a = lr_rating * ln(10) / scale`` turns the Elo-point step
    ``lr_rating`` (the paper's eta_r = 16) into logits.

    Parameters
    ----------
    matches : DataFrame
        Match records in the order played.
    k : int
        Number of 2-D blocks.
    lr_rating : float
        Rating step in Elo points (an Elo K factor).
    lr_vector : float
        Step of the vectors, in logit units.
    scale : float
        Elo points per factor 10 in odds.
    init_scale : float
        Standard deviation of the random initial vectors (``C = 0`` never moves).
    rng : numpy Generator or int, optional
        Randomness of the initial vectors.
    scores, agents
        As in :func:`ranking.match_records.match_outcomes`.

    Returns
    -------
    MElo

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"agent_a": ["a"], "agent_b": ["b"], "score_a": [1.0]})
    >>> online_melo(df, init_scale=0.0).rating.round(6).tolist()
    [8.0, -8.0]
    """
    if int(k) != k or k < 1:
        raise ValueError(f"k (number of 2-D blocks) must be an integer >= 1; got {k}.")
    for name, value in (("lr_rating", lr_rating), ("lr_vector", lr_vector), ("init_scale", init_scale)):
        if not (np.isfinite(value) and value >= 0):
            raise ValueError(f"{name} must be a finite number >= 0; got {value}.")
    if not (np.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be > 0; got {scale}.")
    m = match_outcomes(matches, scores=scores, agents=agents)
    n = len(m.agents)
    om = omega(int(k))
    rng = np.random.default_rng(rng)
    r = np.zeros(n)
    c = init_scale * rng.standard_normal((n, 2 * int(k)))
    a_step = lr_rating * LN10 / scale
    for i, j, s in zip(m.index_a.tolist(), m.index_b.tolist(), m.outcome_a.tolist()):  # sequential updates
        ci, cj = c[i].copy(), c[j].copy()
        delta = s - expit(r[i] - r[j] + ci @ om @ cj)
        r[i] += a_step * delta
        r[j] -= a_step * delta
        c[i] = ci + lr_vector * delta * (om @ cj)
        c[j] = cj - lr_vector * delta * (om @ ci)
    return MElo(agents=m.agents, rating=scale * (r - r.mean()) / LN10, vectors=c, scale=float(scale),
                info={"method": "online", "matches": len(m.outcome_a)})
