"""Games of the user's own modules by name: ``"mypackage.module:MyGame"`` in a config or on the command line.

The module is imported when the game is first needed, and ``MyGame`` may be

- a :class:`games.SequentialGame` subclass or instance (played as its OpenSpiel game),
- a ``pyspiel.Game``, or a :class:`games.NormalFormGame`,
- an environment: an object with ``batched_env(num_envs, rng=None)`` returning a :class:`games.BatchedEnv`, and
  ``num_players``, ``num_actions`` and ``obs_dim`` (as :func:`games.from_pettingzoo` returns), or its class,
- or a factory (a function) called without arguments that returns one of these.

Importing a module runs its code, so a name read from a checkpoint or a run directory (anything a user may have
received from elsewhere) is imported only after the user names the same game again
(:func:`confirm_import`; ``psro resume RUN_DIR --game mypackage.module:MyGame``): inside
:func:`from_untrusted_file`, an unconfirmed name is an error.
"""

from __future__ import annotations

import contextlib
import contextvars
import difflib
import importlib
import re

__all__ = ["is_import_spec", "import_game", "confirm_import", "from_untrusted_file"]

_SPEC = re.compile(r"^\s*([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*):([A-Za-z_]\w*)\s*$")
_RESERVED = ("catalog", "pettingzoo", "observation")   # prefixes with their own meaning (games.catalog,
#   games.pettingzoo_env, an OpenSpiel game through its observation tensor)
_UNTRUSTED = contextvars.ContextVar("games.imported_games.untrusted", default=False)
_CONFIRMED: set = set()


def is_import_spec(spec) -> bool:
    """True for a string ``"package.module:Name"`` (not ``catalog:``, ``pettingzoo:`` or ``observation:``, which
    are games of this toolkit).

    Examples
    --------
    >>> is_import_spec("games.examples.trust_dilemma:TrustDilemma"), is_import_spec("kuhn_poker")
    (True, False)
    >>> is_import_spec("catalog:rock_paper_scissors"), is_import_spec("observation:connect_four")
    (False, False)
    """
    match = _SPEC.match(spec) if isinstance(spec, str) else None
    return match is not None and match[1] not in _RESERVED


def confirm_import(spec: str) -> None:
    """Allow ``spec``'s module to be imported even where the name comes from a file (the user named it again)."""
    if is_import_spec(spec):
        _CONFIRMED.add(spec.strip())


@contextlib.contextmanager
def from_untrusted_file():
    """Inside this block, :func:`import_game` imports only names the user confirmed (:func:`confirm_import`)."""
    token = _UNTRUSTED.set(True)
    try:
        yield
    finally:
        _UNTRUSTED.reset(token)


def _is_environment(value) -> bool:
    return callable(getattr(value, "batched_env", None))


def _playable(value, spec: str):
    """The game ``value`` stands for, or None when it is none of the accepted kinds."""
    import pyspiel

    from games.custom_sequential import SequentialGame
    from games.normal_form import NormalFormGame

    if isinstance(value, SequentialGame):
        return value.to_pyspiel()
    if isinstance(value, (pyspiel.Game, NormalFormGame)) or (_is_environment(value) and not isinstance(value, type)):
        return value
    return None


def import_game(spec: str):
    """Import the game ``"package.module:Name"``: a ``pyspiel.Game`` (also for a SequentialGame), a
    ``NormalFormGame`` or an environment object (see the module docstring).

    Raises
    ------
    ValueError
        When the module does not import (with Python's reason), has no such name (with the closest names), the
        name comes from a file and is not confirmed, or the spec does not look like ``package.module:Name``.
    TypeError
        When ``Name`` is not a game, a game class or a factory returning one (saying what it is).

    Examples
    --------
    >>> import_game("games.examples.trust_dilemma:TrustDilemma").get_type().short_name
    'trust_dilemma'
    >>> import_game("games.examples.trust_dilema:TrustDilemma")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: game: 'games.examples.trust_dilema:TrustDilemma': the module 'games.examples.trust_dilema' does not ...
    >>> import_game("games.examples.trust_dilemma:STAG")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: game: 'games.examples.trust_dilemma:STAG' is an int, not a game: ...
    """
    if not is_import_spec(spec):
        raise ValueError(f"game: {spec!r} must look like 'package.module:Name', e.g. 'mygames.bluff:BluffDice'.")
    spec = spec.strip()
    module_name, name = _SPEC.match(spec).groups()
    if _UNTRUSTED.get() and spec not in _CONFIRMED:
        raise ValueError(f"game: {spec!r} imports Python code and was read from a file (a checkpoint or a run "
                         "directory), which never decides what code runs; if you trust the module, name the game "
                         f"again (psro resume RUN_DIR --game {spec}, or games.imported_games.confirm_import({spec!r}) "
                         "in Python).")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"game: {spec!r}: the module {module_name!r} does not import ({type(exc).__name__}: "
                         f"{exc}); is it installed, or on PYTHONPATH?") from None
    if not hasattr(module, name):
        public = [n for n in dir(module) if not n.startswith("_")]
        close = difflib.get_close_matches(name, public, n=1, cutoff=0.6)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"game: {spec!r}: the module {module_name!r} has no {name!r}.{hint}")
    value = getattr(module, name)
    game = _playable(value, spec)
    if game is None and callable(value):
        try:
            made = value()
        except TypeError as exc:
            raise TypeError(f"game: {spec!r} could not be called without arguments ({exc}); give a class or a "
                            "factory that needs none, or a game object.") from None
        game = _playable(made, spec)
        value = made if game is None else value
    if game is None:
        raise TypeError(f"game: {spec!r} is {_article(type(value).__name__)}, not a game: give a SequentialGame "
                        "subclass or instance, a pyspiel.Game, a NormalFormGame, an environment with batched_env(), "
                        "or a function returning one of these.")
    return game


def _article(word: str) -> str:
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"
