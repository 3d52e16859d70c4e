"""The logit quantal response equilibrium (solvers.dynamics.qre).

The reference is a 1-D fixed point of the 2x2 logit equations solved with
``scipy.optimize.brentq``; limits in the rationality and fixed-point residuals.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq

from games import NormalFormGame, catalog
from solvers import nash_conv
from solvers.dynamics.qre import logit_response, qre, qre_residual


def _asymmetric_pennies():
    a = np.array([[9.0, 0.0], [0.0, 1.0]])
    return NormalFormGame.from_bimatrix(a, -a)


def _logistic(z):
    return 1.0 / (1.0 + np.exp(-z))


def _qre_2x2_by_brentq(game, lam):
    """Solve the 2x2 logit QRE as a 1-D fixed point in p = P(row plays 0)."""
    a, b = game.payoffs[0], game.payoffs[1]

    def q_of(p):  # column's logit response to the row mixture (p, 1 - p)
        x = np.array([p, 1 - p])
        return _logistic(lam * (x @ b[:, 0] - x @ b[:, 1]))

    def h(p):
        q = q_of(p)
        y = np.array([q, 1 - q])
        return p - _logistic(lam * (a[0] @ y - a[1] @ y))

    p = brentq(h, 0.0, 1.0, xtol=1e-15, rtol=4 * np.finfo(float).eps)
    return p, q_of(p)


@pytest.mark.parametrize("game_fn, lam", [(_asymmetric_pennies, 0.3), (_asymmetric_pennies, 1.5),
                                          (catalog.bach_or_stravinsky, 0.4), (catalog.chicken, 0.8)])
def test_qre_2x2_matches_brentq(game_fn, lam):
    game = game_fn()
    p, q = _qre_2x2_by_brentq(game, lam)
    eq = qre(game, rationality=lam)
    assert eq.converged and eq.info["residual"] <= 1e-10
    np.testing.assert_allclose(eq.marginals[0], [p, 1 - p], atol=1e-8)
    np.testing.assert_allclose(eq.marginals[1], [q, 1 - q], atol=1e-8)


def test_qre_is_uniform_at_zero_and_near_uniform_for_small_lambda():
    game = catalog.random_game((3, 4), rng=11)
    eq0 = qre(game, rationality=0.0)
    for m, k in zip(eq0.marginals, game.shape):
        np.testing.assert_array_equal(m, np.full(k, 1.0 / k))
    # softmax(lam * u) deviates from uniform by at most lam * range(u) / k to first order
    lam = 1e-4
    eq = qre(game, rationality=lam)
    for m, k in zip(eq.marginals, game.shape):
        assert np.abs(m - 1.0 / k).max() <= lam * np.ptp(game.payoffs)


@pytest.mark.parametrize("lam", [1.0, 10.0, 100.0, 1000.0])
def test_qre_matching_pennies_stays_uniform(lam):
    eq = qre(catalog.matching_pennies(), rationality=lam)
    assert eq.converged
    for m in eq.marginals:
        np.testing.assert_allclose(m, [0.5, 0.5], atol=1e-12)


def test_qre_approaches_nash_as_lambda_grows():
    # Prisoner's dilemma: defection dominates by 1 whatever the opponent does, so the
    # QRE puts exactly 1 / (1 + e^lam) on cooperation, and NashConv = 2 / (1 + e^lam).
    game = catalog.prisoners_dilemma()
    for lam in [0.5, 2.0, 8.0, 30.0]:
        eq = qre(game, rationality=lam)
        coop = 1.0 / (1.0 + np.exp(lam))
        np.testing.assert_allclose(eq.marginals[0], [coop, 1 - coop], atol=1e-12)
        assert eq.gap == pytest.approx(2 * coop, abs=1e-12)


def test_qre_temperature_is_inverse_rationality_and_options_are_checked():
    game = catalog.random_game((3, 3), rng=2)
    a = qre(game, temperature=0.25)
    b = qre(game, rationality=4.0)
    for x, y in zip(a.marginals, b.marginals):
        np.testing.assert_allclose(x, y, atol=1e-12)
    with pytest.raises(ValueError, match="not both"):
        qre(game, rationality=1.0, temperature=1.0)
    with pytest.raises(ValueError, match="rationality"):
        qre(game, rationality=-1.0)
    with pytest.raises(ValueError, match="temperature"):
        qre(game, temperature=0.0)


@settings(max_examples=10)
@given(shape=st.lists(st.integers(2, 3), min_size=2, max_size=3).map(tuple), seed=st.integers(0, 2**31 - 1),
       lam=st.floats(0.0, 20.0))
def test_qre_is_a_fixed_point_or_says_so(shape, seed, lam):
    game = catalog.random_game(shape, rng=seed)
    eq = qre(game, rationality=lam)
    assert all(m.shape == (k,) and np.all(m > 0) and abs(m.sum() - 1.0) < 1e-9   # a logit response is interior
               for m, k in zip(eq.marginals, game.shape))
    residual = qre_residual(game, eq.marginals, lam)
    assert eq.info["converged"] == (residual <= eq.info["tol"])
    if eq.converged:
        for m, r in zip(eq.marginals, logit_response(game, eq.marginals, lam)):
            np.testing.assert_allclose(m, r, atol=1e-9)
    assert eq.gap == pytest.approx(nash_conv(game, eq.marginals), abs=1e-12)
