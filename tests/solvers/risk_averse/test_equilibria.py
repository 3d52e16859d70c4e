"""Risk-averse equilibria (mean-variance RAE and downside DRAE): hand-derived values and properties."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq, minimize

from games import NormalFormGame, catalog
from solvers import nash_conv, solve
from solvers.risk_averse.equilibria import (
    downside_rae,
    lower_partial_moment,
    payoff_variance,
    rae,
    rae_gap,
    rae_gaps,
    risk_adjusted_best_response,
    risk_adjusted_values,
)

STAG, HARE = np.array([1.0, 0.0]), np.array([0.0, 1.0])


def _lottery():
    """Row: a lottery paying 1 or 5 (by the column's coin) or a sure 2; the column is indifferent."""
    return NormalFormGame.from_bimatrix([[1.0, 5.0], [2.0, 2.0]], np.zeros((2, 2)))


def _variance_by_enumeration(game, marginals):
    """Two players: Var over the opponent's action of the player's payoff averaged over its own mixture."""
    x, y = marginals
    z0 = x @ game.payoffs[0]  # row's payoff for each column action
    z1 = game.payoffs[1] @ y  # column's payoff for each row action
    v0 = y @ z0**2 - (y @ z0) ** 2
    v1 = x @ z1**2 - (x @ z1) ** 2
    return np.array([v0, v1])


def _random_marginals(rng, shape):
    return [rng.dirichlet(np.ones(k) * 0.7) for k in shape]


# ----------------------------------------------------------------------- risk measures
@settings(max_examples=20)
@given(seed=st.integers(0, 2**31 - 1), k1=st.integers(1, 4), k2=st.integers(1, 4))
def test_variance_and_semivariance_by_enumeration(seed, k1, k2):
    rng = np.random.default_rng(seed)
    game = catalog.random_game((k1, k2), rng=rng)
    marg = _random_marginals(rng, game.shape)
    var = payoff_variance(game, marg)
    np.testing.assert_allclose(var, _variance_by_enumeration(game, marg), atol=1e-12)
    semi = lower_partial_moment(game, marg)
    assert np.all(semi <= var + 1e-12) and np.all(semi >= 0)
    # LPM below a target under every payoff is zero; below a target above every payoff
    # it is the second moment about that target.
    assert np.all(lower_partial_moment(game, marg, target=-10.0) == 0)
    x, y = marg
    z0 = x @ game.payoffs[0]
    assert lower_partial_moment(game, marg, target=10.0)[0] == pytest.approx(y @ (z0 - 10.0) ** 2)


def test_lottery_best_responses_by_hand():
    # Row mixes p on the lottery against a fair coin: mean 2 + p, variance 4 p^2,
    # semivariance (about the mean) 2 p^2, shortfall below 1 zero.
    # Mean-variance: max 2 + p - 4 gamma p^2 -> p = 1 / (8 gamma); semivariance -> p = 1 / (4 gamma).
    game = _lottery()
    coin = [np.ones(2) / 2] * 2
    for gamma in [0.5, 1.0, 2.0]:
        br = risk_adjusted_best_response(game, coin, 0, gamma)
        p = 1 / (8 * gamma)
        np.testing.assert_allclose(br.strategy, [p, 1 - p], atol=1e-12)
        assert br.value == pytest.approx(2 + p - 4 * gamma * p**2, abs=1e-12)
        assert br.error_bound <= 1e-12
        br = risk_adjusted_best_response(game, coin, 0, gamma, risk="downside")
        p = min(1.0, 1 / (4 * gamma))
        np.testing.assert_allclose(br.strategy, [p, 1 - p], atol=1e-12)
        br = risk_adjusted_best_response(game, coin, 0, gamma, risk="downside", target=1.0)
        np.testing.assert_allclose(br.strategy, [1.0, 0.0], atol=1e-12)


def test_lottery_equilibria_by_hand():
    # The column player is indifferent, stays at its (uniform) start, and the row plays the
    # hand-derived best responses above.
    # The objective is quadratic around the optimum, so a gap <= 1e-12 puts p within
    # sqrt(1e-12 / (4 gamma)) = 5e-7 of it.
    game = _lottery()
    eq = rae(game, risk_aversion=1.0, tol=1e-12)
    assert eq.converged and eq.concept == "rae"
    np.testing.assert_allclose(eq.marginals[0], [1 / 8, 7 / 8], atol=1e-6)
    eq = downside_rae(game, risk_aversion=1.0, tol=1e-12)
    np.testing.assert_allclose(eq.marginals[0], [1 / 4, 3 / 4], atol=1e-6)
    eq = downside_rae(game, risk_aversion=1.0, target=1.0)
    np.testing.assert_allclose(eq.marginals[0], [1.0, 0.0], atol=1e-8)
    # the risk-neutral player takes the lottery (mean 3 > 2)
    np.testing.assert_allclose(rae(game, risk_aversion=0.0).marginals[0], [1.0, 0.0], atol=1e-8)


# ---------------------------------------------------------------------------- the gap
@settings(max_examples=20)
@given(shape=st.sampled_from([(2, 2), (3, 2), (2, 3, 2), (3, 3, 2)]), seed=st.integers(0, 2**31 - 1))
def test_rae_gap_with_zero_risk_aversion_is_nash_conv(shape, seed):
    rng = np.random.default_rng(seed)
    game = catalog.random_game(shape, rng=rng)
    marg = _random_marginals(rng, shape)
    assert rae_gap(game, marg, 0.0) == pytest.approx(nash_conv(game, marg), abs=1e-12)
    assert rae_gap(game, marg, 0.0, risk="downside") == pytest.approx(nash_conv(game, marg), abs=1e-12)


def _best_value_by_scipy(game, marg, player, gamma, risk, target):
    k = game.shape[player]

    def neg(x):
        x = np.maximum(x, 0)
        x = x / x.sum()
        m = list(marg)
        m[player] = x
        return -risk_adjusted_values(game, m, gamma, risk, target)[player]

    best = -np.inf
    starts = [np.eye(k)[j] * 0.9 + 0.1 / k for j in range(k)] + [np.ones(k) / k]
    for x0 in starts:
        res = minimize(neg, x0, method="SLSQP", bounds=[(0, 1)] * k,
                       constraints=[{"type": "eq", "fun": lambda x: x.sum() - 1}], options={"ftol": 1e-14})
        best = max(best, -res.fun)
    return best


@settings(max_examples=15)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(2, 4), gamma=st.floats(0.05, 3.0),
       risk=st.sampled_from(["variance", "downside"]), target=st.sampled_from(["mean", 0.0]))
