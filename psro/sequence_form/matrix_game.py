"""A :class:`games.NormalFormGame` as a game PSRO plays: one simultaneous move, played in turns.

``PSRO(game)`` accepts a matrix or n-player tensor game. It is played as
OpenSpiel's turn-based version of the one-shot game: each player chooses one
of its strategies without seeing the others' choices, so every player has a
single information state whose actions are its strategies. A policy is then a
mixed strategy ``(1, k_max)``, the exact oracle's best responses are pure
strategies, the sequence-form evaluator gives the meta-game's payoffs exactly,
and the reported gap is the NashConv of the meta-strategy in the matrix game.
With ``meta_solver="nash"`` PSRO is the double oracle (McMahan, Gordon and Blum
2003); :func:`psro.double_oracle` runs the same idea on the payoff arrays alone.

Oracles that learn from sampled episodes and the Monte Carlo evaluator have
nothing to add to a game whose payoffs are known exactly, so they are refused
with a :class:`ValueError` that names the option.

A checkpoint stores the game in :attr:`psro.PSRO.options` as the JSON dict of
:func:`normal_form_to_json` (its payoffs and names), which ``PSRO`` accepts back,
so a matrix-game run resumes like any other.
"""

from __future__ import annotations

import numpy as np

from games.normal_form import NormalFormGame
from psro.errors import ConfigError, with_field

__all__ = [
    "game_is_constant_sum",
    "to_openspiel_game",
    "check_normal_form_options",
    "normal_form_to_json",
    "normal_form_from_json",
    "resolve_game",
]

_JSON_KEY = "normal_form"


def to_openspiel_game(game: NormalFormGame):
    """The turn-based OpenSpiel game that plays ``game``: player 0 moves, then 1, ..., none sees the others' moves.

    Parameters
    ----------
    game : games.NormalFormGame
        At least two players.

    Returns
    -------
    pyspiel.Game
        ``pyspiel.convert_to_turn_based`` of :meth:`games.NormalFormGame.to_pyspiel`.

    Examples
    --------
    >>> from games import catalog
    >>> g = to_openspiel_game(catalog.chicken())
    >>> g.num_players(), g.num_distinct_actions()
    (2, 2)
    >>> state = g.new_initial_state().child(0).child(1)     # (dare, swerve)
    >>> state.returns()
    [7.0, 2.0]
    """
    import pyspiel

    if not isinstance(game, NormalFormGame):
        raise TypeError(f"game must be a games.NormalFormGame; got {type(game).__name__}.")
    if game.num_players < 2:
        raise ValueError(f"game has {game.num_players} player; PSRO needs at least two.")
    return pyspiel.convert_to_turn_based(game.to_pyspiel())


def check_normal_form_options(oracle: str, evaluator: str, oracle_dispatch: str = "auto") -> None:
    """Raise a :class:`~psro.errors.ConfigError`, naming the option and the fix, for a PSRO option a NormalFormGame
    cannot use.

    A normal-form game's payoffs are exact and its best responses are pure
    strategies, so only oracles that declare ``normal_form``
    (:func:`psro.oracles.oracle_capabilities`) and exact (not ``sampled``)
    evaluators (:func:`psro.evaluation.evaluator_capabilities`) fit. Oracle jobs sent to an
    executor name their game by its OpenSpiel string, which a NormalFormGame
    does not have, so ``oracle_dispatch="executor"`` is refused too.

    Examples
    --------
    >>> check_normal_form_options("exact", "sequence_form")
    >>> check_normal_form_options("dqn", "sequence_form")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: oracle: oracle='dqn' learns from sampled episodes; a NormalFormGame's best responses ...
    """
    from psro.evaluation import evaluator_capabilities, evaluator_names
    from psro.oracles import oracle_capabilities, oracle_names

    if not oracle_capabilities(oracle).normal_form:
        fitting = [o for o in oracle_names() if oracle_capabilities(o).normal_form]
        raise ConfigError(
            "oracle", f"oracle={oracle!r} learns from sampled episodes; a NormalFormGame's best responses are pure "
            f"strategies found exactly. Use oracle='exact' (or {', '.join(repr(o) for o in fitting[1:])}), "
            "or give PSRO an OpenSpiel game to train learned responses.")
    if evaluator_capabilities(evaluator).sampled:
        fitting = [e for e in evaluator_names() if not evaluator_capabilities(e).sampled]
        raise ConfigError(
            "evaluator", f"evaluator={evaluator!r} samples episodes; a NormalFormGame's payoffs are known exactly. "
            f"Use evaluator='sequence_form' (or {', '.join(repr(e) for e in fitting[1:])}).")
    if oracle_dispatch == "executor":
        raise ConfigError(
            "oracle_dispatch", "oracle_dispatch='executor' sends oracle jobs that name their game by its "
            "OpenSpiel string, which a NormalFormGame does not have; use oracle_dispatch='auto' or 'in_process' "
            "(exact oracles take milliseconds in-process).")


