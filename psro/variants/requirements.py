"""The checks the variants share, now :mod:`psro.loop_requirements` (a loop declares them as
:class:`~psro.loop_requirements.LoopRequirements`); the names stay importable from here."""

from psro.loop_requirements import (
    check_two_player_zero_sum,
    require_constant_sum,
    require_product_meta_solver,
    require_two_players,
)

__all__ = ["require_product_meta_solver", "require_two_players", "check_two_player_zero_sum",
           "require_constant_sum"]
