"""The checks of single config values (:mod:`psro.config`): each error starts with the field's name."""

from __future__ import annotations

import dataclasses
import difflib
import functools
import typing
from pathlib import Path

from annotated_types import Ge, Gt

from games.validation import check_int, check_real, is_integer
from psro.errors import ConfigError, with_field

__all__ = ["algorithm_options", "check_reference_opponents", "check_teams", "field_check",
           "check_run_name", "check_steps_fit", "check_budgets", "STEPS_PER_SECOND"]

#: An upper bound of the environment steps a learned oracle takes per second, on any machine (the fastest batched
#: kernels take about 10**7); a response of more steps than this many times ``time_limit`` cannot finish in time
STEPS_PER_SECOND = 10**9


def check_budgets(config) -> None:
    """The checks of a config's budgets before its run allocates or trains: the Monte Carlo episode counts of a
    sampled evaluator (:func:`psro.evaluation.monte_carlo.check_episode_budget`), the steps of a learned oracle
    against the time limit (:func:`check_steps_fit`)."""
    from psro.evaluation import evaluator_capabilities
    from psro.evaluation.monte_carlo import check_episode_budget
    from psro.oracles import oracle_capabilities

    if evaluator_capabilities(config.evaluator).sampled:
        per_task = (config.evaluator_options or {}).get("episodes_per_task", 20_000)
        for field in ("episodes_per_profile", "top_up_episodes"):
            check_episode_budget(field, getattr(config, field), per_task)
    if oracle_capabilities(config.oracle).learned:
        check_steps_fit((config.oracle_options or {}).get("total_steps"), config.time_limit)


def check_steps_fit(steps, time_limit) -> None:
    """Refuse ``oracle_options.total_steps`` that no learned response can take within ``time_limit`` seconds (the
    time limit is checked between iterations, and the first iteration trains a response of that many steps): more
    than :data:`STEPS_PER_SECOND` times the limit.

    Examples
    --------
    >>> check_steps_fit(10**6, 60.0)
    >>> check_steps_fit(10**15, 60.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: oracle_options: total_steps=1000000000000000 cannot finish within time_limit=60 s ...
    """
    if steps is None or time_limit is None or not is_integer(steps):
        return
    if steps > STEPS_PER_SECOND * float(time_limit):
        raise ConfigError("oracle_options", f"total_steps={steps} cannot finish within time_limit={time_limit:g} s "
                          f"(even at {STEPS_PER_SECOND:.0e} steps per second a response takes "
                          f"{steps / STEPS_PER_SECOND:.3g} s, and the time limit is checked between iterations); give "
                          "fewer total_steps or a longer time_limit.")


def algorithm_options(cls, options, algorithm: str):
    """``cls(**options)`` for the dataclass ``cls`` of an algorithm's options (None: the defaults); a key that is
    not one of its fields is a ``ValueError`` naming the key, the closest field and all of them.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Options:
    ...     eta: float = 0.3
    ...     steps: int = 10
    >>> algorithm_options(Options, {"eta": 0.5}, "FXP").eta
    0.5
    >>> algorithm_options(Options, {"etta": 0.5}, "FXP")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: algorithm_options: FXP has no option 'etta'. Did you mean 'eta'? Its options are ...
    """
    options = dict(options or {})
    known = sorted(f.name for f in dataclasses.fields(cls))
    for key in options:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ConfigError("algorithm_options", f"{algorithm} has no option {key!r}.{hint} Its options are {known}.")
    return cls(**options)


def check_reference_opponents(names, game) -> list:
    """The ``reference_opponents`` of a config: built-in names (:data:`psro.measures.reference_opponents.BUILT_IN`) that
    fit ``game``.

    Examples
    --------
    >>> import pyspiel
    >>> check_reference_opponents(["uniform", "mcts"], pyspiel.load_game("tic_tac_toe"))
    ['uniform', 'mcts']
    >>> check_reference_opponents(["os:system"], pyspiel.load_game("tic_tac_toe"))
    Traceback (most recent call last):
    ...
    ValueError: 'os:system' is not one of ['uniform', 'mcts', 'ismcts'] (a config cannot name code; a bot of one's \
own goes to psro evaluate --against module:name).
    """
    from games.environment import ObservationGame
    from psro.measures.reference_opponents import BUILT_IN, make_reference

    if not isinstance(names, (list, tuple)) or not names:
        raise ValueError(f"must be a non-empty list such as [uniform, mcts] (or null); got {names!r}.")
    for name in names:
        if name not in BUILT_IN:
            raise ValueError(f"{name!r} is not one of {list(BUILT_IN)} (a config cannot name code; a bot of one's own "
                             "goes to psro evaluate --against module:name).")
        try:
            make_reference(name, game.game if isinstance(game, ObservationGame) else game)
        except ConfigError as exc:   # (it names psro evaluate's --against: the refusal is this field's)
            raise ConfigError("reference_opponents", str(exc)) from exc
    return list(names)


