"""ResponseGraphUCB: confidence bounds, correctness with the configured confidence, OpenSpiel equality."""

import random

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from games import EmpiricalGame, NormalFormGame, catalog
from ranking import response_graph_sampling
from ranking.confidence_bounds import BOUNDS, confidence_bounds
from ranking.response_graph_sampling import (
    SCHEMES,
    count_wrong_edges,
    profile_edges,
    response_graph,
    response_graph_ucb,
)
from ranking.samplers import BernoulliSampler, FunctionSampler, OpenSpielSampler

# ----------------------------------------------------------------------------- bounds


def test_hoeffding_by_hand():
    cb = confidence_bounds(50, 20, delta=0.1)
    half = np.sqrt(np.log(2 / 0.1) / 100)
    assert cb.mean == pytest.approx(0.4)
    assert cb.lower == pytest.approx(0.4 - half) and cb.upper == pytest.approx(0.4 + half)
    # payoff range [-1, 1]: the half-width doubles
    cb2 = confidence_bounds(50, 2 * 20 - 50, delta=0.1, payoff_range=(-1, 1))
    assert cb2.upper - cb2.mean == pytest.approx(2 * half)


@pytest.mark.parametrize("k,n", [(0, 10), (3, 10), (10, 10), (17, 40)])
def test_clopper_pearson_matches_scipy_exact_interval(k, n):
    cb = confidence_bounds(n, k, delta=0.05, bound="clopper-pearson")
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    assert float(cb.lower) == pytest.approx(ci.low, abs=1e-12)
    assert float(cb.upper) == pytest.approx(ci.high, abs=1e-12)


def test_clopper_pearson_closed_forms():
    # k = 0: upper = 1 - (delta/2)^(1/n); k = n: lower = (delta/2)^(1/n)
    upper = float(confidence_bounds(8, 0, delta=0.1, bound="clopper-pearson").upper)
    assert upper == pytest.approx(1 - 0.05 ** (1 / 8))
    assert float(confidence_bounds(8, 8, delta=0.1, bound="clopper-pearson").lower) == pytest.approx(0.05 ** (1 / 8))


def test_bernstein_by_hand():
    x = np.array([0.2, 0.4, 0.4, 0.6, 0.9])
    cb = confidence_bounds(5, x.sum(), (x * x).sum(), delta=0.2, bound="bernstein")
    log_term = np.log(4 / 0.2)
    half = np.sqrt(2 * x.var(ddof=1) * log_term / 5) + 7 * log_term / (3 * 4)
    assert float(cb.upper) == pytest.approx(min(1.0, x.mean() + half))
    assert float(cb.lower) == pytest.approx(max(0.0, x.mean() - half))
    # zero variance: only the range term remains
    cb0 = confidence_bounds(100, 50, 25, delta=0.2, bound="bernstein")
    assert float(cb0.upper - cb0.mean) == pytest.approx(7 * log_term / (3 * 99))


def test_relaxed_bounds_shrink_by_eps():
    plain = confidence_bounds(30, 12, 12, delta=0.1, bound="clopper-pearson")
    relaxed = confidence_bounds(30, 12, 12, delta=0.1, bound="clopper-pearson-relaxed", eps=0.03)
    assert float(relaxed.lower) == pytest.approx(float(plain.lower) + 0.03)
    assert float(relaxed.upper) == pytest.approx(float(plain.upper) - 0.03)


@settings(max_examples=30)
@given(n=st.integers(1, 500), frac=st.floats(0, 1), delta=st.floats(0.001, 0.5),
       bound=st.sampled_from(["hoeffding", "clopper-pearson", "bernstein"]))
def test_bounds_are_ordered_inside_range_and_shrink(n, frac, delta, bound):
    k = round(frac * n)
    cb = confidence_bounds(n, k, k, delta=delta, bound=bound)
    assert 0 <= cb.lower <= cb.mean <= cb.upper <= 1
    more = confidence_bounds(4 * n, 4 * k, 4 * k, delta=delta, bound=bound)
    assert more.upper - more.lower <= cb.upper - cb.lower + 1e-12


