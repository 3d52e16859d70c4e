"""How sure is an alpha-Rank ranking when payoffs are only known up to confidence intervals?

Two complementary answers (Rowland et al. 2019, "Multiagent Evaluation under
Incomplete Information", on propagating payoff uncertainty to alpha-Rank):

1. :func:`alpharank_mass_bounds` -- the range of each profile's (and each
   agent's) alpha-Rank mass over *all* payoff tables inside the interval box
   ``lower <= payoffs <= upper``, at a finite ``alpha``. Computing that range
   exactly is a non-convex optimisation; we return two brackets of it:

   - **outer** (sound: the true range lies inside). Every transition
     probability of the alpha-Rank chain is monotone in the payoff gain of the
     move, so the box gives an element-wise lower bound ``L`` on the transition
     matrix ``C`` (fixation at the least favourable gain; self-loops at one
     minus the largest possible outflow). Writing ``C = L + R`` with ``R >= 0``,
     the stationary distribution satisfies ``pi = (pi R) (I - L)^{-1}``, and
     ``pi R`` is a non-negative combination of rows ``j`` with slack
     ``1 - sum_t L[j, t] > 0``. Hence ``pi`` lies in the convex hull of the
     normalised rows ``N_j / (N_j 1)`` of ``N = (I - L)^{-1}`` over those
     rows (Courtois and Semal, 1984), and the mass of any set ``A`` of
     profiles lies between ``min_j`` and ``max_j`` of ``(N 1_A)_j / (N 1)_j``
     -- a ratio of linear functions, extreme at a vertex. The bound ignores that
     transitions are coupled through shared payoffs, so it is an *outer*
     approximation; it tightens to the point value as the intervals shrink.
   - **inner** (attained: the true range contains it): the minimum and maximum
     masses of alpha-Rank evaluated at the point estimate and at searched
     vertices of the box -- for each agent, the vertex that favours it (its
     payoffs at their upper ends, the other strategies of its population at
     their lower ends) and the one that disfavours it, plus ``num_random``
     random vertices.

   The exact range lies between the two. Supported: multi-population chains
   and single-population chains with the local selection model (OpenSpiel's
   default), at finite ``alpha``.

2. :func:`bootstrap_alpharank` -- a parametric bootstrap. The
   :class:`~games.EmpiricalGame` keeps only counts, sums and sums of squares,
   so samples cannot be resampled directly; instead each profile's mean is
   redrawn from the sampling distribution implied by them: binomial
   ``Binomial(n, p_hat) / n`` (rescaled to the payoff range) when every sample
   was ``lo`` or ``hi``, otherwise normal with the sample mean and standard
   error ``s / sqrt(n)``. Two-player constant-sum games (means summing to the
   same constant at every profile) redraw player 0 and set player 1 to the
   constant minus it. Exact profiles stay fixed. alpha-Rank is recomputed on
   each redrawn table; percentile intervals and :func:`ranking_stability`
   (probability that the top-k set is unchanged) summarise the draws.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import linalg

from games.empirical import EmpiricalGame
from games.normal_form import NormalFormGame
from games.validation import check_int
from ranking.alpha_rank.alpharank_chain import fixation, multi_population_moves
from ranking.alpha_rank.alpharank_ranking import alpharank, payoff_tables
from ranking.confidence_bounds import confidence_bounds

__all__ = [
    "BootstrapResult",
    "MassBounds",
    "alpharank_mass_bounds",
    "bootstrap_alpharank",
    "payoff_intervals",
    "ranking_stability",
]

logger = logging.getLogger(__name__)


# ------------------------------------------------------------------- intervals
def payoff_intervals(eg: EmpiricalGame, delta: float = 0.05, bound: str = "hoeffding", payoff_range=None):
    """Per-entry confidence intervals ``(lower, upper)`` on an empirical game's payoffs.

    Parameters
    ----------
    eg : EmpiricalGame
        Every profile needs samples (or an exact value).
    delta : float
        Error probability per entry.
    bound : str
        A bound of :mod:`ranking.confidence_bounds` (``"hoeffding"``, ``"bernstein"``,
        ``"clopper-pearson"``).
    payoff_range : (float, float), optional
        Range of one outcome; defaults to the smallest and largest possible
        values seen, ``[min mean, max mean]`` widened to ``[0, 1]`` if inside it.

    Returns
    -------
    lower, upper : ndarray, shape (num_players, k_1, ..., k_n)
        Exact profiles have ``lower == upper``.

    Examples
    --------
    >>> eg = EmpiricalGame((1, 2))
    >>> eg.add_samples((0, 0), [[1, 0]] * 50 + [[0, 1]] * 50)
    >>> eg.set_exact((0, 1), [0.3, 0.7])
    >>> lo, up = payoff_intervals(eg, delta=0.1)
    >>> round(float(up[0, 0, 0] - 0.5), 4), float(up[0, 0, 1] - lo[0, 0, 1])
    (0.1224, 0.0)
    """
    if not isinstance(eg, EmpiricalGame):
        raise TypeError(f"eg must be an EmpiricalGame; got {type(eg).__name__}.")
    if not eg.is_complete():
        raise ValueError(f"{len(eg.missing_profiles())} profiles have no samples; evaluate them first.")
    if payoff_range is None:
        m = eg.mean()
        payoff_range = (min(0.0, float(m.min())), max(1.0, float(m.max())))
    cb = confidence_bounds(eg.count, eg.total, eg.total_sq, delta=delta, bound=bound, payoff_range=payoff_range)
    lower = np.where(eg.exact[None], cb.mean, cb.lower)
    upper = np.where(eg.exact[None], cb.mean, cb.upper)
    return lower, upper


# ------------------------------------------------------------------ propagation
@dataclass(frozen=True)
class MassBounds:
    """Bounds on alpha-Rank masses over a payoff box (see the module docstring).

    Attributes
    ----------
    point : ndarray
        ``pi`` at the point estimate (profiles in C order, or strategies for a
        single population).
    outer_lower, outer_upper : ndarray
        Sound bounds on each entry of ``pi`` over the box.
    inner_lower, inner_upper : ndarray
        Masses attained inside the box (the exact range contains them).
    agents : pandas.DataFrame
        One row per agent (population, strategy): ``point``, ``inner_lower``,
        ``inner_upper``, ``outer_lower``, ``outer_upper`` for its marginal mass.
    info : dict
        ``single_population``, ``alpha``, ``population_size``, number of tables evaluated.
    """

    point: np.ndarray
    outer_lower: np.ndarray
    outer_upper: np.ndarray
    inner_lower: np.ndarray
    inner_upper: np.ndarray
    agents: pd.DataFrame
    info: dict = field(default_factory=dict)


def _is_single(point: np.ndarray, single_population) -> bool:
    """The chain :func:`ranking.alpharank` would use, decided once from the point estimate."""
    if single_population is None:
        return payoff_tables(NormalFormGame(point)).single_population
    single = bool(single_population)
    if single and (point.shape[0] != 2 or point.shape[1] != point.shape[2]):
        raise ValueError("single_population=True needs a two-player game with square payoff tables.")
    return single


def _rank(payoffs: np.ndarray, single: bool, alpha: float, m: int) -> np.ndarray:
    """alpha-Rank's pi; a single population uses the row player's table ``payoffs[0]``."""
    if single:
        return alpharank(payoffs[0], alpha=alpha, population_size=m, single_population=True).pi
    return alpharank(list(payoffs), alpha=alpha, population_size=m, single_population=False).pi


def _lower_transitions(lo_t: np.ndarray, up_t: np.ndarray, single: bool, alpha: float, m: int) -> np.ndarray:
    """Element-wise lower bound ``L`` on the alpha-Rank transition matrix over the payoff box."""
    if single:
        a_lo, a_up = lo_t[0], up_t[0]
        k = a_lo.shape[0]
        eta = 1.0 / (k - 1) if k > 1 else 1.0
        # move s -> r (mutant r): gain = A[r, s] - A[s, r]
        gain_lo = a_lo.T - a_up
        gain_hi = a_up.T - a_lo
        low = eta * fixation(alpha * gain_lo, m)
        high = eta * fixation(alpha * gain_hi, m)
        np.fill_diagonal(low, 0.0)
        np.fill_diagonal(high, 0.0)
        L = low
        np.fill_diagonal(L, np.maximum(0.0, 1.0 - high.sum(axis=1)))
        return L
    shape = lo_t.shape[1:]
    S = int(np.prod(shape))
    eta = 1.0 / sum(k - 1 for k in shape) if S > 1 else 1.0
    src, dst, _, pop = multi_population_moves(lo_t)
    lo_f, up_f = lo_t.reshape(len(shape), -1), up_t.reshape(len(shape), -1)
    gain_lo = lo_f[pop, dst] - up_f[pop, src]
    gain_hi = up_f[pop, dst] - lo_f[pop, src]
    L = np.zeros((S, S))
    np.add.at(L, (src, dst), eta * fixation(alpha * gain_lo, m))
    out_hi = np.bincount(src, weights=eta * fixation(alpha * gain_hi, m), minlength=S)
    L[np.arange(S), np.arange(S)] += np.maximum(0.0, 1.0 - out_hi)
    return L


def _groups(shape: tuple, single: bool) -> tuple:
    """Indicator matrix (states x agents) and agent labels (population, strategy index)."""
    if single:
        k = shape[0]
        return np.eye(k), [(0, i) for i in range(k)]
    S = int(np.prod(shape))
    coords = np.unravel_index(np.arange(S), shape)
    cols, labels = [], []
    for p, k in enumerate(shape):
        for i in range(k):
            cols.append(coords[p] == i)
            labels.append((p, i))
    return np.stack(cols, axis=1).astype(float), labels


def _outer_bounds(L: np.ndarray, groups: np.ndarray, point: np.ndarray, point_groups: np.ndarray):
    """Courtois-Semal bounds for every state and every group; the point where there is no slack."""
    S = L.shape[0]
    slack = 1.0 - L.sum(axis=1)
    rows = slack > 1e-15
    if not rows.any():
        return point, point, point_groups, point_groups
    try:
        N = linalg.solve(np.eye(S) - L, np.eye(S), check_finite=True)
    except (linalg.LinAlgError, ValueError):
        logger.warning("the lower-bound chain is singular; returning the trivial outer bounds [0, 1]")
        return np.zeros(S), np.ones(S), np.zeros(groups.shape[1]), np.ones(groups.shape[1])
    N = N[rows]
    total = N.sum(axis=1, keepdims=True)
    state_share = N / total
    group_share = (N @ groups) / total
    return (
        np.clip(state_share.min(axis=0), 0, 1), np.clip(state_share.max(axis=0), 0, 1),
        np.clip(group_share.min(axis=0), 0, 1), np.clip(group_share.max(axis=0), 0, 1),
    )


def _inner_vertices(lower: np.ndarray, upper: np.ndarray, labels: list, single: bool, num_random: int,
                    gen: np.random.Generator) -> list:
    """The vertices of the payoff box the inner search ranks (none when the box is a point): for each agent, the
    table that gives it its upper payoffs and everyone else their lower ones, and the reverse; then ``num_random``
    random vertices (a single population's column copy mirrors the row player's table)."""
    candidates = []
    if not np.any(upper > lower):
        return candidates
    n = lower.shape[0]
    for p, i in labels:
        if single:
            favour = np.zeros_like(lower, dtype=bool)
            favour[:, i, :] = True  # row strategy i's payoffs (player 0) ...
            favour[1, :, i] = True  # ... and the column copy for player 1
        else:
            own = np.zeros(lower.shape[1:], dtype=bool)
            idx = [slice(None)] * n
            idx[p] = i
            own[tuple(idx)] = True
            favour = np.zeros_like(lower, dtype=bool)
            favour[p] = own
        for sign in (True, False):
            table = np.where(favour, upper if sign else lower, lower if sign else upper)
            if single:
                table = table.copy()
                table[1] = table[0].T
            candidates.append(table)
    for _ in range(num_random):
        table = np.where(gen.random(lower.shape) < 0.5, lower, upper)
        if single:
            table[1] = table[0].T
        candidates.append(table)
    return candidates


def alpharank_mass_bounds(
    intervals,
    point=None,
    *,
    alpha: float = 100.0,
    population_size: int = 50,
    single_population: bool | None = None,
    num_random: int = 16,
    rng=None,
) -> MassBounds:
    """Outer (sound) and inner (attained) bounds on alpha-Rank masses over a payoff box.

    Parameters
    ----------
    intervals : (lower, upper) or EmpiricalGame
        Payoff intervals, arrays of shape ``(num_players, k_1, ..., k_n)``; an
        EmpiricalGame is turned into them by :func:`payoff_intervals` (Hoeffding,
        ``delta=0.05``).
    point : array_like, optional
        The point estimate inside the box (default: the empirical means, or the
        midpoint of the box).
    alpha, population_size :
        alpha-Rank's selection intensity (finite) and population size.
    single_population : bool, optional
        As in :func:`ranking.alpharank`; inferred from the point estimate.
    num_random : int
        Random box vertices added to the inner search.
    rng : int or Generator, optional

    Returns
    -------
    MassBounds

    Examples
    --------
    >>> a = np.array([[0.5, 0.8], [0.2, 0.5]])
    >>> lo, up = np.stack([a, a.T]) - 0.05, np.stack([a, a.T]) + 0.05
    >>> b = alpharank_mass_bounds((lo, up), alpha=5.0, population_size=10, single_population=True, rng=0)
    >>> bool(np.all(b.outer_lower <= b.inner_lower)) and bool(np.all(b.inner_upper <= b.outer_upper))
    True
    >>> bool(np.all((b.inner_lower <= b.point) & (b.point <= b.inner_upper)))
    True
    """
    if isinstance(intervals, EmpiricalGame):
        if point is None:
            point = intervals.mean()
        intervals = payoff_intervals(intervals)
    try:
        lower, upper = (np.asarray(x, dtype=float) for x in intervals)
    except (TypeError, ValueError):
        raise TypeError("intervals must be a pair (lower, upper) of payoff arrays or an EmpiricalGame.") from None
    if lower.shape != upper.shape or lower.ndim < 2 or lower.ndim != lower.shape[0] + 1:
        raise ValueError(
            f"lower and upper must share a shape (num_players, k_1, ..., k_n); got {lower.shape} and {upper.shape}."
        )
    if not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))):
        raise ValueError("payoff intervals must be finite; evaluate every profile (or bound the payoff range).")
    if np.any(lower > upper):
        raise ValueError("every lower bound must be <= its upper bound.")
    if not (np.isfinite(alpha) and alpha >= 0):
        raise ValueError(f"alpha must be finite and >= 0 for mass bounds; got {alpha!r}.")
    point = (lower + upper) / 2 if point is None else np.asarray(point, dtype=float)
    if point.shape != lower.shape or np.any(point < lower - 1e-12) or np.any(point > upper + 1e-12):
        raise ValueError("point must have the payoffs' shape and lie inside [lower, upper].")
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    single = _is_single(point, single_population)
    shape = point.shape[1:2] if single else point.shape[1:]

    def rank(payoffs) -> np.ndarray:
        return _rank(payoffs, single, float(alpha), int(population_size))

    pi0 = rank(point)
    groups, labels = _groups(shape, single)
    lo_t = lower[:1] if single else lower
    up_t = upper[:1] if single else upper
    L = _lower_transitions(lo_t, up_t, single, float(alpha), int(population_size))
    o_lo, o_up, og_lo, og_up = _outer_bounds(L, groups, pi0, pi0 @ groups)

    # Inner search: the point, agent-favouring and -disfavouring vertices, random vertices.
    candidates = _inner_vertices(lower, upper, labels, single, int(num_random), gen)
    pis = np.array([pi0] + [rank(t) for t in candidates])
    i_lo, i_up = pis.min(axis=0), pis.max(axis=0)
    marg = pis @ groups
    ig_lo, ig_up = marg.min(axis=0), marg.max(axis=0)
    # The outer bracket contains the attained values up to round-off.
    o_lo, o_up = np.minimum(o_lo, i_lo), np.maximum(o_up, i_up)
    og_lo, og_up = np.minimum(og_lo, ig_lo), np.maximum(og_up, ig_up)
    agents = pd.DataFrame(
        {
            "population": [p for p, _ in labels],
            "strategy": [f"s{i}" for _, i in labels],
            "point": pi0 @ groups,
            "inner_lower": ig_lo,
            "inner_upper": ig_up,
            "outer_lower": og_lo,
            "outer_upper": og_up,
        }
    )
    return MassBounds(
        point=pi0, outer_lower=o_lo, outer_upper=o_up, inner_lower=i_lo, inner_upper=i_up, agents=agents,
        info={"single_population": single, "alpha": alpha, "population_size": population_size,
              "tables_evaluated": len(pis)},
    )


# -------------------------------------------------------------------- bootstrap
@dataclass(frozen=True)
class BootstrapResult:
    """alpha-Rank over parametric-bootstrap redraws of an empirical game.

    Attributes
    ----------
    point : ndarray
        ``pi`` at the sample means.
    samples : ndarray, shape (num_bootstrap, num_states)
        ``pi`` for each redrawn table.
    lower, upper : ndarray
        Percentile interval at level ``1 - level`` per state.
    labels : list of str
        State names (strategies, or profiles joined by ``|``).
    stability : pandas.DataFrame
        :func:`ranking_stability` of the draws against the point ranking.
    """

    point: np.ndarray
    samples: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    labels: list
    stability: pd.DataFrame


def _redraw(eg: EmpiricalGame, num: int, gen: np.random.Generator, payoff_range) -> np.ndarray:
    """``num`` redrawn mean tables, shape (num, num_players, k_1, ..., k_n)."""
    n = eg.num_players
    cnt, mean = eg.count, eg.mean()
    lo, hi = payoff_range
    k = (eg.total - cnt * lo) / (hi - lo)  # successes if outcomes are lo/hi
    binary_sq = cnt * lo * lo + (hi * hi - lo * lo) * k
    binary = np.isclose(eg.total_sq, binary_sq, rtol=1e-9, atol=1e-9) & np.isclose(k, np.rint(k), atol=1e-6)
    se = np.nan_to_num(eg.standard_error(), nan=0.0)
    sums = mean.sum(axis=0)
    constant_sum = n == 2 and bool(np.allclose(sums, sums.flat[0], atol=1e-9)) and bool(
        np.array_equal(cnt[0], cnt[1]))
    draws = np.empty((num, *mean.shape))
    players = [0] if constant_sum else range(n)
    for p in players:
        c = cnt[p].astype(np.int64)
        prob = np.clip(k[p] / np.maximum(c, 1), 0, 1)
        binom = lo + (hi - lo) * gen.binomial(c, prob, size=(num, *c.shape)) / np.maximum(c, 1)
        normal = mean[p] + se[p] * gen.standard_normal((num, *c.shape))
        draws[:, p] = np.where(binary[p], binom, normal)
        draws[:, p] = np.where(eg.exact, mean[p], draws[:, p])
    if constant_sum:
        draws[:, 1] = sums.flat[0] - draws[:, 0]
    return draws


def ranking_stability(point: np.ndarray, samples: np.ndarray, k_max: int | None = None) -> pd.DataFrame:
    """Probability that the top-k set of ``samples`` equals that of ``point``, for k = 1..k_max.

    Parameters
    ----------
    point : ndarray, shape (num_states,)
    samples : ndarray, shape (num_draws, num_states)
    k_max : int, optional
        Defaults to ``min(10, num_states)``.

    Returns
    -------
    pandas.DataFrame
        Columns ``k``, ``top_k`` (the point's top-k labels as indices) and
        ``p_unchanged``.

    Examples
    --------
    >>> point = np.array([0.5, 0.3, 0.2])
    >>> draws = np.array([[0.5, 0.3, 0.2], [0.3, 0.5, 0.2], [0.6, 0.1, 0.3]])
    >>> ranking_stability(point, draws, k_max=2)["p_unchanged"].round(3).tolist()  # top-2 {0, 1} kept by 2 of 3
    [0.667, 0.667]
    """
    point = np.asarray(point, dtype=float)
    samples = np.atleast_2d(np.asarray(samples, dtype=float))
    if samples.shape[1] != point.shape[0]:
        raise ValueError(f"samples must have shape (num_draws, {point.shape[0]}); got {samples.shape}.")
    k_max = min(10, len(point)) if k_max is None else int(k_max)
    if not 1 <= k_max <= len(point):
        raise ValueError(f"k_max must be in [1, {len(point)}]; got {k_max}.")
    order_point = np.argsort(-point, kind="stable")
    order_draws = np.argsort(-samples, axis=1, kind="stable")
    rows = []
    for k in range(1, k_max + 1):
        top = np.zeros(len(point), dtype=bool)
        top[order_point[:k]] = True
        same = top[order_draws[:, :k]].all(axis=1)
        rows.append({"k": k, "top_k": order_point[:k].tolist(), "p_unchanged": float(same.mean())})
    return pd.DataFrame(rows)


def bootstrap_alpharank(
    eg: EmpiricalGame,
    num_bootstrap: int = 200,
    *,
    alpha: float = 100.0,
    population_size: int = 50,
    single_population: bool | None = None,
    level: float = 0.05,
    payoff_range=None,
    k_max: int | None = None,
    rng=None,
) -> BootstrapResult:
    """Percentile intervals on alpha-Rank masses from a parametric bootstrap of the payoffs.

    Parameters
    ----------
    eg : EmpiricalGame
        Counts, sums and sums of squares (every profile evaluated).
    num_bootstrap : int
        Number of redrawn tables.
    alpha, population_size, single_population :
        As in :func:`ranking.alpharank`; ``single_population`` is inferred once
        from the means and kept for every draw.
    level : float
        Intervals cover ``1 - level`` (percentiles ``level/2`` and ``1 - level/2``).
    payoff_range : (float, float), optional
        Outcome range used to recognise Bernoulli samples (default ``(0, 1)``).
    k_max : int, optional
        Largest k of the stability report.
    rng : int or Generator, optional

    Returns
    -------
    BootstrapResult

    Examples
    --------
    >>> eg = EmpiricalGame((2, 2))
    >>> for prof, p in {(0, 0): 0.5, (0, 1): 0.8, (1, 0): 0.2, (1, 1): 0.5}.items():
    ...     wins = int(p * 100)
    ...     eg.add_samples(prof, [[1, 0]] * wins + [[0, 1]] * (100 - wins))
    >>> b = bootstrap_alpharank(eg, 50, alpha=5.0, population_size=10, single_population=True, rng=0)
    >>> b.labels, bool(np.all((b.lower <= b.point) & (b.point <= b.upper)))
    (['s0', 's1'], True)
    """
    if not isinstance(eg, EmpiricalGame):
        raise TypeError(f"eg must be an EmpiricalGame; got {type(eg).__name__}.")
    if not eg.is_complete():
        raise ValueError(f"{len(eg.missing_profiles())} profiles have no samples; evaluate them first.")
    num_bootstrap = check_int(num_bootstrap, "num_bootstrap", minimum=1)
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1); got {level!r}.")
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    mean = eg.mean()
    single = _is_single(mean, single_population)
    a, m = float(alpha), int(population_size)
    point = _rank(mean, single, a, m)
    draws = _redraw(eg, int(num_bootstrap), gen, (0.0, 1.0) if payoff_range is None else payoff_range)
    samples = np.array([_rank(d, single, a, m) for d in draws])
    lower = np.quantile(samples, level / 2, axis=0)
    upper = np.quantile(samples, 1 - level / 2, axis=0)
    if single:
        labels = list(eg.strategy_names[0])
    else:
        labels = ["|".join(names[i] for names, i in zip(eg.strategy_names, prof)) for prof in np.ndindex(*eg.shape)]
    return BootstrapResult(point, samples, lower, upper, labels, ranking_stability(point, samples, k_max))
