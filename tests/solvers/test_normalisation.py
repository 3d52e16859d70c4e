"""solvers.normalisation and the normalised, verified path of solvers.solve."""

import inspect

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import solvers
from games import NormalFormGame, catalog
from solvers import solve
from solvers.normalisation import normalise, relative_gains


def test_normalise_maps_each_player_onto_the_unit_interval():
    game = NormalFormGame.from_bimatrix([[3.0, 5.0], [7.0, 3.0]], [[-1.0, -1.0], [-1.0, -1.0]])
    norm = normalise(game)
    np.testing.assert_array_equal(norm.game.payoffs[0], [[0.0, 0.5], [1.0, 0.0]])  # (u - 3) / 4
    np.testing.assert_array_equal(norm.game.payoffs[1], 0.0)  # a constant player
    assert norm.offsets.tolist() == [3.0, -1.0]
    assert norm.scales.tolist() == [4.0, 1.0]
    np.testing.assert_allclose(norm.to_payoffs([0.5, 0.0]), [5.0, -1.0])


def test_normalise_does_not_overflow_near_the_float_maximum():
    top = np.finfo(float).max / 1.5
    game = NormalFormGame.from_bimatrix([[top, -top], [-top, top]], [[0.0, 1e-310], [0.0, 0.0]])
    norm = normalise(game)
    np.testing.assert_array_equal(norm.game.payoffs[0], [[1.0, 0.0], [0.0, 1.0]])
    np.testing.assert_array_equal(norm.game.payoffs[1], [[0.0, 1.0], [0.0, 0.0]])  # a subnormal range
    assert np.isinf(norm.scales[0])  # 2 * top exceeds float64, but it is kept as mantissa and exponent
    assert norm.to_payoffs([0.5, 1.0])[0] == pytest.approx(0.0, abs=1e300)


def test_normalise_is_idempotent():
    game = catalog.random_game((3, 2, 2), rng=7)
    once = normalise(game).game
    twice = normalise(once)
    np.testing.assert_array_equal(twice.game.payoffs, once.payoffs)
    assert twice.offsets.tolist() == [0.0] * 3 and twice.scales.tolist() == [1.0] * 3


def test_relative_gains_of_matching_pennies_by_hand():
    norm = normalise(catalog.matching_pennies())  # payoffs in {-1, 1}: range 2
    pure = np.array([[1.0, 0.0], [0.0, 0.0]])
    # at (heads, heads) player 1 gains 2 of its range 2 by switching; player 0 is already best
    assert relative_gains(norm, "nash", pure).tolist() == [0.0, 1.0]
    assert relative_gains(norm, "cce", pure).tolist() == [0.0, 1.0]
    assert relative_gains(norm, "ce", np.full((2, 2), 0.25)).tolist() == [0.0, 0.0]


# ------------------------------------------------------------------------ invariance of solve
@st.composite
def exactly_transformed_pairs(draw):
    """An integer game and a copy with each player's payoffs times 2**k plus an exactly representable offset."""
    n = draw(st.sampled_from([2, 3]))
    shape = tuple(draw(st.integers(2, 3)) for _ in range(n))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    base = rng.integers(-4, 5, size=(n, *shape)).astype(np.float64)
    out = np.empty_like(base)
    for p in range(n):
        k = draw(st.integers(-900, 900))
        offset = draw(st.sampled_from([0.0, 2.0 ** 30, -(2.0 ** 20), 3.0]))
        out[p] = np.ldexp(base[p] + offset, k)
    return NormalFormGame(base), NormalFormGame(out)


# qre's rationality and the risk aversions are in 1 / payoff units: they are invariant only when scaled too
UNIT_FREE = [m for m in solvers.methods() if m not in ("qre", "rae", "downside_rae", "mwce", "mwcce")]


@settings(max_examples=4, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(exactly_transformed_pairs())
def test_answers_do_not_change_with_offsets_and_scales(pair):
    game, transformed = pair
    for method in UNIT_FREE:
        params = inspect.signature(solvers.method_info(method).function).parameters
        seeded = {"seed": 0} if "seed" in params else {"rng": 0} if "rng" in params else {}
        try:
            a = solve(game, method, **seeded)
        except ValueError as exc:  # the transformed game must be refused the same way
            with pytest.raises(ValueError, match=str(exc)[:20].replace("(", r"\(")):
                solve(transformed, method, **seeded)
            continue
        b = solve(transformed, method, **seeded)
        np.testing.assert_array_equal(a.joint, b.joint, err_msg=method)
        assert a.converged == b.converged, method
        assert a.info["verified_gap"] == b.info["verified_gap"], method


@pytest.mark.parametrize("method", ["rae", "downside_rae", "qre"])
def test_unit_options_scale_with_the_payoffs(method):
    game = catalog.random_game((3, 3), rng=2)
    scaled = game.with_payoffs(game.payoffs * 8.0 + 1024.0)
    key = "rationality" if method == "qre" else "risk_aversion"
    a = solve(game, method, **{key: 0.4})
    b = solve(scaled, method, **{key: 0.4 / 8.0})  # lambda * u and gamma * var / mean: both shrink by 8
    np.testing.assert_allclose(a.joint, b.joint, atol=1e-12)
    assert b.info[key] == pytest.approx(0.4 / 8.0)  # the value the caller gave


def test_mwce_keeps_the_welfare_of_the_payoffs_themselves():
    # player 1's payoffs x 1000: the welfare weighs player 1's payoffs by 1000, so the answer may move,
    # but it is still a verified CE whose welfare is the largest among the CEs of the scaled game
    chicken = catalog.chicken()
    payoffs = chicken.payoffs.copy()
    payoffs[1] *= 1000.0
    eq = solve(NormalFormGame(payoffs), "mwce")
    assert eq.converged and eq.info["verified_gap"] <= 1e-9
    assert eq.info["welfare"] == pytest.approx(float(eq.values.sum()))
    for other in ("mgce", "mece", "rvce"):
        assert solve(NormalFormGame(payoffs), other).values.sum() <= eq.info["welfare"] * (1 + 1e-9)


def test_a_false_claim_is_reported_as_not_converged():
    start = [np.array([1.0, 0.0, 0.0])] * 2  # (rock, rock) is far from the uniform equilibrium
    eq = solve(catalog.rock_paper_scissors(), "fictitious_play", iterations=3, tol=1e-6, initial=start)
    assert not eq.converged
    assert eq.info["verified_gap"] > 1e-6


def test_a_reference_target_moves_with_an_offset():
    # the docstring's lottery: 1 or 5 never falls below the reference payoff 1, so it is taken
    game = NormalFormGame.from_bimatrix([[1.0, 5.0], [2.0, 2.0]], np.zeros((2, 2)))
    shifted = game.with_payoffs(game.payoffs + np.array([1024.0, -3.0])[:, None, None])
    a = solve(game, "downside_rae", risk_aversion=1.0, target=1.0)
    b = solve(shifted, "downside_rae", risk_aversion=1.0, target=[1025.0, -3.0])
    np.testing.assert_allclose(a.joint, b.joint, atol=1e-12)
    np.testing.assert_allclose(a.marginals[0], [1.0, 0.0], atol=1e-9)
    assert b.info["target"] == [1025.0, -3.0] and b.converged
