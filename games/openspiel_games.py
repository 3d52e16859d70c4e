"""Loading OpenSpiel games by their string, with helpful errors."""

from __future__ import annotations

import difflib

__all__ = ["load", "registered_names"]


def registered_names() -> list:
    """Short names of every game OpenSpiel registers.

    Examples
    --------
    >>> "kuhn_poker" in registered_names()
    True
    """
    import pyspiel

    return list(pyspiel.registered_names())


def load(spec):
    """Load an OpenSpiel game from its string, e.g. ``"kuhn_poker"`` or ``"kuhn_poker(players=3)"``.

    A ``pyspiel.Game`` is returned unchanged. Simultaneous-move games load as
    they are (no ``convert_to_turn_based``): the game tree of exact PSRO
    (``psro.sequence_form.game_tree``) walks their simultaneous moves seat by seat.

    Raises
    ------
    ValueError
        For an unknown name (with the closest known names) or bad parameters.

    Examples
    --------
    >>> load("kuhn_poker").num_players()
    2
    >>> load("kuhn_poker(players=3)").num_players()
    3
    >>> load("goofspiel(num_cards=4)").get_type().dynamics.name
    'SIMULTANEOUS'
    """
    import pyspiel

    if isinstance(spec, pyspiel.Game):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise TypeError(f"spec must be an OpenSpiel game string such as 'kuhn_poker'; got {spec!r}.")
    spec = spec.strip()
    from games.imported_games import import_game, is_import_spec

    if is_import_spec(spec):   # a game of the user's own module (games.imported_games)
        game = import_game(spec)
        if not isinstance(game, pyspiel.Game):
            raise TypeError(f"game: {spec!r} is {type(game).__name__}, not an OpenSpiel or sequential game; "
                            "load it with games.imported_games.import_game.")
        return game
    short = spec.split("(", 1)[0].strip()
    known = registered_names()
    if short not in known:
        close = difflib.get_close_matches(short, known, n=3, cutoff=0.5)
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise ValueError(
            f"unknown OpenSpiel game {short!r}.{hint} See games.registered_names() for all names."
        )
    try:
        return pyspiel.load_game(spec)
    except pyspiel.SpielError as exc:
        raise ValueError(f"OpenSpiel could not load {spec!r}: {exc}. Check the parameter names and values.") from None
