"""The sequence form of a game whose tree fits: one traversal of an OpenSpiel game into arrays
(:mod:`psro.sequence_form.game_tree`), a normal-form game as such a tree (:mod:`psro.sequence_form.matrix_game`)
and a team game as a two-player game between its teams (:mod:`psro.sequence_form.team_view`).
"""
