"""Learned (DQN, PPO) best responses, neural policies and the RL environment, on Kuhn poker.

Reference values: the exact best response of :func:`psro.oracles.exact.best_response`
and pyspiel's C++ ``TabularBestResponse``; against a uniform opponent they are
1/2 for player 0 and 5/12 for player 1 (hand-checkable: e.g. player 0 with the
king always bets, with the jack always checks and folds).
"""

import math

import numpy as np
import pyspiel
import pytest
import torch

from psro.oracles.exact import best_response
from psro.oracles.learned.dqn import DQNConfig, train_dqn
from psro.oracles.learned.env import OpponentMixture, VectorEnv, play_episodes
from psro.oracles.learned.networks import LearnedProvenance, NeuralPolicy
from psro.oracles.learned.oracle import LearnedOracle, exact_value, make_learned_oracle
from psro.oracles.learned.ppo import PPOConfig, train_ppo
from psro.policies import (
    check_policy,
    realization_plans,
    to_openspiel_dict,
    uniform_policy,
)
from psro.policies.acting import TabularStatePolicy
from psro.policies.population import Population
from psro.sequence_form.game_tree import build_game_tree, infostate_tensors

torch.set_num_threads(1)

TOLERANCE = 0.05


@pytest.fixture(scope="module")
def tree():
    return build_game_tree(pyspiel.load_game("kuhn_poker"))


@pytest.fixture(scope="module")
def uniform_plans(tree):
    return [realization_plans(uniform_policy(i)[None], i)[0] for i in tree.infostates]


def openspiel_br_value(tree, player, policies):
    table = {}
    for q, (pol, info) in enumerate(zip(policies, tree.infostates)):
        if q != player:
            table.update(to_openspiel_dict(pol, info))
    br = pyspiel.TabularBestResponse(tree.game, player, table)
    return br.value(tree.game.new_initial_state().history_str())


def test_reference_best_response_values(tree, uniform_plans):
    uniform = [uniform_policy(i) for i in tree.infostates]
    assert best_response(tree, 0, uniform_plans).value == pytest.approx(0.5)
    assert best_response(tree, 1, uniform_plans).value == pytest.approx(5 / 12)
    for p in (0, 1):
        assert openspiel_br_value(tree, p, uniform) == pytest.approx(best_response(tree, p, uniform_plans).value)


@pytest.mark.parametrize("algorithm, config", [
    ("dqn", DQNConfig(total_steps=5000, eval_episodes=400, gradient_steps=1, learning_rate=2e-3,
                      target_update_interval=50)),
    ("ppo", PPOConfig(total_steps=5120, eval_episodes=400)),
])
def test_learned_response_reaches_the_exact_value_against_uniform(tree, uniform_plans, algorithm, config):
    oracle = LearnedOracle(tree, algorithm, config, seed=1)
    for player in (0, 1):
        br = oracle(player, uniform_plans, None)
        exact = best_response(tree, player, uniform_plans).value
        assert br.exact_value <= exact + 1e-12            # nothing beats the best response
        assert br.exact_value >= exact - TOLERANCE
        assert br.value == br.exact_value
        assert abs(br.estimated_value - br.exact_value) < 5 * br.estimated_stderr + 1e-9
        check_policy(br.policy, tree.infostates[player])
        assert set(np.unique(br.policy)) <= {0.0, 1.0}
        # the exact value of the tabular form agrees with pyspiel's evaluation of the same profile
        profile = [br.policy if q == player else uniform_policy(i) for q, i in enumerate(tree.infostates)]
        tabular = [pyspiel.TabularPolicy(to_openspiel_dict(pol, i)) for pol, i in zip(profile, tree.infostates)]
        ref = pyspiel.expected_returns(tree.game.new_initial_state(), tabular, -1, True)[player]
        assert br.exact_value == pytest.approx(ref, abs=1e-12)


def test_response_to_a_sampled_mixture_of_pure_opponents(tree):
    """Opponent profiles drawn per episode: the response must beat the *mixture*, checked exactly."""
    info1 = tree.infostates[1]
    always_pass = np.zeros((info1.num_infostates, 2))
    always_pass[:, 0] = 1
    always_bet = np.zeros((info1.num_infostates, 2))
    always_bet[:, 1] = 1
    pure = np.stack([always_pass, always_bet])
    weights = np.array([0.3, 0.7])
    target = OpponentMixture.from_populations(0, [None, pure], [None, weights], tree.infostates)
    mixture_plan = weights @ realization_plans(pure, info1)
    oracle = LearnedOracle(tree, "dqn", DQNConfig(total_steps=5000, eval_episodes=200, gradient_steps=1), seed=3)
    br = oracle.train_against(0, target, [None, mixture_plan])
    exact = best_response(tree, 0, [None, mixture_plan]).value
    assert exact - TOLERANCE <= br.exact_value <= exact + 1e-12


