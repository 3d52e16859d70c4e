"""psro.oracles.learned.env: VectorEnv on games.environment with batched opponents."""

import numpy as np
import pyspiel
import pytest

from psro.oracles.learned.env import OpponentMixture, VectorEnv, play_episodes, sample_rows
from psro.policies import uniform_policy
from psro.policies.acting import TabularStatePolicy, UniformPolicy, batch_probabilities
from psro.sequence_form.game_tree import build_game_tree


class Counting:
    """A stand-in for a neural policy: uniform over legal actions, counting its batched calls."""

    def __init__(self):
        self.calls, self.rows = 0, 0

    def probabilities_np(self, obs, mask):
        self.calls += 1
        self.rows += obs.shape[0]
        return mask / mask.sum(axis=1, keepdims=True)


@pytest.fixture(scope="module")
def kuhn():
    return build_game_tree(pyspiel.load_game("kuhn_poker"))


def pure(tree, player, action):
    info = tree.infostates[player]
    table = np.zeros((info.num_infostates, info.num_actions))
    table[:, action] = 1.0
    return TabularStatePolicy(table, info)


def test_uniform_opponent_value_and_tabular_path_agree(kuhn):
    def run(opponent):
        env = VectorEnv(kuhn.game, 0, OpponentMixture.single([None, opponent]), num_envs=64, rng=0)
        rng = np.random.default_rng(1)
        return play_episodes(env, lambda obs, mask: (rng.random(mask.shape) * mask).argmax(axis=1), 6400)

    neural_like = run(UniformPolicy(2))
    tabular = run(TabularStatePolicy(uniform_policy(kuhn.infostates[1]), kuhn.infostates[1]))
    assert abs(neural_like.mean - 0.125) < 4 * neural_like.stderr   # uniform against uniform: 1/8
    assert neural_like == tabular   # same probabilities, same draws: the two paths play the same episodes


def test_mixture_value_always_bet_against_fold_or_call(kuhn):
    # always bet: an opponent who always passes (folds) gives +1; one who always calls gives a showdown for 2,
    # worth 0 on average over the deals. Weights 1/4, 3/4: 1/4.
    mix = OpponentMixture(((None, pure(kuhn, 1, 0)), (None, pure(kuhn, 1, 1))), np.array([0.25, 0.75]))
    env = VectorEnv(kuhn.game, 0, mix, num_envs=64, rng=2)
    stats = play_episodes(env, lambda obs, mask: np.ones(len(obs), dtype=np.int64), 12_800)
    assert abs(stats.mean - 0.25) < 4 * stats.stderr


def test_learner_in_seat_one_and_rewards_at_episode_ends(kuhn):
    env = VectorEnv(kuhn.game, 1, OpponentMixture.single([pure(kuhn, 0, 1), None]), num_envs=8, rng=3)
    obs, mask = env.reset()
    assert mask.all()                         # facing a bet: pass (fold) or bet (call)
    step = env.step(np.zeros(8, dtype=np.int64))   # fold everywhere: -1, and a new episode
    assert step.done.all() and (step.reward == -1).all()
    assert env.episode_returns == [-1.0] * 8 and sorted(env.episode_envs) == list(range(8))


def test_one_call_per_opponent_policy_per_round():
    game = pyspiel.load_game("leduc_poker")
    a, b = Counting(), Counting()
    mix = OpponentMixture(((None, a), (None, b)), np.array([0.5, 0.5]))
    env = VectorEnv(game, 0, mix, num_envs=64, rng=4)
    env.reset()
    rounds = 0
    for _ in range(20):
        before = a.calls + b.calls
        env.step((np.random.default_rng(rounds).random((64, 3)) * env._mask).argmax(axis=1))
        rounds += 1
        # leduc: the opponent moves at most twice between two learner moves (it may raise back), so at most
        # two rounds, each with one call per policy that has a waiting env
        assert a.calls + b.calls - before <= 4
    assert a.rows + b.rows > 20 * 32


def test_phantom_ttt_plays_without_a_tree():
    env = VectorEnv("phantom_ttt", 0, OpponentMixture.single([None, Counting()]), num_envs=8, rng=5)
    obs, mask = env.reset()
    assert obs.shape == (8, 108) and mask.all()
    stats = play_episodes(env, lambda obs, mask: mask.argmax(axis=1), 64)
    assert stats.episodes == 64 and -1 <= stats.mean <= 1


def test_batch_probabilities_and_sampling_checks():
    mask = np.array([[True, False, True]])
    np.testing.assert_allclose(batch_probabilities(UniformPolicy(3), np.zeros((1, 2), np.float32), mask),
                               [[0.5, 0, 0.5]])
    assert sample_rows(np.array([[0.2, 0.5, 0.3]]), mask, np.array([0.99])).tolist() == [2]
    assert sample_rows(np.array([[0.2, 0.5, 0.3]]), mask, np.array([0.0])).tolist() == [0]
    with pytest.raises(ValueError, match="no usable probability"):
        sample_rows(np.array([[0.0, 1.0, 0.0]]), mask, np.array([0.5]))
    with pytest.raises(ValueError, match="shape"):
        batch_probabilities(UniformPolicy(3), np.zeros((1, 2), np.float32), np.ones((1, 2), bool))
    with pytest.raises(TypeError, match="cannot act"):
        batch_probabilities(object(), np.zeros((1, 2), np.float32), mask)
    with pytest.raises(ValueError, match="num_actions"):
        UniformPolicy(0)


def test_bad_input(kuhn):
    u = UniformPolicy(2)
    with pytest.raises(ValueError, match="player must be in"):
        VectorEnv(kuhn.game, 2, OpponentMixture.single([None, u]))
    with pytest.raises(ValueError, match="num_envs"):
        VectorEnv(kuhn.game, 0, OpponentMixture.single([None, u]), num_envs=0)
    with pytest.raises(ValueError, match="one entry per seat"):
        VectorEnv(kuhn.game, 0, OpponentMixture.single([None, u, u]))
    with pytest.raises(TypeError, match="cannot act"):
        VectorEnv(kuhn.game, 0, OpponentMixture.single([None, "uniform"]))
    missing = VectorEnv(kuhn.game, 0, OpponentMixture.single([None, None]), num_envs=2)
    missing.reset()
    with pytest.raises(ValueError, match="no policy for seat 1"):
        missing.step(np.zeros(2, dtype=np.int64))
    with pytest.raises(ValueError, match="information-state tensors"):
        VectorEnv(pyspiel.load_game("mancala"), 0, OpponentMixture.single([None, u]))
    env = VectorEnv(kuhn.game, 0, OpponentMixture.single([None, u]), num_envs=2)
    env.reset()
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros(3, dtype=np.int64))


def test_tabular_opponents_need_an_env_with_states(kuhn):
    from games import load_pettingzoo

    table = TabularStatePolicy(uniform_policy(kuhn.infostates[1]), kuhn.infostates[1])
    with pytest.raises(ValueError, match="acts on game states"):
        VectorEnv(load_pettingzoo("pettingzoo:tictactoe_v3"), 0, OpponentMixture.single([None, table]))
    env = VectorEnv(load_pettingzoo("pettingzoo:tictactoe_v3"), 0, OpponentMixture.single([None, UniformPolicy(9)]),
                    num_envs=4, rng=0)
    stats = play_episodes(env, lambda obs, mask: mask.argmax(axis=1), 40)
    assert stats.episodes == 40 and -1 <= stats.mean <= 1
