"""Learning dynamics (PRD, regret matching, fictitious play) and their shared machinery (solvers.dynamics.common).

Reference values are derived by hand in the comments, and OpenSpiel's projected
replicator dynamics is the reference for ``prd``. The logit QRE is in test_qre.py.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import catalog
from solvers import nash_conv, nash_conv_per_player, solve
from solvers.dynamics.common import PayoffOperator, project_to_simplex
from solvers.dynamics.fictitious_play import fictitious_play
from solvers.dynamics.regret_matching import regret_matching
from solvers.dynamics.replicator import prd

RPS_START = [np.array([0.6, 0.3, 0.1]), np.array([0.1, 0.2, 0.7])]


def _shapes(min_players=2, max_players=4, max_k=3):
    return st.integers(min_players, max_players).flatmap(
        lambda n: st.lists(st.integers(2, max_k), min_size=n, max_size=n).map(tuple))


def _assert_valid(eq, game):
    for m, k in zip(eq.marginals, game.shape):
        assert m.shape == (k,)
        assert np.all(m >= 0) and abs(m.sum() - 1.0) < 1e-9
    assert np.isclose(eq.joint.sum(), 1.0)
    assert eq.gap >= 0


def _rps_distance_bound(eq):
    # In RPS, if x = uniform + e then the opponent's best gain is >= range(e) / 2
    # (the gains e_R - e_S, e_S - e_P, e_P - e_R are cyclic differences), so
    # max |x - 1/3| <= range(e) <= 2 * NashConv.
    for m in eq.marginals:
        assert np.abs(m - 1.0 / 3).max() <= 2 * eq.gap + 1e-12


# ------------------------------------------------------------------- shared machinery
@settings(max_examples=25)
@given(shape=_shapes(1, 4), seed=st.integers(0, 2**31 - 1))
def test_payoff_operator_matches_game_deviation_payoffs(shape, seed):
    rng = np.random.default_rng(seed)
    game = catalog.random_game(shape, rng=rng)
    marg = [rng.dirichlet(np.ones(k)) for k in shape]
    got = PayoffOperator.from_game(game).deviation_payoffs(marg)
    for a, b in zip(got, game.deviation_payoffs(marg)):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-13)


@settings(max_examples=30)
@given(k=st.integers(1, 8), seed=st.integers(0, 2**31 - 1), floor_frac=st.floats(0.0, 0.99))
def test_simplex_projection_matches_openspiel(k, seed, floor_frac):
    from open_spiel.python.algorithms import projected_replicator_dynamics as os_prd

    rng = np.random.default_rng(seed)
    v = rng.normal(size=k)
    floor = floor_frac / k
    x = project_to_simplex(v, floor)
    assert abs(x.sum() - 1) < 1e-12 and x.min() >= floor - 1e-15
    np.testing.assert_allclose(x, os_prd._simplex_projection(v.copy(), floor), atol=1e-12)


@pytest.mark.parametrize("k", [1, 3, 7])
def test_simplex_projection_with_a_floor_of_one_over_k_is_uniform(k):
    # the feasible set is the single point 1/k (OpenSpiel's projection returns a vector that does not sum to 1 here)
    v = np.random.default_rng(k).normal(size=k)
    np.testing.assert_allclose(project_to_simplex(v, 1.0 / k), np.full(k, 1.0 / k), rtol=0, atol=1e-15)


# ------------------------------------------------------------------------------ PRD
@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 2)])
@pytest.mark.parametrize("average", [True, False])
def test_prd_matches_openspiel_step_for_step(shape, average):
    from open_spiel.python.algorithms.projected_replicator_dynamics import projected_replicator_dynamics

    game = catalog.random_game(shape, rng=7)
    iterations, dt, gamma = 400, 0.05, 1e-3
    ours = prd(game, iterations=iterations, dt=dt, gamma=gamma, tol=0.0, check_every=10_000, average=average)
    ref = projected_replicator_dynamics(
        [game.payoffs[p] for p in range(game.num_players)], prd_iterations=iterations, prd_dt=dt, prd_gamma=gamma,
        average_over_last_n_strategies=None if average else 1)
    assert ours.info["iterations"] == iterations
    for a, b in zip(ours.marginals, ref):
        np.testing.assert_allclose(a, b / b.sum(), atol=1e-10)


def test_prd_average_approaches_uniform_on_rps():
    eq = prd(catalog.rock_paper_scissors(), dt=0.01, iterations=5000, tol=0.02, initial=RPS_START)
    assert eq.converged and eq.gap <= 0.02
    _rps_distance_bound(eq)


def test_prd_last_iterate_reaches_dominant_strategy():
    # Defection dominates: the last iterate sits at the floor gamma on cooperation.
    eq = prd(catalog.prisoners_dilemma(), average=False, gamma=1e-8, tol=1e-6)
    assert eq.converged
    assert eq.marginals[0][1] >= 1 - 1e-6 and eq.marginals[1][1] >= 1 - 1e-6


# ---------------------------------------------------------------------- regret matching
@pytest.mark.parametrize("plus", [True, False])
def test_regret_matching_average_approaches_uniform_on_rps(plus):
    tol = 1e-3 if plus else 2e-2
    eq = regret_matching(catalog.rock_paper_scissors(), tol=tol, plus=plus, initial=RPS_START)
    assert eq.converged and eq.gap <= tol and eq.info["plus"] is plus
    _rps_distance_bound(eq)


def test_regret_matching_biased_rps_reference():
    # Unique Nash of biased RPS (Omidshafiei et al. 2019): (1, 10, 5) / 16.
    eq = regret_matching(catalog.biased_rock_paper_scissors(), tol=1e-4)
    assert eq.converged and eq.gap <= 1e-4
    for m in eq.marginals:
        np.testing.assert_allclose(m, np.array([1, 10, 5]) / 16, atol=1e-3)


@settings(max_examples=10)
@given(k1=st.integers(2, 4), k2=st.integers(2, 4), seed=st.integers(0, 2**31 - 1), plus=st.booleans())
def test_regret_matching_solves_random_zero_sum_within_budget(k1, k2, seed, plus):
    game = catalog.random_game((k1, k2), kind="zero_sum", rng=seed)
    eq = regret_matching(game, tol=1e-2)
    assert eq.converged, eq.info
    assert nash_conv(game, eq.marginals) <= 1e-2


# ---------------------------------------------------------------------- fictitious play
def test_fictitious_play_average_approaches_uniform_on_rps():
    eq = fictitious_play(catalog.rock_paper_scissors(), tol=0.05, initial=RPS_START)
    assert eq.converged and eq.gap <= 0.05
    _rps_distance_bound(eq)


def test_fictitious_play_does_not_converge_on_shapley_game():
    # Shapley (1964): fictitious play cycles with exponentially growing cycles, so
    # the averages never approach the unique (uniform) equilibrium. (Started at the
    # uniform equilibrium itself it would stop at once, so start from a pure profile.)
    game = catalog.shapley_game()
    eq = fictitious_play(game, iterations=4000, tol=1e-2, initial=[np.eye(3)[0], np.eye(3)[1]])
    assert eq.converged is False and eq.info["converged"] is False
    assert eq.info["iterations"] == 4000
    assert eq.gap > 0.1
    assert eq.gap == pytest.approx(nash_conv(game, eq.marginals))


def test_fictitious_play_first_step_by_hand():
    # Matching pennies from (H, H): the row player (who wants to match) stays on H,
    # the column player switches to T; the averages after one step are (1, 0), (1/2, 1/2).
    eq = fictitious_play(catalog.matching_pennies(), iterations=1, tol=0.0,
                         initial=[np.array([1.0, 0.0]), np.array([1.0, 0.0])])
    np.testing.assert_allclose(eq.marginals[0], [1.0, 0.0])
    np.testing.assert_allclose(eq.marginals[1], [0.5, 0.5])


# -------------------------------------------------------------- properties of all dynamics
DYNAMICS = {
    "prd": {"iterations": 300, "tol": 1e-2},
    "regret_matching": {"iterations": 300, "tol": 1e-2},
    "fictitious_play": {"iterations": 300, "tol": 1e-2},
}


@settings(max_examples=12)
@given(shape=_shapes(2, 4), seed=st.integers(0, 2**31 - 1), method=st.sampled_from(sorted(DYNAMICS)))
def test_dynamics_return_valid_distributions_and_honest_flags(shape, seed, method):
    game = catalog.random_game(shape, rng=seed)
    eq = solve(game, method, **DYNAMICS[method])
    _assert_valid(eq, game)
    assert eq.concept == "nash"
    assert eq.gap == pytest.approx(nash_conv(game, eq.marginals), abs=1e-12)
    # solve's tolerance bounds the gains relative to each player's payoff range
    ranges = np.ptp(game.payoffs.reshape(game.num_players, -1), axis=1)
    relative = float(np.sum(nash_conv_per_player(game, eq.marginals) / ranges))
    assert relative == pytest.approx(eq.info["verified_gap"], abs=1e-12)
    assert eq.info["converged"] == (eq.info["verified_gap"] <= DYNAMICS[method]["tol"])
    assert 0 <= eq.info["iterations"] <= DYNAMICS[method]["iterations"]


@pytest.mark.parametrize("method", sorted(DYNAMICS))
def test_dynamics_reject_bad_options(method):
    game = catalog.matching_pennies()
    with pytest.raises(ValueError, match="iterations"):
        solve(game, method, iterations=0)
    with pytest.raises(ValueError, match="tol"):
        solve(game, method, tol=-1.0)
    with pytest.raises(ValueError, match="initial"):
        solve(game, method, initial=[np.ones(3) / 3, np.ones(2) / 2])
    with pytest.raises(ValueError, match="initial"):
        solve(game, method, initial=[np.array([0.7, 0.7]), np.ones(2) / 2])


def test_prd_rejects_infeasible_floor_and_step():
    with pytest.raises(ValueError, match="gamma"):
        prd(catalog.rock_paper_scissors(), gamma=0.5)
    with pytest.raises(ValueError, match="dt"):
        prd(catalog.rock_paper_scissors(), dt=0.0)
