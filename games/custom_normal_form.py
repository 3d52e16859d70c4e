"""Normal-form games from a payoff function.

:func:`from_payoff_function` tabulates a Python function of a pure profile
into a :class:`games.NormalFormGame`. A game given as arrays needs no helper:
``NormalFormGame(payoffs, player_names=..., strategy_names=...)`` or
``NormalFormGame.from_bimatrix(row, col)`` build it directly.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Sequence

import numpy as np

from games.normal_form import NormalFormGame
from games.validation import is_integer

__all__ = ["from_payoff_function"]


def from_payoff_function(
    fn: Callable,
    strategies: Sequence,
    *,
    player_names: Sequence[str] | None = None,
    name: str = "",
    vectorized: bool = False,
) -> NormalFormGame:
    """Build a normal-form game by evaluating a payoff function at every pure profile.

    Parameters
    ----------
    fn : callable
        Without ``vectorized``: ``fn(profile) -> sequence of num_players payoffs``,
        where ``profile`` is a tuple holding one strategy per player (the
        strategies themselves when ``strategies`` lists them, their indices
        when it gives counts). It is called ``prod(k_i)`` times, once per pure
        profile, so keep it cheap or use ``vectorized``.
        With ``vectorized=True``: ``fn(profiles) -> array (m, num_players)``,
        called once with an int array ``profiles`` of shape ``(m, num_players)``
        holding the strategy *indices* of all ``m = prod(k_i)`` profiles (in C
        order: the last player's index varies fastest).
    strategies : sequence
        Either one int per player (the number of strategies ``k_i``; names
        become ``"s0", "s1", ...``), or one sequence of strategies per player
        (any objects; their ``str`` becomes the strategy name).
    player_names : sequence of str, optional
        Defaults to ``("p0", "p1", ...)``.
    name : str
        A label for the game.
    vectorized : bool
        Call ``fn`` once on all profiles instead of once per profile.

    Returns
    -------
    NormalFormGame

    Raises
    ------
    ValueError
        If ``strategies`` is malformed, or ``fn`` returns the wrong number of
        payoffs, or a NaN / inf payoff (the message names the profile).
    TypeError
        If ``fn`` is not callable or returns something that is not numbers.

    Examples
    --------
    A Cournot duopoly: quantities 0..3, price ``6 - q0 - q1``, zero cost.

    >>> g = from_payoff_function(lambda q: [q[0] * (6 - sum(q)), q[1] * (6 - sum(q))],
    ...                          [[0, 1, 2, 3], [0, 1, 2, 3]], player_names=["firm A", "firm B"])
    >>> g.shape, g.payoffs[0, 2, 1], g.strategy_names[0]
    ((4, 4), 6.0, ('0', '1', '2', '3'))

    The same game, vectorised (``fn`` gets the index array of all 16 profiles):

    >>> import numpy as np
    >>> q = np.arange(4)
    >>> def cournot(profiles):
    ...     quantities = q[profiles]
    ...     return quantities * (6 - quantities.sum(axis=1, keepdims=True))
    >>> np.array_equal(from_payoff_function(cournot, (4, 4), vectorized=True).payoffs, g.payoffs)
    True
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable (a function of a pure profile); got {type(fn).__name__}.")
    shape, labels = _parse_strategies(strategies)
    n = len(shape)
    if vectorized:
        profiles = np.indices(shape).reshape(n, -1).T.copy()  # (m, n), C order
        try:
            values = np.asarray(fn(profiles), dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"fn(profiles) must return an array of numbers of shape ({len(profiles)}, {n}); "
                f"converting its output failed: {exc}"
            ) from None
        if values.shape != (len(profiles), n):
            raise ValueError(
                f"with vectorized=True, fn(profiles) must return shape (num_profiles, num_players) = "
                f"({len(profiles)}, {n}); got {values.shape}. Row i holds the payoffs at profiles[i]."
            )
        _check_finite(values, lambda i: tuple(int(x) for x in profiles[i]))
        table = values.T.reshape(n, *shape)
    else:
        table = np.empty((n, *shape), dtype=np.float64)
        for index in itertools.product(*(range(k) for k in shape)):
            profile = tuple(labels[p][i] for p, i in enumerate(index)) if labels else index
            table[(slice(None), *index)] = _payoff_vector(fn(profile), profile, n)
    strategy_names = [[str(s) for s in options] for options in labels] if labels else None
    names_given = player_names is not None
    if names_given and (isinstance(player_names, str) or len(player_names) != n):
        raise ValueError(f"player_names must hold one name per player ({n}); got {player_names!r}.")
    return NormalFormGame(table, player_names=tuple(player_names) if names_given else None,
                          strategy_names=strategy_names, name=name)


def _parse_strategies(strategies) -> tuple:
    """``(shape, labels or None)`` from counts or from per-player strategy lists."""
    if not isinstance(strategies, (Sequence, np.ndarray)):
        raise TypeError(
            "strategies must be one int per player (the number of strategies) or one sequence of "
            f"strategies per player; got {type(strategies).__name__}."
        )
    if isinstance(strategies, (str, bytes)):
        raise ValueError(
            "strategies must be one int per player (the number of strategies) or one sequence of "
            f"strategies per player; got {strategies!r}."
        )
    items = list(strategies)
    if not items:
        raise ValueError("strategies is empty; give at least one player.")
    if all(is_integer(k) for k in items):
        shape = tuple(operator.index(k) for k in items)
        if min(shape) < 1:
            raise ValueError(f"strategies gives counts {shape}; every player needs at least one strategy.")
        return shape, None
    labels = []
    for p, options in enumerate(items):
        if isinstance(options, (str, bytes)) or not isinstance(options, (Sequence, np.ndarray)) or not len(options):
            raise ValueError(
                f"strategies[{p}] must be a non-empty sequence of strategies (or give every player an int "
                f"count instead); got {options!r}."
            )
        labels.append(tuple(options))
    return tuple(len(options) for options in labels), labels


def _payoff_vector(value, profile, n: int) -> np.ndarray:
    try:
        vector = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            f"fn({profile!r}) returned {value!r}; it must return a sequence of {n} numbers (one payoff per player)."
        ) from None
    if vector.shape != (n,):
        raise ValueError(
            f"fn({profile!r}) returned {value!r} (shape {vector.shape}); it must return {n} payoffs, one per player."
        )
    if not np.all(np.isfinite(vector)):
        raise ValueError(f"fn({profile!r}) returned {value!r}; payoffs must be finite (no NaN or inf).")
    return vector


def _check_finite(values: np.ndarray, profile_of: Callable) -> None:
    bad = np.argwhere(~np.isfinite(values))
    if bad.size:
        row = int(bad[0][0])
        raise ValueError(
            f"fn returned a non-finite payoff {values[row].tolist()} at profile {profile_of(row)}; "
            "payoffs must be finite (no NaN or inf)."
        )
