"""solvers/rational.py: exact rational certificates for the results of any two-player solver."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from games import NormalFormGame, catalog
from solvers import Equilibrium, solve
from solvers.rational import certify, exact_regrets, rational_payoffs, verified


def test_rational_payoffs_reads_floats_that_are_small_fractions():
    g = NormalFormGame.from_bimatrix([[1 / 3, 0.1], [-2.5, 7]])
    q = rational_payoffs(g)
    assert q[0].tolist() == [[Fraction(1, 3), Fraction(1, 10)], [Fraction(-5, 2), Fraction(7)]]
    assert q[1, 0, 0] == Fraction(-1, 3)
    with pytest.raises(ValueError, match="payoffs="):
        rational_payoffs(NormalFormGame.from_bimatrix([[np.pi, 0], [0, 1]]))
    exact = rational_payoffs(NormalFormGame.from_bimatrix([[1 / 3]]), payoffs=[[["1/3"]], [["-1/3"]]])
    assert exact.ravel().tolist() == [Fraction(1, 3), Fraction(-1, 3)]
    with pytest.raises(ValueError, match="differ"):
        rational_payoffs(NormalFormGame.from_bimatrix([[1 / 3]]), payoffs=[[["1/2"]], [["-1/3"]]])
    with pytest.raises(ValueError, match="shape"):
        rational_payoffs(NormalFormGame.from_bimatrix([[1 / 3]]), payoffs=[["1/3"]])


def test_exact_regrets_by_hand():
    q = rational_payoffs(catalog.bach_or_stravinsky())  # [[3, 0], [0, 2]] / [[2, 0], [0, 3]]
    regrets, values = exact_regrets(q, [(Fraction(1, 2), Fraction(1, 2))] * 2)
    # row: pure payoffs (3/2, 1) against (1/2, 1/2), value 5/4; column: (1, 3/2), value 5/4
    assert values == (Fraction(5, 4), Fraction(5, 4))
    assert regrets == (Fraction(1, 4), Fraction(1, 4))


def test_certify_reports_why_a_profile_fails():
    c = certify(catalog.bach_or_stravinsky(), [np.array([0.5, 0.5])] * 2)
    assert not c.certified and "deviating" in c.reason
    assert c.regrets == (Fraction(1, 4), Fraction(1, 4))


def test_the_support_system_recovers_large_denominators():
    # 1/7919 is out of reach of rounding with denominators up to 100, but the exact indifference
    # equations give it back
    game = NormalFormGame.from_bimatrix([[7918, 0], [0, 1]], [[1, 0], [0, 7918]])
    x = np.array([7918 / 7919, 1 / 7919])
    y = np.array([1 / 7919, 7918 / 7919])
    c = certify(game, [x, y], max_denominator=100)
    assert c.certified and c.method == "support_system"
    assert c.marginals == ((Fraction(7918, 7919), Fraction(1, 7919)), (Fraction(1, 7919), Fraction(7918, 7919)))


def test_a_point_inside_a_continuum_is_certified_where_it_is():
    # Gambit's e02: (top, (1 - t, t)) is an equilibrium for every t <= 1/2
    game = NormalFormGame.from_bimatrix([[1, 1], [0, 0], [0, 2]], [[1, 1], [2, 3], [2, 0]])
    t = 0.2718281828
    c = certify(game, [np.array([1.0, 0, 0]), np.array([1 - t, t])])
    assert c.certified and abs(float(c.marginals[1][1]) - t) < 1e-9
    # and a certificate is about *this* profile: t = 0.6 is no equilibrium, nor near one
    assert not certify(game, [np.array([1.0, 0, 0]), np.array([0.4, 0.6])]).certified


def test_three_players_by_rounding():
    c = certify(catalog.three_player_matching_pennies(), [np.array([0.5, 0.5])] * 3)
    assert c.certified and c.regrets == (0, 0, 0)


def test_verified_attaches_the_certificate_to_any_solver_result():
    game = catalog.random_game((4, 4), rng=3)
    game = game.with_payoffs(np.round(game.payoffs * 10))  # integer payoffs
    for method in ("lemke_howson", "support_enumeration", "nash", "nash_zero_sum"):
        g = game if method != "nash_zero_sum" else NormalFormGame.from_bimatrix(game.payoffs[0])
        eq = verified(g, solve(g, method))
        assert isinstance(eq, Equilibrium) and eq.info["certified"], method
        assert eq.info["certificate"].regrets == (0, 0)
    with pytest.raises(TypeError, match="Equilibrium"):
        verified(game, [np.ones(4) / 4] * 2)


int_bimatrices = st.tuples(st.integers(2, 4), st.integers(2, 4)).flatmap(
    lambda mn: st.lists(st.integers(-9, 9), min_size=2 * mn[0] * mn[1], max_size=2 * mn[0] * mn[1]).map(
        lambda v: NormalFormGame(np.array(v, dtype=float).reshape(2, *mn))))


@given(int_bimatrices, st.sampled_from(["lemke_howson", "support_enumeration"]))
def test_exact_two_player_solvers_certify_on_integer_games(game, method):
    eq = solve(game, method)
    if not eq.converged:
        return  # the solver says it did not find one; nothing to certify
    cert = certify(game, eq)
    assert cert.certified, (game.payoffs.tolist(), eq.marginals, cert.reason)
    assert all(r == 0 for r in exact_regrets(rational_payoffs(game), cert.marginals)[0])


@given(int_bimatrices)
def test_a_profile_with_positive_exact_regret_is_never_certified(game):
    uniform = [np.ones(k) / k for k in game.shape]
    regrets = exact_regrets(rational_payoffs(game), [tuple(Fraction(1, k) for _ in range(k)) for k in game.shape])[0]
    cert = certify(game, uniform, atol=1e-12)
    assert cert.certified == all(r == 0 for r in regrets)
