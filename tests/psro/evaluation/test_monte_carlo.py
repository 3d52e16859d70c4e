"""Monte Carlo evaluation: lockstep episodes agree with the exact sequence-form payoffs."""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import EmpiricalGame, ProcessPoolExecutor, SerialExecutor
from psro.evaluation import (
    EvaluationBatch,
    MonteCarloEvaluator,
    SequenceFormEvaluator,
    make_evaluator,
)
from psro.evaluation.sampled_play import build_play_tree
from psro.policies.population import Population, Provenance
from ranking.response_graph_sampling import profile_edges, response_graph


def random_populations(tree, k, seed):
    rng = np.random.default_rng(seed)
    pops = []
    for info in tree.infostates:
        raw = rng.random((k, info.num_infostates, info.num_actions)) ** 3 * info.legal_mask
        pop = Population(info)
        pop.add(raw / raw.sum(axis=2, keepdims=True), [Provenance(0, "initial")] * k)
        pops.append(pop)
    return pops


def pure_populations(tree, actions):
    """One population per player holding the policy that always plays ``actions[p]`` (Kuhn: 0 pass, 1 bet)."""
    pops = []
    for info, a in zip(tree.infostates, actions):
        pol = np.zeros((info.num_infostates, info.num_actions))
        pol[:, a] = 1.0
        pop = Population(info)
        pop.add(pol, Provenance(0, "initial"))
        pops.append(pop)
    return pops


def exact_moments(tree, pops):
    """Exact first and second moments of the returns of every profile, from the sequence form."""
    plans = [pop.plans for pop in pops]
    first = SequenceFormEvaluator(tree).payoffs(plans)
    squared = dataclasses.replace(tree, terminal_returns=tree.terminal_returns ** 2)
    return first, SequenceFormEvaluator(squared).payoffs(plans)


@pytest.mark.parametrize("game", ["kuhn", "leduc"])
def test_means_and_second_moments_match_the_exact_evaluator(game, request):
    tree = request.getfixturevalue(game)
    pops = random_populations(tree, 3, seed=1)
    episodes = 20_000
    mc = MonteCarloEvaluator(tree, episodes_per_profile=episodes, seed=5)
    meta = EmpiricalGame((3, 3))
    means = mc.evaluate(pops, [range(3), range(3)], meta_game=meta)
    first, second = exact_moments(tree, pops)
    assert np.all(meta.count == episodes)
    # Within the 99.99% interval of a normal estimate (9 x 2 entries; the run is seeded, so it is deterministic).
    lower, upper = meta.confidence_interval(delta=1e-4)
    assert np.all((lower <= first) & (first <= upper)), np.abs(means - first).max()
    var = second - first ** 2                                   # exact variance of one episode's return
    se_of_second = np.sqrt(np.maximum(var, 1e-12) * 4 * second.max() / episodes)
    assert np.all(np.abs(meta.total_sq / episodes - second) < 5 * se_of_second + 1e-12)
    assert np.allclose(meta.variance(), var, rtol=0.1, atol=1e-3)


@pytest.mark.parametrize("actions, returns", [
    ((1, 0), [1.0, -1.0]),      # player 0 always bets, player 1 always folds: player 0 wins the ante
])
def test_deterministic_outcome_by_hand(kuhn, actions, returns):
    meta = EmpiricalGame((1, 1))
    MonteCarloEvaluator(kuhn, episodes_per_profile=500, seed=0).evaluate(
        pure_populations(kuhn, actions), [[0], [0]], meta_game=meta)
    assert meta.total[:, 0, 0].tolist() == [500 * r for r in returns]
    assert meta.variance()[:, 0, 0].tolist() == [0.0, 0.0]


def test_showdown_for_two_chips_by_hand(kuhn):
    """Always bet against always call: every episode is a showdown for 2 chips, won by the higher card."""
    meta = EmpiricalGame((1, 1))
    MonteCarloEvaluator(kuhn, episodes_per_profile=6000, seed=2).evaluate(
        pure_populations(kuhn, (1, 1)), [[0], [0]], meta_game=meta)
    assert meta.total_sq[:, 0, 0].tolist() == [4.0 * 6000, 4.0 * 6000]   # every return is +-2
    assert meta.total[0, 0, 0] == -meta.total[1, 0, 0]
    wins = (meta.total[0, 0, 0] / 2 + 6000) / 2                          # player 0 wins with probability 1/2
    assert abs(wins / 6000 - 0.5) < 4 * np.sqrt(0.25 / 6000)


def test_results_do_not_depend_on_engine_or_batching(kuhn):
    pops = random_populations(kuhn, 4, seed=3)
    block = [range(4), range(4)]

    def run(executor, tasks_per_batch):
        meta = EmpiricalGame((4, 4))
        MonteCarloEvaluator(kuhn, episodes_per_profile=700, executor=executor, seed=9, episodes_per_task=1000,
                            tasks_per_batch=tasks_per_batch).evaluate(pops, block, meta_game=meta)
        return meta

    serial = run(SerialExecutor(), 64)
    with ProcessPoolExecutor(workers=2, start_method="fork") as pool:
        pooled = run(pool, 2)
    for name in ("count", "total", "total_sq"):
        assert np.array_equal(getattr(serial, name), getattr(pooled, name)), name
    other_seed = EmpiricalGame((4, 4))
    MonteCarloEvaluator(kuhn, episodes_per_profile=700, seed=10).evaluate(pops, block, meta_game=other_seed)
    assert not np.array_equal(other_seed.total, serial.total)