def test_best_deviation_is_at_least_as_good_as_scipy(seed, k, gamma, risk, target):
    rng = np.random.default_rng(seed)
    game = catalog.random_game((k, 3), rng=rng)
    marg = _random_marginals(rng, game.shape)
    br = risk_adjusted_best_response(game, marg, 0, gamma, risk=risk, target=target)
    ref = _best_value_by_scipy(game, marg, 0, gamma, risk, target)
    assert br.value >= ref - 1e-9
    assert br.value <= ref + max(br.error_bound, 1e-6)
    # the reported value is the objective of the reported strategy
    m = list(marg)
    m[0] = br.strategy
    assert risk_adjusted_values(game, m, gamma, risk, target)[0] == pytest.approx(br.value, abs=1e-12)


def test_two_action_best_deviation_against_a_fine_grid():
    game = catalog.random_game((2, 4), rng=3)
    y = np.array([0.1, 0.2, 0.3, 0.4])
    marg = [np.array([0.3, 0.7]), y]
    p = np.linspace(0, 1, 200_001)[:, None]
    z = p * game.payoffs[0][0] + (1 - p) * game.payoffs[0][1]  # row payoff per column action, per grid point
    mean = z @ y
    var = (z - mean[:, None]) ** 2 @ y
    for gamma in [0.3, 2.0]:
        grid_best = float((mean - gamma * var).max())
        br = risk_adjusted_best_response(game, marg, 0, gamma)
        assert br.value >= grid_best - 1e-12
        assert br.value <= grid_best + 1e-8  # the grid step is 5e-6


# ------------------------------------------------------------------------ stag hunt
def test_rae_selects_the_risk_dominant_equilibrium_of_the_stag_hunt():
    game = catalog.stag_hunt()
    for gamma in [0.1, 0.5, 2.0]:
        eq = rae(game, risk_aversion=gamma)  # from the uniform start
        assert eq.converged and eq.gap <= 1e-8
        np.testing.assert_allclose(eq.marginals[0], HARE, atol=1e-10)
        np.testing.assert_allclose(eq.marginals[1], HARE, atol=1e-10)
        eq = downside_rae(game, risk_aversion=gamma)
        np.testing.assert_allclose(eq.marginals[0], HARE, atol=1e-10)


