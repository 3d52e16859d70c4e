"""games.datasets: the published meta-games are package data of games, read through importlib.resources."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import games
from games import datasets


def test_reference_files_live_inside_the_games_package():
    package = Path(games.__file__).resolve().parent
    for name, filename in (("soccer", "soccer.txt"), ("rrps", "bot_table_file.txt")):
        entry = datasets.reference_file(name)
        assert entry.name == filename and entry.is_file()
        assert package in Path(str(entry)).resolve().parents
    readme = " ".join((package / "data" / "README.md").read_text().split())
    assert "open_spiel/data/paper_data" in readme and "Apache License, Version 2.0" in readme   # source, licence


def test_soccer_is_constant_sum_win_probabilities():
    g = datasets.load_soccer()
    p = g.payoffs[0]
    assert g.shape == (10, 10)
    np.testing.assert_allclose(p + p.T, 1.0, atol=1e-12)      # P(i beats j) + P(j beats i) = 1
    np.testing.assert_allclose(np.diag(p), 0.5, atol=1e-12)    # a mirror match is a coin flip
    assert ((p >= 0) & (p <= 1)).all() and g.is_constant_sum()


def test_rrps_table_has_every_ordered_pair_once():
    t = datasets.load_rrps_table()
    assert len(t) == 43 * 43 and not t.duplicated(["row_bot", "col_bot"]).any()
    g = datasets.rrps_game(scale=1e-3)
    assert g.strategy_names[0] == tuple(sorted(t["row_bot"].unique()))
    # returns per throw of a 1000-throw match lie in [-1, 1]
    assert np.abs(g.payoffs).max() <= 1.0


def test_user_files_and_their_errors(tmp_path):
    table = tmp_path / "table.txt"
    table.write_text("('a', 'a', 0.0)\n('a', 'b', 2.5)\n\n('b', 'a', -2.5)\n('b', 'b', 0.0)\n")
    g = datasets.rrps_game(datasets.load_rrps_table(table))
    np.testing.assert_array_equal(g.payoffs[0], [[0.0, 2.5], [-2.5, 0.0]])
    table.write_text("('a', 'a', 0.0)\nnot a tuple\n")
    with pytest.raises(ValueError, match=r"table\.txt:2: expected"):
        datasets.load_rrps_table(table)
    square = tmp_path / "soccer.txt"
    square.write_text("0.5 0.4 0.3\n0.6 0.5 0.2\n")
    with pytest.raises(ValueError, match="square matrix"):
        datasets.load_soccer(square)
    with pytest.raises(ValueError, match="name must be one of"):
        datasets.reference_file("chess")


def test_rrps_table_is_complete():
    t = datasets.load_rrps_table()
    assert len(t) == 43 * 43
    g = datasets.rrps_game()
    assert "iocainebot" in g.strategy_names[0]
    # a bot against itself is a fair match on average
    assert np.abs(np.diag(g.payoffs[0])).max() < 50


# ------------------------------------------------------------------ collect: offline trajectories
class _Always:
    """A behaviour policy that plays ``action`` whenever legal (array answers)."""

    def __init__(self, action: int, num_actions: int = 2):
        self.action, self.num_actions = action, num_actions

    def action_probabilities(self, state, player):
        probs = np.zeros(self.num_actions)
        legal = state.legal_actions()
        probs[self.action if self.action in legal else legal[0]] = 1.0
        return probs


def test_collect_is_seeded_and_passes_validation():
    import pyspiel

    from games.trajectories import validate_trajectories

    game = pyspiel.load_game("kuhn_poker")
    uniform = pyspiel.UniformRandomPolicy(game)
    a = datasets.collect(game, uniform, episodes=50, seed=11)
    validate_trajectories(a)
    assert a.equals(datasets.collect("kuhn_poker", uniform, episodes=50, seed=11))
    assert not a.equals(datasets.collect(game, uniform, episodes=50, seed=12))
    assert a["episode"].nunique() == 50 and a.groupby("episode")["done"].sum().eq(1).all()
    # the reward of the last row is the episode's return; OpenSpiel's own returns for the terminal history
    last = a[a["done"]]
    for _, row in last.head(10).iterrows():
        state = game.new_initial_state()
        for act in [int(x) for x in row["history"].split()] + [row["action"]]:
            state.apply_action(act)
        assert [float(x) for x in row["reward"].split()] == state.returns()


def test_collect_chance_and_behaviour_frequencies_match_the_game():
    import pyspiel

    game = pyspiel.load_game("kuhn_poker")
    df = datasets.collect(game, pyspiel.UniformRandomPolicy(game), episodes=3000, seed=0)
    first_card = df[(df["step"] == 0)]["action"].value_counts(normalize=True).sort_index()
    np.testing.assert_allclose(first_card.to_numpy(), [1 / 3] * 3, atol=0.03)  # 3 sigma ~ 0.026
    decisions = df[df["player"] >= 0]
    assert decisions["action"].mean() == pytest.approx(0.5, abs=0.02)
    np.testing.assert_allclose(decisions["behaviour_prob"], 0.5)
    assert df[df["player"] == -1]["behaviour_prob"].isna().all()


def test_collect_per_player_policies_and_mixtures():
    import pyspiel

    game = pyspiel.load_game("kuhn_poker")
    df = datasets.collect(game, [_Always(1), _Always(0)], episodes=40, seed=0)
    assert (df[df["player"] == 0]["action"] == 1).all() and (df[df["player"] == 1]["action"] == 0).all()
    # player 0 always bets and player 1 always passes: player 0 wins 1 every time
    assert all(float(r.split()[0]) == 1.0 for r in df[df["done"]]["reward"])
    uniform = pyspiel.UniformRandomPolicy(game)
    mix = datasets.collect(game, [(3.0, [_Always(1), _Always(1)]), (1.0, uniform)], episodes=2000, seed=5)
    share = mix.groupby("episode")["component"].first().value_counts(normalize=True).sort_index()
    assert share[0] == pytest.approx(0.75, abs=0.03)                    # 3 sigma ~ 0.029
    first = mix[(mix["component"] == 0) & (mix["player"] >= 0)]
    assert (first["action"] == 1).all()


def test_collect_accepts_callables_and_dict_answers_and_refuses_bad_policies():
    import pyspiel

    game = pyspiel.load_game("kuhn_poker")
    df = datasets.collect(game, lambda state, player: {0: 1.0}, episodes=5, seed=0)
    assert (df[df["player"] >= 0]["action"] == 0).all()
    table = {"0": [1.0, 0.0], "1": np.array([0.0, 1.0])}  # a tabular policy; other infostates uniform
    df = datasets.collect(game, [table, _Always(0)], episodes=60, seed=0)
    first = df[df["player"] == 0]
    assert (first[first["infostate"] == "0"]["action"] == 0).all()
    assert (first[first["infostate"] == "1"]["action"] == 1).all()
    assert set(first[first["infostate"] == "2"]["action"]) == {0, 1}
    with pytest.raises(ValueError, match="zero off the legal actions"):
        datasets.collect(game, lambda state, player: {5: 1.0}, episodes=1, seed=0)
    with pytest.raises(ValueError, match="one per distinct action"):
        datasets.collect(game, lambda state, player: np.ones(3) / 3, episodes=1, seed=0)
    with pytest.raises(ValueError, match="one policy per player"):
        datasets.collect(game, [_Always(0)], episodes=1, seed=0)
    with pytest.raises(TypeError, match="action_probabilities"):
        datasets.collect(game, 42, episodes=1, seed=0)
    with pytest.raises(ValueError, match="episodes"):
        datasets.collect(game, _Always(0), episodes=0, seed=0)
    with pytest.raises(ValueError, match="turn-based"):
        datasets.collect("matrix_rps", _Always(0, 3), episodes=1, seed=0)


@pytest.mark.parametrize("scale, message", [(float("nan"), "scale must be a number, not NaN"),
                                            (0, "scale must be a number > 0"), (-1.0, "scale must be a number > 0"),
                                            (float("inf"), "scale must be finite")])
def test_rrps_game_refuses_a_scale_that_is_not_a_positive_number(scale, message):
    with pytest.raises(ValueError, match=message):
        datasets.rrps_game(scale=scale)
