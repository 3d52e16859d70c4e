"""psro/measures/reference_opponents.py: a run's policies against fixed references, with confidence intervals."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest

from psro import PSRO
from psro.measures.reference_opponents import (
    available_references,
    evaluate_against,
    evaluate_run,
    make_reference,
    outcomes,
    wilson_interval,
)
from psro.policies.acting import UniformPolicy

TTT, KUHN = pyspiel.load_game("tic_tac_toe"), pyspiel.load_game("kuhn_poker")


class FirstLegal:
    """A deterministic member: always the first legal action."""

    def action_probabilities(self, state, player):
        probs = np.zeros(state.get_game().num_distinct_actions())
        probs[state.legal_actions()[0]] = 1.0
        return probs


def test_wilson_interval_by_hand():
    # p = 1/2, n = 100, z = 1.959964: centre 0.5, half-width z * sqrt(0.0025 + z^2 / 40000) / (1 + z^2 / 100)
    z = 1.959963984540054
    half = z * np.sqrt(0.25 / 100 + z * z / 40000) / (1 + z * z / 100)
    low, high = wilson_interval(50, 100)
    assert low == pytest.approx(0.5 - half) and high == pytest.approx(0.5 + half)
    low, high = wilson_interval(20, 20)   # all wins: the upper bound is 1, the lower n / (n + z^2)
    assert high == 1.0 and low == pytest.approx(20 / (20 + z * z))


def test_outcomes_of_two_and_three_players():
    assert outcomes(np.array([[1, -1], [0, 0], [-1, 1]]), 1).tolist() == [-1, 0, 1]
    assert outcomes(np.array([[2, 2, 0], [3, 1, 1]]), 0).tolist() == [0, 1]   # tied for the highest: a draw


def test_a_deterministic_game_by_hand(tmp_path, monkeypatch):
    # first-legal against first-legal in tic-tac-toe: X takes 0, 2, 4, 6 and wins on the 2-4-6 diagonal
    (tmp_path / "my_bots.py").write_text("def first_legal(game, player, seed):\n"
                                         "    return lambda state: state.legal_actions()[0]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    table = evaluate_against(TTT, [[FirstLegal()], [FirstLegal()]], ["my_bots:first_legal"], episodes=20,
                             marginals=[np.ones(1), np.ones(1)])
    assert table.agent.tolist() == ["member 0", "meta", "member 0", "meta"]
    assert table.win.tolist() == [1.0, 1.0, 0.0, 0.0] and table.loss.tolist() == [0.0, 0.0, 1.0, 1.0]
    assert table.mean_return.tolist() == [1.0, 1.0, -1.0, -1.0]
    assert table.return_low.tolist() == table.return_high.tolist() == [1.0, 1.0, -1.0, -1.0]   # no spread
    z = 1.959963984540054
    assert table.win_low.iloc[0] == pytest.approx(20 / (20 + z * z))


def test_mcts_beats_the_uniform_policy_and_tables_are_reproducible():
    pops = [[UniformPolicy(9)], [UniformPolicy(9)]]
    table = evaluate_against(TTT, pops, ["uniform", "mcts"], episodes=30, simulations=25, seed=1)
    vs = table.set_index(["player", "reference"])
    for p in range(2):
        assert vs.loc[(p, "mcts"), "loss"] > max(0.5, vs.loc[(p, "uniform"), "loss"])
        assert vs.loc[(p, "mcts"), "mean_return"] < vs.loc[(p, "uniform"), "mean_return"]
    assert (table[["win", "draw", "loss"]].sum(axis=1) == 1.0).all()
    again = evaluate_against(TTT, pops, ["uniform", "mcts"], episodes=30, simulations=25, seed=1)
    assert table.equals(again)


def test_information_set_mcts_plays_kuhn_and_perfect_information_mcts_is_refused():
    table = evaluate_against(KUHN, [[UniformPolicy(2)], [UniformPolicy(2)]], ["ismcts"], episodes=10,
                             simulations=10)
    assert table.episodes.tolist() == [10, 10]
    with pytest.raises(ValueError, match="'mcts' is OpenSpiel's MCTS for perfect-information games, and "
                                         "kuhn_poker\\(\\) has imperfect information; references that work for "
                                         "kuhn_poker\\(\\): 'uniform', 'ismcts', a bot of your own"):
        make_reference("mcts", KUHN)
    with pytest.raises(ValueError, match="against: 'nonesuch' is not a reference"):
        make_reference("nonesuch", KUHN)
    with pytest.raises(ValueError, match="against: cannot load the bot 'no_such_module_xyz:bot'"):
        make_reference("no_such_module_xyz:bot", KUHN)
    with pytest.raises(ValueError, match="simultaneous-move game"):   # (uniform plays it on the environment layer)
        make_reference("mcts", pyspiel.load_game("goofspiel(num_cards=3)"))


def test_a_run_directory_is_evaluated_and_anything_else_is_refused(tmp_path):
    with pytest.raises(ValueError, match="RUN_DIR: .* is not a run directory"):
        evaluate_run(tmp_path)
    PSRO("kuhn_poker", progress=False, checkpoint_dir=tmp_path / "checkpoint").run(iterations=1)
    table = evaluate_run(tmp_path, ["uniform", "ismcts"], episodes=6, simulations=5)
    assert len(table) == 2 * 3 * 2   # players x (2 tabular members + meta) x references
    assert (table.episodes == 6).all()


def test_reference_opponents_are_tracked_every_iteration_and_resumed(tmp_path):
    fields = dict(progress=False, reference_opponents=["uniform", "ismcts"])
    solver = PSRO("kuhn_poker", checkpoint_dir=tmp_path, **fields)
    history = solver.run(iterations=1)
    columns = [f"{r}_{what}_{p}" for r in ("uniform", "ismcts") for p in (0, 1) for what in ("win", "return")]
    assert list(history.columns[-len(columns):]) == columns and history[columns].notna().all().all()
    assert history["eval_episodes"].tolist() == [2 * 2 * 40, 4 * 2 * 40]   # exact run: only the references played
    resumed = PSRO.resume(tmp_path, progress=False)
    assert resumed.config.reference_opponents == ["uniform", "ismcts"]
    straight = PSRO("kuhn_poker", **fields).run(iterations=2)
    uniform = [c for c in columns if c.startswith("uniform")]   # (OpenSpiel's IS-MCTS is not seed-reproducible)
    assert resumed.run(iterations=1)[uniform].equals(straight[uniform])   # seeded by (seed, iteration)
    with pytest.raises(ValueError, match=r"^reference_opponents: 'os:system' is not one of \['uniform', 'mcts', "
                                         r"'ismcts'\] \(a config cannot name code"):
        PSRO("kuhn_poker", reference_opponents=["os:system"])
    with pytest.raises(ValueError, match="^reference_opponents: against: 'mcts' is OpenSpiel's MCTS"):
        PSRO("kuhn_poker", reference_opponents=["mcts"])


@pytest.mark.parametrize("name", ["mcts", "ismcts"])
def test_search_bots_refuse_a_python_defined_game_instead_of_crashing(name):
    # issue 36 item 3: `psro evaluate RUN --against ismcts` ended in SIGSEGV on a Python-defined game
    from games.examples.trust_dilemma import TrustDilemma

    with pytest.raises(ValueError, match=f"against: '{name}' is OpenSpiel's C\\+\\+ .*MCTS bot, which crashes on a "
                                         "game defined in Python"):
        make_reference(name, TrustDilemma().to_pyspiel())


# -- issue 36 item 4: games without pyspiel states, a user's bot on observations, cross-play with another run --------
USER_GAMES = __import__("pathlib").Path(__file__).parents[2] / "games" / "data" / "user_games"


class AlwaysAction:
    """A member acting on observations: always action ``a``."""

    def __init__(self, a: int, width: int = 2):
        self.a, self.num_actions = a, width

    def probabilities_np(self, obs, mask):
        probs = np.zeros(mask.shape)
        probs[:, self.a] = 1.0
        return probs


def test_an_environment_game_plays_uniform_and_a_users_bot_on_observations(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(USER_GAMES))
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "issue36_bots.py").write_text(
        "import numpy as np\n\ndef always_one(game, player, seed):\n"
        "    return lambda obs, mask: np.ones(len(mask), dtype=np.int64)\n")
    from usergames26.envs import HighCard

    game = HighCard()   # (no pyspiel states: the old code refused even 'uniform')
    table = evaluate_against(game, [[AlwaysAction(0)], [AlwaysAction(0)]], ["uniform", "issue36_bots:always_one"],
                             marginals=[[1.0], [1.0]], episodes=30, seed=2)
    assert table[["player", "agent", "reference"]].values.tolist()[:4] == [
        [0, "member 0", "uniform"], [0, "member 0", "issue36_bots:always_one"], [0, "meta", "uniform"],
        [0, "meta", "issue36_bots:always_one"]]
    assert (table.episodes == 30).all() and (table.return_low <= table.mean_return).all()
    vs_bot = table[table.reference == "issue36_bots:always_one"].set_index(["player", "agent"])
    # seat 0 passes and the bot in seat 1 bets: seat 0 loses 1 every game; seat 1 passes after the bot's bet: -1
    assert vs_bot.loc[(0, "member 0"), "loss"] == 1.0 and vs_bot.loc[(0, "member 0"), "mean_return"] == -1.0
    assert vs_bot.loc[(1, "member 0"), "mean_return"] == -1.0
    assert table.equals(evaluate_against(game, [[AlwaysAction(0)], [AlwaysAction(0)]],
                                         ["uniform", "issue36_bots:always_one"], marginals=[[1.0], [1.0]],
                                         episodes=30, seed=2))   # seeded
    with pytest.raises(ValueError, match="against: 'mcts' plays state by state, and .* is an environment game"):
        make_reference("mcts", game)


def test_uniform_plays_a_simultaneous_move_game_and_search_bots_are_refused_there():
    goofspiel = pyspiel.load_game("goofspiel(num_cards=3)")
    table = evaluate_against(goofspiel, [[UniformPolicy(3)], [UniformPolicy(3)]], ["uniform"], episodes=12)
    assert table.episodes.tolist() == [12, 12]
    with pytest.raises(ValueError, match="simultaneous-move game"):
        make_reference("ismcts", goofspiel)


def test_cross_play_against_another_runs_meta_strategy(tmp_path):
    PSRO("kuhn_poker", progress=False, checkpoint_dir=tmp_path / "a" / "checkpoint").run(iterations=2)
    PSRO("kuhn_poker", progress=False, seed=5, checkpoint_dir=tmp_path / "b" / "checkpoint").run(iterations=1)
    other = str(tmp_path / "b")
    table = evaluate_run(tmp_path / "a", ["uniform", other], episodes=20)
    crossed = table[table.reference == other]
    assert len(crossed) == 2 * 4 and (crossed.episodes == 20).all()   # players x (3 tabular members + meta)
    assert ((crossed.win_low <= crossed.win) & (crossed.win <= crossed.win_high)).all()
    assert table.equals(evaluate_run(tmp_path / "a", ["uniform", other], episodes=20))
    PSRO("kuhn_poker(players=3)", progress=False, checkpoint_dir=tmp_path / "c" / "checkpoint").run(iterations=0)
    with pytest.raises(ValueError, match="cross-play needs two runs of the same game"):
        evaluate_run(tmp_path / "a", [str(tmp_path / "c")], episodes=5)
    with pytest.raises(ValueError, match="against: .* is not a run directory"):
        make_reference(str(tmp_path), KUHN)


# -- issue 57 item 2: IS-MCTS on a game without ResampleFromInfostate; rows handed on as each reference finishes ------


def test_which_references_each_game_supports():
    assert make_reference("ismcts", KUHN).name == "ismcts"
    cases = {"tic_tac_toe": ["uniform", "mcts", "ismcts"], "kuhn_poker": ["uniform", "ismcts"],
             "leduc_poker": ["uniform", "ismcts"], "phantom_ttt": ["uniform"], "dark_hex(board_size=2)": ["uniform"],
             "liars_dice": ["uniform"], "goofspiel(num_cards=3)": ["uniform"]}
    for name, supported in cases.items():
        assert available_references(pyspiel.load_game(name)) == supported, name


def test_ismcts_on_a_game_without_resampling_is_refused_by_name_before_anything_is_played(monkeypatch, capfd):
    from psro.measures import reference_opponents

    played = []
    monkeypatch.setattr(reference_opponents, "_play", lambda *a: played.append(a))
    phantom = pyspiel.load_game("phantom_ttt")
    message = ("against: 'ismcts' is OpenSpiel's IS-MCTS, which resamples histories through the game's "
               "ResampleFromInfostate, and phantom_ttt() does not implement it; references that work for "
               "phantom_ttt(): 'uniform', a bot of your own ('module:name') or another run's directory.")
    with pytest.raises(ValueError) as error:
        evaluate_against(phantom, [[UniformPolicy(9)], [UniformPolicy(9)]], ["uniform", "ismcts"], episodes=2)
    assert str(error.value) == message and played == []   # (uniform, named first, did not play either)
    assert "OpenSpiel exception" not in capfd.readouterr().err   # (the probe's own C++ message is not shown)
    with pytest.raises(ValueError, match="^reference_opponents: against: 'ismcts' is OpenSpiel's IS-MCTS"):
        PSRO("phantom_ttt", oracle="ppo", reference_opponents=["ismcts"], progress=False)


def test_each_references_rows_are_handed_on_as_it_finishes(tmp_path, monkeypatch):
    # a bot that fails in the middle of its reference: the uniform rows were handed on before it played
    (tmp_path / "issue57_bots.py").write_text("def broken(game, player, seed):\n"
                                              "    def act(state):\n"
                                              "        raise ValueError('the bot broke')\n"
                                              "    return act\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    pops, seen = [[UniformPolicy(2)], [UniformPolicy(2)]], []
    with pytest.raises(ValueError, match="the bot broke"):
        evaluate_against(KUHN, pops, ["uniform", "issue57_bots:broken"], marginals=[[1.0], [1.0]], episodes=5,
                         on_reference=seen.append)
    assert len(seen) == 1 and seen[0][["player", "agent", "reference"]].values.tolist() == [
        [0, "member 0", "uniform"], [0, "meta", "uniform"], [1, "member 0", "uniform"], [1, "meta", "uniform"]]
    seen.clear()
    table = evaluate_against(TTT, [[UniformPolicy(9)], [UniformPolicy(9)]], ["uniform", "mcts"], episodes=6,
                             simulations=2, on_reference=seen.append)
    assert [block.reference.unique().tolist() for block in seen] == [["uniform"], ["mcts"]]
    handed = __import__("pandas").concat(seen).sort_values(["player", "reference"], key=lambda c: c.map(
        {"uniform": 0, "mcts": 1}) if c.name == "reference" else c, kind="stable").reset_index(drop=True)
    assert handed.equals(table)   # (the same rows the table returns, in its order: player, agent, reference)
