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


def _fxp_u(a: int, b: int, n: int, c: float, eps: float) -> float:
    """Team A's payoff in the FXP example, written out from the issue's formula."""
    u = a - b
    if a == 0:
        u += (1 + eps) * b
    if b == 0:
        u -= (1 + eps) * a
    if a == 0 and b == n:
        u += c - n * eps
    if b == 0 and a == n:
        u -= c - n * eps
    return u


@pytest.mark.parametrize("team_size, c, eps", [(3, 0.1, 0.01), (2, 0.3, 0.05), (1, 0.1, 0.01)])
def test_fxp_example_is_the_formula_at_every_profile(team_size, c, eps):
    import itertools

    g = catalog.fxp_example(team_size=team_size, C=c, eps=eps)
    n = team_size
    assert g.num_players == 2 * n and g.shape == (2,) * (2 * n)
    for profile in itertools.product((0, 1), repeat=2 * n):
        u = _fxp_u(sum(profile[:n]), sum(profile[n:]), n, c, eps)
        assert g.payoffs[:n, *profile] == pytest.approx([u] * n, abs=1e-12)
        assert g.payoffs[n:, *profile] == pytest.approx([-u] * n, abs=1e-12)
    assert catalog.fxp_teams(team_size) == [list(range(n)), list(range(n, 2 * n))]


def test_fxp_example_all_one_is_a_local_equilibrium_that_the_all_zero_team_exploits():
    from solvers import nash_conv

    g = catalog.fxp_example()
    one, zero = np.array([0.0, 1.0]), np.array([1.0, 0.0])
    assert nash_conv(g, [one] * 6) == pytest.approx(0.0, abs=1e-12)   # no single player gains by leaving all-1
    assert g.payoffs[0][0, 1, 1, 1, 1, 1] == pytest.approx(-1.0)      # one player of A leaving loses 1
    assert g.payoffs[0][0, 0, 0, 1, 1, 1] == pytest.approx(0.1)       # the whole team leaving gains C
    assert nash_conv(g, [zero] * 6) == pytest.approx(0.0, abs=1e-12)  # all-0 against all-0


def test_fxp_example_bad_team_size():
    with pytest.raises(ValueError, match="team_size"):
        catalog.fxp_example(team_size=0)


def test_from_spec_builds_fixed_and_parameterised_games():
    assert catalog.from_spec("stag_hunt") == catalog.stag_hunt()
    assert catalog.from_spec(" fxp_example(team_size=2, C=0.3, eps=0.05) ") == catalog.fxp_example(2, 0.3, 0.05)
    assert catalog.from_spec("random_game(shape=(2, 3), kind='zero_sum', rng=4)") == \
        catalog.random_game((2, 3), kind="zero_sum", rng=4)


@pytest.mark.parametrize("spec, match", [("fxp_example(team=2)", "unexpected keyword"),
                                         ("fxp_example(3)", "by name"), ("chicken(x=1)", "parameterised"),
                                         ("fxp_example(team_size=2", "parameterised"),
                                         ("fxp_example(team_size=__import__('os'))", "cannot be built")])
def test_from_spec_names_what_is_wrong(spec, match):
    with pytest.raises(ValueError, match=match):
        catalog.from_spec(spec)


def test_a_config_spec_of_a_random_game_past_the_memory_limit_names_the_size_and_the_limit(monkeypatch):
    # issue 23 item 5: catalog:random_game(shape=(30000, 30000)) in a config ended in a 13 GiB MemoryError
    monkeypatch.setenv("PSRO_MAX_MEMORY", "1G")
    with pytest.raises(ValueError, match=r"^game: random_game\(shape=\(30000, 30000\)\) needs about 13.4 GiB, above "
                                         r"the memory limit of 1 GiB \(PSRO_MAX_MEMORY\)"):
        catalog.from_spec("random_game(shape=(30000, 30000))")
