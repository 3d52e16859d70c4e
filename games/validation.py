"""Checks of scalar arguments at the edge of the library: clear errors that name the argument and the fix.

Every public function that takes a count, a seed, a tolerance or a bound calls
one of these instead of repeating ``isinstance(x, bool) or not isinstance(x,
(int, np.integer))`` inline. Each returns the value as a plain Python ``int`` or
``float``, so callers can store it (in a checkpoint, a config) as it is.

A value of the wrong type raises ``TypeError``; a value of the right type out
of range (negative, zero, NaN, infinite) raises ``ValueError``. Both messages
start with the argument's name. Booleans are never numbers here
(``True`` is not a worker count), and neither are numeric strings (``"5"``):
text is parsed where text is read (configs, the command line), not here.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = ["check_int", "check_real", "check_positive", "check_tolerance", "check_seed", "is_integer"]


def is_integer(value) -> bool:
    """Whether ``value`` is an integer (a Python or numpy int; a bool is not one).

    Examples
    --------
    >>> is_integer(3), is_integer(np.int8(3)), is_integer(True), is_integer(3.0)
    (True, True, False, False)
    """
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_int(value, name: str, *, minimum: int | None = None, maximum: int | None = None,
              none_ok: bool = False):
    """``value`` as an ``int``, checked to lie in ``[minimum, maximum]``.

    Parameters
    ----------
    value
        What the caller passed.
    name : str
        The argument's name, as the user wrote it (``"iterations"``, ``"workers"``).
    minimum, maximum : int, optional
        Inclusive bounds.
    none_ok : bool
        Whether ``None`` is allowed (returned unchanged).

    Raises
    ------
    TypeError
        When ``value`` is not an integer (a bool, a float, a string, ...).
    ValueError
        When it is out of range.

    Examples
    --------
    >>> check_int(np.int64(3), "workers", minimum=1)
    3
    >>> check_int(0, "workers", minimum=1)
    Traceback (most recent call last):
    ...
    ValueError: workers must be an int >= 1; got 0.
    >>> check_int(True, "iterations")
    Traceback (most recent call last):
    ...
    TypeError: iterations must be an int; got True (bool).
    """
    if value is None and none_ok:
        return None
    if not is_integer(value):
        allowed = "an int or None" if none_ok else "an int"
        raise TypeError(f"{name} must be {allowed}; got {value!r} ({type(value).__name__}).")
    value = int(value)
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise ValueError(f"{name} must be an int {_range_text(minimum, maximum)}; got {value}.")
    return value


def check_real(value, name: str, *, minimum: float | None = None, maximum: float | None = None,
               strict: bool = False, none_ok: bool = False, finite: bool = True):
    """``value`` as a ``float``: a real number (not NaN), in ``[minimum, maximum]`` (``strict``: open interval).

    Parameters
    ----------
    value
        What the caller passed: an int, a float or a numpy scalar.
    name : str
        The argument's name.
    minimum, maximum : float, optional
        Bounds; inclusive unless ``strict``.
    strict : bool
        Exclude the bounds themselves (``minimum=0, strict=True``: positive).
    none_ok : bool
        Whether ``None`` is allowed (returned unchanged).
    finite : bool
        Refuse ``inf`` and ``-inf`` (NaN is always refused).

    Raises
    ------
    TypeError
        When ``value`` is not a real number (a bool, a complex number, a string, ...).
    ValueError
        When it is NaN, infinite (with ``finite``) or out of range.

    Examples
    --------
    >>> check_real(2, "time_limit", minimum=0)
    2.0
    >>> check_real(-3.0, "time_limit", minimum=0)
    Traceback (most recent call last):
    ...
    ValueError: time_limit must be a number >= 0; got -3.0.
    >>> check_real("1e-6", "tol")
    Traceback (most recent call last):
    ...
    TypeError: tol must be a real number; got '1e-6' (str).
    """
    if value is None and none_ok:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        allowed = "a real number or None" if none_ok else "a real number"
        raise TypeError(f"{name} must be {allowed}; got {value!r} ({type(value).__name__}).")
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name} must be a number, not NaN.")
    if finite and math.isinf(value):
        raise ValueError(f"{name} must be finite; got {value}.")
    low_bad = minimum is not None and (value <= minimum if strict else value < minimum)
    high_bad = maximum is not None and (value >= maximum if strict else value > maximum)
    if low_bad or high_bad:
        raise ValueError(f"{name} must be a number {_range_text(minimum, maximum, strict)}; got {value!r}.")
    return value


def check_positive(value, name: str, *, none_ok: bool = False, finite: bool = True):
    """``value`` as a ``float`` > 0 (see :func:`check_real`).

    Examples
    --------
    >>> check_positive(0.5, "alpha")
    0.5
    >>> check_positive(0, "alpha")
    Traceback (most recent call last):
    ...
    ValueError: alpha must be a number > 0; got 0.0.
    """
    return check_real(value, name, minimum=0.0, strict=True, none_ok=none_ok, finite=finite)


def check_tolerance(value, name: str = "tol", *, none_ok: bool = False):
    """A convergence tolerance: a finite ``float`` > 0 (NaN, negative and zero tolerances are refused).

    Examples
    --------
    >>> check_tolerance(1e-8)
    1e-08
    >>> check_tolerance(float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: tol must be a number, not NaN.
    >>> check_tolerance(-1)
    Traceback (most recent call last):
    ...
    ValueError: tol must be a number > 0; got -1.0.
    """
    return check_positive(value, name, none_ok=none_ok)


def check_seed(value, name: str = "seed", *, none_ok: bool = False):
    """A seed for ``numpy.random.default_rng`` / ``SeedSequence``: an int >= 0.

    Examples
    --------
    >>> check_seed(7)
    7
    >>> check_seed(-1)
    Traceback (most recent call last):
    ...
    ValueError: seed must be an int >= 0; got -1.
    """
    return check_int(value, name, minimum=0, none_ok=none_ok)


def _range_text(minimum, maximum, strict: bool = False) -> str:
    low, high = (">", "<") if strict else (">=", "<=")
    if minimum is not None and maximum is not None:
        return f"in {'(' if strict else '['}{minimum:g}, {maximum:g}{')' if strict else ']'}"
    if minimum is not None:
        return f"{low} {minimum:g}"
    return f"{high} {maximum:g}"