def test_same_seed_same_weights_and_different_seed_different_weights(tree):
    uniform = TabularStatePolicy(uniform_policy(tree.infostates[1]), tree.infostates[1])
    target = OpponentMixture.single([None, uniform])
    for train, config in ((train_dqn, DQNConfig(total_steps=800, eval_episodes=50, learning_starts=200)),
                          (train_ppo, PPOConfig(total_steps=512, eval_episodes=50))):
        a = train(tree.game, 0, target, config)
        b = train(tree.game, 0, target, config)
        c = train(tree.game, 0, target, type(config)(**{**config.__dict__, "seed": 1}))
        sa, sb, sc = (r.policy.network.state_dict() for r in (a, b, c))
        assert all(torch.equal(sa[k], sb[k]) for k in sa)
        assert a.evaluation == b.evaluation
        assert not all(torch.equal(sa[k], sc[k]) for k in sa)


def test_oracle_calls_draw_fresh_reproducible_seeds(tree, uniform_plans):
    cfg = PPOConfig(total_steps=512, eval_episodes=50)
    first = LearnedOracle(tree, "ppo", cfg, seed=5)
    second = LearnedOracle(tree, "ppo", cfg, seed=5)
    seeds_a = [first(0, uniform_plans).training.seed for _ in range(2)]
    seeds_b = [second(0, uniform_plans).training.seed for _ in range(2)]
    assert seeds_a == seeds_b and seeds_a[0] != seeds_a[1]


def test_neural_to_tabular_is_a_valid_policy_matching_the_network(tree):
    torch.manual_seed(0)
    policy = NeuralPolicy.for_game(tree.game, hidden=(16,))
    for player in (0, 1):
        info = tree.infostates[player]
        table = policy.to_tabular(tree, player)
        check_policy(table, info)
        assert np.all(table > 0)   # softmax over two legal actions
        greedy = policy.to_tabular(tree, player, greedy=True)
        check_policy(greedy, info)
        np.testing.assert_array_equal(greedy.argmax(axis=1), table.argmax(axis=1))
    # every row equals the network's probabilities at a real state with that infostate
    state = tree.game.new_initial_state()
    for action in (2, 0, 1):   # K vs J, player 0 bets
        state.apply_action(action)
    row = tree.infostates[1].index(state.information_state_string(1))
    np.testing.assert_allclose(policy.to_tabular(tree, 1)[row], policy.action_probabilities(state, 1), atol=1e-6)
    np.testing.assert_array_equal(infostate_tensors(tree, 1)[row], np.float32(state.information_state_tensor(1)))


def test_state_dict_round_trip_with_weights_only(tree, tmp_path):
    torch.manual_seed(1)
    prov = LearnedProvenance(iteration=4, oracle="dqn", meta_solver="nash", training_steps=1234, seed=99)
    policy = NeuralPolicy.for_game(tree.game, hidden=(8, 8), mode="greedy", provenance=prov)
    path = tmp_path / "policy.pt"
    policy.save(path)
    raw = torch.load(path, weights_only=True)   # raises on anything that needs unpickling of classes
    assert set(raw) == {"format", "config", "provenance", "state_dict"}
    loaded = NeuralPolicy.load(path)
    assert loaded.mode == "greedy" and loaded.hidden == (8, 8)
    assert loaded.provenance == prov
    for player in (0, 1):
        np.testing.assert_array_equal(loaded.to_tabular(tree, player), policy.to_tabular(tree, player))


def test_learned_provenance_is_accepted_by_populations(tree):
    pop = Population(tree.infostates[0])
    prov = LearnedProvenance(iteration=1, oracle="ppo", meta_solver="nash", value=0.5, training_steps=10, seed=2)
    pop.add(uniform_policy(tree.infostates[0]), prov)
    assert pop.provenance_table()["oracle"].tolist() == ["ppo"]
    assert pop.provenance[0].training_steps == 10


def test_play_episodes_estimates_the_exact_value(tree, uniform_plans):
    uniform = TabularStatePolicy(uniform_policy(tree.infostates[1]), tree.infostates[1])
    env = VectorEnv(tree.game, 0, OpponentMixture.single([None, uniform]), num_envs=8, rng=0)
    rng = np.random.default_rng(0)
    stats = play_episodes(env, lambda obs, mask: (rng.random(mask.shape) * mask).argmax(axis=1), 6000)
    # uniform against uniform: 1/8 for player 0
    assert abs(stats.mean - 0.125) < 4 * stats.stderr
    assert exact_value(tree, 0, uniform_policy(tree.infostates[0]), uniform_plans) == pytest.approx(0.125)


def test_mixture_draws_profiles_with_their_weights(tree):
    info1 = tree.infostates[1]
    a = TabularStatePolicy(uniform_policy(info1), info1)
    mix = OpponentMixture(((None, a), (None, a), (None, a)), np.array([0.2, 0.5, 0.3]))
    rng = np.random.default_rng(0)
    counts = np.bincount([mix.sample(rng) for _ in range(20_000)], minlength=3) / 20_000
    np.testing.assert_allclose(counts, [0.2, 0.5, 0.3], atol=0.015)


