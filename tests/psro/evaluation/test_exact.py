"""psro.evaluation.exact: sequence-form payoffs of blocks of profiles against pyspiel.expected_returns, and the two
exact evaluators against each other."""

import numpy as np
import pyspiel
from hypothesis import given, settings
from hypothesis import strategies as st

from games.empirical import EmpiricalGame
from psro.evaluation import OpenSpielEvaluator, SequenceFormEvaluator
from psro.policies import random_policies, realization_plans, to_openspiel_dict
from psro.policies.population import Population, Provenance
from psro.sequence_form.game_tree import build_game_tree


@settings(max_examples=6)
@given(seed=st.integers(0, 2**32 - 1), game_name=st.sampled_from(["kuhn_poker", "leduc_poker"]),
       sparsity=st.sampled_from([0.0, 0.6]))
def test_sequence_form_payoffs_equal_pyspiel_expected_returns(kuhn, leduc, seed, game_name, sparsity):
    tree = kuhn if game_name == "kuhn_poker" else leduc
    rng = np.random.default_rng(seed)
    pops = [Population(info) for info in tree.infostates]
    for pop in pops:
        pop.add(random_policies(pop.infostates, 2, rng, sparsity), [Provenance(0, "random")] * 2)
    index = [range(2), range(2)]
    ours = SequenceFormEvaluator(tree).block_payoffs(pops, index)
    root = tree.game.new_initial_state()
    for i in range(2):
        for j in range(2):
            profile = [pyspiel.TabularPolicy(to_openspiel_dict(pops[0].policies[i], tree.infostates[0])),
                       pyspiel.TabularPolicy(to_openspiel_dict(pops[1].policies[j], tree.infostates[1]))]
            expected = pyspiel.expected_returns(root, profile, -1, True)
            assert np.abs(ours[:, i, j] - expected).max() <= 1e-12


def test_both_evaluators_agree_on_a_block(kuhn):
    rng = np.random.default_rng(3)
    pops = [Population(info) for info in kuhn.infostates]
    for pop, k in zip(pops, (3, 2)):
        pop.add(random_policies(pop.infostates, k, rng), [Provenance(0, "random")] * k)
    index = [[2, 0], range(2)]
    assert np.allclose(SequenceFormEvaluator(kuhn).block_payoffs(pops, index),
                       OpenSpielEvaluator(kuhn).block_payoffs(pops, index), atol=1e-14)


def test_three_player_payoffs_equal_pyspiel():
    tree = build_game_tree(pyspiel.load_game("kuhn_poker(players=3)"))
    rng = np.random.default_rng(4)
    pols = [random_policies(info, 2, rng) for info in tree.infostates]
    ours = SequenceFormEvaluator(tree).payoffs([realization_plans(p, i) for p, i in zip(pols, tree.infostates)])
    root = tree.game.new_initial_state()
    for prof in np.ndindex(2, 2, 2):
        profile = [pyspiel.TabularPolicy(to_openspiel_dict(pols[p][prof[p]], tree.infostates[p])) for p in range(3)]
        assert np.abs(ours[(slice(None), *prof)] - pyspiel.expected_returns(root, profile, -1, True)).max() <= 1e-12


def test_an_exact_evaluator_writes_its_block_through_set_exact_block(kuhn):
    rng = np.random.default_rng(5)
    pops = [Population(info) for info in kuhn.infostates]
    for pop in pops:
        pop.add(random_policies(pop.infostates, 2, rng), [Provenance(0, "random")] * 2)
    meta, batches = EmpiricalGame((2, 2)), []
    evaluator = SequenceFormEvaluator(kuhn)
    assert not evaluator.done(meta, [range(2), range(1)])
    payoffs = evaluator.evaluate(pops, [range(2), range(1)], meta_game=meta, on_batch=batches.append)
    assert meta.exact[:, 0].all() and not meta.exact[:, 1].any() and evaluator.done(meta, [range(2), range(1)])
    np.testing.assert_array_equal(meta.mean()[:, :, :1], payoffs)
    assert len(batches) == 1 and batches[0].profiles.tolist() == [[0, 0], [1, 0]]
