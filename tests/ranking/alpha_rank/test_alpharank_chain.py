"""The alpha-Rank chain held by blocks: every block entry is the move's fixation probability."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ranking.alpha_rank.alpharank_chain import fixation, from_lines, line_rates, lines, multi_population_moves


def _block_entries(tables, p, blocks):
    """The block entry of each of population p's moves, in multi_population_moves' order."""
    shape = tables.shape[1:]
    n, k = int(np.prod(shape)), shape[p]
    src, dst, gain, pop = multi_population_moves(tables)
    idx = lines(np.arange(n), shape, p)
    line_of, pos = np.empty(n, dtype=int), np.empty(n, dtype=int)
    line_of[idx.ravel()] = np.repeat(np.arange(idx.shape[0]), k)
    pos[idx.ravel()] = np.tile(np.arange(k), idx.shape[0])
    sel = pop == p
    return blocks[line_of[src[sel]], pos[src[sel]], pos[dst[sel]]], gain[sel]


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 2), (5, 1, 4), (30, 40)])
@pytest.mark.parametrize("alpha", [0.1, 10.0, 100.0])
@pytest.mark.parametrize("scale", [0.01, 1.0, 50.0])
def test_block_entries_are_fixation_probabilities(shape, alpha, scale):
    tables = np.random.default_rng([len(shape), int(alpha)]).uniform(-scale, scale, (len(shape), *shape))
    for p, k in enumerate(shape):
        if k < 2:
            continue
        blocks = line_rates(tables, p, alpha, 50, chunk=700)  # several chunks, on several threads
        assert blocks.shape == (int(np.prod(shape)) // k, k, k)
        assert np.all(np.diagonal(blocks, axis1=1, axis2=2) == 0.0)
        got, gain = _block_entries(tables, p, blocks)
        ref = fixation(alpha * gain, 50)
        # alpha multiplies the payoffs before they are subtracted: a relative rounding of the
        # exponent, at most ~1e-16 * (m - 1) * alpha * |payoff|
        tol = 1e-13 + 1e-15 * 49 * alpha * scale
        tiny = ref < 1e-300  # below exp(-708) the blocks keep 0
        np.testing.assert_allclose(got[~tiny], ref[~tiny], rtol=tol, atol=0)
        assert np.all(got[tiny] <= 1e-300)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-3, 3), min_size=12, max_size=12), st.sampled_from([0.0, 1e-3, 2.0, 30.0]),
       st.integers(1, 60))
def test_ties_and_small_gains_are_exact(values, alpha, m):
    # Integer payoffs: many exact ties (rho = 1/m) and, at small alpha, gains near 0 (the expm1 path).
    tables = np.array(values, dtype=float).reshape(2, 2, 3)
    for p in range(2):
        got, gain = _block_entries(tables, p, line_rates(tables, p, alpha, m))
        np.testing.assert_allclose(got, fixation(alpha * gain, m), rtol=1e-13, atol=1e-300)


def test_perturbation_and_infinite_alpha():
    tables = np.array([[[0.0, 1.0], [2.0, 2.0]], [[0.0, 0.0], [0.0, 0.0]]])
    mixed = line_rates(tables, 0, 1.0, 4, perturbation=0.1)
    plain = line_rates(tables, 0, 1.0, 4)
    off = ~np.eye(2, dtype=bool)
    np.testing.assert_allclose(mixed[:, off], 0.9 * plain[:, off] + 0.1 / 4)
    inf = line_rates(tables, 0, np.inf, 4, inf_alpha=True, eps=0.01, scale=2.0)
    # line 0 (population 1 plays 0): 0 -> 2 is better; line 1: 1 -> 2 better
    assert inf[0, 0, 1] == 0.99 and inf[0, 1, 0] == 0.01
    assert inf[1, 0, 1] == 0.99 and inf[1, 1, 0] == 0.01
    ties = line_rates(np.zeros((2, 2, 2)), 1, np.inf, 4, inf_alpha=True, eps=0.01, scale=0.0)
    assert np.all(ties[:, off] == 0.5)


@pytest.mark.parametrize("shape", [(3,), (2, 3), (4, 1, 3), (2, 3, 2, 2)])
def test_lines_round_trip(shape):
    x = np.arange(int(np.prod(shape)))
    for p, k in enumerate(shape):
        ln = lines(x, shape, p)
        assert ln.shape == (x.size // k, k)
        # along a line only population p's index changes, by one step of its stride
        stride = int(np.prod(shape[p + 1:]))
        assert np.all(np.diff(ln, axis=1) == stride)
        np.testing.assert_array_equal(from_lines(ln, shape, p), x)