def test_bad_input(tree, uniform_plans):
    with pytest.raises(ValueError, match="algorithm"):
        LearnedOracle(tree, "a2c")
    with pytest.raises(TypeError, match="config must be a DQNConfig"):
        LearnedOracle(tree, "dqn", PPOConfig())
    with pytest.raises(TypeError, match="no field"):
        make_learned_oracle("dqn", tree, total_stepz=10)
    with pytest.raises(ValueError, match="total_steps"):
        DQNConfig(total_steps=0)
    with pytest.raises(ValueError, match="one rollout"):
        PPOConfig(total_steps=10)
    with pytest.raises(ValueError, match="mode"):
        NeuralPolicy(11, 2, mode="argmax")
    with pytest.raises(ValueError, match="weights"):
        OpponentMixture(((None, None),), np.array([0.5]))
    with pytest.raises(ValueError, match="player"):
        LearnedOracle(tree, "dqn").train_against(2, OpponentMixture.single([None, None]))
    with pytest.raises(ValueError, match="information-state tensors"):
        NeuralPolicy.for_game(pyspiel.load_game("mancala"))
    with pytest.raises(ValueError, match="not a NeuralPolicy"):
        NeuralPolicy.from_state_dict({"weights": 1})
    assert not math.isnan(exact_value(tree, 1, uniform_policy(tree.infostates[1]), uniform_plans))


def _populations(tree):
    """Player 1's population: uniform, always pass, always bet; player 0's: uniform."""
    from psro.policies.population import Provenance

    pops = [Population(info) for info in tree.infostates]
    info1 = tree.infostates[1]
    always_pass = np.zeros((info1.num_infostates, 2))
    always_pass[:, 0] = 1
    always_bet = np.zeros((info1.num_infostates, 2))
    always_bet[:, 1] = 1
    pops[0].add(uniform_policy(tree.infostates[0]), Provenance(0, "initial"))
    pops[1].add(np.stack([uniform_policy(info1), always_pass, always_bet]), [Provenance(0, "initial")] * 3)
    return pops


@pytest.mark.parametrize("target_mode", ["aggregate", "sample"])
def test_product_target_of_the_oracle_interface(tree, target_mode):
    from psro.oracles import BestResponse, Target, make_oracle

    pops = _populations(tree)
    target = Target(player=0, populations=pops, mixtures=(np.ones(1), np.array([0.2, 0.3, 0.5])))
    oracle = LearnedOracle(tree, "ppo", PPOConfig(total_steps=5120, eval_episodes=200), seed=0,
                           target_mode=target_mode)
    br = oracle(0, target)
    exact = make_oracle("exact", tree).respond(0, target)
    assert isinstance(br, BestResponse)
    assert exact.value - TOLERANCE <= br.value <= exact.value + 1e-12
    assert br.value == pytest.approx(exact_value(tree, 0, br.policy, target.opponent_plans()), abs=1e-12)


def test_joint_target_of_the_oracle_interface(tree):
    from psro.oracles import Target, make_oracle

    pops = _populations(tree)
    profiles = np.array([[0, 1], [0, 2]])   # player 1 passes always or bets always
    target = Target(player=0, populations=pops, profiles=profiles, weights=np.array([0.4, 0.6]))
    oracle = LearnedOracle(tree, "dqn", DQNConfig(total_steps=5000, eval_episodes=200, gradient_steps=1), seed=2)
    br = oracle(0, target)
    exact = make_oracle("exact", tree).respond(0, target)
    assert exact.value - TOLERANCE <= br.value <= exact.value + 1e-12
    # the joint value is the weighted sum over the two opponent profiles
    by_profile = [exact_value(tree, 0, br.policy, [None, pops[1].plans[k]]) for k in (1, 2)]
    assert br.value == pytest.approx(0.4 * by_profile[0] + 0.6 * by_profile[1], abs=1e-12)


def test_a_model_br_response_worse_than_uniform_names_total_steps(caplog):
    # model_br's config has no learning rate: a response worse than the uniform policy names its budget (before:
    # an AttributeError built the message, seen on phantom tic-tac-toe)
    from types import SimpleNamespace

    from psro.errors import LearnerDiverged
    from psro.oracles import make_oracle
    from psro.oracles.learned.env import EpisodeStats
    from psro.oracles.learned.training import TrainingResult

    game = pyspiel.load_game("kuhn_poker")
    bad = TrainingResult(SimpleNamespace(), EpisodeStats(-0.75, 0.05, 2000), 1000, 10, 1.0, 0,
                         baseline=EpisodeStats(0.0, 0.05, 2000), responsive=True)
    oracle = make_oracle("model_br", None, game=game, total_steps=4096)
    with pytest.raises(LearnerDiverged, match=r"^total_steps: the \w+ response of player 0 at iteration 3 did "
                                              r"not learn: .*; raise total_steps \(now 4096\), or set"):
        oracle._finish(0, 3, oracle.config, bad, bad.policy, math.nan)
    warn = make_oracle("model_br", None, game=game, total_steps=4096, on_bad_response="warn")
    warn._finish(0, 3, warn.config, bad, bad.policy, math.nan)
    assert "raise total_steps (now 4096)" in caplog.text and bad.policy.provenance.oracle == warn.name