def test_risk_aversion_moves_the_stag_hunt_basin_boundary():
    # Against Stag w.p. q the row's Stag-minus-Hare slope is 3q - 2 - 6 gamma q (1 - q)(1 + 3p)
    # (mean 4q vs 2 + q, variance q (1 - q)(1 + 3p)^2). Starting both at Stag w.p. 0.7 > 2/3
    # the risk-neutral dynamics climb to (Stag, Stag); with gamma = 0.5 the slope is negative
    # and they go to (Hare, Hare).
    game = catalog.stag_hunt()
    start = [np.array([0.7, 0.3])] * 2
    eq0 = rae(game, risk_aversion=0.0, initial=start)
    np.testing.assert_allclose(eq0.marginals[0], STAG, atol=1e-10)
    eq = rae(game, risk_aversion=0.5, initial=start)
    np.testing.assert_allclose(eq.marginals[0], HARE, atol=1e-10)


@pytest.mark.parametrize("gamma", [0.1, 0.5, 1.0])
def test_mixed_rae_of_the_stag_hunt_by_hand(gamma):
    # The symmetric mixed RAE solves 3q - 2 = 6 gamma q (1 - q)(1 + 3q) (slope zero at p = q);
    # it plays Stag more than the mixed Nash (2/3), so Hare's basin of attraction grows.
    q = brentq(lambda q: 3 * q - 2 - 6 * gamma * q * (1 - q) * (1 + 3 * q), 2 / 3, 1, xtol=1e-15)
    assert q > 2 / 3
    mixed = [np.array([q, 1 - q])] * 2
    assert rae_gap(catalog.stag_hunt(), mixed, gamma) <= 1e-12
    assert rae_gap(catalog.stag_hunt(), [np.array([2 / 3, 1 / 3])] * 2, gamma) > 1e-3
    # pure profiles carry no variance, so both pure Nash equilibria are RAEs too
    assert rae_gap(catalog.stag_hunt(), [STAG, STAG], gamma) == 0.0
    assert rae_gap(catalog.stag_hunt(), [HARE, HARE], gamma) == 0.0


# --------------------------------------------------------------- variance reduction
def test_rae_has_lower_payoff_variance_than_nash_in_a_high_risk_game():
    # Chicken with a crash payoff of -20. The symmetric mixed Nash equilibrium makes the
    # opponent indifferent: -20 q + 7 (1 - q) = 2 q + 6 (1 - q), so q = 1/23 on Dare.
    a = np.array([[-20.0, 7.0], [2.0, 6.0]])
    game = NormalFormGame.from_bimatrix(a, a.T)
    nash = [np.array([1 / 23, 22 / 23])] * 2
    assert nash_conv(game, nash) <= 1e-12
    nash_var = _variance_by_enumeration(game, nash)
    for gamma in [0.05, 0.2]:
        eq = rae(game, risk_aversion=gamma)
        assert eq.converged
        rae_var = _variance_by_enumeration(game, eq.marginals)
        assert np.all(rae_var < nash_var - 0.1)
        np.testing.assert_allclose(eq.info["variance"], rae_var, atol=1e-12)
        # the RAE trades a little expected payoff for the lower variance
        assert eq.info["nash_conv"] > 0


# ----------------------------------------------------------------- reduction to Nash
def test_zero_risk_aversion_gives_nash_on_matching_pennies():
    start = [np.array([0.9, 0.1]), np.array([0.2, 0.8])]
    for method in ["rae", "downside_rae"]:
        eq = solve(catalog.matching_pennies(), method, risk_aversion=0.0, initial=start, tol=1e-10)
        # solve's tolerance is relative to each player's payoff range, which is 2 here
        assert eq.converged and eq.info["nash_conv"] <= 2 * 1e-10
        np.testing.assert_allclose(eq.marginals[0], [0.5, 0.5], atol=1e-8)


