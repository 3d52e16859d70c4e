"""games.environment: the batched environment against hand-derived values and OpenSpiel's own numbers."""

import numpy as np
import pyspiel
import pytest

from games.environment import ObservationGame, make_env, num_actions, observation_size


def uniform_actions(step, rng):
    """A uniformly random legal action per row."""
    return (rng.random(step.mask.shape) * step.mask).argmax(axis=1)


def play_uniform(env, episodes, seed=0):
    """Returns of ``episodes`` finished episodes (all envs stepped every time) under uniform play."""
    rng = np.random.default_rng(seed)
    s = env.reset()
    out = []
    while len(out) < episodes:
        s = env.step(s.envs, uniform_actions(s, rng))
        out.extend(s.returns[s.done])
    return np.array(out[:episodes])


def within(samples, value, sigmas=4.0):
    stderr = samples.std(ddof=1) / np.sqrt(samples.size)
    return abs(samples.mean() - value) < sigmas * stderr


def test_kuhn_uniform_against_uniform_is_one_eighth():
    # Player 0 (card c0, opponent c1, 6 deals). Uniform play: pass-pass (1/4): +-1 showdown, mean 0;
    # pass-bet-fold (1/8): -1; pass-bet-call (1/8): +-2, mean 0; bet-fold (1/4): +1; bet-call (1/4): +-2, mean 0.
    # So E = -1/8 + 1/4 = 1/8.
    r = play_uniform(make_env("kuhn_poker", 32, rng=0), 20_000)
    assert within(r[:, 0], 0.125)
    np.testing.assert_allclose(r.sum(axis=1), 0.0)


def exact_uniform_moments(state):
    """E[r_0] and E[r_0^2] under uniform play, walking OpenSpiel's turn-based conversion."""
    if state.is_terminal():
        r = state.returns()[0]
        return np.array([r, r * r])
    if state.is_chance_node():
        return sum(p * exact_uniform_moments(state.child(a)) for a, p in state.chance_outcomes())
    legal = state.legal_actions()
    return sum(exact_uniform_moments(state.child(a)) for a in legal) / len(legal)


def test_simultaneous_goofspiel_matches_openspiel_expected_returns():
    game = pyspiel.load_game("goofspiel(num_cards=3,returns_type=point_difference)")
    turn_based = pyspiel.convert_to_turn_based(game)
    exact = pyspiel.expected_returns(turn_based.new_initial_state(), pyspiel.UniformRandomPolicy(turn_based),
                                     -1, False)
    mean, second = exact_uniform_moments(turn_based.new_initial_state())
    assert mean == pytest.approx(exact[0]) and second == pytest.approx(29 / 36)   # the spread: not symmetric
    env = make_env(game, 32, rng=1)
    seats = []
    rng = np.random.default_rng(2)
    s = env.reset()
    out = []
    while len(out) < 20_000:
        seats.extend(s.player.tolist())
        s = env.step(s.envs, uniform_actions(s, rng))
        out.extend(s.returns[s.done])
    r = np.array(out)
    assert within(r[:, 0], exact[0]) and within(r[:, 1], exact[1])
    assert within(r[:, 0] ** 2, second)
    assert set(seats) == {0, 1}


def test_simultaneous_node_asks_each_seat_about_the_same_state():
    game = pyspiel.load_game("goofspiel(num_cards=4,points_order=descending)")
    env = make_env(game, 1, rng=0)
    s = env.reset()
    state = game.new_initial_state()
    assert s.player.tolist() == [0]
    np.testing.assert_array_equal(s.obs[0], state.information_state_tensor(0))
    s = env.step([0], [3])              # seat 0 bids its top card; seat 1 must not see it
    assert s.player.tolist() == [1]
    np.testing.assert_array_equal(s.obs[0], state.information_state_tensor(1))
    s = env.step([0], [0])
    state.apply_actions([3, 0])
    assert s.player.tolist() == [0]
    np.testing.assert_array_equal(s.obs[0], state.information_state_tensor(0))
    np.testing.assert_array_equal(s.mask[0], np.isin(np.arange(4), state.legal_actions(0)))


@pytest.mark.parametrize("kernel", [True, False])   # phantom_ttt: its numpy kernel and the generic env
@pytest.mark.parametrize("name", ["leduc_poker", "phantom_ttt", "goofspiel(num_cards=4)"])
def test_masks_and_observations_equal_pyspiel_on_the_replayed_history(name, kernel):
    game = pyspiel.load_game(name)
    env = make_env(game, 4, rng=3, kernel=kernel)
    rng = np.random.default_rng(4)
    s = env.reset()
    for _ in range(60):
        states = env.states(s.envs)
        for j, state in enumerate(states):
            p = int(s.player[j])
            np.testing.assert_array_equal(s.mask[j], np.isin(np.arange(env.num_actions), state.legal_actions(p)))
            np.testing.assert_array_equal(s.obs[j], np.asarray(state.information_state_tensor(p), np.float32))
        s = env.step(s.envs, uniform_actions(s, rng))


