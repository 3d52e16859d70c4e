"""games.resolve: every accepted form of a game to one ResolvedGame; errors name the part that failed."""

import numpy as np
import pyspiel
import pytest

import games
from games import catalog
from games.game_resolution import ResolvedGame, resolve


def test_every_form_resolves_to_the_same_description():
    kuhn = resolve("kuhn_poker")
    assert (kuhn.kind, kuhn.spec, kuhn.normal_form, kuhn.num_players, kuhn.environment) == \
        ("openspiel", "kuhn_poker", None, 2, False)
    assert resolve(pyspiel.load_game("kuhn_poker")).game == kuhn.game
    rps = resolve(catalog.rock_paper_scissors())
    assert rps.kind == "normal_form" and rps.game.num_players() == 2
    state = rps.game.new_initial_state().child(0).child(1)          # rock vs paper: paper wins
    assert state.returns() == [-1.0, 1.0]
    assert resolve("catalog:rock_paper_scissors").normal_form == catalog.rock_paper_scissors()
    obs = resolve("observation:tic_tac_toe")
    assert obs.environment and obs.game.obs_dim == 27 and obs.num_players == 2
    assert resolve(obs) is obs and resolve(obs.game).kind == "environment"
    assert games.resolve is resolve and isinstance(kuhn, ResolvedGame)


def test_a_game_in_user_code_is_imported_by_module_and_name(tmp_path, monkeypatch):
    (tmp_path / "my_games_pkg.py").write_text(
        "import numpy as np\n"
        "from games import NormalFormGame\n"
        "PENNIES = NormalFormGame(np.array([[[1, -1], [-1, 1]], [[-1, 1], [1, -1]]], dtype=float))\n"
        "def pennies():\n    return PENNIES\n"
        "NOT_A_GAME = 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    direct, built = resolve("my_games_pkg:PENNIES"), resolve("my_games_pkg:pennies")
    assert direct.kind == built.kind == "normal_form" and direct.spec == "my_games_pkg:PENNIES"
    np.testing.assert_array_equal(built.normal_form.payoffs, direct.normal_form.payoffs)
    with pytest.raises(ValueError, match="the module 'no_such_module_xyz' does not import"):
        resolve("no_such_module_xyz:Game")
    with pytest.raises(ValueError, match="the module 'my_games_pkg' has no 'Missing'"):
        resolve("my_games_pkg:Missing")
    with pytest.raises(TypeError, match="'my_games_pkg:NOT_A_GAME' is an int, not a game"):
        resolve("my_games_pkg:NOT_A_GAME")


def test_bad_games_are_refused_with_what_is_accepted():
    with pytest.raises(ValueError, match="unknown OpenSpiel game 'kuhn_pokr'"):
        resolve("kuhn_pokr")
    with pytest.raises(ValueError, match="must name a game"):
        resolve("  ")
    with pytest.raises(TypeError, match="game must be .*'module:Name'; got float"):
        resolve(3.5)
    with pytest.raises(ValueError, match="at least two"):
        resolve(games.NormalFormGame(np.ones((1, 3))))
