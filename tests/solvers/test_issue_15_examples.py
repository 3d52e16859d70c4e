"""The wrong "converged" answers and crashes of issue 15 (items 1-5), with the issue's own numbers.

Each example must now give a verified equilibrium, a clean refusal or
``converged=False``. "Verified" is recomputed here from the returned
strategies, relative to each player's payoff range.
"""

import numpy as np
import pytest

from games import NormalFormGame, catalog
from solvers import cce_gains, ce_gains, nash_conv_per_player, solve
from solvers.dynamics.qre import qre_residual

A = np.array([[1.0, 0.0], [0.0, 2.0]])
B = np.array([[2.0, 0.0], [0.0, 1.0]])
# The three Nash equilibria of (A, B), derived by hand: the two pure ones on the diagonal, and the mixed
# one where the row player's (1/3, 2/3) makes the column player indifferent (2x = 1 - x) and the column
# player's (2/3, 1/3) makes the row player indifferent (y = 2 (1 - y)).
EQUILIBRIA_AB = [((1, 0), (1, 0)), ((0, 1), (0, 1)), ((1 / 3, 2 / 3), (2 / 3, 1 / 3))]


def relative_nash_conv(game, marginals) -> float:
    ranges = np.ptp(game.payoffs.reshape(game.num_players, -1), axis=1)
    centred = game.with_payoffs(game.payoffs - game.payoffs.reshape(game.num_players, -1).min(axis=1)[:, None, None])
    return float(np.sum(nash_conv_per_player(centred, marginals) / ranges))


@pytest.mark.parametrize("transform", [lambda u: u + 1e12, lambda u: u * 1e-300], ids=["offset_1e12", "times_1e-300"])
def test_item_1_general_sum_game_with_offset_or_tiny_payoffs_is_not_solved_as_zero_sum(transform):
    game = NormalFormGame.from_bimatrix(transform(A), transform(B))
    assert not game.is_constant_sum()
    eq = solve(game, "nash")
    assert eq.info["via"] != "nash_zero_sum"
    assert eq.converged
    found = [np.allclose(eq.marginals[0], x, atol=1e-9) and np.allclose(eq.marginals[1], y, atol=1e-9)
             for x, y in EQUILIBRIA_AB]
    assert any(found), eq.marginals
    # the wrong answer x = y = (2/3, 1/3): the column player gains 4/3 - 1 = 1/3 by playing its
    # first column, a sixth of its payoff range 2
    assert relative_nash_conv(game, [np.array([2 / 3, 1 / 3])] * 2) == pytest.approx(1 / 6, rel=1e-6)
    assert relative_nash_conv(game, eq.marginals) <= 1e-9


def test_item_1_constant_sum_stays_constant_sum_under_offsets_and_scales():
    for offset, scale in [(0.0, 1.0), (1e12, 1.0), (0.0, 1e-300), (0.0, 1e300)]:
        game = NormalFormGame.from_bimatrix(A * scale + offset, -A * scale + offset)
        assert game.is_constant_sum()
        assert solve(game, "nash").info["via"] == "nash_zero_sum"


def test_item_2_downside_rae_ignores_a_common_offset():
    payoffs = np.array([[[2.0], [3.0]], [[1.0], [-2.0]]])
    # player 1 has one strategy, so player 0 faces no risk and takes the larger payoff: strategy 1
    for offset in (0.0, 1e12):
        eq = solve(NormalFormGame(payoffs + offset), "downside_rae")
        assert eq.converged
        np.testing.assert_allclose(eq.marginals[0], [0.0, 1.0], atol=1e-9)


def test_item_3_correlated_solvers_see_every_player_when_scales_differ():
    chicken = catalog.chicken()
    reference = solve(chicken, "mgce").joint
    payoffs = chicken.payoffs.copy()
    payoffs[1] *= 1e20
    game = NormalFormGame(payoffs)
    eq = solve(game, "mgce")
    ranges = np.ptp(payoffs.reshape(2, -1), axis=1)
    # the issue: player 0 gained 0.0526 (in its own payoff units) by deviating from the "optimal" answer
    assert np.all(ce_gains(game, eq.joint) / ranges <= 1e-9)
    assert eq.converged
    np.testing.assert_allclose(eq.joint, reference, atol=1e-8)  # the CE polytope, and so its MG point, is the same


@pytest.mark.parametrize("method", ["rvce", "rvcce", "mgcce", "mece", "mwce", "min_epsilon_mgce"])
def test_item_3_every_correlated_solver_at_1e200_is_verified(method):
    payoffs = catalog.chicken().payoffs.copy()
    payoffs[1] *= 1e200
    game = NormalFormGame(payoffs)
    eq = solve(game, method)
    assert eq.converged
    assert eq.info["verified_gap"] <= 1e-9
    ranges = np.ptp(payoffs.reshape(2, -1), axis=1)
    gains = (ce_gains if eq.concept == "ce" else cce_gains)(game, eq.joint)
    assert np.all(gains / ranges <= 1e-9)  # the issue: rvce was off by 9.5% of the range