def normal_form_to_json(game: NormalFormGame) -> dict:
    """``{"normal_form": {...}}``: the payoffs (nested lists) and names of ``game``, for a checkpoint's options.

    Python's JSON writes floats so that they read back exactly, so
    :func:`normal_form_from_json` gives an equal game.

    Examples
    --------
    >>> import json
    >>> from games import catalog
    >>> g = catalog.chicken()
    >>> normal_form_from_json(json.loads(json.dumps(normal_form_to_json(g)))) == g
    True
    """
    return {_JSON_KEY: {"payoffs": game.payoffs.tolist(), "player_names": list(game.player_names),
                        "strategy_names": [list(s) for s in game.strategy_names], "name": game.name}}


def normal_form_from_json(spec: dict) -> NormalFormGame:
    """The :class:`games.NormalFormGame` of a dict written by :func:`normal_form_to_json`.

    Raises
    ------
    ValueError
        When ``spec`` is not such a dict (or its payoffs are invalid).

    Examples
    --------
    >>> g = normal_form_from_json({"normal_form": {"payoffs": [[[1, -1], [-1, 1]], [[-1, 1], [1, -1]]]}})
    >>> g.shape, g.is_zero_sum()
    ((2, 2), True)
    """
    body = spec.get(_JSON_KEY) if isinstance(spec, dict) else None
    if not isinstance(body, dict) or "payoffs" not in body or set(spec) != {_JSON_KEY}:
        raise ConfigError("game", f"a dict must be {{'{_JSON_KEY}': {{'payoffs': ..., 'player_names': ..., "
                          f"'strategy_names': ..., 'name': ...}}}} (what PSRO.options stores for a "
                          f"NormalFormGame); got keys {sorted(spec) if isinstance(spec, dict) else spec!r}.")
    return NormalFormGame(np.asarray(body["payoffs"], dtype=np.float64), player_names=body.get("player_names"),
                          strategy_names=body.get("strategy_names"), name=body.get("name", ""))


def resolve_game(game) -> tuple:
    """``(pyspiel_game, normal_form)`` for PSRO's ``game`` argument; ``normal_form`` is None for an OpenSpiel game.

    Parameters
    ----------
    game : str, pyspiel.Game, games.SequentialGame, games.NormalFormGame or dict
        An OpenSpiel game or its string (loaded with :func:`games.load`), a
        custom sequential game (played as its ``to_pyspiel()`` game), a
        normal-form game, the dict :func:`normal_form_to_json` makes of one, or
        ``"catalog:<spec>"``, a game of :mod:`games.catalog` by name
        (:func:`games.catalog.from_spec`, e.g. ``"catalog:fxp_example(team_size=2)"``).

    Raises
    ------
    psro.errors.ConfigError
        Of ``game``: an unknown game string, a one-player normal-form
        game, or an object of another type.

    Examples
    --------
    >>> from games import catalog
    >>> pyspiel_game, normal_form = resolve_game(catalog.rock_paper_scissors())
    >>> str(pyspiel_game), normal_form.shape
    ('turn_based_simultaneous_game(game=rock_paper_scissors())', (3, 3))
    >>> resolve_game("catalog:fxp_example(team_size=2)")[1].shape
    (2, 2, 2, 2)
    >>> resolve_game("kuhn_poker")[1] is None
    True
    """
    from games.game_resolution import resolve

    def read(game):   # (a dict's payoffs are read inside, so that their errors name the game too)
        return resolve(normal_form_from_json(game) if isinstance(game, dict) else game)

    resolved = with_field("game", read, game)
    if resolved.environment:
        raise ConfigError("game", f"{game} is only an environment; give an OpenSpiel game, a games.SequentialGame or "
                                  "a games.NormalFormGame.")
    return resolved.game, resolved.normal_form


def game_is_constant_sum(game, normal_form=None) -> bool:
    """True for a constant-sum game: from the payoffs of ``normal_form`` when given, else from the OpenSpiel
    ``game``'s declared utility type (zero- or constant-sum).

    Examples
    --------
    >>> from games import catalog
    >>> game_is_constant_sum(*resolve_game(catalog.matching_pennies()))
    True
    >>> game_is_constant_sum(*resolve_game("kuhn_poker"))
    True
    >>> game_is_constant_sum(*resolve_game(catalog.chicken()))
    False
    """
    if normal_form is not None:
        return bool(normal_form.is_constant_sum())
    import pyspiel

    return game.get_type().utility in (pyspiel.GameType.Utility.ZERO_SUM, pyspiel.GameType.Utility.CONSTANT_SUM)
