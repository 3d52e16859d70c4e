"""Learned oracles on populations of neural policies, with and without a game tree (issue 12, items 2-3).

The exact reference is psro.oracles.exact.best_response against the opponents' tabular forms (NeuralPolicy.to_tabular
over Kuhn poker's infostates); its values on Kuhn are checked against pyspiel.TabularBestResponse in test_oracle.
"""

import math
from types import SimpleNamespace

import numpy as np
import pyspiel
import pytest
import torch

from psro.oracles import Target, make_oracle
from psro.oracles.exact import best_response
from psro.oracles.learned.dqn import DQNConfig
from psro.oracles.learned.networks import NeuralPolicy
from psro.oracles.learned.oracle import LearnedOracle, exact_value
from psro.oracles.learned.ppo import PPOConfig
from psro.policies import realization_plans
from psro.policies.acting import UniformPolicy
from psro.policies.population import Population, Provenance
from psro.sequence_form.game_tree import build_game_tree

torch.set_num_threads(1)

TINY = PPOConfig(total_steps=256, num_envs=8, num_steps=16, eval_episodes=40, hidden=(16,))


@pytest.fixture(scope="module")
def tree():
    return build_game_tree(pyspiel.load_game("kuhn_poker"))


def fixed_network(game, seed: int, scale: float = 3.0) -> NeuralPolicy:
    """A fixed, clearly non-uniform network opponent."""
    torch.manual_seed(seed)
    policy = NeuralPolicy.for_game(game, hidden=(16,))
    with torch.no_grad():
        for param in policy.network.parameters():
            param.mul_(scale)
    return policy


def pops_of(*members_per_player):
    return [SimpleNamespace(policies=list(members)) for members in members_per_player]


def plan_of(policy, tree, player):
    return realization_plans(policy.to_tabular(tree, player)[None], tree.infostates[player])[0]


def weights_of(policy: NeuralPolicy) -> list:
    return list(policy.to_arrays().values())


def test_ppo_response_to_a_fixed_network_reaches_the_exact_best_response_value(tree):
    opponent = fixed_network(tree.game, seed=0)
    target = Target(player=0, populations=pops_of([UniformPolicy(2)], [opponent]), mixtures=(np.ones(1), np.ones(1)))
    exact_br = best_response(tree, 0, [None, plan_of(opponent, tree, 1)]).value
    oracle = LearnedOracle(tree, "ppo", PPOConfig(total_steps=8192, eval_episodes=2000), seed=1)
    br = oracle.respond(0, target, key=(1, 0))
    assert isinstance(br.policy, NeuralPolicy) and br.policy is br.network and br.policy.mode == "softmax"
    # the exact value is the tabularised response's, which nothing beats; 8192 steps get within 0.05 of the best
    table = br.policy.to_tabular(tree, 0)
    assert br.exact_value == pytest.approx(exact_value(tree, 0, table, [None, plan_of(opponent, tree, 1)]),
                                           abs=1e-12)
    assert exact_br - 0.05 <= br.exact_value <= exact_br + 1e-12
    assert br.value == br.exact_value
    # the estimate is of the policy as returned (softmax play), so it agrees with the exact value
    assert br.estimated_stderr > 0 and abs(br.estimated_value - br.exact_value) < 5 * br.estimated_stderr
    assert br.policy.provenance.value == br.value and br.policy.provenance.oracle == "ppo"


def test_without_a_tree_the_same_network_is_trained_and_only_estimated(tree):
    opponent = fixed_network(tree.game, seed=2)
    target = Target(player=1, populations=pops_of([opponent], [UniformPolicy(2)]), mixtures=(np.ones(1), np.ones(1)))
    with_tree = LearnedOracle(tree, "ppo", TINY, seed=4).respond(1, target, key=(2, 0))
    without = LearnedOracle(None, "ppo", TINY, seed=4, game="kuhn_poker").respond(1, target, key=(2, 0))
    assert all(np.array_equal(a, b) for a, b in zip(weights_of(with_tree.policy), weights_of(without.policy)))
    assert without.estimated_value == with_tree.estimated_value
    assert math.isnan(without.exact_value) and without.value == without.estimated_value
    assert not math.isnan(with_tree.exact_value)


