"""Custom sequential games (games.SequentialGame) registered with OpenSpiel, checked and trained on.

The sequential games here are written from the docstrings of ``games.SequentialGame``
only. Reference values are worked out by hand in the comments, or come from
OpenSpiel's own C++ implementation of the same game (Kuhn poker).
"""


import numpy as np
import pyspiel
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from open_spiel.python import policy as os_policy
from open_spiel.python.algorithms import exploitability

import games
from games import CHANCE, TERMINAL, SequentialGame, catalog


# ----------------------------------------------------------- test games
class TinyPoker(SequentialGame):
    """Chance deals player 0 a high (1) or low (0) card. Player 0 checks (0) or bets (1);
    after a bet, player 1, who does not see the card, folds (0) or calls (1).
    Check: showdown for 1. Bet-fold: player 0 wins 1. Bet-call: showdown for 1 + bet."""

    name = "test_tiny_poker"
    num_distinct_actions = 2
    max_chance_outcomes = 2
    max_game_length = 2
    utility = "zero_sum"
    parameters = {"bet": 1}
    information_state_tensor_shape = (4,)

    def __init__(self, **params):
        super().__init__(**params)
        self.max_utility = 1.0 + self.params["bet"]
        self.min_utility = -self.max_utility

    def initial_state(self):
        return ()  # (card, player 0's move, player 1's move)

    def current_player(self, state):
        if not state:
            return CHANCE
        if len(state) == 1:
            return 0
        if len(state) == 2 and state[1] == 1:
            return 1
        return TERMINAL

    def chance_outcomes(self, state):
        return [(0, 0.5), (1, 0.5)]

    def legal_actions(self, state):
        return [0, 1]

    def apply_action(self, state, action):
        return state + (action,)

    def returns(self, state):
        card, move = state[0], state[1]
        showdown = 1.0 if card == 1 else -1.0
        if move == 0:
            win = showdown
        elif state[2] == 0:
            win = 1.0
        else:
            win = showdown * (1 + self.params["bet"])
        return [win, -win]

    def information_state(self, state, player):
        card = f" card {state[0]}" if player == 0 and state else ""
        return f"p{player}{card} moves {list(state[1:])}"

    def information_state_tensor(self, state, player):
        tensor = np.zeros(4)
        if player == 0 and state:
            tensor[state[0]] = 1
        tensor[2:2 + len(state[1:2])] = 1
        return tensor


class MajorityVote(SequentialGame):
    """Three players vote A (0) or B (1) in turn, seeing earlier votes; each gets 1 if the
    majority matches their own vote, else 0."""

    name = "test_majority_vote"
    num_players = 3
    num_distinct_actions = 2
    max_game_length = 3
    min_utility, max_utility = 0.0, 1.0
    perfect_information = True

    def initial_state(self):
        return ()

    def current_player(self, state):
        return TERMINAL if len(state) == 3 else len(state)

    def legal_actions(self, state):
        return [0, 1]

    def apply_action(self, state, action):
        return state + (action,)

    def returns(self, state):
        majority = int(sum(state) >= 2)
        return [float(v == majority) for v in state]

    def information_state(self, state, player):
        return f"p{player} votes so far {list(state)}"


class KuhnPoker(SequentialGame):
    """Kuhn poker (cards 0 < 1 < 2, ante 1, one bet of 1), to compare with OpenSpiel's C++ kuhn_poker."""

    name = "test_kuhn_poker"
    num_distinct_actions = 2
    max_chance_outcomes = 3
    max_game_length = 3
    min_utility, max_utility, utility = -2.0, 2.0, "zero_sum"

    def initial_state(self):
        return {"cards": [], "moves": []}

    def current_player(self, state):
        cards, moves = state["cards"], state["moves"]
        if len(cards) < 2:
            return CHANCE
        if moves in ([0, 0], [1, 0], [1, 1], [0, 1, 0], [0, 1, 1]):
            return TERMINAL
        return len(moves) % 2

    def chance_outcomes(self, state):
        left = [c for c in range(3) if c not in state["cards"]]
        return [(c, 1.0 / len(left)) for c in left]

    def legal_actions(self, state):
        return [0, 1]  # pass, bet

    def apply_action(self, state, action):  # mutates and returns its argument: allowed
        (state["cards"] if len(state["cards"]) < 2 else state["moves"]).append(action)
        return state

    def returns(self, state):
        cards, moves = state["cards"], state["moves"]
        if moves in ([1, 0], [0, 1, 0]):  # the player who passed last folds
            winner = 0 if moves == [1, 0] else 1
            stake = 1.0
        else:
            winner = 0 if cards[0] > cards[1] else 1
            stake = 2.0 if 1 in moves else 1.0
        return [stake, -stake] if winner == 0 else [-stake, stake]

    def information_state(self, state, player):
        card = state["cards"][player] if len(state["cards"]) > player else "-"
        return f"p{player} card {card} moves {''.join('pb'[m] for m in state['moves'])}"