def test_bound_argument_errors():
    with pytest.raises(ValueError, match="bound must be one of"):
        confidence_bounds(1, 1, bound="chernoff")
    with pytest.raises(ValueError, match="delta"):
        confidence_bounds(1, 1, delta=1.5)
    with pytest.raises(ValueError, match="payoff_range"):
        confidence_bounds(1, 1, payoff_range=(1, 0))


# ----------------------------------------------------------------------------- graph


def test_profile_edges_structure():
    e = profile_edges((3, 2, 2))
    # edges: player 0: 4 slices * C(3,2); players 1, 2: 6 slices * 1 each
    assert len(e.u) == 4 * 3 + 6 + 6
    assert e.incidence.shape == (12, 2 + 1 + 1)
    coords_u = np.array(np.unravel_index(e.u, (3, 2, 2)))
    coords_v = np.array(np.unravel_index(e.v, (3, 2, 2)))
    differ = coords_u != coords_v
    assert np.all(differ.sum(axis=0) == 1) and np.all(np.argmax(differ, axis=0) == e.player)
    for s in range(12):  # every incident edge touches s, and neighbour is its other end
        assert np.all((e.u[e.incidence[s]] == s) | (e.v[e.incidence[s]] == s))
        assert np.all((e.u[e.incidence[s]] + e.v[e.incidence[s]] - s) == e.neighbour[s])


def test_response_graph_prisoners_dilemma_points_to_defection():
    g = response_graph(catalog.prisoners_dilemma())
    # strategy 1 = defect is dominant: every edge points to the profile with more defection
    assert set(g.edges) == {((0, 0), (1, 0)), ((0, 1), (1, 1)), ((0, 0), (0, 1)), ((1, 0), (1, 1))}


# ----------------------------------------------------------------------------- the algorithm


def _gapped_game(shape, gap, seed):
    """Mean payoffs on a grid of spacing ``gap`` (distinct within every deviation slice)."""
    rng = np.random.default_rng(seed)
    levels = np.arange(0.1, 0.9 + 1e-9, gap)
    out = np.empty((len(shape), *shape))
    for p, k in enumerate(shape):
        moved = np.moveaxis(out[p], p, -1)
        for idx in np.ndindex(*moved.shape[:-1]):
            moved[idx] = rng.choice(levels, size=k, replace=False)
    return out


@pytest.mark.parametrize("bound", BOUNDS)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_recovers_true_graph_with_configured_confidence(bound, scheme):
    delta, seeds = 0.1, 20
    failures = 0
    for seed in range(seeds):
        means = _gapped_game((2, 2), 0.4, seed)
        res = response_graph_ucb(
            means, delta=delta, bound=bound, scheme=scheme, eps=0.02, time_dependent=True,
            per_payoff_confidence=False, rng=seed, max_samples=200_000,
        )
        assert res.resolved
        failures += count_wrong_edges(res.graph, response_graph(means)) > 0
    # P(any wrong edge) <= delta; P(Binomial(20, 0.1) >= 6) < 1.2%
    assert failures <= 5


class _Streams:
    """Pre-drawn outcomes per profile, read in order by both implementations."""

    def __init__(self, means, length, seed):
        self.n, self.shape = means.shape[0], means.shape[1:]
        flat = means.reshape(self.n, -1)
        rng = np.random.default_rng(seed)
        self.table = (rng.random((flat.shape[1], length, self.n)) < flat.T[:, None, :]).astype(float)
        self.pos = np.zeros(flat.shape[1], dtype=int)
        self.means = [means[p] for p in range(self.n)]
        self.n_players, self.strategy_spaces = self.n, list(self.shape)

    def take(self, flat_index):
        self.pos[flat_index] += 1
        return self.table[flat_index, self.pos[flat_index] - 1]

    def observe_result(self, profile):  # OpenSpiel's sampler interface
        return self.take(int(np.ravel_multi_index(profile, self.shape)))


