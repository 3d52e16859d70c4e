"""Gambit .nfg / .efg files: documented examples, catalog round trips, Kuhn poker from a hand-written .efg."""

from pathlib import Path

import numpy as np
import pyspiel
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import NormalFormGame, catalog, check_game, read_gambit, write_gambit
from psro import PSRO
from psro.measures.metrics import nash_conv
from psro.policies import uniform_policy
from psro.sequence_form.game_tree import build_game_tree

DATA = Path(__file__).parent / "data"

# Gambit's documentation of the .nfg format: Selten (IJGT 1975), Figure 2, in both versions.
SELTEN_PAYOFF = """NFG 1 R "Selten (IJGT, 75), Figure 2, normal form"
{ "Player 1" "Player 2" } { 3 2 }

1 1 0 2 0 2 1 1 0 3 2 0
"""
SELTEN_OUTCOME = """NFG 1 R "Selten (IJGT, 75), Figure 2, normal form"
{ "Player 1" "Player 2" }

{ { "1" "2" "3" }
{ "1" "2" }
}
""

{
{ "" 1, 1 }
{ "" 0, 2 }
{ "" 0, 2 }
{ "" 1, 1 }
{ "" 0, 3 }
{ "" 2, 0 }
}
1 2 3 4 5 6
"""
# The one-stage Bayesian game of the .efg format documentation (as recalled; the payoffs are this test's data).
BAYES = """EFG 2 R "General Bayes game, one stage" { "Player 1" "Player 2" }
"A single stage of a Bayesian game"

c "ROOT" 1 "(0,1)" { "1G" 0.500000 "1B" 0.500000 } 0
c "" 2 "(0,2)" { "2g" 0.500000 "2b" 0.500000 } 0
p "" 1 1 "(1,1)" { "H" "L" } 0
p "" 2 1 "(2,1)" { "h" "l" } 0
t "" 1 "Outcome 1" { 10.000000 2.000000 }
t "" 2 "Outcome 2" { 0.000000 10.000000 }
p "" 2 1 "(2,1)" { "h" "l" } 0
t "" 3 "Outcome 3" { 2.000000 4.000000 }
t "" 4 "Outcome 4" { 4.000000 0.000000 }
p "" 1 1 "(1,1)" { "H" "L" } 0
p "" 2 2 "(2,2)" { "h" "l" } 0
t "" 5 "Outcome 5" { 10.000000 2.000000 }
t "" 6 "Outcome 6" { 0.000000 10.000000 }
p "" 2 2 "(2,2)" { "h" "l" } 0
t "" 7 "Outcome 7" { 2.000000 4.000000 }
t "" 8 "Outcome 8" { 4.000000 0.000000 }
c "" 3 "(0,3)" { "2g" 0.500000 "2b" 0.500000 } 0
p "" 1 2 "(1,2)" { "H" "L" } 0
p "" 2 1 "(2,1)" { "h" "l" } 0
t "" 9 "Outcome 9" { 4.000000 2.000000 }
t "" 10 "Outcome 10" { 2.000000 10.000000 }
p "" 2 1 "(2,1)" { "h" "l" } 0
t "" 11 "Outcome 11" { 0.000000 4.000000 }
t "" 12 "Outcome 12" { 10.000000 2.000000 }
p "" 1 2 "(1,2)" { "H" "L" } 0
p "" 2 2 "(2,2)" { "h" "l" } 0
t "" 13 "Outcome 13" { 4.000000 2.000000 }
t "" 14 "Outcome 14" { 2.000000 10.000000 }
p "" 2 2 "(2,2)" { "h" "l" } 0
t "" 15 "Outcome 15" { 0.000000 4.000000 }
t "" 16 "Outcome 16" { 10.000000 0.000000 }
"""


