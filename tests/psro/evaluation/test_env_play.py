"""psro.evaluation.env_play: sampled returns of any policy profile, without a tree."""

import numpy as np
import pyspiel
import pytest

from psro.evaluation.env_play import paired_returns, profile_seed, sample_profiles, sample_returns
from psro.policies.acting import TabularStatePolicy, UniformPolicy
from psro.sequence_form.game_tree import build_game_tree


def test_uniform_kuhn_and_exact_episode_count():
    u = UniformPolicy(2)
    r = sample_returns("kuhn_poker", [u, u], 10_007, seed=0, num_envs=64)   # 10_007 is not a multiple of 64
    assert r.shape == (10_007, 2)
    np.testing.assert_allclose(r.sum(axis=1), 0.0)
    assert abs(r[:, 0].mean() - 0.125) < 4 * r[:, 0].std() / np.sqrt(r.shape[0])   # uniform vs uniform: 1/8


def test_pure_function_of_the_seed():
    u = UniformPolicy(3)
    a = sample_returns("leduc_poker", [u, u], 500, seed=3)
    np.testing.assert_array_equal(a, sample_returns("leduc_poker", [u, u], 500, seed=3))
    assert not np.array_equal(a, sample_returns("leduc_poker", [u, u], 500, seed=4))
    np.testing.assert_array_equal(a, sample_returns("leduc_poker", [u, u], 500, seed=3, cache_bytes=0))


def test_tabular_members_against_their_exact_value():
    # Kuhn: player 0 always bets; player 1 calls only with the king (card 2). Player 0 wins 1 when 1 folds
    # (4 of 6 deals: player 1 holds 0 or 1), and with the king... deals (c0, c1): 1 holds 2 in deals (0,2), (1,2):
    # player 0 loses 2 in both. So E = (4 * 1 - 2 * 2) / 6 = 0.
    tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    info0, info1 = tree.infostates
    bet = np.zeros((info0.num_infostates, 2))
    bet[:, 1] = 1
    call_king = np.zeros((info1.num_infostates, 2))
    for row, key in enumerate(info1.keys):
        call_king[row, 1 if key.startswith("2") else 0] = 1
    r = sample_returns(tree.game, [TabularStatePolicy(bet, info0), TabularStatePolicy(call_king, info1)], 6000,
                       seed=1)
    assert abs(r[:, 0].mean() - 0.0) < 4 * r[:, 0].std() / np.sqrt(6000)
    assert set(np.unique(r[:, 0]).tolist()) == {-2.0, 1.0}


def test_simultaneous_and_large_games_run_without_a_tree():
    u = UniformPolicy(9)
    r = sample_returns("phantom_ttt", [u, u], 200, seed=2)
    assert r.shape == (200, 2) and set(np.unique(r).tolist()) <= {-1.0, 0.0, 1.0}
    g = sample_returns("goofspiel(num_cards=4)", [UniformPolicy(4)] * 2, 300, seed=2)
    assert g.shape == (300, 2)


def test_profiles_do_not_depend_on_grouping_or_order():
    u, v = UniformPolicy(3), UniformPolicy(3)
    pops = [[u, v], [u, v]]
    profiles = np.array([[0, 0], [1, 0], [0, 1]])
    count, total, total_sq = sample_profiles("leduc_poker", pops, profiles, 200, seed=5)
    c2, t2, s2 = sample_profiles("leduc_poker", pops, profiles[::-1], 200, seed=5)
    np.testing.assert_array_equal(total, t2[::-1])
    np.testing.assert_array_equal(total_sq, s2[::-1])
    c1, t1, _ = sample_profiles("leduc_poker", pops, profiles[1:2], 200, seed=5)
    np.testing.assert_array_equal(t1[0], total[1])
    assert count.tolist() == [[200.0, 200.0]] * 3
    # same policies, different indices: different episodes (the seed is keyed by the indices)
    assert not np.array_equal(total[0], total[1])
    # a top-up (start 200) gets fresh episodes
    _, t3, _ = sample_profiles("leduc_poker", pops, profiles[:1], 200, seed=5, starts=[200])
    assert not np.array_equal(t3[0], total[0])
    r = sample_returns("leduc_poker", [u, u], 200, profile_seed(5, (0, 0), 0))
    np.testing.assert_allclose(total[0], r.sum(axis=0))