@pytest.mark.parametrize("method", ["fictitious_play", "prd", "rae", "downside_rae"])
def test_item_4_tiny_payoffs_do_not_make_uniform_look_converged(method):
    game = NormalFormGame(catalog.stag_hunt().payoffs * 1e-300)
    eq = solve(game, method)
    uniform_gap = relative_nash_conv(game, [np.ones(2) / 2] * 2)
    assert uniform_gap > 0.1  # (0.5, 0.5) is far from an equilibrium of the stag hunt
    if eq.converged:
        assert eq.info["verified_gap"] <= eq.info["gap_tol"]
        if method in ("fictitious_play", "prd"):
            assert relative_nash_conv(game, eq.marginals) <= eq.info["tol"] * (1 + 1e-9)
    # the same answer as on the unscaled game: tolerances are relative to the payoff range
    plain = solve(catalog.stag_hunt(), method)
    assert eq.converged == plain.converged
    np.testing.assert_allclose(eq.marginals[0], plain.marginals[0], atol=1e-6)


@pytest.mark.parametrize("method", ["fictitious_play", "regret_matching"])
@pytest.mark.parametrize("seed", range(6))
def test_item_4_near_tolerance_gaps_on_1e12_offsets_are_verified(method, seed):
    game = catalog.random_game((3, 3), rng=seed)
    game = game.with_payoffs(game.payoffs + 1e12)
    eq = solve(game, method)
    if eq.converged:
        assert relative_nash_conv(game, eq.marginals) <= eq.info["tol"] * (1 + 1e-9)


def test_item_4_qre_reports_its_true_residual_on_offset_payoffs():
    game = catalog.random_game((3, 3), rng=4)
    game = game.with_payoffs(np.round(game.payoffs * 1024) / 1024)  # so that + 1e12 is exact (spacing 2^-13)
    shifted = game.with_payoffs(game.payoffs + 1e12)
    eq = solve(shifted, "qre", rationality=3.0)
    plain = solve(game, "qre", rationality=3.0)
    # logit responses ignore a common offset, so the answer and its residual are those of the plain game
    np.testing.assert_allclose(eq.marginals[0], plain.marginals[0], atol=1e-10)
    assert eq.info["residual"] == pytest.approx(qre_residual(game, eq.marginals, 3.0), abs=1e-12)
    assert eq.converged == (eq.info["residual"] <= eq.info["tol"])


@pytest.mark.slow
@pytest.mark.parametrize("scale", [1e8, 1e50, 1e150, 1e300])
@pytest.mark.parametrize("method", ["prd", "rae", "downside_rae"])
def test_item_5_huge_payoffs_do_not_crash(method, scale):
    game = catalog.random_game((3, 3), rng=1)
    eq = solve(game.with_payoffs(game.payoffs * scale), method, iterations=300)
    assert np.all(np.isfinite(eq.joint))
    if eq.converged:
        assert eq.info["verified_gap"] <= eq.info["gap_tol"]


# Games the fuzz of tests/solvers/test_fuzz.py found, kept as regressions.
# player 0's payoffs near 1e129: lambda * range about 2e130
QRE_OVERFLOW = (
    [[[1.1114833782583643e+129, -9.45882951852244e+128, 1.1114833782583643e+129],
      [-5.030101628589015e+128, 3.767162140939366e+128, -5.030101628589015e+128]],
     [[-724.1105154865255, 905.0445856282395, -724.1105154865255],
      [-7.946543080506605, -248.109214870615, -7.946543080506605]]]
)
# offsets -1e26 and -1e154; HiGHS failed on the support LP
MECCE_HIGHS = (
    [[[-9.999995679464271e+25, -9.999983248888544e+25, -9.99999526486408e+25, -1.0000005382121824e+26],
      [-9.999988082682008e+25, -9.999991734921848e+25, -1.0000012911379036e+26, -9.999991365379701e+25],
      [-1.0000004854027896e+26, -1.0000010920253895e+26, -9.999980103445564e+25, -1.0000013041282723e+26],
      [-9.99999445973313e+25, -9.999995411215837e+25, -9.999994475649469e+25, -9.999986657413573e+25]],
     [[-1.000000432053573e+154, -1.0000016751111457e+154, -1.000000473513592e+154, -9.999994617878176e+153],
      [-1.0000011917317992e+154, -1.0000008265078152e+154, -9.999987088620965e+153, -1.00000086346203e+154],
      [-9.999995145972106e+153, -9.999989079746105e+153, -1.0000019896554437e+154, -9.999986958717277e+153],
      [-1.0000005540266871e+154, -1.0000004588784163e+154, -1.0000005524350531e+154, -1.0000013342586427e+154]]]
)


def test_fuzz_found_qre_far_from_its_branch_answers_without_nan():
    eq = solve(NormalFormGame(np.array(QRE_OVERFLOW)), "qre")
    assert np.all(np.isfinite(eq.joint))
    assert eq.converged == (eq.info["residual"] <= eq.info["tol"])


def test_fuzz_found_mecce_support_lp_failure_is_an_honest_answer():
    game = NormalFormGame(np.array(MECCE_HIGHS))
    eq = solve(game, "mecce")
    assert not eq.converged and "support LP" in eq.info["status"]
    ranges = np.ptp(game.payoffs.reshape(2, -1), axis=1)
    assert np.all(cce_gains(game, eq.joint) / ranges <= 1e-9)  # still a coarse correlated equilibrium
