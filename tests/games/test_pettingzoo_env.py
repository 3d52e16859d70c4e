"""games.pettingzoo_env: PettingZoo AEC environments in the batched env, and the safe config strings."""

import functools
import math

import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo.classic import texas_holdem_v4, tictactoe_v3

from games import from_pettingzoo, load_pettingzoo, make_env
from games.environment import num_actions, observation_size


def uniform(step, rng):
    return (rng.random(step.mask.shape) * step.mask).argmax(axis=1)


def test_tictactoe_scripted_game_and_returns():
    env = make_env(from_pettingzoo(tictactoe_v3.env), num_envs=1, rng=0)
    s = env.reset()
    assert s.player.tolist() == [0] and s.mask.all()
    for action, seat in [(4, 1), (0, 0), (8, 1), (2, 0)]:
        s = env.step(s.envs, [action])
        assert s.player.tolist() == [seat]
    # the board: 4 (x), 0 (o), 8 (x), 2 (o); cells taken are masked for the next mover
    assert s.mask[0].tolist() == [False, True, False, True, False, True, True, True, False]
    s = env.step(s.envs, [1])   # o takes 0, 1, 2 next?  it is x's move: x plays 1; then o wins with 6? no: play on
    s = env.step(s.envs, [7])   # o blocks the column 1-4-7
    s = env.step(s.envs, [6])   # x: 6 (with 4 and 2? 2 is o's) no line yet
    s = env.step(s.envs, [3])   # o
    s = env.step(s.envs, [5])   # x fills the board: 4, 8, 1, 6, 5 -- no line of three: a draw
    assert s.done.tolist() == [True] and s.returns.tolist() == [[0.0, 0.0]] and s.episode.tolist() == [2]
    assert s.player.tolist() == [0] and s.mask.all()   # the next episode's first decision


def test_uniform_tictactoe_first_player_advantage_matches_a_game_tree_walk():
    # exact value of uniform play for the first player, by walking the game with our own board logic
    lines = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]

    @functools.lru_cache(maxsize=None)
    def value(board, mover):
        for a, b, c in lines:
            if board[a] and board[a] == board[b] == board[c]:
                return 1.0 if board[a] == 1 else -1.0
        free = [i for i in range(9) if not board[i]]
        if not free:
            return 0.0
        return sum(value(board[:i] + (mover,) + board[i + 1:], 3 - mover) for i in free) / len(free)

    exact = value((0,) * 9, 1)
    env = make_env(load_pettingzoo("pettingzoo:tictactoe_v3"), num_envs=32, rng=1)
    rng = np.random.default_rng(2)
    s = env.reset()
    out = []
    while len(out) < 600:
        s = env.step(s.envs, uniform(s, rng))
        out.extend(s.returns[s.done, 0])
    r = np.array(out)
    assert abs(r.mean() - exact) < 4 * r.std(ddof=1) / np.sqrt(r.size)
    assert exact == pytest.approx(0.2968, abs=1e-3)   # P(win) - P(loss) = 0.585 - 0.288 for random play


def test_sizes_determinism_and_copies():
    game = load_pettingzoo("pettingzoo:classic.tictactoe_v3")
    assert (game.num_players, observation_size(game), num_actions(game)) == (2, 18, 9)
    assert str(game) == "pettingzoo:classic.tictactoe_v3"

    def trace(seed):
        env = make_env(game, 4, rng=seed)
        rng = np.random.default_rng(seed)
        s, obs = env.reset(), []
        for _ in range(30):
            s = env.step(s.envs, uniform(s, rng))
            obs.append(s.obs)
        return np.array(obs)
    np.testing.assert_array_equal(trace(3), trace(3))
    # envs are independent copies: stepping one leaves the others at their first move
    env = make_env(from_pettingzoo(tictactoe_v3.env()), 3, rng=0)
    env.reset()
    s = env.step([1], [4])
    assert s.player.tolist() == [1]
    assert env.step([0, 2], [4, 4]).player.tolist() == [1, 1]


def test_hold_em_reaches_the_ends_of_its_declared_range():
    # both players raise whenever they may and call otherwise: 50 chips each, all of it to the showdown's winner
    env = texas_holdem_v4.env()
    game = load_pettingzoo("pettingzoo:texas_holdem_v4")
    low, high = game.min_utility(), game.max_utility()
    for seed in range(3):
        env.reset(seed=seed)
        final = {}
        for agent in env.agent_iter():
            obs, reward, term, trunc, _ = env.last()
            if term or trunc:
                final[agent] = reward
                env.step(None)
                continue
            mask = obs["action_mask"]   # 0 call, 1 raise, 2 fold, 3 check
            env.step(1 if mask[1] else 0)
        assert sorted(final.values()) in ([low, high], [0.0, 0.0])   # (a split pot: 0 each)


