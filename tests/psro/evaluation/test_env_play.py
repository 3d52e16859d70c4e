"""psro.evaluation.env_play: sampled returns of any policy profile, without a tree."""

import numpy as np
import pyspiel
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


def _phantom_tables(seed: int, n: int) -> list:
    """``n`` observation tables keyed by the view (the first 27 entries) of phantom tic-tac-toe, each over the
    views of a few random plays (unseen views play uniformly)."""
    from games.environment import make_env
    from psro.oracles.learned.observation_table import ObservationTablePolicy

    rng = np.random.default_rng(seed)
    env = make_env("phantom_ttt", 32, rng=seed)
    s, views = env.reset(), []
    for _ in range(6):
        views.append(s.obs[:, :27])
        s = env.step(s.envs, np.array([rng.choice(np.flatnonzero(m)) for m in s.mask]))
    views = np.concatenate(views)
    return [ObservationTablePolicy(views, rng.dirichlet(np.ones(9), size=len(views)), obs_dim=env.obs_dim)
            for _ in range(n)]


@settings(max_examples=5, deadline=None)
@given(num_envs=st.integers(1, 40), split=st.integers(1, 59), seed=st.integers(0, 2 ** 20))
def test_keyed_profiles_do_not_depend_on_the_batch(num_envs, split, seed):
    # keyed: episode e of a profile is a function of (seed, profile, e) alone, whatever the batch, its width or
    # the split of the episodes into top-ups
    u = UniformPolicy(9)
    pops = [[u, *_phantom_tables(1, 2)], [*_phantom_tables(2, 2), u]]
    profiles = np.array([[0, 0], [1, 2], [2, 1], [1, 0]])
    whole = sample_profiles("phantom_ttt", pops, profiles, 60, seed=seed, keyed=True)
    assert whole[0].tolist() == [[60.0, 60.0]] * 4
    alone = [sample_profiles("phantom_ttt", pops, profiles[k:k + 1], 60, seed=seed, num_envs=num_envs, keyed=True)
             for k in range(4)]
    for part, stat in zip(zip(*alone), whole):
        np.testing.assert_array_equal(np.concatenate(part), stat)   # (returns are -1, 0 and 1: exact sums)
    first = sample_profiles("phantom_ttt", pops, profiles, split, seed=seed, num_envs=num_envs, keyed=True)
    rest = sample_profiles("phantom_ttt", pops, profiles, 60 - split, seed=seed, starts=split, keyed=True)
    np.testing.assert_array_equal(first[1] + rest[1], whole[1])
    np.testing.assert_array_equal(first[2] + rest[2], whole[2])
    other = sample_profiles("phantom_ttt", pops, profiles, 60, seed=seed + 1, keyed=True)
    assert not np.array_equal(other[1], whole[1])


def test_keyed_profiles_are_unbiased_and_key_chance():
    # Kuhn, uniform against uniform: 1/8 to player 0; the deals are keyed too (chance varies by episode)
    u = UniformPolicy(2)
    count, total, total_sq = sample_profiles("kuhn_poker", [[u], [u, u]], [[0, 0], [0, 1]], 20_000, seed=3,
                                             keyed=True)
    mean = total[:, 0] / count[:, 0]
    se = np.sqrt(total_sq[:, 0] / count[:, 0] - mean ** 2) / np.sqrt(count[:, 0])
    assert np.all(np.abs(mean - 0.125) < 4 * se)
    assert mean[0] != mean[1]   # (different profiles, different keys)
    # a deterministic policy pair on Kuhn: only the (keyed) deals vary, so the width of the batch cannot matter
    tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    info0, info1 = tree.infostates
    bet = np.zeros((info0.num_infostates, 2))
    bet[:, 1] = 1
    call = np.zeros((info1.num_infostates, 2))
    call[:, 1] = 1
    pops = [[TabularStatePolicy(bet, info0)], [TabularStatePolicy(call, info1)]]
    count, total, _ = sample_profiles(tree.game, pops, [[0, 0]], 6_000, seed=0, keyed=True)
    narrow = sample_profiles(tree.game, pops, [[0, 0]], 6_000, seed=0, num_envs=5, keyed=True)
    np.testing.assert_array_equal(narrow[1], total)
    # bet-call: the higher card wins 2, so player 0's value is 0 over the six equally likely deals
    assert abs(total[0, 0] / 6_000) < 4 * 2 / np.sqrt(6_000)


def test_keyed_needs_an_environment_that_keys_its_chance():
    from games.environment import EnvStep

    class CoinEnv:   # a one-seat coin flip whose chance comes from one generator (no chance_keys)
        num_players, num_actions, obs_dim = 1, 2, 2

        def __init__(self, n, rng):
            self.num_envs, self.rng, self.episode = n, np.random.default_rng(rng), np.ones(n, np.int64)

        def reset(self, rng=None):
            n = self.num_envs
            return EnvStep(np.arange(n), np.zeros(n, np.int64), np.zeros((n, 2), np.float32), np.ones((n, 2), bool),
                           np.zeros(n, bool), np.zeros((n, 1)), self.episode.copy())

    class Coin:
        num_players, num_actions, obs_dim = 1, 2, 2

        def batched_env(self, num_envs, rng=None, **options):
            return CoinEnv(num_envs, rng)

        def min_utility(self):
            return 0.0

        def max_utility(self):
            return 1.0

    with pytest.raises(ValueError, match="keyed: CoinEnv .*keyed=False"):
        sample_profiles(Coin(), [[UniformPolicy(2)]], [[0]], 10, keyed=True)


def test_keyed_names_a_policy_it_cannot_play():
    with pytest.raises(TypeError, match=r"populations\[1\]\[0\]"):
        sample_profiles("kuhn_poker", [[UniformPolicy(2)], [np.ones((6, 2))]], [[0, 0]], 10, keyed=True)
