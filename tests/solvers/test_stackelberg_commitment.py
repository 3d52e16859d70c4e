"""solvers/stackelberg_commitment.py: the leader's optimal mixed commitment (Conitzer and Sandholm 2006)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from games import NormalFormGame, catalog
from solvers import nash_conv_per_player, solve, stackelberg, vertex_enumeration

# Conitzer and Sandholm (2006), the example of their introduction: Up strictly dominates Down, so the
# only Nash equilibrium is (Up, Left) with leader value 2; committing to Down gives 3, and committing
# to (1/2, 1/2) (the follower indifferent, breaking the tie for the leader) gives 3.5.
CS_EXAMPLE = NormalFormGame.from_bimatrix([[2, 4], [1, 3]], [[1, 0], [0, 1]])


def test_conitzer_sandholm_example_strong():
    eq = stackelberg(CS_EXAMPLE)
    assert eq.concept == "stackelberg" and eq.method == "stackelberg"
    np.testing.assert_allclose(eq.marginals[0], [0.5, 0.5], atol=1e-9)
    assert eq.marginals[1].tolist() == [0.0, 1.0]
    np.testing.assert_allclose(eq.values, [3.5, 0.5], atol=1e-9)
    assert eq.info["leader_value"] == pytest.approx(3.5, abs=1e-9)
    assert eq.info["follower_best_responses"] == [0, 1]  # indifferent: the strong tie-break at work
    np.testing.assert_allclose(eq.info["lp_values"], [2.0, 3.5], atol=1e-9)  # inducing Left: Up, value 2
    assert eq.gap == pytest.approx(0.0, abs=1e-9) and eq.converged
    assert eq.info["leader_nash_conv"] == pytest.approx(0.5, abs=1e-9)  # the leader would deviate to Up
    nash = solve(CS_EXAMPLE, "nash")
    assert nash.values[0] == pytest.approx(2.0)


def test_conitzer_sandholm_example_weak():
    eq = stackelberg(CS_EXAMPLE, tie_breaking="weak", margin=1e-6)
    assert eq.info["leader_value_supremum"] == pytest.approx(3.5, abs=1e-9)
    assert 3.5 - 1e-5 < eq.values[0] < 3.5  # the supremum is not attained
    assert eq.info["follower_action"] == 1 and eq.info["follower_best_responses"] == [1]  # a strict preference
    follower_pay = CS_EXAMPLE.payoffs[1].T @ eq.marginals[0]
    assert follower_pay[1] - follower_pay[0] >= 1e-6 * (1 - 1e-9)


def test_weak_tie_breaking_guards_against_identical_follower_columns():
    # the follower is indifferent everywhere: strong gives the leader its best cell (3), weak its
    # maximin value over the two columns, max_p min(3p, 2 - p) = 1.5 at p = 1/2 (by hand)
    game = NormalFormGame.from_bimatrix([[3, 1], [0, 2]], np.zeros((2, 2)))
    strong = stackelberg(game)
    assert strong.values[0] == pytest.approx(3.0) and strong.marginals[0].tolist() == [1.0, 0.0]
    weak = stackelberg(game, tie_breaking="weak")
    assert weak.values[0] == pytest.approx(1.5, abs=1e-9)
    np.testing.assert_allclose(weak.marginals[0], [0.5, 0.5], atol=1e-9)
    assert weak.info["leader_value_supremum"] == pytest.approx(1.5, abs=1e-9)


def test_the_column_player_can_lead():
    # with the column player leading: its commitment (q, 1 - q); the row player (follower) prefers Up
    # iff 2q + 4(1 - q) >= q + 3(1 - q), always; the column leader then gets q * 1 + (1 - q) * 0, best q = 1
    eq = stackelberg(CS_EXAMPLE, leader=1)
    assert eq.marginals[0].tolist() == [1.0, 0.0] and eq.marginals[1].tolist() == [1.0, 0.0]
    assert eq.info["leader"] == 1 and eq.info["follower"] == 0
    np.testing.assert_allclose(eq.values, [2.0, 1.0])
    swapped = NormalFormGame.from_bimatrix(CS_EXAMPLE.payoffs[1].T, CS_EXAMPLE.payoffs[0].T)
    np.testing.assert_allclose(stackelberg(swapped).values[::-1], eq.values, atol=1e-9)


def test_zero_sum_commitment_value_is_the_minimax_value():
    for game in (catalog.matching_pennies(), catalog.rock_paper_scissors(),
                 catalog.random_game((4, 3), kind="zero_sum", rng=7)):
        value = solve(game, "nash_zero_sum").values[0]
        assert stackelberg(game).values[0] == pytest.approx(value, abs=1e-8)
        assert stackelberg(game, leader=1).values[1] == pytest.approx(-value, abs=1e-8)


def test_bad_input_is_refused_clearly():
    with pytest.raises(ValueError, match="exactly two"):
        stackelberg(catalog.three_player_matching_pennies())
    with pytest.raises(ValueError, match="leader"):
        stackelberg(CS_EXAMPLE, leader=2)
    with pytest.raises(ValueError, match="tie_breaking"):
        stackelberg(CS_EXAMPLE, tie_breaking="optimistic")
    with pytest.raises(ValueError, match="margin"):
        stackelberg(CS_EXAMPLE, tie_breaking="weak", margin=0.0)


# ---------------------------------------------------------------------------------------- properties

int_bimatrices = st.tuples(st.integers(1, 4), st.integers(1, 4)).flatmap(
    lambda mn: st.lists(st.integers(-5, 5), min_size=2 * mn[0] * mn[1], max_size=2 * mn[0] * mn[1]).map(
        lambda v: NormalFormGame(np.array(v, dtype=float).reshape(2, *mn))))


@given(int_bimatrices, st.sampled_from([0, 1]))
def test_leader_value_is_at_least_every_nash_value(game, leader):
    strong = stackelberg(game, leader=leader)
    weak = stackelberg(game, leader=leader, tie_breaking="weak")
    scale = max(1.0, float(np.ptp(game.payoffs[leader])))
    # the leader's payoff is bilinear, so its best Nash payoff is at an extreme equilibrium
    best_nash = max(e.values[leader] for e in vertex_enumeration(game))
    assert strong.values[leader] >= best_nash - 1e-9 * scale
    assert weak.info["leader_value_supremum"] <= strong.values[leader] + 1e-9 * scale
    assert weak.values[leader] <= weak.info["leader_value_supremum"] + 1e-9 * scale
    for eq in (strong, weak):  # the follower best responds, recomputed
        assert nash_conv_per_player(game, eq.marginals)[1 - leader] <= 1e-9 * scale
        assert eq.marginals[1 - leader].max() == 1.0
    # weak: the value is what a pessimistic follower leaves the leader, recomputed over its best responses
    x = weak.marginals[leader]
    lead = game.payoffs[leader] if leader == 0 else game.payoffs[leader].T
    foll = game.payoffs[1 - leader] if leader == 0 else game.payoffs[1 - leader].T
    brs = np.flatnonzero(x @ foll >= (x @ foll).max() - 1e-9 * scale)
    assert weak.values[leader] == pytest.approx(min(x @ lead[:, j] for j in brs), abs=1e-9 * scale)


@given(int_bimatrices, st.sampled_from([1e-5, 2.0, 1e5]), st.sampled_from([-1e7, 0.0, 3.0]))
def test_invariant_to_positive_affine_maps(game, scale, offset):
    moved = game.with_payoffs(game.payoffs * scale + offset)
    for leader in (0, 1):
        a, b = stackelberg(game, leader=leader), stackelberg(moved, leader=leader)
        assert a.values[leader] * scale + offset == pytest.approx(b.values[leader], abs=1e-8 * (abs(offset) + scale))
