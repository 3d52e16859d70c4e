"""NormalFormGame, the catalog, EmpiricalGame, datasets and games.load."""

import numpy as np
import pyspiel
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from games import EmpiricalGame, NormalFormGame, catalog, datasets, load

# ----------------------------------------------------------------- strategies


@st.composite
def payoff_arrays(draw, max_players=4, max_k=4):
    n = draw(st.integers(1, max_players))
    shape = tuple(draw(st.lists(st.integers(1, max_k), min_size=n, max_size=n)))
    return draw(hnp.arrays(np.float64, (n, *shape), elements=st.floats(-1e6, 1e6, allow_nan=False)))


# ------------------------------------------------------------ construction


def test_from_bimatrix_defaults_to_zero_sum():
    g = NormalFormGame.from_bimatrix([[1, 2], [3, 4]])
    assert g.payoffs[1].tolist() == [[-1, -2], [-3, -4]]
    assert g.is_zero_sum()


def test_payoffs_are_immutable_and_copied():
    a = np.zeros((2, 2, 2))
    g = NormalFormGame(a)
    a[0, 0, 0] = 5.0
    assert g.payoffs[0, 0, 0] == 0.0
    with pytest.raises(ValueError):
        g.payoffs[0, 0, 0] = 1.0
    with pytest.raises(AttributeError):
        g.name = "x"


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_payoffs_are_rejected(bad):
    a = np.zeros((2, 2, 2))
    a[1, 0, 1] = bad
    with pytest.raises(ValueError, match=r"payoffs must be finite.*\(1, 0, 1\)"):
        NormalFormGame(a)


def test_ragged_payoffs_are_rejected():
    with pytest.raises(ValueError, match="ragged"):
        NormalFormGame.from_bimatrix([[1, 2], [3]])
    with pytest.raises(ValueError, match="ragged"):
        NormalFormGame([[[1, 2], [3, 4]], [[1, 2]]])


def test_shape_must_match_number_of_players():
    with pytest.raises(ValueError, match="needs 3 axes"):
        NormalFormGame(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="same shape"):
        NormalFormGame.from_bimatrix(np.zeros((2, 2)), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="strategy_names\\[1\\]"):
        NormalFormGame(np.zeros((2, 2, 3)), strategy_names=[["a", "b"], ["c"]])


def test_expected_payoffs_joint_and_marginals_agree():
    g = catalog.random_game((3, 4, 2), rng=3)
    rng = np.random.default_rng(0)
    marg = [rng.dirichlet(np.ones(k)) for k in g.shape]
    joint = g.joint_from_marginals(marg)
    np.testing.assert_allclose(g.expected_payoffs(joint), g.expected_payoffs_marginals(marg), rtol=1e-12)
    # brute force over profiles
    brute = np.zeros(3)
    for a in np.ndindex(*g.shape):
        brute += marg[0][a[0]] * marg[1][a[1]] * marg[2][a[2]] * g.payoffs[(slice(None), *a)]
    np.testing.assert_allclose(g.expected_payoffs_marginals(marg), brute, rtol=1e-12)


def test_deviation_payoffs_by_hand():
    g = catalog.prisoners_dilemma()
    # column plays cooperate with 0.25: row's cooperate pays -1*.25-3*.75, defect pays 0*.25-2*.75
    dev = g.deviation_payoffs([np.array([0.5, 0.5]), np.array([0.25, 0.75])])
    np.testing.assert_allclose(dev[0], [-2.5, -1.5])
    # row mixes 0.5: column's cooperate pays -2, defect pays -1
    np.testing.assert_allclose(dev[1], [-2.0, -1.0])


def test_distribution_validation_errors():
    g = catalog.matching_pennies()
    with pytest.raises(ValueError, match="sums to"):
        g.expected_payoffs_marginals([np.array([0.5, 0.6]), np.array([0.5, 0.5])])
    with pytest.raises(ValueError, match="negative"):
        g.expected_payoffs(np.array([[1.5, -0.5], [0, 0]]))
    with pytest.raises(ValueError, match="one mixed strategy per player"):
        g.expected_payoffs_marginals([np.array([0.5, 0.5])])


@given(payoff_arrays())
def test_array_round_trip(payoffs):
    g = NormalFormGame(payoffs)
    assert NormalFormGame.from_array(g.payoffs) == g
    assert g.shape == payoffs.shape[1:]


