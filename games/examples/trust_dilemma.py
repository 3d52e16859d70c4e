"""The trust dilemma: a stag hunt played in turns, where player 1 does not see player 0's move.

Each hunter chooses stag (0) or hare (1). Hunting stag pays 4 if the other
hunter also hunts stag and 0 otherwise; hare pays 3 if the other hunts stag and
2 if both hunt hare. Player 1 moves second but without seeing player 0's
choice (imperfect information), so the game is the normal-form stag hunt
``[[4, 0], [3, 2]]`` (row player) and its transpose (column player). Its pure
equilibria are (stag, stag) and (hare, hare); the mixed one plays stag with
probability 2/3. Importing this module registers the game as ``"trust_dilemma"``.

Examples
--------
>>> import pyspiel
>>> import games
>>> game = games.load("trust_dilemma")
>>> pyspiel.expected_returns(game.new_initial_state(), pyspiel.UniformRandomPolicy(game), -1, True)
[2.25, 2.25]
>>> games.check_game(game).ok
True
"""

from games.custom_sequential import TERMINAL, SequentialGame, register_game

__all__ = ["TrustDilemma"]

STAG, HARE = 0, 1
_PAYOFF = [[4.0, 0.0], [3.0, 2.0]]  # _PAYOFF[mine][theirs]


@register_game
class TrustDilemma(SequentialGame):
    """Sequential stag hunt with a hidden first move (see the module docstring)."""

    name = "trust_dilemma"
    num_distinct_actions = 2
    max_game_length = 2
    min_utility, max_utility = 0.0, 4.0

    def initial_state(self):
        return ()  # the moves so far

    def current_player(self, state):
        return TERMINAL if len(state) == 2 else len(state)

    def legal_actions(self, state):
        return [STAG, HARE]

    def apply_action(self, state, action):
        return state + (action,)

    def returns(self, state):
        a0, a1 = state
        return [_PAYOFF[a0][a1], _PAYOFF[a1][a0]]

    def information_state(self, state, player):
        # a player knows only their own move: player 1 does not see player 0's
        return f"p{player}" + (f" chose {state[player]}" if len(state) > player else "")

    def action_to_string(self, state, player, action):
        return "stag" if action == STAG else "hare"
