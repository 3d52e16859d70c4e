"""games.keyed_chance: with chance keyed by episode, envs deal the same cards in the same episodes whatever the
actions, the batch width or the cache; without it they do not."""

import numpy as np
import pytest
from pettingzoo.classic import texas_holdem_v4

from games import from_pettingzoo, make_env
from games.keyed_chance import KeyedChance, keyed_uniform


def deals(game, width, first, action_seed, *, keyed=True, decisions=400, cards=slice(None), **options):
    """``{episode number of the key: the first decision's observation slice}`` for the episodes played."""
    env = make_env(game, width, rng=action_seed, **options)
    if keyed:
        env.chance_keys = KeyedChance(11, first)
    rng = np.random.default_rng(action_seed)
    seen = {}
    s = env.reset()
    for _ in range(decisions):
        for e, episode, obs in zip(s.envs.tolist(), s.episode.tolist(), s.obs):
            seen.setdefault(first[e] + episode - 1, obs[cards].tobytes())
        legal = [np.flatnonzero(m) for m in s.mask]
        s = env.step(s.envs, np.array([rng.choice(a) for a in legal]))
    return seen


@pytest.mark.parametrize("options", [{}, {"cache_bytes": 0}])
def test_leduc_deals_depend_on_the_episode_only(options):
    # the first decision of a Leduc episode shows player 0's private card (obs[2:8]); the actions differ (seeds 1
    # and 2), the widths differ (4 and 2 envs with other first episodes), the cache is on or off
    a = deals("leduc_poker", 4, [0, 100, 200, 300], 1, cards=slice(2, 8), **options)
    b = deals("leduc_poker", 2, [100, 0], 2, cards=slice(2, 8), **options)
    common = sorted(set(a) & set(b))
    assert len(common) > 50
    assert all(a[e] == b[e] for e in common)
    unkeyed = [deals("leduc_poker", 4, [0, 100, 200, 300], s, keyed=False, cards=slice(2, 8)) for s in (1, 2)]
    assert sum(unkeyed[0][e] != unkeyed[1][e] for e in set(unkeyed[0]) & set(unkeyed[1])) > 10


def test_pettingzoo_reset_seeds_are_keyed_by_episode():
    holdem = from_pettingzoo(texas_holdem_v4.env)
    a = deals(holdem, 3, [0, 50, 100], 1, decisions=200, cards=slice(0, 52))   # the hand (and board) cards
    b = deals(holdem, 2, [50, 0], 2, decisions=200, cards=slice(0, 52))
    common = sorted(set(a) & set(b))
    assert len(common) > 20 and all(a[e] == b[e] for e in common)


def test_uniforms_are_uniform_and_independent_of_the_key_and_the_draw():
    u = keyed_uniform(1, np.arange(200_000), 0)
    counts = np.histogram(u, bins=20, range=(0, 1))[0]
    assert counts.min() > 0.95 * 10_000 and counts.max() < 1.05 * 10_000
    v = keyed_uniform(1, np.arange(200_000), 1)
    w = keyed_uniform(2, np.arange(200_000), 0)
    assert abs(np.corrcoef(u, v)[0, 1]) < 0.01 and abs(np.corrcoef(u, w)[0, 1]) < 0.01
    seeds = KeyedChance(1, np.zeros(4, dtype=np.int64)).seeds(np.arange(4), np.arange(1, 5))
    assert seeds.min() >= 0 and seeds.max() < 2 ** 31 and len(set(seeds.tolist())) == 4