@pytest.mark.parametrize("shape,bound", [((2, 2, 2), "hoeffding"), ((2, 3), "clopper-pearson")])
def test_count_weighted_draws_exactly_the_samples_of_openspiel(shape, bound):
    from open_spiel.python.algorithms import response_graph_ucb as os_rgucb

    means = _gapped_game(shape, 0.3, 3)
    os_name = {"hoeffding": "ucb-standard", "clopper-pearson": "clopper-pearson-ucb"}[bound]
    for seed in range(1):
        ours_streams, os_streams = _Streams(means, 20_000, seed), _Streams(means, 20_000, seed)
        sampler = FunctionSampler(lambda prof, rng, st=ours_streams: st.take(int(np.ravel_multi_index(prof, shape))),
                                  shape, binary=True)
        ours = response_graph_ucb(sampler, delta=0.1, bound=bound, scheme="count-weighted", rng=seed)
        np.random.seed(seed)
        random.seed(seed)
        ref = os_rgucb.ResponseGraphUCB(os_streams, exploration_strategy="count-weighted",
                                        confidence_method=os_name, delta=0.1)
        out = ref.run(verbose=False, max_total_iterations=100_000)
        assert ours.total_samples == out["interactions"]
        np.testing.assert_array_equal(ours.samples, ref.count[0].astype(int))
        assert set(ours.graph.edges) == set(out["graph"].edges)


def _textbook_run(streams, shape, scheme, bound, delta, seed, budget, time_dependent):
    """ResponseGraphUCB one sample at a time, straight from the paper's description.

    It draws the schedule's random numbers as the engine does with batches of one
    pick (``batch_size=max_batch_size=1``), so the two runs must be the same.
    """
    rng = np.random.default_rng(seed)
    e = profile_edges(shape)
    num, n = int(np.prod(shape)), len(shape)
    cnt, tot, sq = np.zeros(num), np.zeros((num, n)), np.zeros((num, n))
    open_ = np.ones(len(e.u), dtype=bool)
    better_is_v = np.zeros(len(e.u), dtype=bool)
    order = rng.permutation(len(e.u)) if scheme == "uniform-exhaustive" else None
    intervals = {}   # (profile, player) -> its interval, until the profile is sampled again

    def sample(s):
        x = np.asarray(streams.take(s), dtype=float)
        cnt[s] += 1
        tot[s] += x
        sq[s] += x * x
        for p in range(n):
            intervals.pop((s, p), None)

    def interval(s, p):
        if (s, p) not in intervals:
            level = delta * 6 / (np.pi**2 * cnt[s] ** 2) if time_dependent else delta
            cb = confidence_bounds(cnt[s], tot[s, p], sq[s, p], delta=level, bound=bound)
            intervals[s, p] = float(cb.mean), float(cb.lower), float(cb.upper)
        return intervals[s, p]

    def check(k, s):   # edge k seen from its end s: resolved if the two intervals are disjoint
        q = int(e.v[k] if s == e.u[k] else e.u[k])
        (ma, la, ua), (mb, lb, ub) = interval(s, e.player[k]), interval(q, e.player[k])
        s_is_v = s == e.v[k]
        if mb > ma or (mb == ma and not s_is_v):   # ties favour the v end
            hit, v_better = ua < lb, not s_is_v
        else:
            hit, v_better = ub < la, s_is_v
        if hit:
            open_[k] = False
            better_is_v[k] = v_better

    for s in range(num):
        sample(s)
    for k in range(len(e.u)):
        check(k, int(e.u[k]))
    total = num
    while open_.any() and total < budget:
        valence = np.bincount(np.concatenate([e.u[open_], e.v[open_]]), minlength=num)
        if scheme == "uniform-exhaustive":
            k = next(int(k) for k in order if open_[k])
            s = int(np.where(rng.random(1) < 0.5, e.v[k], e.u[k])[0])
        elif scheme == "uniform":
            k = open_.nonzero()[0][rng.integers(0, open_.sum(), size=1)]
            s = int(np.where(rng.random(1) < 0.5, e.v[k], e.u[k])[0])
        elif scheme == "valence-weighted":
            w = (valence * valence).cumsum()
            s = int(w.searchsorted(rng.random(1) * w[-1], side="right")[0])
        else:
            s = int(np.argmin(np.where(valence > 0, cnt, np.inf)))
        sample(s)
        total += 1
        for k in (open_ & ((e.u == s) | (e.v == s))).nonzero()[0]:
            check(int(k), s)
    return cnt.astype(int).reshape(shape), open_, better_is_v


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("shape,bound,time_dependent", [((2, 3), "hoeffding", False), ((2, 2, 2), "bernstein", True),
                                                        ((3, 2), "clopper-pearson", False)])
