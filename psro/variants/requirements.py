"""What a PSRO variant may refuse at construction: checks shared by the variants, each naming the field.

Examples
--------
>>> from psro.config import PSROConfig
>>> require_product_meta_solver(PSROConfig(game="kuhn_poker", meta_solver="mgcce"), "RectifiedPSRO")
... # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: meta_solver: RectifiedPSRO needs a product (Nash-style) meta-strategy, ... as JPSRO uses.
"""

from __future__ import annotations

from psro.config import PSROConfig, is_environment_game, num_players

__all__ = ["require_product_meta_solver", "require_two_players", "check_two_player_zero_sum",
           "require_constant_sum"]


def require_product_meta_solver(config: PSROConfig, loop: str) -> None:
    """Refuse a correlated (JPSRO) meta-solver, naming ``meta_solver`` or ``eval_meta_solver``."""
    from psro.meta.solvers import get_meta_solver

    for field in ("meta_solver", "eval_meta_solver"):
        name = getattr(config, field)
        if name is None:
            continue
        options = (config.meta_solver_options or {}) if field == "meta_solver" else {}
        kind = get_meta_solver(name, **options).kind
        if kind != "product":
            raise ValueError(f"{field}: {loop} needs a product (Nash-style) meta-strategy, one mixture per player; "
                             f"{name!r} gives a joint ({kind}) one, as JPSRO uses.")


def require_two_players(game, loop: str) -> None:
    """Refuse a game that is not two-player (the ``game`` field).

    Examples
    --------
    >>> import pyspiel
    >>> require_two_players(pyspiel.load_game("kuhn_poker(players=3)"), "DiversePSRO")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: game: DiversePSRO is defined for two-player games; ... has 3 players.
    """
    n = num_players(game)
    if n != 2:
        raise ValueError(f"game: {loop} is defined for two-player games; {game} has {n} players.")


def check_two_player_zero_sum(game, normal_form=None, loop: str = "XDO", why: str = "") -> None:
    """Refuse a game that is not two-player zero-sum or constant-sum (the ``game`` field): from the payoffs of a
    normal-form game, else from the OpenSpiel game's declared utility; an environment game declares neither.
    ``why``: the loop's reason, added to the message.

    Examples
    --------
    >>> import pyspiel
    >>> check_two_player_zero_sum(pyspiel.load_game("kuhn_poker"), None, "XDO")
    >>> check_two_player_zero_sum(pyspiel.load_game("matrix_pd"), None, "XDO")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: game: XDO is defined for two-player zero-sum (or constant-sum) games; matrix_pd() is general-sum ...
    """
    from psro.matrix_game import game_is_constant_sum

    require_two_players(game, loop)
    if is_environment_game(game) or not game_is_constant_sum(game, normal_form):
        name = game if normal_form is None else "the normal-form game"
        raise ValueError(f"game: {loop} is defined for two-player zero-sum (or constant-sum) games{why}; {name} is "
                         "general-sum (not declared or found constant-sum; algorithm psro takes any game).")


#: The name the variants used before the check took its public name (the same function).
require_constant_sum = check_two_player_zero_sum
