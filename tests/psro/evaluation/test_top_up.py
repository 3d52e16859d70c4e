"""The PSRO loop's Monte Carlo top-up: budget accounting, narrower intervals where they matter, exact resumption."""

import logging

import numpy as np
import pytest

from psro import PSRO
from psro.config.model import PSROConfig

EPISODES = 100   # per new profile
KEPT = ["iteration", "gap", "train_gap", "population_0", "population_1", "evaluations", "top_up_episodes",
        "episodes"]


def sampled(seed=3, budget=0, method="support", rounds=4, **options):
    evaluator_options = {"episodes_per_profile": EPISODES, **options.pop("evaluator_options", {})}
    return PSRO("kuhn_poker", evaluator="monte_carlo", evaluator_options=evaluator_options, seed=seed,
                progress=False, top_up_episodes=budget, top_up_method=method, top_up_rounds=rounds, **options)


def assert_same_run(a: PSRO, b: PSRO):
    assert a.iteration == b.iteration and a.evaluations == b.evaluations
    for pa, pb in zip(a.populations, b.populations):
        assert np.array_equal(pa.policies, pb.policies)
    for name in ("count", "total", "total_sq", "exact"):
        assert np.array_equal(getattr(a.meta_game, name), getattr(b.meta_game, name))
    assert np.array_equal(a.meta_strategy.joint, b.meta_strategy.joint)
    assert a.history[KEPT].equals(b.history[KEPT])


@pytest.mark.parametrize("method", ["support", "response_graph_ucb"])
def test_episodes_add_up_to_evaluation_plus_top_up(method):
    budget = 1500
    solver = sampled(budget=budget, method=method)
    history = solver.run(iterations=4)
    new_profiles = history["evaluations"].diff().fillna(history["evaluations"].iloc[0])
    played = history["episodes"].diff().fillna(history["episodes"].iloc[0])
    # every new profile gets EPISODES episodes; everything else the meta-game holds comes from the top-up
    assert (played == EPISODES * new_profiles + history["top_up_episodes"]).all()
    assert int(solver.meta_game.count[0].sum()) == history["episodes"].iloc[-1]
    assert (history["top_up_episodes"] <= budget).all()
    if method == "support":
        assert (history["top_up_episodes"] == budget).all()   # the whole budget, every iteration
    else:
        # a 1 x 1 meta-game has no response-graph edge: nothing to top up at iteration 0
        assert history["top_up_episodes"].iloc[0] == 0 and history["top_up_episodes"].iloc[1:].gt(0).all()


def test_a_top_up_that_cannot_spend_its_budget_says_why(caplog):
    with caplog.at_level(logging.INFO, logger="psro.evaluation"):
        history = sampled(budget=500, method="response_graph_ucb").run(iterations=0)
    assert history["top_up_episodes"].tolist() == [0]
    assert "spent 0 of 500 episodes: every edge of the response graph is resolved" in caplog.text


def support_width(solver: PSRO) -> float:
    """The meta-strategy-weighted width of the 95% intervals (normal approximation) of the payoffs."""
    lower, upper = solver.meta_game.confidence_interval(delta=0.05)
    return float((solver.meta_strategy.joint * (upper - lower).mean(axis=0)).sum())


@pytest.mark.parametrize("method", ["support", "response_graph_ucb"])
def test_top_up_narrows_the_intervals_of_the_meta_strategy_support(method):
    plain, topped = sampled(seed=11), sampled(seed=11, budget=4000, method=method)
    plain.run(iterations=3)
    topped.run(iterations=3)
    assert plain.history["top_up_episodes"].eq(0).all()
    # 4 x 4 profiles with 100 episodes each, against 100 + up to 4 x 4000 more where the top-up puts them
    assert support_width(topped) < 0.7 * support_width(plain)


@pytest.mark.parametrize("method", ["support", "response_graph_ucb"])
def test_same_seed_gives_the_same_run(method):
    a, b = sampled(seed=4, budget=800, method=method), sampled(seed=4, budget=800, method=method)
    a.run(iterations=3)
    b.run(iterations=3)
    assert_same_run(a, b)
    c = sampled(seed=5, budget=800, method=method)
    c.run(iterations=3)
    assert not np.array_equal(a.meta_game.total, c.meta_game.total)


@pytest.mark.parametrize("method", ["support", "response_graph_ucb"])
def test_resume_after_an_iteration_gives_the_uninterrupted_run(tmp_path, method):
    reference = sampled(budget=600, method=method)
    reference.run(iterations=5)
    first = sampled(budget=600, method=method, checkpoint_dir=tmp_path)
    first.run(iterations=2)
    resumed = PSRO.resume(tmp_path, progress=False)
    assert resumed.top_up_episodes == 600 and resumed.top_up_method == method
    assert resumed.meta_solver.warm_lp is None   # a top-up solves cold (old entries change)
    resumed.run(iterations=3)
    assert_same_run(reference, resumed)


class Killed(Exception):
    pass