@pytest.fixture(scope="module", autouse=True)
def registered():
    for cls in (TinyPoker, MajorityVote, KuhnPoker):
        cls.register()
    import games.examples.trust_dilemma  # noqa: F401  (registers "trust_dilemma")


def uniform_nash_conv(game):
    return exploitability.nash_conv(game, os_policy.TabularPolicy(game))


# ------------------------------------------------------ sequential games
def test_constants_match_openspiel():
    assert CHANCE == int(pyspiel.PlayerId.CHANCE)
    assert TERMINAL == int(pyspiel.PlayerId.TERMINAL)


def test_tiny_poker_loads_and_matches_hand_values():
    game = games.load("test_tiny_poker")
    assert game is not None and pyspiel.load_game("test_tiny_poker").num_players() == 2
    games.check_game(game)  # raises if any problem
    uniform = pyspiel.UniformRandomPolicy(game)
    # Player 0 with the high card: check +1, bet (fold +1 / call +2) 1.5 -> 1.25; low card: -1 and
    # (fold +1 / call -2) -0.5 -> -0.75. Average 0.25.
    assert pyspiel.expected_returns(game.new_initial_state(), uniform, -1, True) == pytest.approx([0.25, -0.25])
    root = game.new_initial_state().history_str()
    # Best responses to uniform: player 0 bets with both cards: (1.5 - 0.5) / 2 = 0.5. Player 1 facing a
    # bet (reached with probability 1/4 per card): fold -1/4 - 1/4 = -0.5, call -2/4 + 2/4 = 0 -> 0.
    assert pyspiel.TabularBestResponse(game, 0, uniform).value(root) == pytest.approx(0.5)
    assert pyspiel.TabularBestResponse(game, 1, uniform).value(root) == pytest.approx(0.0)
    # NashConv = (0.5 - 0.25) + (0 + 0.25) = 0.5, from OpenSpiel's Python and C++ exploitability alike.
    assert uniform_nash_conv(game) == pytest.approx(0.5)
    assert pyspiel.nash_conv(game, uniform) == pytest.approx(0.5)


def test_parameters_change_the_game():
    game = pyspiel.load_game("test_tiny_poker(bet=3)")
    assert game.max_utility() == 4.0 and game.min_utility() == -4.0
    games.check_game(game)
    uniform = pyspiel.UniformRandomPolicy(game)
    # Value to player 0 is 1/4 for any bet b; its best response is (1 + b/2 + max(-1, -b/2)) / 2 = 0.75.
    assert pyspiel.expected_returns(game.new_initial_state(), uniform, -1, True) == pytest.approx([0.25, -0.25])
    assert uniform_nash_conv(game) == pytest.approx(0.75)
    with pytest.raises(ValueError, match="unknown parameter"):
        TinyPoker(raise_=2)


def test_information_state_tensor_is_provided():
    game = games.load("test_tiny_poker")
    state = game.new_initial_state().child(1).child(1)  # high card, bet
    assert game.information_state_tensor_shape() == [4]
    assert state.information_state_tensor(0) == [0.0, 1.0, 1.0, 0.0]
    assert state.information_state_tensor(1) == [0.0, 0.0, 1.0, 0.0]
    assert state.information_state_string(1) == "p1 moves [1]"


