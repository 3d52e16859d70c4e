"""solvers/nash/extreme_equilibria.py: vertex enumeration of all extreme equilibria, degenerate games included."""

from fractions import Fraction

import nashpy
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from games import NormalFormGame, catalog
from solvers import vertex_enumeration
from solvers.nash.extreme_equilibria import polytope_vertices
from solvers.nash.support_enumeration import enumerate_supports
from solvers.rational import exact_regrets, rational_payoffs

# von Stengel's 6x6 game with 75 equilibria (von Stengel 1999), as listed in Gambit's catalogue
# (contrib/games/stengel.nfg): one (row player, column player) pair per profile, the row player's
# strategy varying fastest.
STENGEL_75 = [
    9504, 72336, -111771, -461736, 397584, 1227336, 171204, -1718376, 1303104, 1303104, 737154, -453420,
    -660, 48081, 31680, -300036, -113850, 774576, -45936, -1039236, -453420, 737154, -227040, -227040,
    19976, 29216, -130944, -178761, 451176, 451176, 208626, -586476, 1227336, 397584, 774576, -113850,
    -20526, 14124, 168124, -84436, -586476, 208626, -263076, -263076, -1718376, 171204, -1039236, -45936,
    1776, 1776, -8514, -8976, 29216, 19976, 14124, -20526, 72336, 9504, 48081, -660, -8976, -8514,
    52764, 52764, -178761, -130944, -84436, 168124, -461736, -111771, -300036, 31680,
]


def gambit_bimatrix(numbers, shape):
    """A two-player game from Gambit's payoff-version list (first player's strategy fastest)."""
    pairs = np.array(numbers, dtype=float).reshape(-1, 2)
    return NormalFormGame(np.stack([pairs[:, p].reshape(shape[::-1]).T for p in range(2)]))


def exact_profiles(eqs):
    return sorted(tuple(tuple(str(v) for v in m) for m in e.info["certificate"].marginals) for e in eqs)


def test_gambit_e02_continuum_has_two_extreme_points():
    # Selten (1975), figure 2 (Gambit's e02.nfg): Player 1's first strategy against any column mixture
    # (1 - t, t) with t <= 1/2; by hand: strategy 3 pays 2t, strategy 2 is dominated.
    game = gambit_bimatrix([1, 1, 0, 2, 0, 2, 1, 1, 0, 3, 2, 0], (3, 2))
    assert game.payoffs[0].tolist() == [[1, 1], [0, 0], [0, 2]]
    eqs = vertex_enumeration(game, verify="exact")
    assert exact_profiles(eqs) == [(("1", "0", "0"), ("1", "0")), (("1", "0", "0"), ("1/2", "1/2"))]
    assert all(e.info["certified"] and e.converged and e.gap <= 1e-12 for e in eqs)


def test_von_stengel_degenerate_3x2_example():
    # von Stengel (2007, AGT chapter 3), the degenerate variant of the 3x2 example: the top row makes the
    # column player indifferent, so (top, y) is an equilibrium for every y_2 <= 1/3.
    game = NormalFormGame.from_bimatrix([[3, 3], [2, 5], [0, 6]], [[3, 3], [2, 6], [3, 1]])
    eqs = vertex_enumeration(game, verify="exact")
    assert exact_profiles(eqs) == sorted([(("1", "0", "0"), ("1", "0")), (("1", "0", "0"), ("2/3", "1/3")),
                                          (("0", "1/3", "2/3"), ("1/3", "2/3"))])


def test_von_stengel_nondegenerate_3x2_example():
    game = NormalFormGame.from_bimatrix([[3, 3], [2, 5], [0, 6]], [[3, 2], [2, 6], [3, 1]])
    assert exact_profiles(vertex_enumeration(game, verify="exact")) == sorted([
        (("1", "0", "0"), ("1", "0")), (("4/5", "1/5", "0"), ("2/3", "1/3")),
        (("0", "1/3", "2/3"), ("1/3", "2/3"))])


def test_all_75_equilibria_of_von_stengels_6x6_game_certified_exactly():
    game = gambit_bimatrix(STENGEL_75, (6, 6))
    eqs = vertex_enumeration(game, verify="exact")
    assert len(eqs) == 75
    assert all(e.info["certified"] for e in eqs)
    q = rational_payoffs(game)
    for e in eqs:  # recomputed here from the exact profile, not read from the certificate
        regrets, values = exact_regrets(q, e.info["certificate"].marginals)
        assert regrets == (0, 0)
        assert all(sum(m) == 1 and min(m) >= 0 for m in e.info["certificate"].marginals)
    fully_mixed = [e for e in eqs if (e.marginals[0] > 0).all() and (e.marginals[1] > 0).all()]
    assert len(fully_mixed) == 1


