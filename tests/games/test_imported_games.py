"""games.imported_games: ``package.module:Name`` games of the user's own modules (issue 26, item 5)."""

from pathlib import Path

import pyspiel
import pytest

import games
from games.imported_games import confirm_import, from_untrusted_file, import_game, is_import_spec

USER_GAMES = Path(__file__).parent / "data" / "user_games"


@pytest.fixture(autouse=True)
def user_games_on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(USER_GAMES))


def test_a_sequential_game_class_a_factory_and_an_environment_import():
    game = import_game("usergames26.bluff:BluffDice")
    assert isinstance(game, pyspiel.Game) and game.get_type().short_name == "bluff_dice_26"
    assert import_game("usergames26.bluff:make_bluff").get_type().short_name == "bluff_dice_26"
    assert games.load("usergames26.bluff:BluffDice").num_players() == 2
    env = import_game("usergames26.envs:HighCard")
    assert env.obs_dim == 5 and callable(env.batched_env)
    assert games.check_game("usergames26.bluff:BluffDice").ok


def test_bad_names_say_which_part_is_wrong():
    with pytest.raises(ValueError, match=r"the module 'usergames26.blufff' does not import \(ModuleNotFoundError"):
        import_game("usergames26.blufff:BluffDice")
    with pytest.raises(ValueError, match=r"has no 'BlufDice'\. Did you mean 'BluffDice'\?"):
        import_game("usergames26.bluff:BlufDice")
    with pytest.raises(TypeError, match=r"'usergames26.bluff:NOT_A_GAME' is an int, not a game"):
        import_game("usergames26.bluff:NOT_A_GAME")
    with pytest.raises(ValueError, match="must look like 'package.module:Name'"):
        import_game("usergames26/bluff.py:BluffDice")
    assert not is_import_spec("pettingzoo:tictactoe_v3") and not is_import_spec("kuhn_poker(players=3)")


def test_check_game_names_a_tensor_shorter_than_declared():
    report = games.check_game("usergames26.bluff:SevenOfEight", raise_on_error=False)
    assert report.kinds == {"bad_tensor"}
    assert "information_state_tensor(0)" in str(report) and "has 7 entries" in str(report)


def test_a_name_read_from_a_file_is_imported_only_once_confirmed():
    spec = "usergames26.bluff:make_bluff"
    with from_untrusted_file():
        with pytest.raises(ValueError, match="imports Python code and was read from a file"):
            import_game(spec)
        confirm_import(spec)
        assert import_game(spec).num_players() == 2
