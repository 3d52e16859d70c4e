"""games.catalog: its games are valid, their known equilibria have zero NashConv, random games of every kind."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from games import catalog


@pytest.mark.parametrize("name", catalog.names())
def test_catalog_games_are_valid(name):
    g = catalog.get(name)
    assert g.num_players in (2, 3)
    assert g.name == name
    assert "Known equilibria" in getattr(catalog, name).__doc__


def test_catalog_known_equilibria_have_zero_nash_conv():
    from solvers import nash_conv

    half = np.array([0.5, 0.5])
    third = np.ones(3) / 3
    checks = {
        "rock_paper_scissors": [third, third],
        "matching_pennies": [half, half],
        "prisoners_dilemma": [np.array([0.0, 1.0])] * 2,
        "stag_hunt": [np.array([2 / 3, 1 / 3])] * 2,
        "chicken": [np.array([1 / 3, 2 / 3])] * 2,
        "bach_or_stravinsky": [np.array([0.6, 0.4]), np.array([0.4, 0.6])],
        "shapley_game": [third, third],
        "three_player_matching_pennies": [half, half, half],
        "biased_rock_paper_scissors": [np.array([1, 10, 5]) / 16] * 2,
    }
    assert set(checks) == set(catalog.names())
    for name, marg in checks.items():
        assert nash_conv(catalog.get(name), marg) < 1e-12, name


def test_catalog_unknown_name_suggests():
    with pytest.raises(ValueError, match="Did you mean 'stag_hunt'|Did you mean stag_hunt"):
        catalog.get("stag_hnt")


@given(st.lists(st.integers(1, 4), min_size=2, max_size=4), st.integers(0, 2**31 - 1))
def test_random_game_kinds(shape, seed):
    assert catalog.random_game(shape, kind="zero_sum", rng=seed).is_zero_sum()
    k = shape[0]
    assert catalog.random_game([k] * len(shape), kind="symmetric", rng=seed).is_symmetric()
    g1 = catalog.random_game(shape, rng=seed)
    g2 = catalog.random_game(shape, rng=seed)
    assert g1 == g2


def test_random_game_bad_kind():
    with pytest.raises(ValueError, match="kind must be"):
        catalog.random_game((2, 2), kind="weird")
    with pytest.raises(ValueError, match="equal strategy counts"):
        catalog.random_game((2, 3), kind="symmetric")
