"""solvers/dominance.py: pure and mixed, strict and weak domination; iterated elimination; pruning."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from games import NormalFormGame, catalog
from solvers import ce_gap, nash_conv, solve, vertex_enumeration
from solvers.dominance import dominating_strategy, is_dominated, iterated_dominance, solve_pruned

# Shoham and Leyton-Brown (2009), section 4.5.1: M is dominated by no pure strategy but by (U + D) / 2.
MIXED_ONLY = NormalFormGame.from_bimatrix([[3, 0], [1, 1], [0, 3]], [[1, 1], [1, 1], [1, 1]])
# Gambit's contrib/games/e02.nfg (Selten 1975, figure 2).
E02 = NormalFormGame.from_bimatrix([[1, 1], [0, 0], [0, 2]], [[1, 1], [2, 3], [2, 0]])


def test_mixed_domination_needs_the_lp():
    assert is_dominated(MIXED_ONLY, 0, 1)
    assert not is_dominated(MIXED_ONLY, 0, 1, mixed=False)
    np.testing.assert_allclose(dominating_strategy(MIXED_ONLY, 0, 1), [0.5, 0, 0.5], atol=1e-9)
    assert not is_dominated(MIXED_ONLY, 0, 0) and not is_dominated(MIXED_ONLY, 0, 2)
    # the column player's two actions are duplicates: neither dominates the other, even weakly
    assert not is_dominated(MIXED_ONLY, 1, 0, strict=False) and not is_dominated(MIXED_ONLY, 1, 1, strict=False)


def test_a_mixture_at_the_boundary_dominates_weakly_but_not_strictly():
    # M = (1.5, 1.5) equals (U + D) / 2 exactly, and no mixture beats it everywhere
    g = NormalFormGame.from_bimatrix([[3, 0], [1.5, 1.5], [0, 3]], np.zeros((3, 2)))
    assert not is_dominated(g, 0, 1)
    assert not is_dominated(g, 0, 1, strict=False)  # equal at both columns: no strict inequality anywhere
    # M = (1.5, 1): (U + D) / 2 beats it by (0, 0.5), and 0.6 U + 0.4 D by (0.3, 0.2), strictly
    g2 = NormalFormGame.from_bimatrix([[3, 0], [1.5, 1], [0, 3]], np.zeros((3, 2)))
    assert is_dominated(g2, 0, 1, strict=False) and is_dominated(g2, 0, 1)
    sigma = dominating_strategy(g2, 0, 1)
    assert sigma[1] == 0 and np.all(sigma @ g2.payoffs[0] > g2.payoffs[0][1])
    assert 0.5 < sigma[0] < 2 / 3  # the interval of strictly dominating mixtures


def test_gambit_e02_strict_and_weak_elimination():
    strict = iterated_dominance(E02)
    assert strict.surviving == ((0, 2), (0, 1))
    assert [(e.player, e.action, e.round) for e in strict.eliminated] == [(0, 1, 1)]
    assert strict.eliminated[0].dominator == {0: 1.0}
    weak = iterated_dominance(E02, strict=False)
    assert weak.surviving == ((0,), (0,))
    assert [(e.player, e.action) for e in weak.eliminated] == [(0, 1), (1, 1), (0, 2)]
    assert weak.game.payoffs[:, 0, 0].tolist() == [1.0, 1.0]
    assert weak.game.strategy_names == (("s0",), ("s0",))


def test_gambit_mixdom_needs_mixed_domination():
    # Gambit's contrib/games/mixdom.nfg, "Two person 4x4 game needing mixed domination" (zero-sum),
    # its payoff list read with the row player's strategy varying fastest
    row = np.array([6, 7, 5, 1, 2, 1, 4, 3, 1, 2, 6, 7, 4, 5, 7, 2], dtype=float).reshape(4, 4).T
    game = NormalFormGame.from_bimatrix(row)
    assert iterated_dominance(game, mixed=False).eliminated == ()  # no pure strategy dominates any other
    res = iterated_dominance(game)
    assert res.surviving == ((2,), (1,))
    first = res.eliminated[0]  # row 0 = (6, 2, 1, 4); e.g. 0.6 row 1 + 0.4 row 2 = (6.2, 2.2, 3.6, 5.8)
    assert (first.player, first.action) == (0, 0) and len(first.dominator) >= 2
    mix = sum(w * row[a] for a, w in first.dominator.items())
    assert np.all(mix > row[0])
    # the one surviving cell is the game's equilibrium, as the zero-sum LP finds independently
    lp = solve(game, "nash_zero_sum")
    assert lp.values[0] == pytest.approx(4.0, abs=1e-9)
    assert lp.marginals[0].argmax() == 2 and lp.marginals[1].argmax() == 1


def test_prisoners_dilemma_and_names_survive_the_reduction():
    res = iterated_dominance(catalog.prisoners_dilemma())
    assert res.surviving == ((1,), (1,))
    assert res.game.strategy_names == (("defect",), ("defect",))
    assert [e.name for e in res.eliminated] == ["cooperate", "cooperate"]


def test_games_without_dominance_are_unchanged():
    for game in (catalog.rock_paper_scissors(), catalog.matching_pennies(), catalog.stag_hunt()):
        res = iterated_dominance(game, strict=False)
        assert res.eliminated == () and res.game == game


def test_three_players():
    # player 2's second action pays 1 less than its first at every profile; then player 0 and 1 coordinate
    pay = np.zeros((3, 2, 2, 2))
    pay[2, :, :, 1] = -1.0
    pay[0, 0, :, 0] = 1.0   # against player 2's first action, player 0 prefers its first action
    pay[0, 1, :, 1] = 5.0   # ... which only fails against player 2's dominated action
    pay[1, 0, 1, :] = 2.0   # player 1 prefers its second action when player 0 plays its first
    pay[1, 1, 0, :] = 2.0
    res = iterated_dominance(NormalFormGame(pay))
    assert res.surviving == ((0,), (1,), (0,))
    assert [(e.player, e.action) for e in res.eliminated] == [(2, 1), (0, 1), (1, 0)]
    assert not is_dominated(NormalFormGame(pay), 0, 1)


def test_max_rounds_stops_early():
    res = iterated_dominance(E02, strict=False, max_rounds=1)
    # round 1: row 1 (dominated by row 0), then column 1 (weakly, once row 1 is gone); row 2 would be next
    assert res.surviving == ((0, 2), (0,))
    assert [(e.player, e.action, e.round) for e in res.eliminated] == [(0, 1, 1), (1, 1, 1)]


def test_solve_pruned_embeds_and_recomputes_the_gap():
    game = E02
    eq = solve_pruned(game, lambda g: solve(g, "nash"), strict=False)
    assert eq.marginals[0].tolist() == [1.0, 0.0, 0.0] and eq.marginals[1].tolist() == [1.0, 0.0]
    assert eq.gap == pytest.approx(nash_conv(game, eq.marginals), abs=1e-12) and eq.gap <= 1e-12
    ce = solve_pruned(game, lambda g: solve(g, "mgce"))
    assert ce.joint.shape == game.shape and ce.joint[1].sum() == 0.0
    assert ce.gap == pytest.approx(ce_gap(game, ce.joint), abs=1e-12)


def test_bad_input_is_refused_clearly():
    with pytest.raises(ValueError, match="player"):
        is_dominated(E02, 2, 0)
    with pytest.raises(ValueError, match="action"):
        is_dominated(E02, 0, 3)
    with pytest.raises(TypeError, match="strict"):
        is_dominated(E02, 0, 0, strict="yes")
    with pytest.raises(ValueError, match="tol"):
        is_dominated(E02, 0, 0, tol=-1.0)
    with pytest.raises(ValueError, match="max_rounds"):
        iterated_dominance(E02, max_rounds=0)
    with pytest.raises(TypeError, match="solver"):
        solve_pruned(E02, "nash")
    res = iterated_dominance(E02)
    with pytest.raises(ValueError, match="reduced game"):
        res.embed(E02, solve(E02, "nash"))


# ---------------------------------------------------------------------------------------- properties

small_ints = st.integers(-4, 4)


@st.composite
def games_with_a_dominated_row(draw):
    """A bimatrix game whose last row is strictly dominated by the mean of two other rows (minus 1)."""
    m = draw(st.integers(2, 3))
    n = draw(st.integers(2, 3))
    a = np.array(draw(st.lists(st.lists(small_ints, min_size=n, max_size=n), min_size=m, max_size=m)), float)
    b = np.array(draw(st.lists(st.lists(small_ints, min_size=n, max_size=n), min_size=m + 1, max_size=m + 1)),
                 float)
    i, j = draw(st.sampled_from([(i, j) for i in range(m) for j in range(m) if i < j] or [(0, 0)]))
    dominated = (a[i] + a[j]) / 2 - 1.0
    return NormalFormGame.from_bimatrix(np.vstack([a, dominated]), b)


def _profiles(eqs):
    return sorted(tuple(np.round(np.concatenate(e.marginals), 9)) for e in eqs)


@given(games_with_a_dominated_row())
def test_strict_elimination_never_removes_an_equilibrium(game):
    assert is_dominated(game, 0, game.shape[0] - 1)
    res = iterated_dominance(game)
    full = vertex_enumeration(game)
    reduced = [res.embed(game, e) for e in vertex_enumeration(res.game)]
    assert _profiles(full) == _profiles(reduced)  # the same extreme equilibria, so the same equilibria
    assert all(e.gap <= 1e-9 * max(1.0, np.ptp(game.payoffs)) for e in reduced)


@given(st.lists(st.lists(st.lists(small_ints, min_size=3, max_size=3), min_size=3, max_size=3), min_size=2,
                max_size=2),
       st.sampled_from([1e-6, 0.5, 7.0, 1e6]), st.sampled_from([-1e9, -3.0, 0.0, 1e9]), st.booleans(),
       st.booleans())
def test_answers_do_not_change_under_positive_affine_maps(pay, scale, offset, strict, mixed):
    game = NormalFormGame(np.array(pay, dtype=float))
    moved = game.with_payoffs(np.stack([game.payoffs[0] * scale + offset, game.payoffs[1]]))
    a = iterated_dominance(game, strict=strict, mixed=mixed)
    b = iterated_dominance(moved, strict=strict, mixed=mixed)
    assert a.surviving == b.surviving
    assert [(e.player, e.action) for e in a.eliminated] == [(e.player, e.action) for e in b.eliminated]


@given(st.lists(st.lists(st.lists(small_ints, min_size=3, max_size=3), min_size=3, max_size=3), min_size=2,
                max_size=2))
def test_pure_domination_implies_mixed_and_strict_implies_weak(pay):
    game = NormalFormGame(np.array(pay, dtype=float))
    for p in range(2):
        for a in range(3):
            pure_strict = is_dominated(game, p, a, strict=True, mixed=False)
            mixed_strict = is_dominated(game, p, a, strict=True, mixed=True)
            assert not pure_strict or mixed_strict
            assert not mixed_strict or is_dominated(game, p, a, strict=False, mixed=True)
            sigma = dominating_strategy(game, p, a, strict=True)
            if sigma is not None:  # the certificate itself: better at every column, recomputed here
                u = game.payoffs[p] if p == 0 else game.payoffs[p].T
                assert sigma[a] == 0 and np.all(sigma @ u > u[a])


def test_embedding_a_risk_averse_solution_rechecks_it_in_the_full_game():
    # the second row pays less than the first at every column, but without variance: strictly dominated,
    # yet against a mixing column player the best response of a risk-averse row player
    game = NormalFormGame.from_bimatrix([[3.0, 1.0], [0.9, 0.9]], np.zeros((2, 2)))
    res = iterated_dominance(game)
    assert res.surviving == ((0,), (0, 1))
    reduced = solve(res.game, "rae", risk_aversion=2.0)
    assert reduced.marginals[1].min() > 0.1  # the indifferent column player mixes
    eq = res.embed(game, reduced)
    assert eq.concept == "rae" and eq.gap > 0.1  # the pruned safe row is a profitable risk-averse deviation
    assert not eq.converged and eq.info["reduced_gap"] <= 1e-9