def test_three_player_perfect_information_game():
    game = games.load("test_majority_vote")
    report = games.check_game(game)
    assert report.exhaustive and report.num_terminals == 8
    uniform = pyspiel.UniformRandomPolicy(game)
    # Uniform voting: a voter is in the majority unless both others vote the other way: 3/4 each.
    assert pyspiel.expected_returns(game.new_initial_state(), uniform, -1, True) == pytest.approx([0.75] * 3)
    root = game.new_initial_state().history_str()
    # The last voter sees the first two votes and can always join the majority: value 1. The first voter
    # gains nothing from deviating: 3/4 whatever it votes.
    assert pyspiel.TabularBestResponse(game, 2, uniform).value(root) == pytest.approx(1.0)
    assert pyspiel.TabularBestResponse(game, 0, uniform).value(root) == pytest.approx(0.75)


def test_kuhn_poker_matches_openspiel_cpp():
    ours, reference = games.load("test_kuhn_poker"), pyspiel.load_game("kuhn_poker")
    games.check_game(ours)
    for game_a, game_b in [(ours, reference)]:
        u_a, u_b = pyspiel.UniformRandomPolicy(game_a), pyspiel.UniformRandomPolicy(game_b)
        assert pyspiel.nash_conv(game_a, u_a) == pytest.approx(pyspiel.nash_conv(game_b, u_b), abs=1e-12)
        assert uniform_nash_conv(game_a) == pytest.approx(uniform_nash_conv(game_b), abs=1e-12)
        for player in range(2):
            assert pyspiel.TabularBestResponse(game_a, player, u_a).value(game_a.new_initial_state().history_str()) \
                == pytest.approx(pyspiel.TabularBestResponse(game_b, player, u_b).value(
                    game_b.new_initial_state().history_str()), abs=1e-12)
    # The known value of Kuhn poker's uniform policy: NashConv 11/12.
    assert pyspiel.nash_conv(ours, pyspiel.UniformRandomPolicy(ours)) == pytest.approx(11 / 12)


def test_clones_are_independent_even_when_apply_action_mutates():
    game = games.load("test_kuhn_poker")
    state = game.new_initial_state().child(0).child(1)
    clone = state.clone()
    clone.apply_action(1)
    assert state.history() == [0, 1] and clone.history() == [0, 1, 1]
    assert state.information_state_string(0) == "p0 card 0 moves "
    assert clone.information_state_string(0) == "p0 card 0 moves b"


def test_registered_games_and_states_pickle_by_name():
    import pickle

    game = pyspiel.load_game("test_tiny_poker(bet=2)")
    again = pickle.loads(pickle.dumps(game))
    assert str(again) == str(game) and again.max_utility() == 3.0
    state = game.new_initial_state().child(1).child(1)
    restored = pickle.loads(pickle.dumps(state))
    assert restored.history() == [1, 1] and restored.information_state_string(0) == "p0 card 1 moves [1]"
    assert restored.child(1).returns() == [3.0, -3.0]


def test_unregistered_game_works_through_to_pyspiel():
    class Solo(MajorityVote):
        name = "test_never_registered"

    game = Solo().to_pyspiel()
    assert game.get_type().short_name == "test_never_registered"
    assert "test_never_registered" not in pyspiel.registered_names()
    assert games.check_game(Solo).ok


# ------------------------------------------------------------ trust dilemma
def test_trust_dilemma_example():
    game = games.load("trust_dilemma")
    assert games.check_game(game).ok
    uniform = pyspiel.UniformRandomPolicy(game)
    # Against a uniform partner: stag pays (4 + 0) / 2 = 2, hare (3 + 2) / 2 = 2.5; uniform itself 2.25.
    assert pyspiel.TabularBestResponse(game, 0, uniform).value(game.new_initial_state().history_str()) == 2.5
    assert uniform_nash_conv(game) == pytest.approx(2 * (2.5 - 2.25))
    # pyspiel.cce_dist (the JPSRO target) on the uniform policy: each player gains 2.5 - 2.25 by deviating.
    table = {key: [(a, float(p)) for a, p in probs]
             for key, probs in os_policy.TabularPolicy(game).to_dict().items()}
    info = pyspiel.cce_dist(game, [(1.0, pyspiel.TabularPolicy(table))])
    assert info.on_policy_values == pytest.approx([2.25, 2.25])
    assert info.deviation_incentives == pytest.approx([0.25, 0.25])


@pytest.mark.parametrize("stag_probability", [1.0, 0.0, 2.0 / 3.0])
def test_trust_dilemma_equilibria_have_zero_nash_conv(stag_probability):
    game = games.load("trust_dilemma")
    policy = os_policy.TabularPolicy(game)
    policy.action_probability_array[:] = [stag_probability, 1.0 - stag_probability]
    assert exploitability.nash_conv(game, policy) == pytest.approx(0.0, abs=1e-12)


