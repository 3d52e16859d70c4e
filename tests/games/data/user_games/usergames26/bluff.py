"""A tiny bluffing dice game: each player rolls a die of 3 faces (private); player 0 claims low (stake 1) or high
(stake 2), player 1 folds (player 0 wins 1) or calls (the higher die wins the stake)."""
import numpy as np

from games import CHANCE, TERMINAL, SequentialGame


class BluffDice(SequentialGame):
    name = "bluff_dice_26"
    num_players = 2
    num_distinct_actions = 2
    max_chance_outcomes = 3
    max_game_length = 4
    min_utility, max_utility = -2.0, 2.0
    information_state_tensor_shape = (3 + 2 + 2,)

    def initial_state(self):
        return ()

    def current_player(self, s):
        if len(s) < 2:
            return CHANCE
        return TERMINAL if len(s) == 4 else len(s) - 2

    def chance_outcomes(self, s):
        return [(i, 1 / 3) for i in range(3)]

    def legal_actions(self, s):
        return [0, 1]

    def apply_action(self, s, a):
        return s + (a,)

    def returns(self, s):
        d0, d1, claim, call = s
        if call == 0:   # fold
            return [1.0, -1.0]
        win = 1.0 if d0 > d1 else -1.0 if d0 < d1 else 0.0
        stake = 2.0 if claim == 1 else 1.0
        return [win * stake, -win * stake]

    def information_state(self, s, p):
        return f"p{p} die {s[p] if len(s) > p else '?'} moves {s[2:]}"

    def information_state_tensor(self, s, p):
        t = np.zeros(7)
        if len(s) > p:
            t[s[p]] = 1
        for i, a in enumerate(s[2:]):
            t[3 + 2 * i + a] = 1
        return t


class SevenOfEight(BluffDice):
    """The same game declaring an information-state tensor of 8 entries and giving 7."""

    name = "bluff_dice_26_bad"
    information_state_tensor_shape = (8,)


def make_bluff():
    """A factory: the game of this module."""
    return BluffDice()


NOT_A_GAME = 42