@pytest.mark.parametrize("name", ["leduc_poker", "goofspiel(num_cards=4)", "phantom_ttt"])
def test_the_cache_never_changes_what_is_sampled(name):
    runs = []
    for cache_bytes in (0, 20_000, 128 * 2**20):   # off, full after a few hundred nodes, large
        env = make_env(name, 8, rng=5, cache_bytes=cache_bytes, kernel=False)
        rng = np.random.default_rng(6)
        s = env.reset()
        trace = [s.obs.copy()]
        for _ in range(300):
            s = env.step(s.envs, uniform_actions(s, rng))
            trace += [s.obs.copy(), s.returns.copy(), s.player.copy()]
        runs.append(trace)
        if cache_bytes == 20_000:
            assert 0 < env.cached_nodes < 500
    for other in runs[1:]:
        for a, b in zip(runs[0], other):
            np.testing.assert_array_equal(a, b)


def test_same_seed_same_episodes_and_other_seed_other_episodes():
    def trace(seed):
        return play_uniform(make_env("leduc_poker", 8, rng=seed), 500)
    np.testing.assert_array_equal(trace(7), trace(7))
    assert not np.array_equal(trace(7), trace(8))


def test_stepping_a_subset_leaves_the_others_waiting_and_counts_episodes():
    env = make_env("kuhn_poker", 3, rng=0)
    s = env.reset()
    assert s.episode.tolist() == [1, 1, 1]
    s1 = env.step([1], [0])
    s1 = env.step([1], [0])           # pass, pass: the showdown ends episode 1 of env 1
    assert s1.done.tolist() == [True] and s1.episode.tolist() == [2]
    assert abs(s1.returns[0]).tolist() == [1.0, 1.0]
    s0 = env.step([0, 2], [1, 1])     # the others were still at their first decision
    assert s0.player.tolist() == [1, 1] and s0.episode.tolist() == [1, 1]


def test_sizes_and_bad_input():
    assert observation_size("phantom_ttt") == 108 and num_actions("phantom_ttt") == 9
    assert make_env("phantom_ttt", 2).reset().obs.shape == (2, 108)
    with pytest.raises(ValueError, match="num_envs"):
        make_env("kuhn_poker", 0)
    with pytest.raises(ValueError, match="information-state tensors"):
        make_env("oshi_zumo", 2)
    assert make_env("oshi_zumo", 2, observation="observation").reset().obs.shape[0] == 2
    with pytest.raises(ValueError, match="observation must be one of"):
        make_env("kuhn_poker", 2, observation="pixels")
    with pytest.raises(ValueError, match="unknown OpenSpiel game"):
        make_env("kuhn_pokr", 2)
    with pytest.raises(TypeError, match="game must be"):
        make_env(3.5, 2)
    with pytest.raises(TypeError, match="unexpected keyword"):
        make_env("kuhn_poker", 2, cache_size=3)
    env = make_env("kuhn_poker", 2, rng=0)
    with pytest.raises(ValueError, match="reset"):
        env.step([0], [0])
    env.reset()
    with pytest.raises(ValueError, match="repeat"):
        env.step([0, 0], [0, 1])
    with pytest.raises(ValueError, match=r"lie in \[0, 2\)"):
        env.step([2], [0])
    with pytest.raises(ValueError, match="one per env"):
        env.step([0, 1], [0])
    with pytest.raises(ValueError, match="not legal"):
        env.step([0], [2])
    env.step([0], [1])    # after a bet the other player's both actions are legal; an illegal one still fails
    with pytest.raises(ValueError, match="not legal"):
        env.step([0], [5])


def test_custom_sequential_game_without_decisions_is_refused():
    from games import CHANCE, TERMINAL, SequentialGame

    class Coin(SequentialGame):
        name = "env_test_coin"
        num_distinct_actions, max_chance_outcomes, max_game_length = 1, 2, 1
        min_utility, max_utility = 0.0, 1.0
        information_state_tensor_shape = (1,)
        def initial_state(self): return None
        def current_player(self, state): return CHANCE if state is None else TERMINAL
        def chance_outcomes(self, state): return [(0, 0.5), (1, 0.5)]
        def legal_actions(self, state): return []
        def apply_action(self, state, action): return action
        def returns(self, state): return [float(state)]
        def information_state(self, state, player): return str(state)
        def information_state_tensor(self, state, player): return [0.0]

    with pytest.raises(ValueError, match="without any decision"):
        make_env(Coin(), 2, rng=0).reset()