@pytest.mark.parametrize("method", ["support", "response_graph_ucb"])
def test_run_killed_during_a_top_up_loses_no_batch_and_ends_like_the_uninterrupted_run(tmp_path, method):
    # small tasks, one per batch: a support round plays in several batches
    options = dict(budget=1200, method=method, rounds=3,
                   evaluator_options={"episodes_per_task": 40, "tasks_per_batch": 1})
    reference = sampled(**options)
    reference.run(iterations=4)
    solver = sampled(**options)
    saved = {}

    def save_then_die(s, index):
        progress = s.top_up_progress
        in_top_up = progress.key == (s.iteration,)
        mid_round = progress.target is not None if method == "support" else progress.round == 1
        if s.iteration == 3 and in_top_up and mid_round:
            s.save_checkpoint(tmp_path)
            saved["count"] = s.meta_game.count.copy()
            saved["progress"] = progress
            raise Killed   # the process dies right after a top-up batch is stored

    solver.on_evaluation_batch.append(save_then_die)
    with pytest.raises(Killed):
        solver.run(iterations=4)
    resumed = PSRO.resume(tmp_path, progress=False)
    assert resumed.in_iteration and resumed.iteration == 3
    assert np.array_equal(resumed.meta_game.count, saved["count"])   # every finished batch is kept
    restored = resumed.top_up_progress
    assert (restored.key, restored.round, restored.spent) == (saved["progress"].key, saved["progress"].round,
                                                              saved["progress"].spent)
    if method == "support":
        assert np.array_equal(restored.target, saved["progress"].target)
        assert np.array_equal(restored.strategy, saved["progress"].strategy)
        assert (restored.target >= saved["count"][0]).all() and (restored.target > saved["count"][0]).any()
    resumed.run(iterations=0)   # finishes iteration 3
    resumed.run(iterations=1)
    assert_same_run(reference, resumed)


def test_a_support_round_samples_at_most_128_profiles_in_equal_quanta():
    import pyspiel

    from games import EmpiricalGame
    from psro.evaluation import MonteCarloEvaluator
    from psro.evaluation.top_up import TOP_UP_PROFILES_PER_ROUND
    from psro.policies.population import Population, Provenance
    from psro.sequence_form.game_tree import build_game_tree

    tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    rng = np.random.default_rng(0)
    pops = []
    for info in tree.infostates:   # 12 random policies each: 144 profiles
        raw = rng.random((12, info.num_infostates, info.num_actions)) * info.legal_mask
        pop = Population(info)
        pop.add(raw / raw.sum(axis=2, keepdims=True), [Provenance(0, "initial")] * 12)
        pops.append(pop)
    mc = MonteCarloEvaluator(tree, episodes_per_profile=10, seed=0)
    meta = EmpiricalGame((12, 12))
    mc.evaluate(pops, [range(12), range(12)], meta_game=meta)
    before = meta.count[0].copy()
    done = mc.top_up_rounds(meta, pops, 1000, rounds=1, strategy=[np.full(12, 1 / 12)] * 2)
    added = (meta.count[0] - before).astype(int)
    quantum = -(-1000 // TOP_UP_PROFILES_PER_ROUND)            # 8 episodes
    assert done.spent == added.sum() == 1000 and quantum == 8
    assert np.count_nonzero(added) <= TOP_UP_PROFILES_PER_ROUND  # 125 quanta, the remainder on one of them
    assert np.count_nonzero(added % quantum) <= 1


def test_bad_top_up_options_name_the_option():
    with pytest.raises(ValueError, match="^top_up_episodes: must be an int >= 0; got -5"):
        sampled(budget=-5)
    with pytest.raises(TypeError, match="'top_up_episodes' must be an int; got True"):
        sampled(budget=True)
    with pytest.raises(ValueError, match="^top_up_method: must be one of"):
        sampled(budget=10, method="widest")
    with pytest.raises(ValueError, match="^top_up_rounds: must be an int >= 1"):
        sampled(budget=10, rounds=0)
    with pytest.raises(ValueError, match="^top_up_episodes: 10 needs evaluator='monte_carlo'"):
        PSRO("kuhn_poker", top_up_episodes=10, progress=False)
    assert PSRO("kuhn_poker", top_up_episodes=0, progress=False).top_up_episodes == 0   # off: any evaluator


def test_config_fields_are_validated_and_reach_the_solver():
    config = PSROConfig(evaluator="monte_carlo", episodes_per_profile=50)
    config = config.replace_from_strings(["top_up_episodes=300", "top_up_method=response_graph_ucb",
                                          "top_up_rounds=2"])
    config.validate()
    solver = PSRO(config.replace(progress=False))
    assert (solver.top_up_episodes, solver.top_up_method, solver.top_up_rounds) == (300, "response_graph_ucb", 2)
    assert solver.run(iterations=1)["top_up_episodes"].iloc[-1] > 0
    with pytest.raises(ValueError, match="^top_up_episodes: .*needs evaluator='monte_carlo'"):
        PSROConfig(top_up_episodes=100).validate()
    with pytest.raises(ValueError, match="^top_up_method: "):
        config.replace(top_up_method="ucb").validate()
    with pytest.raises(ValueError, match="^top_up_rounds: "):
        config.replace(top_up_rounds=0).validate()
    with pytest.raises(ValueError, match="'top_up_episodes' must be an int"):
        config.replace_from_strings(["top_up_episodes=lots"])
