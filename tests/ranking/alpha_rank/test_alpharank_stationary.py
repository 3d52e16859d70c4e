"""Stationary distributions of the alpha-Rank chain: GTH fallback, the chain held by blocks, residual checks."""

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from open_spiel.python.egt import alpharank as os_alpharank

import ranking.alpha_rank.alpharank_ranking as AR
from games import catalog
from ranking import alpharank
from ranking.alpha_rank.alpharank_chain import line_rates, multi_population_moves
from ranking.alpha_rank.alpharank_stationary import gth, recurrent_classes, solve_blocks, solve_dense


def issue_game():
    """A 3-population 2x3x2 game on which alpha=10, m=50 once gave pi = e_8, labelled "unique".

    While population 1 plays 0, populations 0 and 2 play matching pennies (the
    4-cycle of profiles 0, 1, 6, 7 in C order); population 1 loses by leaving
    0 whatever the others play. Every way out of the cycle is a descent by at
    least 0.5, fixating with probability about exp(-49 * 10 * 0.5) = 1e-106, and
    the cycle is symmetric: pi is 1/4 on each of its profiles to ~1e-100.
    """
    t = np.zeros((3, 2, 3, 2))
    t[0, :, 0, :] = [[1, -1], [-1, 1]]
    t[2, :, 0, :] = [[-1, 1], [1, -1]]
    t[1, :, 0, :] = 1.0
    t[0, 1, 1, 0], t[0, 0, 1, 0] = 1.0, -1.0
    t[2, 1, 1, 0], t[2, 1, 1, 1] = 1.0, -1.0
    t[1, 1, 1, 0] = 0.5
    return t


def transition_matrix_by_hand(tables, alpha, m):
    """OpenSpiel's C[s, t] = eta * rho for each single-population move, built profile by profile."""
    shape = tables.shape[1:]
    n = int(np.prod(shape))
    eta = 1.0 / sum(k - 1 for k in shape)
    c = np.zeros((n, n))
    for s in range(n):
        prof = np.unravel_index(s, shape)
        for p, k in enumerate(shape):
            for a in range(k):
                if a == prof[p]:
                    continue
                q = list(prof)
                q[p] = a
                u = alpha * (tables[p][tuple(q)] - tables[p][prof])
                rho = 1.0 / m if u == 0 else float((1 - mp.exp(-u)) / (1 - mp.exp(-m * u)))
                c[s, np.ravel_multi_index(q, shape)] = eta * rho
        c[s, s] = 1.0 - c[s].sum()
    return c


def test_issue_game_is_stationary():
    t = issue_game()
    res = alpharank(list(t), alpha=10.0, population_size=50)
    expected = np.zeros(12)
    expected[[0, 1, 6, 7]] = 0.25
    np.testing.assert_allclose(res.pi, expected, rtol=0, atol=1e-12)
    c = transition_matrix_by_hand(t, 10.0, 50)
    assert np.abs(res.pi @ c - res.pi).sum() <= 1e-9
    assert res.info["stationary"] == "unique" and res.info["converged"]
    assert res.info["residual"] <= 1e-9
    assert res.info["solver"] == "gth"  # the LU answer failed its residual check on this chain


def test_lu_failure_falls_back_to_gth():
    src, dst, gain, _ = multi_population_moves(issue_game())
    from ranking.alpha_rank.alpharank_chain import fixation
    rates = np.zeros((12, 12))
    rates[src, dst] = fixation(10.0 * gain, 50)
    lu = AR.solve_dense.__globals__["_solve_lu"](rates, None)
    assert lu.residual > 1e-9  # the plain LU answer is wrong here ...
    fixed = solve_dense(rates)
    assert fixed.method == "gth" and fixed.residual <= 1e-15  # ... and the answer is not


