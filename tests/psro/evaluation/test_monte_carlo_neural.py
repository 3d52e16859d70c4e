"""The monte_carlo evaluator on populations of policy objects, without a game tree (issue 12, item 4).

The reference payoffs are exact: the same networks tabularised over Kuhn poker's infostates and evaluated in the
sequence form (psro.evaluation.exact); the sampled means must agree within their standard errors.
"""

import numpy as np
import pyspiel
import pytest
import torch

from games import EmpiricalGame
from games.executors import ProcessPoolExecutor
from psro.evaluation import make_evaluator
from psro.evaluation.exact import SequenceFormEvaluator
from psro.evaluation.monte_carlo import EnvProfileSampler, MonteCarloEvaluator
from psro.evaluation.sampled_play import ProfileSampler
from psro.oracles.learned.networks import NeuralPolicy
from psro.policies import realization_plans
from psro.policies.acting import UniformPolicy
from psro.policies.population import PolicyPopulation, Population, Provenance
from psro.sequence_form.game_tree import build_game_tree

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def tree():
    return build_game_tree(pyspiel.load_game("kuhn_poker"))


def network(game, seed):
    torch.manual_seed(seed)
    policy = NeuralPolicy.for_game(game, hidden=(8,))
    with torch.no_grad():
        for param in policy.network.parameters():
            param.mul_(3.0)
    return policy


@pytest.fixture(scope="module")
def neural_pops(tree):
    pops = [PolicyPopulation(p, 2) for p in range(2)]
    for p, pop in enumerate(pops):
        pop.add([UniformPolicy(2), network(tree.game, 10 + p)], [Provenance(0, "initial")] * 2)
    return pops


def exact_payoffs(tree, pops):
    plans = [realization_plans(np.stack([m.to_tabular(tree, p) for m in pop.policies]), tree.infostates[p])
             for p, pop in enumerate(pops)]
    return SequenceFormEvaluator(tree).payoffs(plans)


@pytest.mark.parametrize("keyed", [False, True])
def test_sampled_means_of_networks_agree_with_their_exact_payoffs_without_a_tree(tree, neural_pops, keyed):
    mc = make_evaluator("monte_carlo", None, game="kuhn_poker", episodes_per_profile=3000, seed=1, keyed=keyed)
    assert mc.tree is None and isinstance(mc.sampler(neural_pops), EnvProfileSampler)
    meta = EmpiricalGame((2, 2))
    means = mc.evaluate(neural_pops, [range(2), range(2)], meta_game=meta)
    assert np.all(meta.count == 3000)
    exact = exact_payoffs(tree, neural_pops)
    variance = meta.total_sq / meta.count - (meta.total / meta.count) ** 2
    stderr = np.sqrt(variance / meta.count)
    assert np.all(stderr > 0)
    assert np.all(np.abs(means - exact) < 5 * stderr), (means, exact)
    np.testing.assert_allclose(means[0], -means[1], atol=1e-12)   # zero-sum, episode by episode


@pytest.mark.parametrize("keyed", [False, True])
def test_statistics_do_not_depend_on_batching_workers_or_interruptions(neural_pops, keyed):
    def run(**options):
        options = {"episodes_per_task": 200, **options}
        mc = MonteCarloEvaluator(None, episodes_per_profile=300, seed=4, game="kuhn_poker", keyed=keyed, **options)
        meta = EmpiricalGame((2, 2))
        mc.evaluate(neural_pops, [range(2), range(2)], meta_game=meta)
        return meta

    reference = run()
    batched = run(tasks_per_batch=1)
    # (forked: the workers come with torch imported; tests/psro/oracles/test_jobs.py sends neural policies to
    # spawned ones)
    with ProcessPoolExecutor(workers=2, start_method="fork") as pool:
        parallel = run(executor=pool)
    # interrupted after the first batch (one profile), then resumed: the missing episodes only
    mc = MonteCarloEvaluator(None, episodes_per_profile=300, seed=4, game="kuhn_poker", episodes_per_task=200,
                             tasks_per_batch=1, keyed=keyed)
    resumed = EmpiricalGame((2, 2))

    class Stop(Exception):
        pass

    def stop(batch):
        raise Stop

    with pytest.raises(Stop):
        mc.evaluate(neural_pops, [range(2), range(2)], meta_game=resumed, on_batch=stop)
    assert 0 < resumed.count[0].sum() < 4 * 300
    mc.evaluate(neural_pops, [range(2), range(2)], meta_game=resumed)
    others = [batched, parallel, resumed]
    if keyed:   # keyed episodes do not depend on how they are cut into tasks or on the width of the batch
        others += [run(episodes_per_task=300), run(num_envs=7)]
    for other in others:
        for name in ("count", "total", "total_sq"):
            assert np.array_equal(getattr(reference, name), getattr(other, name)), name
    # and the seed matters
    other_seed = MonteCarloEvaluator(None, episodes_per_profile=300, seed=5, game="kuhn_poker")
    assert not np.array_equal(other_seed.evaluate(neural_pops, [range(2), range(2)]), reference.mean())


