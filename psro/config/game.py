"""The game of a run as a config names it (:mod:`psro.config`): resolved through :func:`games.resolve`, whether it
is only an environment, whether its string is kept as written, its number of players."""

from __future__ import annotations

from psro.errors import with_field

__all__ = ["resolve_run_game", "spec_kept", "is_environment_game", "num_players", "OBSERVATION_PREFIX"]


def resolve_run_game(game) -> tuple:
    """``(game, normal_form)`` for a run's ``game``: :func:`psro.sequence_form.matrix_game.resolve_game`, and also a
    ``"pettingzoo:<module>"`` string (:func:`games.pettingzoo_env.load_pettingzoo`) or the environment
    :func:`games.from_pettingzoo` returns, kept as it is (``normal_form`` None), and an ``"observation:<game>"``
    string: the OpenSpiel game played through its observation tensor (:class:`games.environment.ObservationGame`:
    for games such as ``connect_four`` or ``tic_tac_toe`` that have no information-state tensor).

    Examples
    --------
    >>> resolve_run_game("kuhn_poker")[0]
    kuhn_poker()
    """
    from games.game_resolution import resolve
    from psro.sequence_form.matrix_game import resolve_game

    if isinstance(game, dict):   # a NormalFormGame's JSON (what a checkpoint stores)
        return resolve_game(game)
    resolved = with_field("game", resolve, game)
    return resolved.game, resolved.normal_form


#: A run's game string that plays an OpenSpiel game through its observation tensor (``observation:connect_four``)
OBSERVATION_PREFIX = "observation:"


def spec_kept(game) -> bool:
    """Whether a run's game string is kept as written (what a worker or a resume loads): a PettingZoo module, an
    observation-tensor game or a user's ``package.module:Name``, whose loaded object does not print as the string.

    Examples
    --------
    >>> spec_kept("observation:connect_four"), spec_kept("kuhn_poker")
    (True, False)
    """
    from games.imported_games import is_import_spec

    return isinstance(game, str) and (game.strip().startswith(("pettingzoo:", OBSERVATION_PREFIX))
                                      or is_import_spec(game))   # (or the user's own module)


def is_environment_game(game) -> bool:
    """True for a game that is only an environment: any object with a ``batched_env(num_envs, rng=None)`` method
    (and ``num_players``, ``num_actions``, ``obs_dim``), as :func:`games.from_pettingzoo` returns or a user's own
    batched environment, or an OpenSpiel game played through its observation tensor
    (:class:`games.environment.ObservationGame`). It has no game tree, so only learned oracles and sampled
    evaluation apply.

    Examples
    --------
    >>> import pyspiel
    >>> is_environment_game(pyspiel.load_game("kuhn_poker"))
    False
    """
    from games.contracts import is_environment_game as environment

    return environment(game)


def num_players(game) -> int:
    """The number of players of a pyspiel game or an environment (``num_players`` a method or an attribute).

    Examples
    --------
    >>> import pyspiel
    >>> num_players(pyspiel.load_game("kuhn_poker(players=3)"))
    3
    """
    count = game.num_players
    return int(count() if callable(count) else count)