def test_bad_input():
    u = UniformPolicy(2)
    with pytest.raises(ValueError, match="episodes"):
        sample_returns("kuhn_poker", [u, u], 0)
    with pytest.raises(ValueError, match="one policy per seat"):
        sample_returns("kuhn_poker", [u], 10)
    with pytest.raises(TypeError, match=r"profile\[1\]"):
        sample_returns("kuhn_poker", [u, np.ones((6, 2))], 10)
    with pytest.raises(ValueError, match="seed"):
        sample_returns("kuhn_poker", [u, u], 10, seed=-1)
    with pytest.raises(ValueError, match="profiles must be an int array"):
        sample_profiles("kuhn_poker", [[u], [u]], [[0, 0, 0]], 10)
    with pytest.raises(ValueError, match="index the populations"):
        sample_profiles("kuhn_poker", [[u], [u]], [[0, 1]], 10)
    with pytest.raises(ValueError, match="episodes_each"):
        sample_profiles("kuhn_poker", [[u], [u]], [[0, 0]], 0)


def test_a_mixture_seat_draws_one_member_per_episode():
    # issue 36 item 4 (cross-play against a meta-strategy): a seat played by a mixture of policies
    from psro.evaluation.env_play import sample_mixture_returns
    from psro.policies.acting import TabularStatePolicy

    tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    bet = np.zeros((tree.infostates[0].num_infostates, 2))
    bet[:, 1] = 1.0
    always_bet = TabularStatePolicy(bet, tree.infostates[0])
    members = [always_bet, UniformPolicy(2)]
    only_first = sample_mixture_returns("kuhn_poker", [(members, [1.0, 0.0]), ([UniformPolicy(2)], None)], 300, seed=4)
    assert np.array_equal(only_first, sample_returns("kuhn_poker", [always_bet, UniformPolicy(2)], 300, seed=4))
    mixed = sample_mixture_returns("kuhn_poker", [(members, [0.5, 0.5]), ([UniformPolicy(2)], None)], 300, seed=4)
    assert mixed.shape == (300, 2) and not np.array_equal(mixed, only_first)
    with pytest.raises(ValueError, match=r"seats\[0\]: one non-negative weight per policy \(2\)"):
        sample_mixture_returns("kuhn_poker", [(members, [1.0]), ([UniformPolicy(2)], None)], 10)


class _Last:
    """Always the last legal action (Leduc: raise where it may)."""

    def probabilities_np(self, obs, mask):
        out = np.zeros(mask.shape)
        out[np.arange(len(mask)), mask.shape[1] - 1 - np.argmax(mask[:, ::-1], axis=1)] = 1.0
        return out


def test_paired_episodes_depend_on_the_episode_number_only():
    # every random number is keyed by (episode, decision): the batch width changes nothing, row for row
    profile = [_Last(), UniformPolicy(3)]
    wide = paired_returns("leduc_poker", profile, 300, seed=5, num_envs=64)
    narrow = paired_returns("leduc_poker", profile, 300, seed=5, num_envs=7)
    assert np.array_equal(wide, narrow)
    assert not np.array_equal(wide, paired_returns("leduc_poker", profile, 300, seed=6, num_envs=64))


def test_paired_episodes_agree_where_the_policies_agree():
    # a profile and the same profile with seat 0 replaced by an equal policy play identical episodes; against a
    # different seat-0 policy the deals are still shared, so the difference has less variance than unpaired play
    u = UniformPolicy(3)
    base = paired_returns("leduc_poker", [u, u], 2000, seed=1)
    assert np.array_equal(base, paired_returns("leduc_poker", [UniformPolicy(3), u], 2000, seed=1))
    raising = paired_returns("leduc_poker", [_Last(), u], 2000, seed=1)[:, 0]
    unpaired = paired_returns("leduc_poker", [u, u], 2000, seed=2)[:, 0]
    assert np.var(raising - base[:, 0]) < 0.75 * np.var(raising - unpaired)
