"""games.from_payoff_function: normal-form games tabulated from a payoff function."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import catalog, from_payoff_function


# ------------------------------------------------- normal form from functions
def test_from_payoff_function_matches_a_hand_written_game():
    # Prisoner's dilemma: years in prison are 1 each if both cooperate, 2 each if both defect,
    # 3 for a lone cooperator and 0 for the defector.
    years = {("C", "C"): (1, 1), ("C", "D"): (3, 0), ("D", "C"): (0, 3), ("D", "D"): (2, 2)}
    game = from_payoff_function(lambda p: [-y for y in years[p]], [["C", "D"], ["C", "D"]],
                                player_names=["row", "col"], name="pd")
    np.testing.assert_array_equal(game.payoffs, catalog.prisoners_dilemma().payoffs)
    assert game.strategy_names == (("C", "D"), ("C", "D")) and game.player_names == ("row", "col")


def test_from_payoff_function_three_players_and_call_count():
    calls = []

    def fn(profile):
        calls.append(profile)
        return [profile[0] * 100 + profile[1] * 10 + profile[2], 0, -profile[2]]

    game = from_payoff_function(fn, (2, 3, 4))
    assert len(calls) == 24 and len(set(calls)) == 24
    assert game.payoffs[0, 1, 2, 3] == 123 and game.payoffs[2, 1, 2, 3] == -3
    assert game.strategy_names[2] == ("s0", "s1", "s2", "s3")


@settings(max_examples=20)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.integers(0, 2**31 - 1))
def test_scalar_and_vectorized_tabulation_agree(shape, seed):
    shape = tuple(shape)
    table = np.random.default_rng(seed).normal(size=(len(shape), *shape))
    scalar = from_payoff_function(lambda a: table[(slice(None), *a)], shape)
    vector = from_payoff_function(lambda profiles: table[(slice(None), *profiles.T)].T, shape, vectorized=True)
    np.testing.assert_array_equal(scalar.payoffs, table)
    np.testing.assert_array_equal(vector.payoffs, table)


@pytest.mark.parametrize("fn, strategies, kwargs, error, match", [
    (lambda p: [1.0], (2, 2), {}, ValueError, r"must return 2 payoffs"),
    (lambda p: [math.nan, 0.0] if p == (1, 0) else [0.0, 0.0], (2, 2), {}, ValueError, r"fn\(\(1, 0\)\).*finite"),
    (lambda p: ["a", "b"], (2, 2), {}, TypeError, "sequence of 2 numbers"),
    (lambda p: np.zeros((4, 3)), (2, 2), {"vectorized": True}, ValueError, r"shape \(num_profiles, num_players\)"),
    (lambda p: np.where(p == 1, np.inf, 0.0), (2, 2), {"vectorized": True}, ValueError, "non-finite payoff"),
    (lambda p: [0, 0], (2, 0), {}, ValueError, "at least one strategy"),
    (lambda p: [0, 0], [["a"], []], {}, ValueError, r"strategies\[1\] must be a non-empty"),
    (lambda p: [0, 0], "ab", {}, ValueError, "one int per player"),
    (lambda p: [0, 0], 3, {}, TypeError, "one int per player"),
    (lambda p: [0, 0], (2, 2), {"player_names": ["solo"]}, ValueError, "one name per player"),
    ("not callable", (2, 2), {}, TypeError, "fn must be callable"),
])
def test_from_payoff_function_errors(fn, strategies, kwargs, error, match):
    with pytest.raises(error, match=match):
        from_payoff_function(fn, strategies, **kwargs)