@given(payoff_arrays(max_players=4, max_k=3).filter(lambda a: a.shape[0] >= 2))
def test_pyspiel_round_trip(payoffs):
    g = NormalFormGame(payoffs, name="t")
    back = NormalFormGame.from_pyspiel(g.to_pyspiel())
    np.testing.assert_array_equal(back.payoffs, g.payoffs)
    assert back.strategy_names == g.strategy_names


def test_from_pyspiel_matrix_rps():
    g = NormalFormGame.from_pyspiel(pyspiel.load_game("matrix_rps"))
    np.testing.assert_array_equal(g.payoffs[0], catalog.rock_paper_scissors().payoffs[0])


# ----------------------------------------------------------------- catalog


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


# ---------------------------------------------------------------- EmpiricalGame


def test_empirical_game_statistics():
    eg = EmpiricalGame((2, 2))
    samples = np.array([[1.0, -1.0], [3.0, -3.0], [2.0, -2.0]])
    eg.add_samples((1, 0), samples)
    np.testing.assert_allclose(eg.mean()[:, 1, 0], [2.0, -2.0])
    np.testing.assert_allclose(eg.variance()[:, 1, 0], [1.0, 1.0])
    np.testing.assert_allclose(eg.standard_error()[:, 1, 0], np.sqrt([1 / 3, 1 / 3]))
    assert np.isnan(eg.mean()[0, 0, 0])
    lo, hi = eg.confidence_interval(0.05, payoff_range=(-3, 3))
    width = 6 * np.sqrt(np.log(2 / 0.05) / 6)
    np.testing.assert_allclose(hi[0, 1, 0] - lo[0, 1, 0], 2 * width)
    assert lo[0, 0, 0] == -np.inf


def test_empirical_game_grow_and_missing():
    eg = EmpiricalGame((1, 1))
    eg.set_exact((0, 0), [0.5, -0.5])
    eg.grow(0)
    eg.grow(1, 2)
    assert eg.shape == (2, 3)
    assert eg.missing_profiles() == [(0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    with pytest.raises(ValueError, match="5 profiles have no samples"):
        eg.mean_game()
    for p in eg.missing_profiles():
        eg.set_exact(p, [1.0, -1.0])
    g = eg.mean_game()
    assert g.payoffs[0, 0, 0] == 0.5 and g.payoffs[0, 1, 2] == 1.0
    assert np.all(eg.variance() == 0.0)


def test_empirical_game_save_load(tmp_path):
    eg = EmpiricalGame((2, 3), strategy_names=[["a", "b"], ["x", "y", "z"]])
    rng = np.random.default_rng(0)
    for p in np.ndindex(2, 3):
        eg.add_samples(p, rng.normal(size=(4, 2)))
    eg.set_exact((1, 2), [0.0, 0.0])
    eg.save(tmp_path / "g.npz")
    back = EmpiricalGame.load(tmp_path / "g.npz")
    np.testing.assert_array_equal(back.total_sq, eg.total_sq)
    np.testing.assert_array_equal(back.exact, eg.exact)
    assert back.strategy_names == eg.strategy_names
    assert back.mean_game() == eg.mean_game()


def test_empirical_game_from_game_is_exact():
    g = catalog.chicken()
    eg = EmpiricalGame.from_game(g)
    np.testing.assert_array_equal(eg.mean_game().payoffs, g.payoffs)
    lo, hi = eg.confidence_interval(0.1)
    np.testing.assert_array_equal(lo, hi)


# -------------------------------------------------------------- data and load


def test_soccer_is_constant_sum_win_probabilities():
    g = datasets.load_soccer()
    assert g.shape == (10, 10)
    assert g.is_constant_sum()
    assert np.all((g.payoffs >= 0) & (g.payoffs <= 1))


def test_rrps_table_is_complete():
    t = datasets.load_rrps_table()
    assert len(t) == 43 * 43
    g = datasets.rrps_game()
    assert "iocainebot" in g.strategy_names[0]
    # a bot against itself is a fair match on average
    assert np.abs(np.diag(g.payoffs[0])).max() < 50


def test_load_openspiel_game_and_suggestions():
    assert load("kuhn_poker(players=3)").num_players() == 3
    with pytest.raises(ValueError, match="Did you mean 'kuhn_poker'"):
        load("kuhn_pokr")
    with pytest.raises(ValueError, match="could not load"):
        load("kuhn_poker(players=banana)")
    with pytest.raises(TypeError, match="spec must be"):
        load(3)