@settings(max_examples=10)
@given(k1=st.integers(2, 4), k2=st.integers(2, 4), seed=st.integers(0, 2**31 - 1))
def test_zero_risk_aversion_gives_nash_on_random_zero_sum_games(k1, k2, seed):
    game = catalog.random_game((k1, k2), kind="zero_sum", rng=seed)
    eq = rae(game, risk_aversion=0.0, tol=1e-7)
    assert eq.converged, eq.info
    assert nash_conv(game, eq.marginals) <= 1e-7
    assert eq.gap == pytest.approx(eq.info["nash_conv"], abs=1e-12)


@settings(max_examples=12)
@given(shape=st.sampled_from([(2, 2), (3, 3), (2, 3, 2), (2, 2, 2, 2)]), seed=st.integers(0, 2**31 - 1),
       gamma=st.floats(0.0, 1.0), method=st.sampled_from(["rae", "downside_rae"]))
def test_rae_returns_valid_profiles_and_honest_flags(shape, seed, gamma, method):
    game = catalog.random_game(shape, rng=seed)
    eq = solve(game, method, risk_aversion=gamma, iterations=300)
    for m, k in zip(eq.marginals, shape):
        assert m.shape == (k,) and m.min() >= 0 and abs(m.sum() - 1) < 1e-9
    risk = "variance" if method == "rae" else "downside"
    assert eq.gap == pytest.approx(rae_gap(game, eq.marginals, gamma, risk=risk), abs=1e-10)
    assert eq.info["converged"] == (eq.gap + eq.info["gap_error_bound"] <= eq.info["tol"])
    assert eq.info["nash_conv"] == pytest.approx(nash_conv(game, eq.marginals), abs=1e-12)
    if gamma == 0.0:
        assert eq.gap == pytest.approx(eq.info["nash_conv"], abs=1e-10)


def test_per_player_risk_aversion_and_bad_input():
    game = catalog.stag_hunt()
    gaps = rae_gaps(game, [np.array([0.5, 0.5])] * 2, [0.0, 1.0])
    assert gaps.gains[0] == pytest.approx(nash_conv(game, [np.array([0.5, 0.5])] * 2) / 2)
    with pytest.raises(ValueError, match="risk_aversion"):
        rae(game, risk_aversion=-1.0)
    with pytest.raises(ValueError, match="risk_aversion"):
        rae(game, risk_aversion=[0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="target"):
        downside_rae(game, target="median")
    for bad in [1, 1.5, 0, -2, float("nan"), "3", True]:
        with pytest.raises(ValueError, match="order"):
            downside_rae(game, order=bad)
        with pytest.raises(ValueError, match="order"):
            lower_partial_moment(game, [STAG, STAG], order=bad)
    with pytest.raises(ValueError, match="risk"):
        rae_gap(game, [STAG, STAG], 0.1, risk="cvar")
    with pytest.raises(ValueError, match="player"):
        risk_adjusted_best_response(game, [STAG, STAG], 2, 0.1)
    with pytest.raises(ValueError, match="marginals"):
        rae_gap(game, [np.array([0.5, 0.6]), STAG], 0.1)


# ------------------------------------------------------------- higher-order downside risk
def test_own_randomisation_is_not_risk():
    # Against a pure opponent the reward is certain whatever the player's own mixture: the
    # variance (and any lower partial moment) is the one the others' strategies cause.
    game = catalog.stag_hunt()
    marg = [np.array([0.3, 0.7]), STAG]
    assert payoff_variance(game, marg)[0] == 0.0
    for order in [2, 3]:
        assert lower_partial_moment(game, marg, order=order)[0] == 0.0


@settings(max_examples=20)
@given(seed=st.integers(0, 2**31 - 1), k1=st.integers(1, 4), k2=st.integers(1, 4),
       order=st.sampled_from([2, 2.5, 3, 4]), target=st.sampled_from(["mean", 0.0, 1.0]))
def test_lower_partial_moment_of_any_order_by_enumeration(seed, k1, k2, order, target):
    rng = np.random.default_rng(seed)
    game = catalog.random_game((k1, k2), rng=rng)
    x, y = _random_marginals(rng, game.shape)
    z0 = x @ game.payoffs[0]  # row's reward for each column action
    tau = y @ z0 if target == "mean" else target
    expected = y @ np.maximum(tau - z0, 0.0) ** order
    got = lower_partial_moment(game, [x, y], target=target, order=order)[0]
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("order", [2, 2.5, 3, 4])
@pytest.mark.parametrize("gamma", [0.5, 1.0, 2.0])
def test_lottery_best_response_for_higher_orders_by_hand(order, gamma):
    # Against a fair coin, mixing p on the lottery gives rewards 2 - p and 2 + 3p (mean 2 + p),
    # a shortfall 2p below the mean half of the time: LPM_n = (2p)^n / 2. Maximising
    # 2 + p - gamma (2p)^n / 2 gives p^(n-1) = 1 / (gamma n 2^(n-1)).
    game = _lottery()
    coin = [np.ones(2) / 2] * 2
    p = min(1.0, (1.0 / (gamma * order * 2 ** (order - 1))) ** (1.0 / (order - 1)))
    br = risk_adjusted_best_response(game, coin, 0, gamma, risk="downside", order=order)
    np.testing.assert_allclose(br.strategy, [p, 1 - p], atol=1e-10)
    assert br.value == pytest.approx(2 + p - gamma * (2 * p) ** order / 2, abs=1e-12)
    assert br.error_bound <= 1e-9


@settings(max_examples=10)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(2, 4), gamma=st.floats(0.05, 3.0),
       order=st.sampled_from([2.5, 3, 4]), target=st.sampled_from(["mean", 0.0]))
