"""games.NormalFormGame: construction, validation (non-real payoffs refused, issue 15 item 11), payoffs, round trips."""

import numpy as np
import pyspiel
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from games import NormalFormGame, catalog


@pytest.mark.parametrize("payoffs", [
    np.array([[[1, 0], [0, 1]], [[1, 0], [0, 1]]], dtype=complex),
    [[[1 + 2j, 0], [0, 1]], [[1, 0], [0, 1]]],
    np.array([[[1, 0], [0, 1]], [[1, 0], [0, 1]]], dtype=object) + 0j,
])
def test_complex_payoffs_are_refused_not_truncated(payoffs):
    with pytest.raises(TypeError, match=r"^payoffs is complex; payoffs must be real numbers"):
        NormalFormGame(payoffs)


@pytest.mark.parametrize("payoffs", [
    [[["1", "0"], ["0", "1"]], [["1", "0"], ["0", "1"]]],
    [[[1, "0"], [0, 1]], [[1, 0], [0, 1]]],
    np.array([[[1, 0], [0, 1]], [[1, 0], [0, 1]]]).astype(str),
    np.array([[[1, b"0"], [0, 1]], [[1, 0], [0, 1]]], dtype=object),
])
def test_numeric_strings_are_refused(payoffs):
    with pytest.raises(TypeError, match=r"^payoffs holds text; .* numeric strings"):
        NormalFormGame(payoffs)


def test_the_bimatrix_constructor_names_its_argument():
    with pytest.raises(TypeError, match=r"^col is complex"):
        NormalFormGame.from_bimatrix([[1, 0], [0, 1]], [[1j, 0], [0, 1]])
    with pytest.raises(TypeError, match=r"^row holds text"):
        NormalFormGame.from_bimatrix([["1", "0"], ["0", "1"]])


def test_real_payoffs_of_every_numeric_kind_are_accepted():
    ints = [[[1, 0], [0, 2]], [[2, 0], [0, 1]]]
    reference = NormalFormGame(np.array(ints, dtype=float)).payoffs
    for payoffs in (ints, np.array(ints, dtype=np.int8), np.array(ints, dtype=np.uint16),
                    np.array(ints, dtype=object), np.array(ints, dtype=np.float32)):
        np.testing.assert_array_equal(NormalFormGame(payoffs).payoffs, reference)
    big = NormalFormGame([[[2**70, 0], [0, 1]], [[0, 1], [1, 0]]])   # beyond int64: Python ints, still numbers
    assert big.payoffs[0, 0, 0] == float(2**70)
    assert NormalFormGame(np.array(ints, dtype=bool)).payoffs.dtype == np.float64


@st.composite
def payoff_arrays(draw, max_players=4, max_k=4):
    n = draw(st.integers(1, max_players))
    shape = tuple(draw(st.lists(st.integers(1, max_k), min_size=n, max_size=n)))
    return draw(hnp.arrays(np.float64, (n, *shape), elements=st.floats(-1e6, 1e6, allow_nan=False)))


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


def test_a_name_that_is_not_text_is_refused():
    # issue 23 item 12: name=5 became '5' silently
    with pytest.raises(TypeError, match=r"name must be a str \(the game's title\); got 5 \(int\)"):
        NormalFormGame(np.zeros((2, 2, 2)), name=5)


def test_duplicate_player_names_are_refused_naming_them():
    with pytest.raises(ValueError, match=r"player_names names \['a'\] more than once"):
        NormalFormGame(np.zeros((2, 2, 2)), player_names=("a", "a"))
