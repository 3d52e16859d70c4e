"""Confidence intervals on mean payoffs from counts, sums and sums of squares.

Three bounds, each valid for outcomes in a known range ``[lo, hi]`` and
two-sided at level ``1 - delta`` per entry:

``"hoeffding"``
    ``mean +/- (hi - lo) * sqrt(log(2 / delta) / (2 n))`` (Hoeffding's inequality).
``"clopper-pearson"``
    The exact binomial interval for Bernoulli outcomes (each sample is ``lo`` or
    ``hi``): ``Beta(delta/2; k, n-k+1)`` to ``Beta(1-delta/2; k+1, n-k)`` quantiles
    with ``k`` successes in ``n`` trials, rescaled to ``[lo, hi]``.
``"bernstein"``
    The empirical Bernstein bound of Maurer and Pontil (2009, Theorem 4), made
    two-sided by a union bound: ``mean +/- (sqrt(2 V log(4/delta) / n) +
    7 (hi - lo) log(4/delta) / (3 (n - 1)))`` with ``V`` the unbiased sample
    variance. Tighter than Hoeffding when the variance is small; infinite
    (clipped to the range) with a single sample.

Each has a *relaxed* variant (``"hoeffding-relaxed"``, ...), as in OpenSpiel's
``response_graph_ucb``: both ends move inwards by ``eps`` (in payoff units), so
two intervals count as separated once they overlap by less than ``2 eps``. It
trades the guarantee on edges whose payoff gap is below about ``2 eps`` for
fewer samples. (OpenSpiel's relaxed Hoeffding bound shifts both ends *down* by
``eps``, so its ``eps`` cancels out in every comparison; ours shrinks the
interval, as its Clopper-Pearson variant does.)

Non-relaxed intervals are clipped to ``[lo, hi]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

__all__ = ["BOUNDS", "ConfidenceBounds", "confidence_bounds", "parse_bound", "time_dependent_delta"]

BASE_BOUNDS = ("hoeffding", "clopper-pearson", "bernstein")
BOUNDS = BASE_BOUNDS + tuple(f"{b}-relaxed" for b in BASE_BOUNDS)


@dataclass(frozen=True)
class ConfidenceBounds:
    """Lower and upper confidence bounds and the means they surround (same shapes)."""

    lower: np.ndarray
    upper: np.ndarray
    mean: np.ndarray


def parse_bound(bound: str) -> tuple[str, bool]:
    """Split a bound name into ``(base, relaxed)``; raise ``ValueError`` for unknown names.

    Examples
    --------
    >>> parse_bound("clopper-pearson-relaxed")
    ('clopper-pearson', True)
    """
    if not isinstance(bound, str) or bound not in BOUNDS:
        raise ValueError(f"bound must be one of {BOUNDS}; got {bound!r}.")
    relaxed = bound.endswith("-relaxed")
    return (bound[: -len("-relaxed")] if relaxed else bound), relaxed


def time_dependent_delta(delta: float, count) -> np.ndarray:
    """``delta * 6 / (pi^2 n^2)``: a per-count level whose union over ``n >= 1`` is ``delta``.

    Examples
    --------
    >>> bool(np.isclose(time_dependent_delta(0.1, 2.0), 0.6 / (4 * np.pi ** 2)))
    True
    """
    n = np.maximum(np.asarray(count, dtype=float), 1.0)
    return delta * 6.0 / (np.pi**2 * n * n)


def confidence_bounds(
    count,
    total,
    total_sq=None,
    *,
    delta=0.05,
    bound: str = "hoeffding",
    payoff_range=(0.0, 1.0),
    eps: float = 0.0,
) -> ConfidenceBounds:
    """Element-wise confidence interval on means from sample statistics.

    Parameters
    ----------
    count, total : array_like
        Number of samples and their sum (broadcastable shapes).
    total_sq : array_like, optional
        Sum of squares; needed by ``"bernstein"``.
    delta : float or array_like
        Error probability per entry (two-sided), in (0, 1).
    bound : str
        One of :data:`BOUNDS`.
    payoff_range : (float, float)
        Range ``(lo, hi)`` of a single outcome.
    eps : float
        Relaxation of the ``-relaxed`` bounds, in payoff units (ignored otherwise).

    Returns
    -------
    ConfidenceBounds
        ``lower``, ``upper`` and ``mean``; entries with no samples span the range.

    Examples
    --------
    >>> cb = confidence_bounds(100, 50, delta=0.05)
    >>> round(float(cb.upper - cb.mean), 4)   # sqrt(log(40) / 200)
    0.1358
    >>> cb = confidence_bounds(10, 0, delta=0.05, bound="clopper-pearson")
    >>> float(cb.lower), round(float(cb.upper), 4)   # 1 - 0.025 ** (1 / 10)
    (0.0, 0.3085)
    """
    base, relaxed = parse_bound(bound)
    lo, hi = _check_range(payoff_range)
    delta = np.asarray(delta, dtype=float)
    if np.any(~(delta > 0)) or np.any(~(delta < 1)):
        raise ValueError(f"delta must lie in (0, 1); got {delta}.")
    if base == "bernstein" and total_sq is None:
        raise ValueError("the 'bernstein' bound needs total_sq (the sum of squared samples).")
    if relaxed and not eps >= 0:
        raise ValueError(f"eps must be a non-negative number; got {eps!r}.")
    return bounds_kernel(
        np.asarray(count, dtype=float), np.asarray(total, dtype=float),
        None if total_sq is None else np.asarray(total_sq, dtype=float),
        delta, base, relaxed, lo, hi, float(eps),
    )


def bounds_kernel(n, total, total_sq, delta, base: str, relaxed: bool, lo: float, hi: float, eps: float):
    """:func:`confidence_bounds` without argument checks, for inner loops (float arrays in, same out).

    Written for small arrays, where the number of numpy calls sets the cost: no
    masking when every entry has samples, and no rescaling for the range ``[0, 1]``.
    """
    span = hi - lo
    unit = lo == 0.0 and span == 1.0
    has = np.asarray(n > 0)
    if has.all():   # no entry divides by zero, so the error-state context can be skipped
        mean01 = total / n if unit else (total - n * lo) / (span * n)
        low01, up01 = _unit_interval(n, mean01, total, total_sq, delta, base, unit, lo, span)
    elif not has.any():   # no samples anywhere: every interval is the whole range
        mean01, low01, up01 = np.full(np.shape(n), 0.5), np.zeros(np.shape(n)), np.ones(np.shape(n))
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            mean01 = np.where(has, (total - n * lo) / (span * np.maximum(n, 1)), 0.5)
            low01, up01 = _unit_interval(n, mean01, total, total_sq, delta, base, unit, lo, span)
        low01 = np.where(has, low01, 0.0)
        up01 = np.where(has, up01, 1.0)
    if relaxed:
        low01 = low01 + eps / span
        up01 = up01 - eps / span
    if unit:
        return ConfidenceBounds(lower=low01, upper=up01, mean=mean01)
    return ConfidenceBounds(lower=lo + span * low01, upper=lo + span * up01, mean=lo + span * mean01)


def _unit_interval(n, mean01, total, total_sq, delta, base: str, unit: bool, lo: float, span: float):
    """The interval of :func:`bounds_kernel` on the payoff range rescaled to ``[0, 1]``, clipped to it."""
    if base == "hoeffding":
        half = np.sqrt(np.log(2.0 / delta) / (2.0 * n))
        low01, up01 = mean01 - half, mean01 + half
    elif base == "clopper-pearson":
        k = np.minimum(np.maximum(np.rint(mean01 * n), 0), n)
        low01 = np.where(k > 0, special.betaincinv(np.maximum(k, 1e-300), n - k + 1, delta / 2), 0.0)
        up01 = np.where(k < n, special.betaincinv(k + 1, np.maximum(n - k, 1e-300), 1 - delta / 2), 1.0)
    else:
        sq01 = total_sq / (span * span) if unit else (total_sq - 2 * lo * total + n * lo * lo) / (span * span)
        var = np.maximum((sq01 - n * mean01 * mean01) / np.maximum(n - 1, 1), 0.0)
        log_term = np.log(4.0 / delta)
        half = np.where(
            n > 1, np.sqrt(2.0 * var * log_term / n) + 7.0 * log_term / (3.0 * np.maximum(n - 1, 1)), np.inf
        )
        low01, up01 = mean01 - half, mean01 + half
    # the mean lies in [0, 1] and the interval around it, so each end can only leave [0, 1] on its own side
    return np.maximum(low01, 0.0), np.minimum(up01, 1.0)


def _check_range(payoff_range) -> tuple[float, float]:
    try:
        lo, hi = (float(x) for x in payoff_range)
    except (TypeError, ValueError):
        raise ValueError(f"payoff_range must be a pair (lo, hi); got {payoff_range!r}.") from None
    if not (np.isfinite(lo) and np.isfinite(hi) and hi > lo):
        raise ValueError(f"payoff_range must be finite with lo < hi; got {payoff_range!r}.")
    return lo, hi
