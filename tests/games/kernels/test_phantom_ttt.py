"""games.kernels.phantom_ttt: the numpy kernel against the generic OpenSpielEnv and pyspiel, row for row."""

import numpy as np
import pyspiel
import pytest

from games.environment import OpenSpielEnv, make_env
from games.kernels import kernel_for
from games.kernels.phantom_ttt import PhantomTTTEnv

FIELDS = ("envs", "player", "obs", "mask", "done", "returns", "episode")
VERSIONS = ["phantom_ttt", "phantom_ttt(gameversion=abrupt)", "phantom_ttt(obstype=reveal-numturns)",
            "phantom_ttt(gameversion=abrupt,obstype=reveal-numturns)"]


def assert_same(a, b):
    for name in FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.shape == y.shape, name
        np.testing.assert_array_equal(x, y, err_msg=name)


def pair(name, num_envs, observation="information_state"):
    kernel = make_env(name, num_envs, rng=0, observation=observation)
    generic = make_env(name, num_envs, rng=0, observation=observation, kernel=False, share_cache=False)
    assert isinstance(kernel, PhantomTTTEnv) and isinstance(generic, OpenSpielEnv)
    return kernel, generic


@pytest.mark.slow
@pytest.mark.parametrize("observation", ["information_state", "observation"])
@pytest.mark.parametrize("name", VERSIONS)
def test_every_row_equals_the_generic_env_on_random_subsets(name, observation):
    kernel, generic = pair(name, 24, observation)
    assert (kernel.obs_dim, kernel.num_actions, kernel.num_players) == \
        (generic.obs_dim, generic.num_actions, generic.num_players)
    rng = np.random.default_rng(7)
    a, b = kernel.reset(), generic.reset()
    assert_same(a, b)
    mask, player = a.mask.copy(), a.player.copy()
    decisions = episodes = 0
    for t in range(500):
        envs = np.flatnonzero(rng.random(24) < rng.uniform(0.1, 1.0))
        if t % 50 == 0:
            envs = np.arange(0)                   # an empty step is answered with empty rows
        actions = (rng.random((envs.size, 9)) * mask[envs]).argmax(axis=1)
        a, b = kernel.step(envs, actions), generic.step(envs, actions)
        assert_same(a, b)
        mask[a.envs], player[a.envs] = a.mask, a.player
        decisions += envs.size
        episodes += int(a.done.sum())
        if t % 25 == 0:                           # the states and their strings are pyspiel's
            every = np.arange(24)
            assert [s.history() for s in kernel.states(every)] == [s.history() for s in generic.states(every)]
            assert kernel.infostate_keys(every) == generic.infostate_keys(every)
            for j, state in enumerate(kernel.states(every)):
                p = int(player[j])
                assert state.current_player() == p
                np.testing.assert_array_equal(mask[j], np.isin(np.arange(9), state.legal_actions(p)))
    assert decisions > 5_000 and episodes > 400


def test_hand_played_episodes():
    # classical: o finds the centre taken, sees x there and moves again; x then wins on the diagonal
    env = make_env("phantom_ttt", 1)
    env.reset()
    s = env.step([0], [4])                             # x: centre
    s = env.step([0], [4])                             # o: centre is taken
    assert s.player.tolist() == [1] and s.obs[0, 9 + 4] == 0 and s.obs[0, 18 + 4] == 1   # o sees a cross there
    assert s.obs[0, 27:].sum() == 1 and s.obs[0, 27 + 4] == 1   # its one own move so far: cell 4
    for cell in (1, 0, 7, 8):                          # o: 1, x: 0, o: 7, x: 8 (x holds 0, 4, 8)
        s = env.step([0], [cell])
    assert s.done.tolist() == [True] and s.returns.tolist() == [[1.0, -1.0]] and s.episode.tolist() == [2]
    assert s.player.tolist() == [0] and s.mask.all() and s.obs[0, :9].all() and s.obs[0, 9:].sum() == 0
    # abrupt: the failed move passes the turn
    env = make_env("phantom_ttt(gameversion=abrupt)", 1)
    env.reset()
    env.step([0], [4])
    assert env.step([0], [4]).player.tolist() == [0]
    # a draw: the board fills up without a line
    env = make_env("phantom_ttt", 1)
    env.reset()
    for cell in (0, 1, 2, 4, 3, 5, 7, 6):
        s = env.step([0], [cell])
        assert not s.done.any()
    s = env.step([0], [8])
    assert s.done.tolist() == [True] and s.returns.tolist() == [[0.0, 0.0]]


def test_dispatch():
    assert kernel_for(pyspiel.load_game("phantom_ttt(obstype=reveal-numturns)")) is PhantomTTTEnv
    assert kernel_for(pyspiel.load_game("tic_tac_toe")) is None
    assert kernel_for(pyspiel.load_game("phantom_ttt_ir")) is None
    assert isinstance(make_env("phantom_ttt", 2, kernel=False), OpenSpielEnv)
    assert isinstance(make_env(pyspiel.load_game("phantom_ttt"), 2), PhantomTTTEnv)
    env = make_env("phantom_ttt", 2, rng=3)
    assert env.cached_nodes == 0 and np.isnan(env.cache_hit_rate) and env.rng.integers(10**9) == \
        np.random.default_rng(3).integers(10**9)


def error(env, envs, actions):
    with pytest.raises(ValueError) as info:
        env.step(envs, actions)
    return str(info.value)


def test_bad_input_gives_the_generic_env_messages():
    kernel, generic = pair("phantom_ttt", 3)
    with pytest.raises(ValueError, match="reset"):
        kernel.step([0], [0])
    kernel.reset(), generic.reset()
    kernel.step([0], [4]), generic.step([0], [4])
    kernel.step([0], [4]), generic.step([0], [4])      # o finds the centre taken: now it knows
    for envs, actions in [([0, 0], [1, 2]), ([3], [0]), ([-1], [0]), ([[0]], [[0]]), ([0.5], [1]), ([0], [1.0]),
                          ([0, 1], [1]), ([0], [9]), ([1], [-1]), ([0], [4]), ([2, 0], [3, 4])]:
        message = error(kernel, envs, actions)
        assert message == error(generic, envs, actions)
    assert "is not legal in env 0" in error(kernel, [0], [4])
    with pytest.raises(TypeError, match="unexpected keyword"):
        make_env("phantom_ttt", 2, cache_size=3)
    with pytest.raises(ValueError, match="observation must be one of"):
        make_env("phantom_ttt", 2, observation="pixels")
    with pytest.raises(ValueError, match="num_envs"):
        PhantomTTTEnv(pyspiel.load_game("phantom_ttt"), 0)
    with pytest.raises(ValueError, match="cache_bytes"):
        make_env("phantom_ttt", 2, cache_bytes=-1)
    with pytest.raises(ValueError, match="game must be phantom_ttt"):
        PhantomTTTEnv(pyspiel.load_game("tic_tac_toe"), 2)