def write(tmp_path, text, name="game.nfg"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_selten_payoff_and_outcome_versions(tmp_path):
    # Profiles in the file's order (1,1) (2,1) (3,1) (1,2) (2,2) (3,2): the first player's strategy fastest.
    expected = np.array([[[1, 1], [0, 0], [0, 2]], [[1, 1], [2, 3], [2, 0]]], dtype=float)
    for text in (SELTEN_PAYOFF, SELTEN_OUTCOME):
        game = read_gambit(write(tmp_path, text))
        np.testing.assert_array_equal(game.payoffs, expected)
        assert game.player_names == ("Player 1", "Player 2")
        assert game.strategy_names == (("1", "2", "3"), ("1", "2"))
        assert game.name == "Selten (IJGT, 75), Figure 2, normal form"


def test_exact_numbers_null_outcomes_and_three_players(tmp_path):
    text = ('NFG 1 R "t" { "a" "b" "c" } { 2 1 2 }\n"comment"\n'
            "{ { \"x\" 1/3, -2.5, 1e3 } { \"y\" 0 0 7 } }\n1 0 2 1\n")
    game = read_gambit(write(tmp_path, text))
    assert game.shape == (2, 1, 2)
    np.testing.assert_array_equal(game.payoffs[:, 0, 0, 0], [1 / 3, -2.5, 1000.0])
    np.testing.assert_array_equal(game.payoffs[:, 1, 0, 0], [0, 0, 0])   # outcome 0: the null outcome
    np.testing.assert_array_equal(game.payoffs[:, 0, 0, 1], [0, 0, 7])
    np.testing.assert_array_equal(game.payoffs[:, 1, 0, 1], [1 / 3, -2.5, 1000.0])


@pytest.mark.parametrize("version", ["payoff", "outcome"])
@pytest.mark.parametrize("name", catalog.names())
def test_every_catalog_game_round_trips(tmp_path, name, version):
    game = catalog.get(name)
    back = read_gambit(write_gambit(game, tmp_path / f"{name}.nfg", version=version))
    np.testing.assert_array_equal(back.payoffs, game.payoffs)
    assert (back.player_names, back.strategy_names, back.name) == (game.player_names, game.strategy_names,
                                                                   game.name)


@pytest.mark.parametrize("kind, shape", [("general", (3, 2)), ("zero_sum", (4, 4)), ("symmetric", (2, 2, 2))])
def test_catalog_random_games_round_trip(tmp_path, kind, shape):
    game = catalog.random_game(shape, kind=kind, rng=3)
    for version in ("payoff", "outcome"):
        back = read_gambit(write_gambit(game, tmp_path / f"{kind}.nfg", version=version))
        np.testing.assert_array_equal(back.payoffs, game.payoffs)


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=3), seed=st.integers(0, 2**31),
       log_scale=st.sampled_from([-300, -5, 0, 5, 300]), version=st.sampled_from(["payoff", "outcome"]),
       label=st.text(alphabet='ab"\\ {}', max_size=4))
def test_random_games_round_trip_exactly(tmp_path_factory, shape, seed, log_scale, version, label):
    rng = np.random.default_rng(seed)
    payoffs = rng.standard_normal((len(shape), *shape)) * 10.0 ** log_scale
    names = [[f"{label}{i}" for i in range(k)] for k in shape]
    game = NormalFormGame(payoffs, player_names=[f"{label}p{i}" for i in range(len(shape))],
                          strategy_names=names, name=label)
    path = write_gambit(game, tmp_path_factory.mktemp("g") / "g.nfg", version=version)
    back = read_gambit(path)
    np.testing.assert_array_equal(back.payoffs, game.payoffs)
    assert back.strategy_names == game.strategy_names and back.player_names == game.player_names
    assert back.name == label


def test_bayes_game_from_the_efg_documentation(tmp_path):
    game = read_gambit(write(tmp_path, BAYES, "bayes.efg"), name="doc_bayes")
    assert game.name == "doc_bayes" and game.num_players == 2 and game.utility == "general_sum"
    assert game.max_chance_outcomes == 2 and game.num_distinct_actions == 2 and game.max_game_length == 2
    tree = build_game_tree(game.to_pyspiel())
    assert [p.num_infostates for p in tree.infostates] == [2, 2] and tree.num_terminals == 16
    # Uniform play: every terminal has probability 1/16; mean of the listed payoffs.
    uniform = pyspiel.UniformRandomPolicy(game.to_pyspiel())
    values = pyspiel.expected_returns(game.to_pyspiel().new_initial_state(), uniform, -1, True)
    np.testing.assert_allclose(values, [64 / 16, 66 / 16])


def test_kuhn_poker_from_a_hand_written_efg_plays_like_openspiels():
    game = read_gambit(DATA / "kuhn_poker.efg")
    assert game.name == "gambit_kuhn_poker" and game.utility == "zero_sum"
    assert check_game(game.to_pyspiel()).ok
    tree = build_game_tree(game.to_pyspiel())
    assert [p.num_infostates for p in tree.infostates] == [6, 6] and tree.num_terminals == 30
    assert abs(nash_conv(tree, [uniform_policy(i) for i in tree.infostates]) - 11 / 12) < 1e-12
    ours = PSRO(game.to_pyspiel(), progress=False).run(iterations=4)["gap"].to_numpy()
    reference = PSRO("kuhn_poker", progress=False).run(iterations=4)["gap"].to_numpy()
    np.testing.assert_allclose(ours, reference, atol=1e-12)


def test_openspiel_kuhn_written_as_efg_reads_back(tmp_path):
    path = write_gambit(pyspiel.load_game("kuhn_poker"), tmp_path / "kuhn.efg")
    game = read_gambit(path)
    tree = build_game_tree(game.to_pyspiel())
    assert [p.num_infostates for p in tree.infostates] == [6, 6] and tree.num_terminals == 30
    assert abs(nash_conv(tree, [uniform_policy(i) for i in tree.infostates]) - 11 / 12) < 1e-12
    # and once more through the writer: the same file
    assert write_gambit(game, tmp_path / "again.efg").read_text().count("\n") == path.read_text().count("\n")