def test_a_shared_cache_is_warm_for_the_next_env_and_changes_nothing():
    def trace(**options):
        env = make_env("leduc_poker", 16, rng=11, cache_bytes=3 * 2**20, **options)
        rng = np.random.default_rng(12)
        s, out = env.reset(), []
        for _ in range(200):
            s = env.step(s.envs, uniform_actions(s, rng))
            out += [s.obs, s.returns]
        return env, out

    first, a = trace()
    second_start = make_env("leduc_poker", 1, cache_bytes=3 * 2**20).cached_nodes
    assert second_start >= first.cached_nodes > 100     # the next env of the game starts from the same cache
    private, b = trace(share_cache=False)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_wrappers_registered_with_sampled_chance_are_never_cached():
    # add_noise is registered SAMPLED_STOCHASTIC but, loaded, reports kuhn's chance mode; stay on the safe side
    env = make_env("add_noise(game=kuhn_poker(),epsilon=1.0,seed=3)", 8, rng=0)
    r = play_uniform(env, 400)
    assert env.cached_nodes == 0 and make_env("kuhn_poker", 1).cached_nodes > 0
    assert r.shape == (400, 2) and not np.allclose(r, np.round(r))   # noisy returns


def test_observation_game_plays_through_the_observation_tensor():
    game = ObservationGame("tic_tac_toe")
    env = make_env(game, 2, rng=0)
    s = env.reset()
    s = env.step(s.envs, np.array([4, 0]))   # x takes the centre in env 0, the corner in env 1
    state = pyspiel.load_game("tic_tac_toe").new_initial_state()
    state.apply_action(4)
    np.testing.assert_array_equal(s.obs[0], np.asarray(state.observation_tensor(1), np.float32))
    assert s.player.tolist() == [1, 1] and not s.mask[0, 4] and s.mask[1, 4]
    assert (game.obs_dim, game.num_actions, game.min_utility(), game.max_utility()) == (27, 9, -1.0, 1.0)
    with pytest.raises(ValueError, match="provides no observation tensor"):
        ObservationGame("coin_game")


class _Interrupt(BaseException):
    """What a timer's signal handler or Ctrl-C raises at an arbitrary line (here: the tracer's)."""


def _interrupted_at(line: int, call):
    """Run ``call`` raising :class:`_Interrupt` at its ``line``-th executed line inside the environment's modules;
    whether it was raised."""
    import sys

    count = [0]

    def tracer(frame, event, arg):
        if not frame.f_code.co_filename.endswith(("openspiel_env.py", "env_history_cache.py")):
            return None
        if event == "line":
            count[0] += 1
            if count[0] == line:
                raise _Interrupt
        return tracer

    sys.settrace(tracer)
    try:
        call()
    except _Interrupt:
        return True
    finally:
        sys.settrace(None)
    return False


@pytest.mark.parametrize("first_line", range(0, 600, 150))
def test_a_step_interrupted_anywhere_leaves_the_shared_cache_true_for_the_next_env(first_line):
    # an exception raised by a signal handler (a benchmark's budget timer, Ctrl-C) at any line of a step that grows
    # the shared cache: a later env of the game (sharing that cache) still plays the game's true histories
    game = pyspiel.load_game("leduc_poker")
    cache_bytes = 2**20 + first_line   # a cache of this test's own
    rng = np.random.default_rng(first_line)
    for line in range(first_line + 1, first_line + 151, 3):
        env = make_env(game, 16, rng=line, cache_bytes=cache_bytes)
        s = env.reset()
        for _ in range(3):
            s = env.step(s.envs, uniform_actions(s, rng))
        actions = uniform_actions(s, rng)
        if _interrupted_at(line, lambda: env.step(s.envs, actions)):
            s = env.reset()   # the interrupted env itself plays on after a reset
            for _ in range(3):
                s = env.step(s.envs, uniform_actions(s, rng))
    env = make_env(game, 16, rng=0, cache_bytes=cache_bytes)
    assert env.cached_nodes > 100
    s = env.reset()
    for _ in range(80):
        for j, state in enumerate(env.states(s.envs)):
            p = int(s.player[j])
            assert not state.is_terminal() and state.current_player() == p
            np.testing.assert_array_equal(s.mask[j], np.isin(np.arange(env.num_actions), state.legal_actions(p)))
            np.testing.assert_array_equal(s.obs[j], np.asarray(state.information_state_tensor(p), np.float32))
        before = [state.clone() for state in env.states(s.envs)]
        actions = uniform_actions(s, rng)
        s = env.step(s.envs, actions)
        for j in np.flatnonzero(s.done):   # (an episode ends on a decision in Leduc, never on a chance draw)
            np.testing.assert_array_equal(s.returns[j], before[j].child(int(actions[j])).returns())