def _mp_pi(rates, digits=600):
    """Stationary distribution in high precision (600 digits: the LU elimination cancels across ~260 orders)."""
    with mp.workdps(digits):
        n = len(rates)
        q = mp.matrix(n, n)
        for s in range(n):
            for t in range(n):
                q[t, s] = mp.mpf(rates[s][t]) if s != t else -mp.fsum(mp.mpf(rates[s][u]) for u in range(n) if u != s)
        for t in range(n):
            q[0, t] = 1
        b = mp.matrix(n, 1)
        b[0] = 1
        return np.array([float(v) for v in mp.lu_solve(q, b)])


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 7), st.integers(0, 2**32 - 1), st.floats(1.0, 600.0))
def test_gth_is_entrywise_accurate_on_stiff_chains(n, seed, spread):
    # rates from e^-spread to 1: pi spans hundreds of orders of magnitude
    rng = np.random.default_rng(seed)
    rates = np.exp(-spread * rng.random((n, n)))
    np.fill_diagonal(rates, 0.0)
    ref = _mp_pi(rates.tolist())
    got = gth(rates).pi
    keep = ref > 1e-300
    np.testing.assert_allclose(got[keep], ref[keep], rtol=1e-11, atol=0)
    # scaling every rate (the time unit) leaves pi unchanged (kept above the subnormal range)
    for factor in (1e-40, 1e40):
        np.testing.assert_allclose(gth(rates * factor).pi[keep], got[keep], rtol=1e-12, atol=0)


def test_gth_on_a_chain_with_transient_states():
    rates = np.array([[0, 1.0, 0, 0], [0, 0, 2.0, 0], [0, 3.0, 0, 0], [1.0, 0, 0, 0]])  # 0 and 3 transient
    cls = recurrent_classes(rates)
    assert [c.tolist() for c in cls] == [[1, 2]]
    np.testing.assert_allclose(gth(rates, cls[0]).pi, [0, 0.6, 0.4, 0], atol=1e-15)


# ------------------------------------------------------------ chains held by blocks
@pytest.fixture
def blocks_above(monkeypatch):
    """Solve every multi-population chain above ``limit`` profiles by blocks."""
    def set_limit(limit):
        monkeypatch.setattr(AR, "BLOCK_LIMIT", limit)
    return set_limit


@pytest.mark.parametrize("shape", [(40, 50), (10, 12, 9)])
@pytest.mark.parametrize("alpha", [0.05, 1.0, 10.0, 100.0])
def test_blocks_agree_with_the_listed_moves(blocks_above, shape, alpha):
    tables = list(np.random.default_rng([len(shape), int(alpha)]).uniform(-1, 1, (len(shape), *shape)))
    listed = alpharank(tables, alpha=alpha)
    blocks_above(100)
    held = alpharank(tables, alpha=alpha, progress=False)
    assert held.info["solver"] == "gmres-blocks" and listed.info["solver"] != "gmres-blocks"
    assert held.info["stationary"] == listed.info["stationary"] == "unique"
    assert held.info["residual"] <= 1e-9 and held.info["converged"]
    np.testing.assert_allclose(held.pi, listed.pi, rtol=0, atol=1e-9)
    # the residual in info is the one of the chain's own transition matrix
    c = held.transition_matrix
    assert np.abs(c.T @ held.pi - held.pi).sum() <= held.info["residual"] * (1 + 1e-9)


def test_blocks_match_openspiel(blocks_above):
    tables = list(np.random.default_rng(11).uniform(-1, 1, (2, 8, 9)))
    blocks_above(10)
    ours = alpharank(tables, alpha=1.0, population_size=30, progress=False)
    assert ours.info["solver"] == "gmres-blocks"
    ref = os_alpharank.compute(tables, m=30, alpha=1.0)[2]
    np.testing.assert_allclose(ours.pi, ref, atol=1e-8, rtol=0)


def test_blocks_infinite_alpha(blocks_above):
    tables = list(np.random.default_rng(5).uniform(-1, 1, (2, 9, 11)))
    listed = alpharank(tables, use_inf_alpha=True, inf_alpha_eps=0.05)
    blocks_above(10)
    held = alpharank(tables, use_inf_alpha=True, inf_alpha_eps=0.05, progress=False)
    assert held.info["solver"] == "gmres-blocks"
    np.testing.assert_allclose(held.pi, listed.pi, atol=1e-10, rtol=0)