def test_infoset_and_outcome_details_may_be_left_out_after_first_use(tmp_path):
    text = ('EFG 2 R "" { "A" "B" }\n'
            'p "" 1 1 "root" { "l" "r" } 0\n'
            'p "" 2 1 "b" { "x" "y" } 1 "ante" { 1 -1 }\n'
            't "" 2 "w" { 1 -1 }\nt "" 0\n'
            'p "" 2 1 1\nt "" 2\nt "" 3 "z" { -1, 1 }\n')
    game = read_gambit(write(tmp_path, text, "tiny.efg"), name="tiny")
    tree = game.tree
    # outcome 1 at an inner node adds to the terminals below it
    np.testing.assert_array_equal(tree.returns[[2, 3]], [[2, -2], [1, -1]])
    np.testing.assert_array_equal(tree.returns[[5, 6]], [[2, -2], [0, 0]])
    assert tree.actions[4] == ("x", "y") and tree.kind == ("p", "p", "t", "t", "p", "t", "t")


@pytest.mark.parametrize("text, message", [
    ("GAME 1 R", "starts with NFG or EFG"),
    ('NFG 1 R "t" { "a" "b" } { 2 2 }\n\n1 1 0 2 0\n', "line 3: the file ends where a payoff"),
    ('NFG 1 R "t" { "a" "b" } { 2 2 }\n\n1 1 0 2 0 2 1 1 9\n', "unexpected '9'"),
    ('NFG 1 R "t" { "a" "b" } { 2 2 }\n\n1 1 0 x 0 2 1 1\n', "line 3: expected a number"),
    ('NFG 1 R "t" { "a" "b" } { 1 1 }\n{ { "" 1 } }\n1\n', "line 2: an outcome needs 2 payoffs"),
    ('NFG 1 R "t" { "a" "b" } { 1 1 }\n{ { "" 1 1 } }\n2\n', "outcome number 2 is not defined"),
    ('NFG 1 R "t { "a" "b" } { 1 1 }', "unclosed quote"),
    ('EFG 2 R "" { "A" }\nc "" 1 "" { "h" 0.5 "t" 0.6 } 0\nt "" 0\nt "" 0\n', "line 2: chance probabilities"),
    ('EFG 2 R "" { "A" }\np "" 2 1 "" { "h" } 0\nt "" 0\n', "line 2: player 2 does not exist"),
    ('EFG 2 R "" { "A" }\np "" 1 1 "" { "h" "t" } 0\nt "" 0\n', "1 child node\\(s\\) missing"),
    ('EFG 2 R "" { "A" }\np "" 1 1 "" { "h" } 0\nt "" 0\nt "" 0\n', "line 4: a node after the tree is complete"),
    ('EFG 2 R "" { "A" }\np "" 1 1 "" { "h" } 0\nt "" 5\n', "line 3: outcome 5 is used before"),
    ('EFG 2 R "" { "A" }\np "" 1 1 0\n', "line 2: information set 1 appears for the first time"),
])
def test_malformed_files_name_the_line(tmp_path, text, message):
    suffix = ".efg" if text.startswith("EFG") else ".nfg"
    with pytest.raises(ValueError, match=message):
        read_gambit(write(tmp_path, text, "bad" + suffix))


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="is not a file"):
        read_gambit(tmp_path / "missing.nfg")
    with pytest.raises(ValueError, match="version"):
        write_gambit(catalog.chicken(), tmp_path / "c.nfg", version="strategic")
    with pytest.raises(TypeError, match="NormalFormGame, a SequentialGame or a pyspiel.Game"):
        write_gambit([[1, 2]], tmp_path / "x.nfg")


@settings(max_examples=60, deadline=None)
@given(data=st.data(), source=st.sampled_from(["selten_payoff", "selten_outcome", "bayes", "kuhn"]))
def test_damaged_files_fail_with_a_value_error_only(tmp_path_factory, data, source):
    text = {"selten_payoff": SELTEN_PAYOFF, "selten_outcome": SELTEN_OUTCOME, "bayes": BAYES,
            "kuhn": (DATA / "kuhn_poker.efg").read_text()}[source]
    words = text.split(" ")
    i = data.draw(st.integers(0, len(words) - 1))
    edit = data.draw(st.sampled_from(["drop", "repeat", "replace"]))
    if edit == "drop":
        del words[i]
    elif edit == "repeat":
        words.insert(i, words[i])
    else:
        words[i] = data.draw(st.sampled_from(['"', "{", "}", ",", "-1", "0", "7", "1/0", "x", "t", "p", "1e999"]))
    path = tmp_path_factory.mktemp("bad") / ("g.efg" if text.startswith("EFG") else "g.nfg")
    path.write_text(" ".join(words))
    try:
        read_gambit(path)
    except ValueError:
        pass


def test_numbers_beyond_float64_and_absurd_sizes_are_refused(tmp_path):
    with pytest.raises(ValueError, match="too large for a float64"):
        read_gambit(write(tmp_path, 'NFG 1 R "t" { "a" } { 1 }\n1e999\n'))
    with pytest.raises(ValueError, match="strategy profiles, more than the numbers"):
        read_gambit(write(tmp_path, 'NFG 1 R "t" { "a" "b" } { 1000000000 1000000000 }\n1 2\n'))
