"""Nash equilibria: the ``"nash"`` dispatcher and the methods it picks from.

``dispatch`` (the ``"nash"`` method), ``zero_sum`` with ``matrix_game_ipm`` (two-player constant-sum games),
``lemke_howson``, ``support_enumeration``, ``nash_enumeration`` (all_equilibria) with ``nash_selection``,
``nash_n_player`` (three or more players), ``extreme_equilibria`` (vertex_enumeration) and ``bimatrix``
(the shared two-player helpers).
"""