def test_interrupted_evaluation_resumes_to_the_same_statistics(kuhn):
    pops = random_populations(kuhn, 3, seed=4)
    block = [range(3), range(3)]
    options = {"episodes_per_profile": 1000, "seed": 1, "episodes_per_task": 300, "tasks_per_batch": 2}
    whole = EmpiricalGame((3, 3))
    MonteCarloEvaluator(kuhn, **options).evaluate(pops, block, meta_game=whole)

    class Crash(Exception):
        pass

    seen = []

    def crash_after_two(batch: EvaluationBatch):
        seen.append(batch)
        if len(seen) == 2:
            raise Crash

    meta = EmpiricalGame((3, 3))
    with pytest.raises(Crash):
        MonteCarloEvaluator(kuhn, **options).evaluate(pops, block, meta_game=meta, on_batch=crash_after_two)
    done = int(meta.count[0].sum())
    assert done == sum(int(b.episodes.sum()) for b in seen) and 0 < done < 9000
    MonteCarloEvaluator(kuhn, **options).evaluate(pops, block, meta_game=meta)     # resume
    for name in ("count", "total", "total_sq"):
        assert np.array_equal(getattr(meta, name), getattr(whole, name)), name
    # a complete block costs nothing more
    again = []
    MonteCarloEvaluator(kuhn, **options).evaluate(pops, block, meta_game=meta, on_batch=again.append)
    assert again == [] and np.array_equal(meta.count, whole.count)


def test_evaluate_without_meta_game_returns_means_of_the_block(kuhn):
    pops = random_populations(kuhn, 3, seed=6)
    mc = make_evaluator("monte_carlo", kuhn, episodes_per_profile=30_000, seed=0)
    means = mc.evaluate(pops, [[2, 0], [1]])
    first, _ = exact_moments(kuhn, pops)
    assert means.shape == (2, 2, 1)
    assert np.allclose(means, first[:, [2, 0]][:, :, [1]], atol=0.05)


def test_top_up_resolves_the_response_graph(kuhn):
    pops = random_populations(kuhn, 2, seed=7)
    for pop, info in zip(pops, kuhn.infostates):     # add "always bet/call" to make a clear 3 x 3 game
        pol = np.zeros((info.num_infostates, info.num_actions))
        pol[:, 1] = 1.0
        pop.add(pol, Provenance(0, "initial"))
    mc = MonteCarloEvaluator(kuhn, episodes_per_profile=50, seed=0)
    meta = EmpiricalGame((3, 3))
    mc.evaluate(pops, [range(3), range(3)], meta_game=meta)
    before = meta.count.copy()
    result = mc.top_up(meta, pops, budget=200_000, delta=0.01, rng=0)
    assert result.total_samples <= 200_000
    assert int((meta.count - before)[0].sum()) == result.total_samples
    first, _ = exact_moments(kuhn, pops)
    assert np.all(result.lower <= first + 1e-12) and np.all(first <= result.upper + 1e-12)
    # the edges whose final intervals are disjoint are the resolved ones, and each points the true way;
    # the budget leaves unresolved only edges whose true gap is below the interval widths
    truth = response_graph(first)
    e = profile_edges((3, 3))
    lo, hi, mean = (x.reshape(2, -1)[e.player] for x in (result.lower, result.upper, first))
    disjoint = (hi[np.arange(len(e.u)), e.u] < lo[np.arange(len(e.u)), e.v]) | (
        hi[np.arange(len(e.u)), e.v] < lo[np.arange(len(e.u)), e.u])
    assert int((~disjoint).sum()) == result.num_unresolved <= 4
    nodes = list(np.ndindex(3, 3))
    for k in disjoint.nonzero()[0]:
        u, v = nodes[e.u[k]], nodes[e.v[k]]
        assert ((u, v) in result.graph.edges) == ((u, v) in truth.edges)
    # (with both true payoffs inside their intervals, a gap above the two widths forces them apart)
    width = (result.upper - result.lower).reshape(2, -1)[e.player]
    edge = np.arange(len(e.u))
    gap = np.abs(mean[edge, e.v] - mean[edge, e.u])
    assert np.all(gap[~disjoint] <= width[edge, e.u][~disjoint] + width[edge, e.v][~disjoint])