@pytest.mark.slow
def test_engine_equals_the_textbook_one_sample_at_a_time_loop(scheme, shape, bound, time_dependent):
    # the engine's blocks, lists and batches change speed only: with batches of one pick it draws the same
    # random numbers as the plain loop above, and must take the same samples and resolve the same edges
    means = _gapped_game(shape, 0.2, 11)
    for seed in range(3):
        ours_streams, ref_streams = _Streams(means, 20_000, seed), _Streams(means, 20_000, seed)
        sampler = FunctionSampler(lambda prof, rng, st=ours_streams: st.take(int(np.ravel_multi_index(prof, shape))),
                                  shape, binary=True)
        ours = response_graph_ucb(sampler, delta=0.1, bound=bound, scheme=scheme, rng=seed, max_samples=3000,
                                  time_dependent=time_dependent, batch_size=1, max_batch_size=1)
        samples, open_, better_is_v = _textbook_run(ref_streams, shape, scheme, bound, 0.1, seed, 3000,
                                                    time_dependent)
        np.testing.assert_array_equal(ours.samples, samples)
        assert ours.num_unresolved == int(open_.sum())
        e = profile_edges(shape)
        nodes = list(np.ndindex(*shape))
        for k in (~open_).nonzero()[0]:
            u, v = nodes[e.u[k]], nodes[e.v[k]]
            assert ((u, v) if better_is_v[k] else (v, u)) in ours.graph.edges


def test_batching_does_not_change_the_count_weighted_run():
    means = _gapped_game((2, 3), 0.3, 5)
    runs = []
    for batch in [(1, 1), (256, 4096)]:
        streams = _Streams(means, 50_000, 0)
        sampler = FunctionSampler(lambda prof, rng, st=streams: st.take(int(np.ravel_multi_index(prof, (2, 3)))),
                                  (2, 3), binary=True)
        r = response_graph_ucb(sampler, delta=0.05, scheme="count-weighted", rng=0,
                               batch_size=batch[0], max_batch_size=batch[1])
        runs.append(r)
    np.testing.assert_array_equal(runs[0].samples, runs[1].samples)
    np.testing.assert_array_equal(runs[0].empirical_game.total, runs[1].empirical_game.total)


def test_same_seed_same_run_and_state_in_empirical_game():
    means = _gapped_game((2, 2, 2), 0.2, 1)
    a = response_graph_ucb(means, delta=0.1, scheme="valence-weighted", rng=7)
    b = response_graph_ucb(means, delta=0.1, scheme="valence-weighted", rng=7)
    np.testing.assert_array_equal(a.samples, b.samples)
    np.testing.assert_array_equal(a.empirical_game.total, b.empirical_game.total)
    eg = a.empirical_game
    assert a.total_samples == a.samples.sum() == eg.count[0].sum()
    np.testing.assert_array_equal(eg.count[0], a.samples)
    assert np.all((eg.total >= 0) & (eg.total <= eg.count))
    np.testing.assert_array_equal(eg.total, eg.total_sq)  # Bernoulli outcomes: x == x**2


def test_soccer_single_winner_outcomes_are_coupled():
    from games import datasets

    soccer = datasets.load_soccer()
    res = response_graph_ucb(soccer, delta=0.1, rng=0, max_samples=3000)
    eg = res.empirical_game
    np.testing.assert_array_equal(eg.total[0] + eg.total[1], eg.count[0])  # exactly one winner per match
    assert res.total_samples == 3000 and not res.resolved and res.num_unresolved > 0
    # unresolved edges follow the sample means
    assert res.graph.number_of_edges() == res.num_edges == 2 * 10 * 45


def test_budget_and_warm_start():
    means = _gapped_game((2, 2), 0.4, 0)
    eg = EmpiricalGame((2, 2))
    first = response_graph_ucb(means, delta=0.1, rng=0, max_samples=10, empirical_game=eg)
    assert first.total_samples == 10 and not first.resolved
    second = response_graph_ucb(means, delta=0.1, rng=1, empirical_game=eg)
    assert second.resolved
    assert eg.count[0].sum() == first.total_samples + second.total_samples
    assert count_wrong_edges(second.graph, response_graph(means)) == 0