def test_responses_are_functions_of_the_seed_and_the_key(tree):
    target = Target(player=0, populations=pops_of([UniformPolicy(2)], [UniformPolicy(2)]),
                    mixtures=(np.ones(1), np.ones(1)))
    oracle = LearnedOracle(None, "dqn", DQNConfig(total_steps=256, num_envs=8, learning_starts=96, batch_size=32,
                                                  buffer_size=256, eval_episodes=40, hidden=(16,)),
                           seed=7, game=tree.game)
    a = oracle.respond(0, target, key=(3, 0))
    b = LearnedOracle(None, "dqn", oracle.config, seed=7, game=tree.game).respond(0, target, key=(3, 0))
    c = oracle.respond(0, target, key=(4, 0))
    assert a.policy.mode == "greedy"   # DQN's default response plays its best Q-value
    assert all(np.array_equal(x, y) for x, y in zip(weights_of(a.policy), weights_of(b.policy)))
    assert a.training.seed == b.training.seed != c.training.seed
    assert not all(np.array_equal(x, y) for x, y in zip(weights_of(a.policy), weights_of(c.policy)))


def test_product_target_draws_profiles_from_the_product_of_the_marginals():
    game = pyspiel.load_game("kuhn_poker(players=3)")
    nets = [fixed_network(game, seed=s) for s in range(3)]
    pops = pops_of([UniformPolicy(2)], [nets[0], nets[1], UniformPolicy(2)], [nets[2], UniformPolicy(2)])
    target = Target(player=0, populations=pops, mixtures=(np.ones(1), np.array([0.5, 0.0, 0.5]),
                                                          np.array([0.25, 0.75])))
    mixture = LearnedOracle(None, "ppo", TINY, game=game).opponent_mixture(0, target)
    # member 1 of player 1 has weight 0: four profiles, weights the products of the marginals
    assert [(p[1], p[2]) for p in mixture.profiles] == [(nets[0], nets[2]), (nets[0], pops[2].policies[1]),
                                                        (pops[1].policies[2], nets[2]),
                                                        (pops[1].policies[2], pops[2].policies[1])]
    np.testing.assert_allclose(mixture.weights, [0.125, 0.375, 0.125, 0.375])
    assert all(p[0] is None for p in mixture.profiles)


def test_joint_target_value_is_the_weighted_sum_over_its_rows(tree):
    """CCE/CE-JPSRO targets: one row of the joint per episode; the exact value weights the rows."""
    nets = [fixed_network(tree.game, seed=5), fixed_network(tree.game, seed=6)]
    pops = pops_of([UniformPolicy(2)], [UniformPolicy(2), *nets])
    profiles, weights = np.array([[0, 1], [0, 2]]), np.array([0.3, 0.7])
    target = Target(player=0, populations=pops, profiles=profiles, weights=weights)
    br = LearnedOracle(tree, "ppo", PPOConfig(total_steps=8192, eval_episodes=2000), seed=0).respond(
        0, target, key=(1, 0))
    table = br.policy.to_tabular(tree, 0)
    by_row = [exact_value(tree, 0, table, [None, plan_of(net, tree, 1)]) for net in nets]
    assert br.exact_value == pytest.approx(0.3 * by_row[0] + 0.7 * by_row[1], abs=1e-12)
    # the exact oracle's answer to the same joint target on the tabularised populations bounds it
    tabular = [Population(info) for info in tree.infostates]
    tabular[0].add(UniformPolicy(2).to_tabular(tree, 0), Provenance(0, "initial"))
    tabular[1].add(np.stack([m.to_tabular(tree, 1) for m in pops[1].policies]), [Provenance(0, "initial")] * 3)
    exact = make_oracle("exact", tree).respond(0, Target(player=0, populations=tabular, profiles=profiles,
                                                         weights=weights))
    assert exact.value - 0.05 <= br.exact_value <= exact.value + 1e-12
    assert abs(br.estimated_value - br.exact_value) < 5 * br.estimated_stderr


