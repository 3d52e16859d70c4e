"""Ranking uncertainty: alpha-Rank mass bounds over payoff boxes, bootstrap intervals, stability."""

import numpy as np
import pytest

from games import EmpiricalGame, datasets
from ranking.alpha_rank.alpharank_ranking import alpharank
from ranking.alpha_rank.uncertainty import (
    _lower_transitions,
    alpharank_mass_bounds,
    bootstrap_alpharank,
    payoff_intervals,
    ranking_stability,
)
from ranking.response_graph_sampling import response_graph_ucb


def _sampled_game(means, n, seed):
    """An EmpiricalGame with n Bernoulli samples per profile (independent players)."""
    rng = np.random.default_rng(seed)
    eg = EmpiricalGame(means.shape[1:])
    for prof in np.ndindex(*means.shape[1:]):
        wins = rng.random((n, means.shape[0])) < means[(slice(None), *prof)]
        eg.add_samples(prof, wins.astype(float))
    return eg


MEANS = np.array(
    [[[0.7, 0.2, 0.5], [0.4, 0.6, 0.3]],
     [[0.3, 0.8, 0.1], [0.5, 0.2, 0.9]]]
)  # two populations, 2 x 3 strategies


@pytest.mark.parametrize("single", [False, True])
def test_lower_transition_bound_is_the_chain_when_intervals_are_points(single):
    soccer = datasets.load_soccer().payoffs[:, :4, :4]
    payoffs = soccer if single else MEANS
    L = _lower_transitions(payoffs[:1] if single else payoffs, payoffs[:1] if single else payoffs,
                           single, 3.0, 7)
    table = payoffs[0] if single else list(payoffs)
    ref = alpharank(table, alpha=3.0, population_size=7, single_population=single).transition_matrix.toarray()
    np.testing.assert_allclose(L, ref, atol=1e-14)


@pytest.mark.parametrize("single", [False, True])
def test_zero_width_intervals_collapse_to_the_point(single):
    payoffs = datasets.load_soccer().payoffs[:, :5, :5] if single else MEANS
    b = alpharank_mass_bounds((payoffs, payoffs), alpha=2.0, population_size=10, single_population=single)
    table = payoffs[0] if single else list(payoffs)
    ref = alpharank(table, alpha=2.0, population_size=10, single_population=single).pi
    np.testing.assert_allclose(b.point, ref, atol=1e-12)
    for arr in (b.outer_lower, b.outer_upper, b.inner_lower, b.inner_upper):
        np.testing.assert_allclose(arr, ref, atol=1e-12)


@pytest.mark.parametrize("single", [False, True])
def test_bounds_contain_point_and_every_table_in_the_box(single):
    payoffs = datasets.load_soccer().payoffs[:, :5, :5] if single else MEANS
    lo, up = payoffs - 0.04, payoffs + 0.04
    b = alpharank_mass_bounds((lo, up), point=payoffs, alpha=4.0, population_size=20,
                              single_population=single, rng=0)
    assert np.all(b.outer_lower <= b.inner_lower + 1e-12) and np.all(b.inner_upper <= b.outer_upper + 1e-12)
    assert np.all((b.inner_lower <= b.point) & (b.point <= b.inner_upper))
    assert np.all(b.outer_upper - b.outer_lower > 0)
    # soundness: random tables inside the box have masses inside the outer bounds
    rng = np.random.default_rng(1)
    for _ in range(20):
        t = lo + (up - lo) * rng.random(lo.shape)
        pi = alpharank(t[0] if single else list(t), alpha=4.0, population_size=20, single_population=single).pi
        assert np.all(pi >= b.outer_lower - 1e-10) and np.all(pi <= b.outer_upper + 1e-10)
    marg = b.agents
    assert np.all(marg["outer_lower"] <= marg["point"]) and np.all(marg["point"] <= marg["outer_upper"])


