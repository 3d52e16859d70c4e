"""One way in for games: :func:`resolve` turns any accepted form of a game into one :class:`ResolvedGame`.

Accepted forms:

- an OpenSpiel game string (``"kuhn_poker(players=3)"``) or a ``pyspiel.Game``;
- ``"catalog:<spec>"``: a normal-form game of :mod:`games.catalog` (:func:`games.catalog.from_spec`);
- ``"pettingzoo:<module>"``: a PettingZoo environment (:func:`games.pettingzoo_env.load_pettingzoo`);
- ``"observation:<game>"``: an OpenSpiel game played through its observation tensor
  (:class:`games.environment.ObservationGame`);
- ``"package.module:Name"``: a game defined in user code, imported on demand by
  :func:`games.imported_games.import_game` (``Name`` is a game, or a class or function that builds one when
  called without arguments; a name read from a file is imported only once the user names it again);
- a :class:`games.SequentialGame`, a :class:`games.NormalFormGame`, or any object with the documented
  environment methods (:class:`games.contracts.EnvironmentGame`: ``batched_env``, ``num_players``,
  ``num_actions``, ``obs_dim``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from games.contracts import is_environment_game

__all__ = ["ResolvedGame", "resolve", "PREFIXES"]

#: The prefixes of a game string that name something other than an OpenSpiel game
PREFIXES = ("catalog:", "pettingzoo:", "observation:")


@dataclass(frozen=True, eq=False)
class ResolvedGame:
    """A game in the one form every module uses.

    Attributes
    ----------
    game : pyspiel.Game or EnvironmentGame
        What is played: an OpenSpiel game (normal-form and sequential games converted), or an environment.
    normal_form : games.NormalFormGame or None
        The payoff tables, for a normal-form game.
    kind : str
        ``"openspiel"``, ``"sequential"``, ``"normal_form"`` or ``"environment"``.
    spec : str or None
        The game string it came from, where there is one (what a worker or a resume loads again).
    """

    game: Any
    normal_form: Any
    kind: str
    spec: str | None = None

    @property
    def environment(self) -> bool:
        """Whether the game is only an environment: no game tree, so only learned oracles and sampled play."""
        return self.kind == "environment"

    @property
    def num_players(self) -> int:
        """The number of players (``num_players`` a method or an attribute of the game)."""
        count = self.game.num_players
        return int(count() if callable(count) else count)


def resolve(game) -> ResolvedGame:
    """The :class:`ResolvedGame` of any accepted form of a game (see the module's documentation).

    Raises
    ------
    ValueError, TypeError
        An unknown game string, a module that does not import, a missing name, an object that is not a game.

    Examples
    --------
    >>> resolve("kuhn_poker").kind, resolve("kuhn_poker").num_players
    ('openspiel', 2)
    >>> r = resolve("catalog:rock_paper_scissors")
    >>> r.kind, r.normal_form.shape, str(r.game)
    ('normal_form', (3, 3), 'turn_based_simultaneous_game(game=rock_paper_scissors())')
    >>> resolve("observation:tic_tac_toe").environment
    True
    >>> resolve("games.catalog:chicken").normal_form.shape
    (2, 2)
    >>> resolve("games.catalog:no_such_game")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: game: 'games.catalog:no_such_game': the module 'games.catalog' has no 'no_such_game'...
    """
    if isinstance(game, ResolvedGame):
        return game
    if isinstance(game, str):
        return _resolve_string(game)
    return _resolve_object(game, None)


def _resolve_string(text: str) -> ResolvedGame:
    spec = text.strip()
    if not spec:
        raise ValueError(f"game must name a game, such as 'kuhn_poker'; got {text!r}.")
    if spec.startswith("catalog:"):
        from games.catalog import from_spec

        return _resolve_object(from_spec(spec[len("catalog:"):]), spec)
    if spec.startswith("pettingzoo:"):
        from games.pettingzoo_env import load_pettingzoo

        return ResolvedGame(load_pettingzoo(spec), None, "environment", spec)
    if spec.startswith("observation:"):
        from games.observation_game import ObservationGame

        return ResolvedGame(ObservationGame(spec[len("observation:"):].strip()), None, "environment", spec)
    from games.imported_games import import_game, is_import_spec

    if is_import_spec(spec):   # the user's own game, imported on demand (games.imported_games)
        return _resolve_object(import_game(spec), spec)
    from games.openspiel_games import load

    return ResolvedGame(load(spec), None, "openspiel", spec)


def _resolve_object(game, spec: str | None) -> ResolvedGame:
    import pyspiel

    from games.custom_sequential import SequentialGame
    from games.normal_form import NormalFormGame

    if isinstance(game, NormalFormGame):
        if game.num_players < 2:
            raise ValueError(f"game has {game.num_players} player; PSRO needs at least two.")
        return ResolvedGame(pyspiel.convert_to_turn_based(game.to_pyspiel()), game, "normal_form", spec)
    if isinstance(game, SequentialGame):
        return ResolvedGame(game.to_pyspiel(), None, "sequential", spec)
    if isinstance(game, pyspiel.Game):
        return ResolvedGame(game, None, "openspiel", spec)
    if is_environment_game(game):
        return ResolvedGame(game, None, "environment", spec)
    raise TypeError(f"game must be an OpenSpiel game string (e.g. 'kuhn_poker'), a pyspiel.Game, a "
                    f"games.SequentialGame, a games.NormalFormGame, an object with batched_env, or a string "
                    f"'catalog:<spec>', 'pettingzoo:<module>', 'observation:<game>' or 'module:Name'; got "
                    f"{type(game).__name__}.")