@pytest.mark.parametrize("seed", range(6))
def test_block_classes_equal_the_classes_of_every_move(seed):
    # integer payoffs with wide gaps: at alpha=100 most descents underflow and the floating-point
    # chain splits (or not), with many exact ties
    rng = np.random.default_rng(seed)
    tables = rng.integers(-3, 4, (2, 6, 7)).astype(float) * rng.choice([0.2, 1.0, 3.0])
    pt = AR.payoff_tables(list(tables))
    for alpha in (1.0, 30.0, 300.0):
        moves = AR._chain(pt, alpha, 50, "local", False, 0.0)
        expected = recurrent_classes(moves.sparse(moves.rate))
        got = AR._block_classes(pt, alpha, 50)
        assert [c.tolist() for c in got] == [c.tolist() for c in expected]


def test_split_chain_held_by_blocks_is_perturbed_and_says_so(blocks_above):
    # two strict pure equilibria whose basins are separated by descents that underflow
    a = np.array([[10.0, 0.0], [0.0, 10.0]])
    tables = [np.kron(a, np.ones((3, 3))), np.kron(a, np.ones((3, 3)))]
    blocks_above(10)
    res = alpharank(tables, alpha=100.0, progress=False)
    assert res.info["num_recurrent_classes"] > 1
    assert res.info["stationary"] == "perturbed" and res.info["perturbation"] == 1e-6
    assert res.info["converged"]
    with pytest.raises(ValueError, match="perturbation"):
        alpharank(tables, alpha=100.0, perturbation=0.0, progress=False)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(-1e6, 1e6), st.sampled_from([1e-3, 1.0, 1e3]))
def test_blocks_are_invariant_to_a_population_offset(seed, offset, alpha):
    # the chain depends on payoff differences within a population, so an offset changes nothing
    tables = np.random.default_rng(seed).uniform(-1, 1, (2, 6, 7))
    pt = AR.payoff_tables(list(tables))
    shifted = AR.payoff_tables([tables[0] + offset, tables[1]])
    pi = solve_blocks([line_rates(pt.tables, p, alpha, 20) for p in range(2)], (6, 7), progress=False)
    pi2 = solve_blocks([line_rates(shifted.tables, p, alpha, 20) for p in range(2)], (6, 7), progress=False)
    assert pi.residual <= 1e-9 and pi2.residual <= 1e-9
    tol = 1e-9 + 1e-15 * abs(offset) * alpha * 20  # rounding of the shifted payoffs' differences
    np.testing.assert_allclose(pi2.pi, pi.pi, atol=tol, rtol=0)


def test_progress_bar_can_be_turned_off(blocks_above, capsys):
    tables = list(np.random.default_rng(1).uniform(-1, 1, (2, 10, 10)))
    blocks_above(10)
    alpharank(tables, alpha=1.0, progress=False)
    assert capsys.readouterr().err == ""
    alpharank(tables, alpha=1.0, progress=True)
    assert "alpha-Rank (100 profiles)" in capsys.readouterr().err


def test_large_chain_by_blocks():
    # 90 x 90 = 8100 profiles: above BLOCK_LIMIT, so held by blocks without listing its 1.4e6 moves
    game = catalog.random_game((90, 90), kind="zero_sum", rng=4)
    res = alpharank(game, alpha=10.0, progress=False)
    assert res.info["solver"] == "gmres-blocks" and res.info["residual"] <= 1e-9
    assert res._moves is None  # the moves are built only when asked for
    assert abs(res.pi.sum() - 1.0) < 1e-12 and res.pi.min() >= 0.0


def test_an_unconverged_answer_says_so(blocks_above, monkeypatch, caplog):
    # no GMRES cycle at all: the answer is the starting guess, and the label must not be "unique"
    tables = list(np.random.default_rng(3).uniform(-1, 1, (2, 12, 12)))
    blocks_above(10)
    monkeypatch.setattr(AR, "solve_blocks", lambda *a, **kw: solve_blocks(*a, **{**kw, "max_cycles": 0}))
    res = alpharank(tables, alpha=10.0, progress=False)
    assert res.info["residual"] > 1e-9
    assert res.info["stationary"] == "unconverged" and not res.info["converged"]
    assert "residual" in caplog.text and "unconverged" in caplog.text
