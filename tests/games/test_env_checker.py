"""games/env_checker.py: check_env plays an environment game against the EnvStep contract."""
from pathlib import Path

import numpy as np
import pytest

import games
from games.env_checker import check_env

USER_GAMES = Path(__file__).parent / "data" / "user_games"


@pytest.fixture
def high_card(monkeypatch):
    monkeypatch.syspath_prepend(str(USER_GAMES))
    from usergames26.envs import HighCard, HighCardEnv

    return HighCard, HighCardEnv


def test_a_users_numpy_environment_passes_as_a_game_and_as_an_env(high_card):
    game_class, env_class = high_card
    report = games.check_env(game_class())
    assert report.ok and report.num_episodes >= 20 and "no problems found" in str(report)
    assert check_env(env_class(3, rng=0), episodes=5).ok
    assert check_env(games.ObservationGame("tic_tac_toe"), episodes=5).ok


def _broken(env_class, **overrides):
    """A HighCard game whose env has methods replaced."""
    class Env(env_class):
        pass
    for name, method in overrides.items():
        setattr(Env, name, method)

    class Game:
        num_players, num_actions, obs_dim = 2, 2, 5

        def batched_env(self, num_envs, rng=None, **options):
            return Env(num_envs, rng=rng)
    return Game()


def test_each_broken_contract_is_named(high_card):
    _, env_class = high_card

    def no_legal(self, envs, done, returns):
        step = env_class._rows(self, envs, done, returns)
        step.mask[:] = False
        return step

    def global_rng(self, envs):   # (deals from numpy's global generator: not seeded by batched_env's rng)
        self.cards[envs] = np.random.randint(0, 3, size=(len(envs), 2))
        self.turn[envs] = 0
        self.episode[envs] += 1

    def leaky_returns(self, envs, done, returns):
        return env_class._rows(self, envs, done, returns + 1.0)

    def never_ends(self, envs, actions):
        return self._rows(np.asarray(envs), np.zeros(len(envs), bool), np.zeros((len(envs), 2)))

    cases = {"empty_mask": {"_rows": no_legal}, "nondeterministic": {"_deal": global_rng},
             "returns_mid_episode": {"_rows": leaky_returns}, "no_episode_end": {"step": never_ends}}
    for kind, overrides in cases.items():
        report = check_env(_broken(env_class, **overrides), max_steps=50, raise_on_error=False)
        assert kind in report.kinds, (kind, str(report))
    with pytest.raises(ValueError, match="empty_mask: reset: env 0 has no legal action"):
        check_env(_broken(env_class, _rows=no_legal))
    with pytest.raises(TypeError, match="env_or_game must be an environment game"):
        check_env(3.5)