def test_gambit_deg1_degenerate_3x3():
    game = gambit_bimatrix([1, 1, 2, 3, 3, 2, 3, 2, 2, 2, 1, 2, 2, 3, 2, 1, 2, 2], (3, 3))
    eqs = vertex_enumeration(game, verify="exact")
    assert all(e.info["certified"] for e in eqs)
    # by hand: (3rd, 3rd) is pure; against the 3rd column every row pays 2, so the column player's
    # indifference between columns 1 and 2 at x = (1/2, 1/2, 0) makes a segment of equilibria
    assert (("0", "0", "1"), ("0", "0", "1")) in exact_profiles(eqs)
    assert (("1/2", "1/2", "0"), ("0", "0", "1")) in exact_profiles(eqs)


def test_matches_nashpy_on_nondegenerate_games():
    for seed in range(5):
        game = catalog.random_game((4, 5), rng=seed)
        ours = sorted(tuple(np.round(np.concatenate(e.marginals), 7)) for e in vertex_enumeration(game))
        theirs = sorted({tuple(np.round(np.concatenate(p), 7))
                         for p in nashpy.Game(game.payoffs[0], game.payoffs[1]).vertex_enumeration()})
        assert ours == theirs


def test_polytope_vertices_of_a_degenerate_pyramid():
    # z >= 0, |x| + z <= 1 and |y| + z <= 1 facet by facet: the square pyramid over [-1, 1]^2 with apex
    # (0, 0, 1), which lies on 4 facets (degenerate: C(4, 3) bases give it)
    g = np.array([[0, 0, -1], [1, 0, 1], [-1, 0, 1], [0, 1, 1], [0, -1, 1]], dtype=float)
    h = np.array([0, 1, 1, 1, 1], dtype=float)
    v = polytope_vertices(g, h)
    assert sorted(map(tuple, v.tolist())) == [(-1, -1, 0), (-1, 1, 0), (0, 0, 1), (1, -1, 0), (1, 1, 0)]


def test_bad_input_is_refused_clearly():
    with pytest.raises(ValueError, match="exactly two"):
        vertex_enumeration(catalog.three_player_matching_pennies())
    with pytest.raises(ValueError, match="max_bases"):
        vertex_enumeration(catalog.random_game((6, 6), rng=0), max_bases=100)
    with pytest.raises(ValueError, match="verify"):
        vertex_enumeration(catalog.stag_hunt(), verify="yes")
    with pytest.raises(ValueError, match="payoffs="):
        vertex_enumeration(NormalFormGame.from_bimatrix([[np.pi, 0], [0, 1]]), verify="exact")


# ---------------------------------------------------------------------------------------- properties

def int_games(min_k=1, max_k=4, lo=-3, hi=3):
    return st.tuples(st.integers(min_k, max_k), st.integers(min_k, max_k)).flatmap(
        lambda mn: st.lists(st.integers(lo, hi), min_size=2 * mn[0] * mn[1], max_size=2 * mn[0] * mn[1]).map(
            lambda v: NormalFormGame(np.array(v, dtype=float).reshape(2, *mn))))


@given(int_games())
def test_every_output_has_zero_regret_in_exact_arithmetic(game):
    # small integer ranges make most of these games degenerate (ties, continua)
    eqs = vertex_enumeration(game, verify="exact")
    assert eqs, "every game has an equilibrium, and so an extreme one"
    q = rational_payoffs(game)
    for e in eqs:
        profile = e.info["certificate"].marginals
        assert e.info["certified"]
        assert exact_regrets(q, profile)[0] == (Fraction(0), Fraction(0))
        assert np.allclose([float(v) for v in profile[0]], e.marginals[0], atol=1e-9, rtol=0)


@given(int_games(min_k=2))
def test_contains_every_support_enumeration_equilibrium(game):
    ours = [np.concatenate(e.marginals) for e in vertex_enumeration(game)]
    for x, y in enumerate_supports(game.payoffs[0], game.payoffs[1]):
        z = np.concatenate([x, y])
        assert min(np.abs(v - z).max() for v in ours) <= 1e-8


@given(int_games(min_k=2, max_k=3), st.sampled_from([1e-6, 3.0, 1e6]), st.sampled_from([-1e8, 0.0, 5.0]))
def test_invariant_to_positive_affine_maps(game, scale, offset):
    moved = game.with_payoffs(np.stack([game.payoffs[0], game.payoffs[1] * scale + offset]))
    a = sorted(tuple(np.round(np.concatenate(e.marginals), 8)) for e in vertex_enumeration(game))
    b = sorted(tuple(np.round(np.concatenate(e.marginals), 8)) for e in vertex_enumeration(moved))
    assert a == b