def test_top_ups_work_on_the_neural_path(neural_pops):
    mc = MonteCarloEvaluator(None, episodes_per_profile=50, seed=0, game="kuhn_poker")
    meta = EmpiricalGame((2, 2))
    mc.evaluate(neural_pops, [range(2), range(2)], meta_game=meta)
    played = mc.top_up(meta, neural_pops, budget=400, method="support", strategy=[[0.5, 0.5], [0.0, 1.0]])
    assert played.sum() == 400 and np.array_equal(meta.count[0], 50 + played)
    result = mc.top_up(meta, neural_pops, budget=600, rng=3)
    assert 0 < result.total_samples <= 600 and meta.count[0].sum() == 200 + 400 + result.total_samples
    again = EmpiricalGame((2, 2))
    mc.evaluate(neural_pops, [range(2), range(2)], meta_game=again)
    mc.top_up(again, neural_pops, budget=400, method="support", strategy=[[0.5, 0.5], [0.0, 1.0]])
    mc.top_up(again, neural_pops, budget=600, rng=3)
    assert np.array_equal(again.total, meta.total)   # a function of the seeds
    progress = mc.top_up_rounds(again, neural_pops, 300, rounds=3, key=(1,), strategy=[[1.0, 0.0], [0.5, 0.5]])
    assert progress.round == 3 and progress.spent == 300


def test_the_path_follows_what_the_populations_hold(tree, neural_pops):
    mc = MonteCarloEvaluator(tree, episodes_per_profile=10)
    tabular = [Population(info) for info in tree.infostates]
    for p, pop in enumerate(tabular):
        pop.add(UniformPolicy(2).to_tabular(tree, p), Provenance(0, "initial"))
    assert isinstance(mc.sampler(tabular), ProfileSampler)
    assert isinstance(mc.sampler(neural_pops), EnvProfileSampler)   # a tree, but policy objects: the env
    # a tabular array inside a population of objects is played by infostate lookup, with the tree
    mixed = [PolicyPopulation(p, 2) for p in range(2)]
    for p, pop in enumerate(mixed):
        pop.add([UniformPolicy(2).to_tabular(tree, p), UniformPolicy(2)], [Provenance(0, "initial")] * 2)
    means = mc.evaluate(mixed, [range(2), range(2)])
    assert means.shape == (2, 2, 2)
    with pytest.raises(ValueError, match="needs the game tree"):
        MonteCarloEvaluator(None, game="kuhn_poker").sampler(mixed)


def test_leduc_without_a_tree():
    game = pyspiel.load_game("leduc_poker")
    pops = [PolicyPopulation(p, 3) for p in range(2)]
    for p, pop in enumerate(pops):
        pop.add([UniformPolicy(3), network(game, p)], [Provenance(0, "initial")] * 2)
    means = MonteCarloEvaluator(None, episodes_per_profile=200, game=game, seed=0).evaluate(
        pops, [range(2), range(2)])
    assert means.shape == (2, 2, 2) and np.all(np.isfinite(means))
    np.testing.assert_allclose(means[0], -means[1], atol=1e-12)


def test_bad_input(neural_pops, tree):
    with pytest.raises(ValueError, match="needs game="):
        MonteCarloEvaluator(None)
    with pytest.raises(ValueError, match="num_envs"):
        MonteCarloEvaluator(None, game="kuhn_poker", num_envs=0)
    tabular = [Population(info) for info in tree.infostates]
    for p, pop in enumerate(tabular):
        pop.add(UniformPolicy(2).to_tabular(tree, p), Provenance(0, "initial"))
    with pytest.raises(ValueError, match="tabular populations are sampled over the game tree"):
        MonteCarloEvaluator(None, game="kuhn_poker").evaluate(tabular, [range(1), range(1)])
    with pytest.raises(ValueError, match="populations needs one per player"):
        MonteCarloEvaluator(None, game="kuhn_poker").evaluate(neural_pops[:1], [range(1), range(1)])
    with pytest.raises(ValueError, match="keyed must be true or false"):
        MonteCarloEvaluator(None, game="kuhn_poker", keyed="yes")
    with pytest.raises(ValueError, match="keyed applies to populations of policy objects"):
        MonteCarloEvaluator(tree, keyed=True).evaluate(tabular, [range(1), range(1)])