def test_sampled_returns_lie_in_the_declared_ranges():
    rng = np.random.default_rng(3)
    for spec in ("pettingzoo:texas_holdem_v4", "pettingzoo:tictactoe_v3", "pettingzoo:connect_four_v3"):
        game = load_pettingzoo(spec)
        env = make_env(game, num_envs=16, rng=4)
        s, seen = env.reset(), []
        while len(seen) < 100:
            s = env.step(s.envs, uniform(s, rng))
            seen.extend(s.returns[s.done].ravel())
        assert game.min_utility() <= min(seen) and max(seen) <= game.max_utility(), spec


def test_a_utility_range_is_declared_or_refused_by_name():
    assert from_pettingzoo(tictactoe_v3.env).utility_range is None
    with pytest.raises(RuntimeError, match=r"declares no utility range; pass utility_range=\(low, high\)"):
        from_pettingzoo(tictactoe_v3.env).min_utility()
    assert load_pettingzoo("pettingzoo:tictactoe_v3", render_mode=None).utility_range is None   # options: unknown
    for bad in [(1, 1), (0, math.inf), "ab", 3]:
        with pytest.raises(ValueError, match="utility_range must be"):
            from_pettingzoo(tictactoe_v3.env, utility_range=bad)


def test_pickles_by_spec():
    import pickle

    game = load_pettingzoo("pettingzoo:tictactoe_v3")
    assert pickle.loads(pickle.dumps(game)).agents == game.agents
    assert pickle.loads(pickle.dumps(game)).utility_range == (-1.0, 1.0)
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(from_pettingzoo(tictactoe_v3.env()))


class _Continuous:
    """A minimal AEC-like object with a Box action space."""

    possible_agents = ["a", "b"]
    metadata = {"name": "continuous"}

    def action_space(self, agent):
        return spaces.Box(-1, 1, (2,))

    def observation_space(self, agent):
        return spaces.Box(0, 1, (3,))

    def step(self, action):
        pass


def test_bad_input():
    with pytest.raises(ValueError, match="not Discrete"):
        from_pettingzoo(_Continuous())
    with pytest.raises(ValueError, match="AEC environment"):
        from_pettingzoo(42)
    for spec in ["pettingzoo:os.system_v1", "tictactoe_v3", "pettingzoo:../x_v1", "pettingzoo:classic.TicTacToe_v3",
                 "pettingzoo:classic.tictactoe"]:
        with pytest.raises(ValueError, match="spec must look like"):
            load_pettingzoo(spec)
    with pytest.raises(ValueError, match="no PettingZoo environment"):
        load_pettingzoo("pettingzoo:nosuchgame_v0")
    env = make_env(load_pettingzoo("pettingzoo:tictactoe_v3"), 2, rng=0)
    with pytest.raises(ValueError, match="reset"):
        env.step([0], [0])
    env.reset()
    env.step([0], [4])
    with pytest.raises(ValueError, match="not legal"):
        env.step([0], [4])    # taken
    with pytest.raises(ValueError, match="repeat"):
        env.step([1, 1], [0, 1])
    with pytest.raises(TypeError, match="no environment options"):
        make_env(load_pettingzoo("pettingzoo:tictactoe_v3"), 2, cache_bytes=0)


def test_a_parallel_env_is_refused_at_once_saying_how_to_wrap_it():
    # issue 23 item 12: a parallel env was accepted, then failed with AttributeError 'observe' inside a job
    from pettingzoo.classic import rps_v2
    from pettingzoo.utils.conversions import parallel_to_aec

    for env in (rps_v2.parallel_env(), rps_v2.parallel_env):
        with pytest.raises(ValueError, match=r"parallel environment .*parallel_to_aec\(env\)"):
            from_pettingzoo(env)
    wrapped = from_pettingzoo(parallel_to_aec(rps_v2.parallel_env()))
    assert wrapped.num_players == 2


@pytest.mark.parametrize("module", ["texas_holdem_v4", "leduc_holdem_v4"])
def test_rlcard_games_reseeded_in_place_deal_what_a_seeded_reset_deals(module):
    # PettingZoo's seeded reset of an RLCard game builds a new RLCard environment; the batched env reseeds the one it
    # has instead: every observation, mask and return of 300 episodes (4 envs, 75 each) must be the same both ways
    game = load_pettingzoo(f"pettingzoo:{module}")
    runs = []
    for in_place in (True, False):
        env = make_env(game, num_envs=4, rng=7)
        assert all(r is not None for r in env._reseed)
        if not in_place:
            env._reseed = [None] * env.num_envs
        rng, s, seen = np.random.default_rng(3), env.reset(), []
        while int(s.episode.min()) < 75:
            seen.append((s.obs.copy(), s.mask.copy(), s.returns.copy(), s.done.copy()))
            s = env.step(s.envs, uniform(s, rng))
        runs.append(seen)
    assert len(runs[0]) == len(runs[1]) > 150
    for a, b in zip(*runs):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
