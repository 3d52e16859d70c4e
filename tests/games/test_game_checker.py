"""check_game finds each kind of broken game, and passes correct ones (OpenSpiel's own included)."""

import random

import numpy as np
import pytest

from games import CHANCE, TERMINAL, NormalFormGame, SequentialGame, catalog, check_game
from games.game_checker import PROBLEM_KINDS


class SignalGame(SequentialGame):
    """A correct game to break: chance draws a coin c (0 or 1, probability 1/2 each); player 0 sees it
    and sends a signal a; player 1 sees only the signal and guesses g. Player 1 wins 1 if g == c,
    else loses 1 (zero-sum)."""

    name = "test_signal_game"
    num_distinct_actions = 2
    max_chance_outcomes = 2
    max_game_length = 2
    min_utility, max_utility, utility = -1.0, 1.0, "zero_sum"

    def initial_state(self):
        return ()

    def current_player(self, state):
        return CHANCE if not state else (TERMINAL if len(state) == 3 else len(state) - 1)

    def chance_outcomes(self, state):
        return [(0, 0.5), (1, 0.5)]

    def legal_actions(self, state):
        return [0, 1]

    def apply_action(self, state, action):
        return state + (action,)

    def returns(self, state):
        win = 1.0 if state[2] == state[0] else -1.0
        return [-win, win]

    def information_state(self, state, player):
        if player == 0:
            return f"p0 coin {state[0]}" + (f" sent {state[1]}" if len(state) > 1 else "")
        return "p1" + (f" got {state[1]}" if len(state) > 1 else "")


def broken(**methods):
    """A SignalGame with some attributes or methods replaced."""
    return type("Broken", (SignalGame,), methods)


def problems(game, **kwargs):
    report = check_game(game, raise_on_error=False, **kwargs)
    assert all(p.kind in PROBLEM_KINDS for p in report.problems)
    return report


def only_kind(report, kind):
    assert report.kinds == {kind}, str(report)
    return report.problems[0]


# ------------------------------------------------------------- correct games
def test_the_template_game_passes_and_is_fully_traversed():
    report = check_game(SignalGame)
    assert report.ok and report.exhaustive and report.num_playouts == 0
    assert report.num_nodes == 1 + 2 + 4 + 8 and report.num_terminals == 8


@pytest.mark.parametrize("name", ["kuhn_poker", "kuhn_poker(players=3)", "tiny_hanabi", "matrix_rps",
                                  "goofspiel(num_cards=3,imp_info=True)", "leduc_poker", "liars_dice"])
def test_openspiel_games_pass(name):
    report = check_game(name, max_nodes=3000, num_playouts=20)
    assert report.ok


def test_openspiel_python_games_pass():
    from open_spiel.python.games import kuhn_poker, tic_tac_toe  # noqa: F401  (registers them)

    assert check_game("python_kuhn_poker").exhaustive
    from open_spiel.python.games import iterated_prisoners_dilemma  # noqa: F401  (numpy float returns)

    assert check_game("python_iterated_prisoners_dilemma", max_nodes=300, num_playouts=5).ok
    report = check_game("python_tic_tac_toe", max_nodes=500, num_playouts=20)
    assert not report.exhaustive and report.num_playouts == 20


def test_normal_form_games_pass():
    assert check_game(catalog.rock_paper_scissors()).ok
    assert check_game(catalog.random_game((2, 3, 2), rng=np.random.default_rng(0))).ok


def test_same_seed_same_report():
    kwargs = {"max_nodes": 300, "num_playouts": 30, "seed": 7, "raise_on_error": False}
    a, b = check_game("leduc_poker", **kwargs), check_game("leduc_poker", **kwargs)
    assert (a.num_nodes, a.num_terminals) == (b.num_nodes, b.num_terminals)


# ------------------------------------------------------------ broken games
def test_chance_probabilities_not_summing_to_one():
    problem = only_kind(problems(broken(chance_outcomes=lambda self, s: [(0, 0.5), (1, 0.6)])),
                        "bad_chance_probabilities")
    assert "sum to 1.1, not 1" in problem.message and problem.history == ()


def test_negative_chance_probability():
    problem = only_kind(problems(broken(chance_outcomes=lambda self, s: [(0, 1.5), (1, -0.5)])),
                        "bad_chance_probabilities")
    assert "non-negative" in problem.message


