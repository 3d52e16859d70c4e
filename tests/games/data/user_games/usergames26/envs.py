"""A user's own batched environment: high card with one bet, stepped for a whole batch in numpy."""
import numpy as np

from games.environment import EnvStep


class HighCardEnv:
    """``num_envs`` games: each seat holds a private card 0..2; seat 0 checks (0) or bets (1), seat 1 sees it and
    passes (0) or calls / bets (1). Both 1: showdown for 2; one 1: the one who played 1 wins 1; both 0: showdown
    for 1."""

    num_players, num_actions, obs_dim = 2, 2, 5

    def __init__(self, num_envs, rng=None):
        self.num_envs = num_envs
        self.rng = np.random.default_rng(rng)
        self.cards = np.zeros((num_envs, 2), np.int64)
        self.first = np.zeros(num_envs, np.int64)
        self.turn = np.zeros(num_envs, np.int64)
        self.episode = np.zeros(num_envs, np.int64)

    def _obs(self, envs):
        obs = np.zeros((len(envs), 5), np.float32)
        seat = self.turn[envs]
        obs[np.arange(len(envs)), self.cards[envs, seat]] = 1
        seen = seat == 1
        obs[np.flatnonzero(seen), 3 + self.first[envs][seen]] = 1
        return obs

    def _deal(self, envs):
        self.cards[envs] = self.rng.integers(0, 3, size=(len(envs), 2))
        self.turn[envs] = 0
        self.episode[envs] += 1

    def _rows(self, envs, done, returns):
        return EnvStep(envs=envs, player=self.turn[envs].copy(), obs=self._obs(envs),
                       mask=np.ones((len(envs), 2), bool), done=done, returns=returns,
                       episode=self.episode[envs].copy())

    def reset(self, rng=None):
        if rng is not None:
            self.rng = np.random.default_rng(rng)
        envs = np.arange(self.num_envs)
        self.episode[:] = 0
        self._deal(envs)
        return self._rows(envs, np.zeros(len(envs), bool), np.zeros((len(envs), 2)))

    def step(self, envs, actions):
        envs, actions = np.asarray(envs), np.asarray(actions)
        returns = np.zeros((len(envs), 2))
        first = self.turn[envs] == 0
        self.first[envs[first]] = actions[first]
        self.turn[envs[first]] = 1
        done = ~first
        e = envs[done]
        a0, a1 = self.first[e], actions[done]
        c0, c1 = self.cards[e, 0], self.cards[e, 1]
        show = np.sign(c0 - c1).astype(float)
        value = np.where((a0 == 1) & (a1 == 1), 2 * show,
                         np.where(a0 == 1, 1.0, np.where(a1 == 1, -1.0, show)))
        returns[done, 0], returns[done, 1] = value, -value
        self._deal(e)
        return self._rows(envs, done, returns)


class HighCard:
    """The game: what PSRO needs of an environment (seats, actions, observation size, batched_env)."""

    num_players, num_actions, obs_dim = 2, 2, 5

    def __str__(self):
        return "usergames26.envs:HighCard"

    def batched_env(self, num_envs, rng=None, **options):
        return HighCardEnv(num_envs, rng=rng)