def test_intervals_shrink_as_samples_grow():
    widths = []
    for n in (200, 2000, 20000):
        eg = _sampled_game(MEANS, n, seed=0)
        b = alpharank_mass_bounds(eg, alpha=2.0, population_size=10, single_population=False, rng=0)
        widths.append(float(np.mean(b.outer_upper - b.outer_lower)))
        assert np.all((b.outer_lower <= b.point) & (b.point <= b.outer_upper))
    assert widths[0] > widths[1] > widths[2]


def test_payoff_intervals_from_ucb_run_contain_true_means():
    res = response_graph_ucb(MEANS, delta=0.01, rng=0, max_samples=20_000)
    lo, up = payoff_intervals(res.empirical_game, delta=0.01)
    assert np.all((lo <= MEANS) & (MEANS <= up))
    b = alpharank_mass_bounds((res.lower, res.upper), point=res.empirical_game.mean(), alpha=1.0,
                              population_size=5, single_population=False)
    assert np.all(b.outer_lower <= b.point)


def test_bootstrap_intervals_and_stability():
    eg = _sampled_game(MEANS, 400, seed=2)
    boot = bootstrap_alpharank(eg, 60, alpha=2.0, population_size=10, single_population=False, rng=0)
    assert boot.samples.shape == (60, 6) and np.allclose(boot.samples.sum(axis=1), 1)
    assert np.all((boot.lower <= boot.point + 1e-12) & (boot.point <= boot.upper + 1e-12))
    assert list(boot.stability["k"]) == list(range(1, 7))
    assert boot.stability["p_unchanged"].iloc[-1] == 1.0  # the top-6 of 6 is always the full set
    again = bootstrap_alpharank(eg, 60, alpha=2.0, population_size=10, single_population=False, rng=0)
    np.testing.assert_array_equal(boot.samples, again.samples)
    # more samples -> narrower bootstrap intervals
    big = bootstrap_alpharank(_sampled_game(MEANS, 40_000, seed=2), 60, alpha=2.0, population_size=10,
                              single_population=False, rng=0)
    assert np.mean(big.upper - big.lower) < np.mean(boot.upper - boot.lower)


def test_bootstrap_exact_game_has_no_spread_and_constant_sum_is_kept():
    soccer = datasets.load_soccer()
    eg = EmpiricalGame.from_game(soccer)
    boot = bootstrap_alpharank(eg, 5, alpha=10.0, population_size=20, rng=0)
    np.testing.assert_allclose(boot.samples, np.broadcast_to(boot.point, boot.samples.shape))
    assert boot.stability["p_unchanged"].eq(1.0).all()
    ref = alpharank(soccer, alpha=10.0, population_size=20).pi
    np.testing.assert_allclose(boot.point, ref, atol=1e-12)


def test_ranking_stability_by_hand():
    point = np.array([0.1, 0.6, 0.3])
    draws = np.array([[0.2, 0.5, 0.3], [0.5, 0.4, 0.1], [0.1, 0.3, 0.6], [0.05, 0.9, 0.05]])
    s = ranking_stability(point, draws, k_max=3)
    # top-1 {1}: draws 0, 3; top-2 {1, 2}: draws 0, 2, 3 (draw 3 ties 0 and 2 at 0.05: stable order keeps 0)
    assert s["p_unchanged"].tolist() == [0.5, 0.5, 1.0]


def test_argument_errors():
    with pytest.raises(ValueError, match="lower and upper"):
        alpharank_mass_bounds((MEANS, MEANS[:, :1]))
    with pytest.raises(ValueError, match="lower bound"):
        alpharank_mass_bounds((MEANS + 0.1, MEANS))
    with pytest.raises(ValueError, match="alpha"):
        alpharank_mass_bounds((MEANS, MEANS), alpha=np.inf)
    with pytest.raises(ValueError, match="no samples"):
        bootstrap_alpharank(EmpiricalGame((2, 2)))
    with pytest.raises(ValueError, match="num_bootstrap"):
        bootstrap_alpharank(EmpiricalGame.from_game(datasets.load_soccer()), 0)
    with pytest.raises(ValueError, match="k_max"):
        ranking_stability(np.ones(3) / 3, np.ones((2, 3)) / 3, k_max=4)