def test_warm_start_starts_from_the_latest_own_network(tree):
    """With a vanishing learning rate the trained network is its starting point: the previous response."""
    frozen = PPOConfig(total_steps=256, num_envs=8, num_steps=16, eval_episodes=20, hidden=(16,),
                       learning_rate=1e-30)
    old, latest = fixed_network(tree.game, seed=8), fixed_network(tree.game, seed=9)
    before = weights_of(latest)
    pops = pops_of([UniformPolicy(2), old, latest], [UniformPolicy(2)])
    target = Target(player=0, populations=pops, mixtures=(np.array([1.0, 0, 0]), np.ones(1)))
    warm = LearnedOracle(None, "ppo", frozen, game=tree.game, warm_start=True).respond(0, target, key=(1, 0))
    assert all(np.array_equal(a, b) for a, b in zip(weights_of(warm.policy), before))
    assert warm.policy is not latest and all(np.array_equal(a, b) for a, b in zip(weights_of(latest), before))
    cold = LearnedOracle(None, "ppo", frozen, game=tree.game).respond(0, target, key=(1, 0))
    assert not all(np.array_equal(a, b) for a, b in zip(weights_of(cold.policy), before))
    # an explicit initial policy on the target wins over the option
    chosen = Target(player=0, populations=pops, mixtures=target.mixtures, initial_policy=old)
    explicit = LearnedOracle(None, "ppo", frozen, game=tree.game, warm_start=True).respond(0, chosen, key=(1, 0))
    assert all(np.array_equal(a, b) for a, b in zip(weights_of(explicit.policy), weights_of(old)))


def test_leduc_without_a_tree():
    game = pyspiel.load_game("leduc_poker")
    pops = pops_of([UniformPolicy(3)], [UniformPolicy(3), fixed_network(game, seed=1)])
    target = Target(player=0, populations=pops, mixtures=(np.ones(1), np.array([0.5, 0.5])))
    options = {k: v for k, v in TINY.__dict__.items() if k != "seed"}
    br = make_oracle("ppo", None, seed=2, game="leduc_poker", **options).respond(0, target, key=(1, 0))
    assert (br.policy.obs_dim, br.policy.num_actions) == (30, 3)
    assert math.isnan(br.exact_value) and np.isfinite(br.estimated_value)


def test_bad_input_is_refused_by_name(tree):
    with pytest.raises(ValueError, match="total_steps"):
        make_oracle("ppo", None, game="kuhn_poker", total_steps=0)
    with pytest.raises(ValueError, match="total_steps"):
        make_oracle("dqn", None, game="kuhn_poker", total_steps=0)
    with pytest.raises(ValueError, match="needs game="):
        LearnedOracle(None, "ppo")
    with pytest.raises(ValueError, match="response_mode"):
        LearnedOracle(tree, "ppo", response_mode="argmax")
    with pytest.raises(ValueError, match="device"):
        LearnedOracle(tree, "ppo", device="tpu7")
    with pytest.raises(ValueError, match="oracle 'exact' needs the game tree"):
        make_oracle("exact", None, game="kuhn_poker")
    oracle = LearnedOracle(None, "ppo", TINY, game=tree.game)
    wrong = NeuralPolicy(30, 3)   # built for Leduc
    target = Target(player=0, populations=pops_of([UniformPolicy(2)], [wrong]), mixtures=(np.ones(1), np.ones(1)))
    with pytest.raises(ValueError, match=r"populations\[1\]: the network takes observations of size 30"):
        oracle.respond(0, target, key=(0, 0))
    warm = Target(player=0, populations=pops_of([UniformPolicy(2)], [UniformPolicy(2)]),
                  mixtures=(np.ones(1), np.ones(1)), initial_policy=wrong)
    with pytest.raises(ValueError, match="initial_policy: the network takes observations of size 30"):
        oracle.respond(0, warm, key=(0, 0))
    tabular = Target(player=0, populations=pops_of([UniformPolicy(2)], [np.full((6, 2), 0.5)]),
                     mixtures=(np.ones(1), np.ones(1)))
    with pytest.raises(ValueError, match="need a game tree"):
        oracle.respond(0, tabular, key=(0, 0))
    with pytest.raises(ValueError, match="player"):
        oracle.respond(2, target, key=(0, 0))
    empty = Target(player=0, populations=target.populations, mixtures=(np.ones(1), np.zeros(1)))
    with pytest.raises(ValueError, match=r"target.mixtures\[1\] must be non-negative weights"):
        oracle.respond(0, empty, key=(0, 0))