def test_chance_outcome_out_of_range():
    only_kind(problems(broken(chance_outcomes=lambda self, s: [(0, 0.5), (5, 0.5)])), "chance_outcome_out_of_range")


def test_legal_action_out_of_range():
    problem = only_kind(problems(broken(legal_actions=lambda self, s: [0, 2])), "action_out_of_range")
    assert "[0, 2] include [2], outside [0, num_distinct_actions=2)" in problem.message


def test_empty_legal_actions():
    report = problems(broken(legal_actions=lambda self, s: [] if len(s) == 2 else [0, 1]))
    problem = only_kind(report, "no_legal_actions")
    assert problem.history in {(0, 0), (0, 1), (1, 0), (1, 1)} and "player 1 has no legal action" in problem.message


def test_unsorted_and_duplicate_legal_actions():
    only_kind(problems(broken(legal_actions=lambda self, s: [1, 0])), "unsorted_legal_actions")
    only_kind(problems(broken(legal_actions=lambda self, s: [0, 0, 1])), "duplicate_legal_actions")


def test_nan_returns():
    report = problems(broken(returns=lambda self, s: [float("nan"), 0.0] if s[0] == 1 else [0.0, 0.0]))
    problem = only_kind(report, "returns_not_finite")
    assert problem.history[0] == 1 and "player 0's return is nan" in problem.message


def test_wrong_length_returns():
    problem = only_kind(problems(broken(returns=lambda self, s: [1.0])), "returns_wrong_length")
    assert "have 1 entries; the game has 2 players" in problem.message


def test_returns_outside_declared_bounds():
    problem = only_kind(problems(broken(returns=lambda self, s: [2.0, -2.0])), "returns_out_of_bounds")
    assert "return 2 is outside the declared [min_utility=-1, max_utility=1]" in problem.message


def test_declared_zero_sum_game_that_is_not():
    problem = only_kind(problems(broken(returns=lambda self, s: [1.0, 1.0])), "utility_mismatch")
    assert "sum to 2 but the game declares zero-sum" in problem.message


def test_same_infostate_different_legal_actions():
    # Player 1 may guess 1 only when the coin is 1, which it cannot see.
    report = problems(broken(legal_actions=lambda self, s: [0, 1] if len(s) == 1 or s[0] == 1 else [0]))
    problem = only_kind(report, "infostate_legal_actions_mismatch")
    assert "player 1's information state 'p1 got" in problem.message


def test_infostate_shared_between_players():
    report = problems(broken(information_state=lambda self, s, p: "same for everyone"))
    assert "infostate_shared_between_players" in report.kinds
    assert "players 0 and 1 both act at information state 'same for everyone'" in str(report)


def test_imperfect_recall():
    class Forgetful(SequentialGame):
        """Player 0 moves twice and forgets its first move."""

        name = "test_forgetful"
        num_players, num_distinct_actions, max_game_length = 1, 2, 2
        min_utility, max_utility = 0.0, 1.0

        def initial_state(self):
            return ()

        def current_player(self, state):
            return TERMINAL if len(state) == 2 else 0

        def legal_actions(self, state):
            return [0, 1]

        def apply_action(self, state, action):
            return state + (action,)

        def returns(self, state):
            return [float(state[0] == state[1])]

        def information_state(self, state, player):
            return "first" if not state else "second"

    problem = only_kind(problems(Forgetful), "imperfect_recall")
    assert "reached after their own moves [0 at 'first']" in problem.message


def test_perfect_information_declared_but_not_true():
    # Player 1 does not see the coin, yet the game claims perfect information.
    problem = only_kind(problems(broken(perfect_information=True)), "perfect_information_aliasing")
    assert "declares perfect information" in problem.message


def test_nondeterminism_under_a_seed():
    def noisy_apply(self, state, action):
        return state + ((action + (random.random() < 0.5)) % 2,)  # Python's global random

    random.seed(0)
    only_kind(problems(broken(apply_action=noisy_apply)), "nondeterministic")


def test_game_longer_than_max_game_length():
    problem = only_kind(problems(broken(max_game_length=1)), "game_too_long")
    assert "follows 1 decisions, but max_game_length is 1" in problem.message and len(problem.history) == 2


def test_chance_that_never_ends():
    report = problems(broken(current_player=lambda self, s: CHANCE), max_nodes=1000, num_playouts=2)
    problem = only_kind(report, "game_too_long")
    assert "the chance nodes never end" in problem.message