def check_bounds(config) -> None:
    """Check each field of the dataclass ``config`` that is annotated with a bound (``Annotated[int, Ge(1)]``,
    ``Annotated[Optional[float], Gt(0)]``, annotated_types' markers) with :func:`games.validation.check_int` or
    :func:`~games.validation.check_real`; a field whose type allows None may be None. The error starts with the
    field's name.

    Examples
    --------
    >>> from psro.config.model import PSROConfig
    >>> check_bounds(PSROConfig())
    >>> PSROConfig(top_up_rounds=0)
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: top_up_rounds: must be an int >= 1; got 0.
    """
    for field, (number, optional, bound) in _bounds(type(config)).items():
        strict = {} if number is int else {"strict": isinstance(bound, Gt)}
        field_check(check_int if number is int else check_real, field, getattr(config, field),
                    minimum=getattr(bound, "ge", getattr(bound, "gt", None)), none_ok=optional, **strict)


@functools.lru_cache(maxsize=4)
def _bounds(cls: type) -> dict:
    """``{field: (int or float, whether None is allowed, its Ge / Gt bound)}`` of the fields of ``cls`` annotated
    with a bound."""
    bounds = {}
    for field, hint in typing.get_type_hints(cls, include_extras=True).items():
        if typing.get_origin(hint) is typing.Annotated:
            base, *marks = typing.get_args(hint)
            number = next(t for t in (int, float) if t is base or t in typing.get_args(base))
            bounds[field] = (number, type(None) in typing.get_args(base),
                             next(m for m in marks if isinstance(m, (Ge, Gt))))
    return bounds


def field_check(check, field: str, value, **bounds) -> None:
    """Run a :mod:`games.validation` check ``check(value, field, **bounds)``; its error becomes a
    :class:`~psro.errors.ConfigError` of ``field`` (:func:`psro.errors.with_field`), as every config error does."""
    with_field(field, check, value, field, **bounds)


def check_teams(teams, num_players: int) -> list:
    """``teams`` as lists of ints that cover the players ``0 .. num_players - 1`` once each; raise ``ValueError``.

    Examples
    --------
    >>> check_teams([[0, 1], [2, 3]], 4)
    [[0, 1], [2, 3]]
    >>> check_teams([[0, 1], [1, 2]], 3)
    Traceback (most recent call last):
    ...
    ValueError: teams must cover each of the players 0..2 exactly once; got [[0, 1], [1, 2]].
    """
    if not isinstance(teams, (list, tuple)) or not all(isinstance(t, (list, tuple)) and t for t in teams):
        raise ValueError(f"teams must be a list of non-empty lists of player indices; got {teams!r}.")
    if not all(is_integer(p) for team in teams for p in team):
        raise ValueError(f"teams must hold player indices (ints); got {teams!r}.")
    members = sorted(int(p) for team in teams for p in team)
    if members != list(range(num_players)):
        raise ValueError(f"teams must cover each of the players 0..{num_players - 1} exactly once; got "
                         f"{[list(t) for t in teams]!r}.")
    return [[int(p) for p in team] for team in teams]


def check_run_name(name) -> None:
    """A run name is one file name (it names ``runs/<name>-<timestamp>``), never a path."""
    if not isinstance(name, str):
        raise ConfigError("name", f"must be a string; got {name!r}.")
    if name and (Path(name).name != name or name.startswith(".") or "\\" in name
                 or any(ord(c) < 32 for c in name) or len(name) > 200):
        raise ConfigError("name", f"{name!r} is not a run name: a run name is a file name, not a path (no '/', '\\', "
                          "leading '.' or '..', at most 200 characters). To write somewhere else, give the run "
                          "directory with --out RUN_DIR.")