def test_support_top_up_spends_the_budget_where_the_regret_depends(kuhn):
    pops = random_populations(kuhn, 3, seed=8)
    mc = MonteCarloEvaluator(kuhn, episodes_per_profile=40, seed=0)
    meta = EmpiricalGame((3, 3))
    mc.evaluate(pops, [range(3), range(3)], meta_game=meta)
    before = meta.count.copy()
    played = mc.top_up(meta, pops, budget=3000, method="support", strategy=[[0.5, 0.5, 0.0], [0.0, 0.2, 0.8]])
    assert played.sum() == 3000
    assert np.array_equal(meta.count - before, np.broadcast_to(played, before.shape))
    # (2, 0) lies two deviations away from the support {0, 1} x {1, 2}: no payoff at it enters a regret
    assert played[2, 0] == 0 and played.min() == 0
    assert played[0, 1] > 0 and played[2, 2] > 0       # in the support / a deviation of player 0 from it
    with pytest.raises(ValueError, match="probability distribution"):
        mc.top_up(meta, pops, budget=10, method="support", strategy=np.ones((3, 3)))
    with pytest.raises(ValueError, match="method must be"):
        mc.top_up(meta, pops, budget=10, method="widest")


def test_bad_arguments_raise_clear_errors(kuhn):
    with pytest.raises(ValueError, match="episodes_per_profile"):
        MonteCarloEvaluator(kuhn, episodes_per_profile=0)
    with pytest.raises(TypeError, match="GameTree or a pyspiel.Game"):
        MonteCarloEvaluator("kuhn_poker")
    with pytest.raises(ValueError, match="takes no options"):
        make_evaluator("sequence_form", kuhn, seed=1)
    with pytest.raises(ValueError, match="evaluator must be one of"):
        make_evaluator("sampled", kuhn)
    pops = random_populations(kuhn, 2, seed=0)
    mc = MonteCarloEvaluator(kuhn, episodes_per_profile=10)
    exact = EmpiricalGame((2, 2))
    exact.set_exact((0, 0), [0.0, 0.0])
    with pytest.raises(ValueError, match="exact values"):
        mc.evaluate(pops, [range(2), range(2)], meta_game=exact)
    with pytest.raises(ValueError, match="grow it first"):
        mc.evaluate(pops, [range(2), range(2)], meta_game=EmpiricalGame((1, 2)))
    with pytest.raises(ValueError, match="profiles must index"):
        mc.sample(pops, [[0, 2]], 5)
    with pytest.raises(ValueError, match="budget"):
        mc.top_up(EmpiricalGame((2, 2)), pops, budget=0)


def test_play_tree_of_kuhn_by_hand(kuhn):
    play = build_play_tree(kuhn)
    # a deal of 3 x 2 cards, then at most pass-bet-call/fold: 3 moves, 5 in all
    assert play.max_depth == 5
    assert int(play.is_terminal.sum()) == kuhn.num_terminals == 30
    assert np.allclose(play.chance_cdf[0, :3], [1 / 3, 2 / 3, 1.0])


@settings(max_examples=10)
@given(seed=st.integers(0, 10_000), counts=st.lists(st.integers(0, 300), min_size=1, max_size=6))
def test_sample_statistics_are_consistent(kuhn, seed, counts):
    pops = random_populations(kuhn, 2, seed=seed)
    profiles = np.random.default_rng(seed).integers(0, 2, size=(len(counts), 2))
    stats = MonteCarloEvaluator(kuhn, episodes_per_task=100, seed=seed).sample(pops, profiles, counts)
    c = np.array(counts)[:, None]
    assert stats.count.tolist() == counts
    assert np.all(np.abs(stats.total) <= 2 * c) and np.allclose(stats.total.sum(axis=1), 0)  # zero-sum, |u| <= 2
    assert np.all(stats.total_sq <= 4 * c) and np.all(stats.total_sq >= c)                   # every |u| in {1, 2}
    assert np.all(stats.total_sq * np.maximum(c, 1) >= stats.total ** 2 - 1e-9)              # Cauchy-Schwarz


def test_zero_probability_actions_are_never_played():
    """Rounding of cumulative sums never selects a trailing action with probability zero."""
    from psro.evaluation.sampled_play import _cumulative

    probs = np.array([[0.20381898702851367, 0.7463113329614236, 0.049869680010062596, 0.0]])
    assert np.cumsum(probs)[2] < 1.0                  # the naive cumulative sum stops short of 1
    u = np.nextafter(1.0, 0.0)                        # the largest uniform draw
    assert int((u >= np.cumsum(probs, axis=1)).sum()) >= 3          # the naive rule picks a zero slot (or none)
    assert int((u >= _cumulative(probs)).sum()) == 2                # ours picks the last positive one
    leading = np.array([[0.0, 0.0, 1.0]])
    assert int((0.0 >= _cumulative(leading)).sum()) == 2           # and never a leading zero slot


def test_episodes_per_profile_past_the_memory_limit_is_refused_before_any_table(monkeypatch):
    import pyspiel

    monkeypatch.setenv("PSRO_MAX_MEMORY", "1G")
    with pytest.raises(ValueError, match="episodes_per_profile=1000000000000000 needs about .* limit of 1 GiB"):
        MonteCarloEvaluator(pyspiel.load_game("kuhn_poker"), episodes_per_profile=10**15)