@settings(max_examples=15)
@given(st.floats(0, 1), st.floats(0, 1))
def test_trust_dilemma_is_the_stag_hunt(x, y):
    game = games.load("trust_dilemma")
    policy = os_policy.TabularPolicy(game)
    for key, index in policy.state_lookup.items():
        p = x if key.startswith("p0") else y
        policy.action_probability_array[index] = [p, 1.0 - p]
    table = {key: [(a, float(p)) for a, p in probs] for key, probs in policy.to_dict().items()}
    values = pyspiel.expected_returns(game.new_initial_state(), pyspiel.TabularPolicy(table), -1, True)
    expected = catalog.stag_hunt().expected_payoffs_marginals([np.array([x, 1 - x]), np.array([y, 1 - y])])
    np.testing.assert_allclose(values, expected, atol=1e-12)


# ----------------------------------------------------- registration errors
def test_registering_twice_is_a_no_op_but_a_taken_name_is_an_error():
    assert TinyPoker.register() is TinyPoker and TinyPoker.is_registered()

    class Impostor(TinyPoker):
        pass

    with pytest.raises(ValueError, match="already registered"):
        Impostor.register()

    class ClashesWithOpenSpiel(TinyPoker):
        name = "kuhn_poker"

    with pytest.raises(ValueError, match="already registered"):
        ClashesWithOpenSpiel.register()


def test_a_redefinition_replaces_the_registered_class():
    def define(payoff, parameters):  # as when a notebook cell defining the class is run again
        class Redefined(MajorityVote):
            name = "test_redefined"

            def returns(self, state):
                return [payoff] * 3

        Redefined.parameters = parameters
        return Redefined

    define(0.5, {}).register()
    assert games.load("test_redefined").new_initial_state().child(0).child(0).child(0).returns() == [0.5] * 3
    define(1.0, {}).register()
    assert games.load("test_redefined").new_initial_state().child(0).child(0).child(0).returns() == [1.0] * 3
    with pytest.raises(ValueError, match="cannot change them"):
        define(1.0, {"extra": 1}).register()


@pytest.mark.parametrize("attrs, error, match", [
    ({"name": "has space"}, ValueError, "short identifier"),
    ({"utility": "zerosum"}, ValueError, "utility must be one of"),
    ({"min_utility": 2.0, "max_utility": 1.0}, ValueError, "min <= max"),
    ({"num_distinct_actions": 0}, ValueError, "Bad.num_distinct_actions must be an int >= 1; got 0"),
    ({"max_game_length": 2.5}, TypeError, "Bad.max_game_length must be an int; got 2.5"),
    ({"utility": "constant_sum"}, ValueError, "set utility_sum"),
])
def test_bad_declarations_are_named(attrs, error, match):
    bad = type("Bad", (MajorityVote,), {"name": "test_bad_declaration", **attrs})
    with pytest.raises(error, match=match):
        bad().to_pyspiel()


def test_missing_method_is_named():
    class NoReturns(SequentialGame):
        name = "test_no_returns"

        def initial_state(self):
            return ()

    with pytest.raises(TypeError, match="must implement current_player"):
        NoReturns.register()
    with pytest.raises(TypeError, match="SequentialGame subclasses"):
        games.register_game(int)


def test_a_custom_game_passes_check_game_and_trains_with_psro():
    # The flow of the README: write the class, register it, check it, train PSRO on it by name.
    from psro import PSRO

    TinyPoker.register()
    report = games.check_game("test_tiny_poker")
    assert report.ok, report
    solver = PSRO("test_tiny_poker", meta_solver="nash", progress=False)
    history = solver.run(iterations=30, target_gap=1e-9)
    assert history["gap"].iloc[-1] <= 1e-9
    # By hand: player 0 always bets a high card and bluffs a low one w.p. 1/3; player 1 calls a bet w.p. 2/3.
    # Player 0's value is 1/2 * (2/3 * 2 + 1/3 * 1) + 1/2 * (-1) = 1/3.
    assert solver.meta_strategy.values[0] == pytest.approx(1 / 3, abs=1e-9)