def test_function_and_live_openspiel_samplers():
    import pyspiel

    rps = catalog.rock_paper_scissors()

    def play(profile, rng):
        noise = rng.choice([-0.5, 0.5])
        return [rps.payoffs[0][profile] + noise, rps.payoffs[1][profile] - noise]

    res = response_graph_ucb(play, shape=(3, 3), payoff_range=(-1.5, 1.5), delta=0.05, bound="bernstein", rng=0)
    assert res.resolved and count_wrong_edges(res.graph, response_graph(rps)) == 0

    game = pyspiel.load_game("matrix_rps")
    pure = [[lambda state, player, a=a: {a: 1.0} for a in range(3)] for _ in range(2)]
    live = OpenSpielSampler(game, pure)
    res = response_graph_ucb(live, delta=0.05, rng=0)
    assert res.resolved and count_wrong_edges(res.graph, response_graph(rps)) == 0
    np.testing.assert_allclose(res.empirical_game.mean(), rps.payoffs)


def test_bernoulli_sampler_independent_players():
    s = BernoulliSampler(np.array([[[0.2, 0.9]], [[0.7, 0.3]]]))
    assert not s.single_winner
    out = s.draw(np.repeat([0, 1], 20_000), np.random.default_rng(0))
    np.testing.assert_allclose(out[:20_000].mean(axis=0), [0.2, 0.7], atol=0.02)
    np.testing.assert_allclose(out[20_000:].mean(axis=0), [0.9, 0.3], atol=0.02)


def test_argument_errors():
    means = _gapped_game((2, 2), 0.4, 0)
    with pytest.raises(ValueError, match="delta"):
        response_graph_ucb(means, delta=0)
    with pytest.raises(ValueError, match="scheme"):
        response_graph_ucb(means, scheme="greedy")
    with pytest.raises(ValueError, match="bound"):
        response_graph_ucb(means, bound="ucb")
    with pytest.raises(ValueError, match="max_samples"):
        response_graph_ucb(means, max_samples=0)
    with pytest.raises(ValueError, match="payoff_range"):
        response_graph_ucb(means * 3)
    with pytest.raises(ValueError, match="clopper-pearson"):
        response_graph_ucb(lambda p, rng: [0.5, 0.5], shape=(2, 2), bound="clopper-pearson")
    with pytest.raises(ValueError, match="shape"):
        response_graph_ucb(lambda p, rng: [0.5, 0.5])
    with pytest.raises(TypeError, match="sampler"):
        response_graph_ucb("soccer")
    with pytest.raises(ValueError, match="empirical_game"):
        response_graph_ucb(means, empirical_game=EmpiricalGame((3, 2)))
    with pytest.raises(ValueError, match="exactly known"):
        response_graph_ucb(means, empirical_game=EmpiricalGame.from_game(NormalFormGame(means)))


def test_graph_nodes_are_profiles():
    g = response_graph_ucb(NormalFormGame(_gapped_game((2, 3), 0.4, 2)), rng=0).graph
    assert isinstance(g, nx.DiGraph) and set(g.nodes) == {(i, j) for i in range(2) for j in range(3)}


@settings(max_examples=25)
@given(counts=st.lists(st.integers(0, 6), min_size=1, max_size=7), valence=st.lists(st.integers(0, 2), min_size=7,
       max_size=7), size=st.integers(1, 40))
def test_count_weighted_schedule_equals_one_pick_at_a_time(counts, valence, size):
    # the closed-form schedule equals repeatedly picking the least-sampled eligible profile (lowest index on ties)
    module = response_graph_sampling
    k = len(counts)
    valence = np.array(valence[:k])
    if not valence.any():
        valence[0] = 1
    run = module._Run(FunctionSampler(lambda p, rng: [0.5], (k,)), EmpiricalGame((k,)), "hoeffding", 0.1, 0.0,
                      False, "count-weighted", np.random.default_rng(0), 10**6)
    run.cnt[0] = counts
    run.valence = valence
    c = np.array(counts, dtype=float)
    expected = []
    for _ in range(size):
        pick = int(np.argmin(np.where(valence > 0, c, np.inf)))
        expected.append(pick)
        c[pick] += 1
    assert run._count_weighted(size).tolist() == expected