def test_a_method_that_raises():
    def returns(self, state):
        raise KeyError("coin")

    problem = only_kind(problems(broken(returns=returns)), "exception")
    assert problem.message == "returns() raised KeyError: 'coin'"


def test_information_state_that_is_not_a_string():
    problem = only_kind(problems(broken(information_state=lambda self, s, p: len(s))), "exception")
    assert "information_state must return a str; got int" in problem.message


def test_bad_current_player_is_reported():
    report = problems(broken(current_player=lambda self, s: CHANCE if not s else 7))
    problem = only_kind(report, "exception")
    assert "current_player returned 7" in problem.message


def test_playouts_find_a_bug_beyond_the_node_budget():
    class Deep(SequentialGame):
        """A binary tree of depth 20; the returns are NaN on the right half only."""

        name = "test_deep"
        num_players, num_distinct_actions, max_game_length = 1, 2, 20
        min_utility, max_utility = 0.0, 1.0

        def initial_state(self):
            return ()

        def current_player(self, state):
            return TERMINAL if len(state) == 20 else 0

        def legal_actions(self, state):
            return [0, 1]

        def apply_action(self, state, action):
            return state + (action,)

        def returns(self, state):
            return [float("nan") if state[0] == 1 else 0.0]

        def information_state(self, state, player):
            return str(state)

    report = problems(Deep, max_nodes=200, num_playouts=20, seed=1)
    assert not report.exhaustive and report.num_playouts == 20
    assert report.kinds == {"returns_not_finite"} and report.problems[0].history[0] == 1
    assert check_game(Deep, max_nodes=200, num_playouts=0, raise_on_error=False).ok  # DFS alone misses it


# ----------------------------------------------------------- report and API
def test_raise_on_error_lists_the_problems():
    with pytest.raises(ValueError) as info:
        check_game(broken(returns=lambda self, s: [1.0, 1.0]))
    text = str(info.value)
    assert "utility_mismatch" in text and "test_signal_game" in text and "8 problem(s)" in text
    assert "(3 more utility_mismatch problem(s) not shown)" in text


def test_normal_form_names_are_checked():
    game = NormalFormGame(np.zeros((2, 2, 2)), strategy_names=(("a", "a"), ("b", "c")))
    problem = only_kind(problems(game), "bad_names")
    assert "player 0's strategy names are not distinct" in problem.message


def test_bad_arguments():
    with pytest.raises(TypeError, match="game must be a pyspiel.Game"):
        check_game(42)
    with pytest.raises(ValueError, match="max_nodes must be an int >= 1; got 0"):
        check_game("kuhn_poker", max_nodes=0)
    with pytest.raises(TypeError, match="num_playouts must be an int; got 2.0"):
        check_game("kuhn_poker", num_playouts=2.0)
    with pytest.raises(ValueError, match="unknown OpenSpiel game"):
        check_game("kuhn_pokr")


# ------------------------------------------------------------------- tensors (issue 26, item 5)
def with_tensor(shape, tensor):
    return broken(information_state_tensor_shape=shape, information_state_tensor=lambda self, s, p: tensor(s, p))


def test_a_tensor_shorter_than_its_declared_shape_is_named():
    problem = only_kind(problems(with_tensor((8,), lambda s, p: np.zeros(7))), "bad_tensor")
    assert "information_state_tensor(" in problem.message and "has 7 entries" in problem.message
    assert "declares (8,)" in problem.message


@pytest.mark.parametrize("tensor, words", [
    (lambda s, p: np.array([0.0, np.nan, 0.0, 0.0]), "NaN or infinite"),
    (lambda s, p: np.zeros(1), "has 1 entries"),                         # would broadcast; never allowed
    (lambda s, p: ["a", "b", "c", "d"], "is not an array of numbers"),
])
def test_a_non_finite_broadcastable_or_non_numeric_tensor_is_named(tensor, words):
    assert words in only_kind(problems(with_tensor((4,), tensor)), "bad_tensor").message


def test_a_right_tensor_passes_and_openspiel_tensors_are_checked():
    assert problems(with_tensor((2, 2), lambda s, p: np.ones((2, 2)))).ok
    assert problems("leduc_poker", max_nodes=300, num_playouts=5).ok   # C++ tensors of the declared sizes
