"""games.contracts: the step check every env shares, and the one test for an environment game."""

import numpy as np
import pytest

from games.contracts import EnvironmentGame, check_step, is_environment_game
from games.environment import ObservationGame, make_env


def test_an_environment_game_is_recognised_by_its_methods():
    ttt = ObservationGame("tic_tac_toe")
    assert is_environment_game(ttt) and isinstance(ttt, EnvironmentGame)
    assert not is_environment_game("tic_tac_toe") and not is_environment_game(make_env("kuhn_poker", 1))


def test_check_step_names_what_is_wrong():
    legal = lambda e, a: a != 2   # noqa: E731  (action 2 is never legal here)
    envs, actions = check_step([0, 1], [1, 0], 2, 3, legal)
    assert envs.dtype == actions.dtype == np.int64
    with pytest.raises(ValueError, match=r"envs must lie in \[0, 2\)"):
        check_step([2], [0], 2, 3, legal)
    with pytest.raises(ValueError, match=r"actions\[1\] = 2 is not legal in env 1"):
        check_step([0, 1], [0, 2], 2, 3, legal)