def test_higher_order_best_deviation_is_at_least_as_good_as_scipy(seed, k, gamma, order, target):
    rng = np.random.default_rng(seed)
    game = catalog.random_game((k, 3), rng=rng)
    marg = _random_marginals(rng, game.shape)
    br = risk_adjusted_best_response(game, marg, 0, gamma, risk="downside", target=target, order=order)

    def neg(x):
        x = np.maximum(x, 0)
        m = list(marg)
        m[0] = x / x.sum()
        return -risk_adjusted_values(game, m, gamma, "downside", target, order)[0]

    starts = [np.eye(k)[j] * 0.9 + 0.1 / k for j in range(k)] + [np.ones(k) / k]
    ref = max(-minimize(neg, x0, method="SLSQP", bounds=[(0, 1)] * k,
                        constraints=[{"type": "eq", "fun": lambda x: x.sum() - 1}],
                        options={"ftol": 1e-14}).fun for x0 in starts)
    assert br.value >= ref - 1e-9
    assert br.value <= ref + max(br.error_bound, 1e-6)


def test_downside_rae_of_higher_order():
    # the stag hunt: Hare, Hare from the uniform start for every order
    for order in [2, 3, 4]:
        eq = downside_rae(catalog.stag_hunt(), risk_aversion=0.5, order=order)
        assert eq.converged and eq.info["order"] == order
        np.testing.assert_allclose(eq.marginals[0], HARE, atol=1e-10)
        np.testing.assert_allclose(eq.marginals[1], HARE, atol=1e-10)
    # the lottery: the row plays the hand-derived best response of order 3, p = 1 / sqrt(12)
    eq = downside_rae(_lottery(), risk_aversion=1.0, order=3, tol=1e-12)
    assert eq.converged
    np.testing.assert_allclose(eq.marginals[0], [12 ** -0.5, 1 - 12 ** -0.5], atol=1e-6)
    assert eq.gap == pytest.approx(rae_gap(_lottery(), eq.marginals, 1.0, risk="downside", order=3), abs=1e-12)
    # a higher order penalises the same shortfall less when it is below 1 and more when above
    game = NormalFormGame.from_bimatrix([[-20.0, 7.0], [2.0, 6.0]], np.zeros((2, 2)))
    marg = [np.array([0.5, 0.5]), np.array([0.1, 0.9])]
    assert (lower_partial_moment(game, marg, target=0.0, order=3)[0]
            > lower_partial_moment(game, marg, target=0.0, order=2)[0])


@settings(max_examples=30)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(2, 5), gamma=st.floats(1e-10, 1e-6))
def test_best_deviation_stays_on_the_simplex_when_the_curvature_is_tiny(seed, k, gamma):
    # near-linear objective: the projected-gradient step 1 / curvature is huge; the strategy must still sum to one,
    # and (the objective being concave) no deviation gains more than the Frank-Wolfe gap at the start
    rng = np.random.default_rng(seed)
    payoffs = rng.random((2, k, 4))
    payoffs[0, 1] = payoffs[0, 0] + 1e-9 * rng.standard_normal(4)   # two all but tied actions
    game = NormalFormGame(payoffs)
    marg = _random_marginals(rng, game.shape)
    u = np.einsum("ij,j->i", game.payoffs[0], marg[1])
    start = np.zeros(k)
    start[:2] = 0.5
    m = [start, marg[1]]
    br = risk_adjusted_best_response(game, m, 0, gamma)
    assert abs(br.strategy.sum() - 1.0) <= 1e-14
    assert br.strategy.min() >= 0.0
    base = risk_adjusted_values(game, m, gamma)[0]
    m[0] = br.strategy
    assert risk_adjusted_values(game, m, gamma)[0] == pytest.approx(br.value, abs=1e-12)
    frank_wolfe = float(u.max() - u @ start) + 4 * gamma   # the risk term's gradient is at most 4 gamma here
    assert br.value - base <= frank_wolfe + 1e-14


# a fuzz find (tests/solvers/test_fuzz.py): payoffs -0.01 +- 2e-8 for player 0 and +- 2e-8 for player 1
_NEARLY_CONSTANT = [
    [[-0.010000006517911527, -0.010000001747172924, -0.009999983362760086, -0.009999993408522501],
     [-0.010000016413972947, -0.010000000052032642, -0.01000000623463741, -0.009999998513684768],
     [-0.010000016081877842, -0.00999999758228123, -0.009999997646190813, -0.009999984243739686],
     [-0.009999996833549836, -0.009999994894533383, -0.01000001493116685, -0.009999977472708753]],
    [[6.517911526116896e-09, 1.7471729232577715e-09, -1.6637239913911968e-08, -6.59147749832255e-09],
     [1.6413972945846466e-08, 5.2032641719319776e-11, 6.234637409883934e-09, -1.4863152325202633e-09],
     [1.608187784186389e-08, -2.4177187687685133e-09, -2.353809187374548e-09, -1.5756260314314626e-08],
     [-3.166450164719021e-09, -5.105466616976418e-09, 1.4931166849642325e-08, -2.2527291247240276e-08]]]


def test_rae_gap_of_a_nearly_constant_game_is_not_inflated_by_round_off():
    # once normalised, the risk aversion is ~2e-8 and the best-response search took projected steps of size ~1e8,
    # which lost the strategy's sum in the 8th digit: a deviation "worth" 1.7e-8 against tol 1e-8. Normalised in
    # long double (as the fuzz does), then rounded: the answer must not depend on that last-digit difference.
    game = NormalFormGame(np.array(_NEARLY_CONSTANT))
    eq = solve(game, "rae")
    u = game.payoffs.astype(np.longdouble).reshape(2, -1)
    lo, span = u.min(axis=1), u.max(axis=1) - u.min(axis=1)
    norm = NormalFormGame(((game.payoffs - lo[:, None, None]) / span[:, None, None]).astype(np.float64))
    gamma = 0.5 * span.astype(np.float64)
    for p in range(2):
        br = risk_adjusted_best_response(norm, list(eq.marginals), p, gamma[p])
        assert abs(br.strategy.sum() - 1.0) <= 1e-14
    assert eq.converged
    assert rae_gaps(norm, eq.marginals, gamma).gains.sum() <= eq.info["gap_tol"]


def test_a_hugely_risk_averse_player_does_not_freeze_the_others():
    # player 1 has one strategy and payoffs of order 1e116, so its risk aversion in normalised units is ~1e116
    # (capped at 1e100). A common step sized for that curvature never moved player 0 off uniform; with each
    # player's gradient scaled by its own curvature, player 0 plays its best action (payoff 0.114) at once.
    game = NormalFormGame(np.array([[[-1.3025], [0.11412], [-1.0418]], [[1.3025e116], [-1.1412e115], [1.0418e116]]]))
    eq = solve(game, "rae")
    assert eq.converged
    assert eq.marginals[0].tolist() == [0.0, 1.0, 0.0]
    assert eq.info["iterations"] < 100


def test_the_reported_iterations_are_the_solvers_count_not_the_option():
    game = catalog.stag_hunt()
    eq = solve(game, "rae", iterations=3000)
    assert eq.converged and 0 < eq.info["iterations"] < 3000
    assert eq.info["risk_aversion"] == 0.5   # the caller's units, not the normalised ones
