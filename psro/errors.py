"""The exceptions the toolkit raises on purpose, beyond Python's own: one module, so that a caller catches a kind
of failure by its type rather than by its message.

Examples
--------
>>> try:
...     raise LearnerDiverged("learning_rate: ppo training diverged (its loss became nan after 512 learner steps)")
... except ValueError as exc:   # (a LearnerDiverged is a ValueError: code that caught those still does)
...     type(exc).__name__, exc.learner_curve
('LearnerDiverged', ())
>>> try:
...     raise ConfigError("oracle", "'dpn' is not an oracle; did you mean 'dqn'?")
... except ValueError as exc:
...     exc.field, str(exc)
('oracle', "oracle: 'dpn' is not an oracle; did you mean 'dqn'?")
"""

from __future__ import annotations

__all__ = ["ConfigError", "LearnerDiverged", "describe", "with_field"]


class LearnerDiverged(ValueError):
    """A learned response whose training diverged (a non-finite loss, weights or scores) or that learned nothing.

    Its message starts with the option to change (``"learning_rate: ..."``) and names the fix;
    ``learner_curve`` holds the learning-curve rows trained before it stopped (``learners.csv`` keeps them).
    """

    learner_curve: tuple = ()


class ConfigError(ValueError, TypeError):
    """A setting the toolkit refuses: ``field`` names it, and the message starts with ``"<field>: "`` and names the
    fix.

    It is a ``ValueError`` and a ``TypeError`` (as :class:`io.UnsupportedOperation` is an ``OSError`` and a
    ``ValueError``): a refused setting used to raise one or the other, and code that caught either still does.
    The error it replaces, if any, is its ``__cause__``.
    """

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field


def with_field(field: str, function, *args, **kwargs):
    """``function(*args, **kwargs)``; a ``ValueError`` or ``TypeError`` it raises becomes a
    :class:`~psro.errors.ConfigError` of ``field`` (the original is its ``__cause__``); one that already names a
    field goes on as it is.

    Examples
    --------
    >>> with_field("seed", int, "12")
    12
    >>> with_field("seed", int, "twelve")
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: seed: invalid literal for int() with base 10: 'twelve'
    """
    try:
        return function(*args, **kwargs)
    except ConfigError:
        raise
    except (ValueError, TypeError) as exc:
        message = str(exc)
        for prefix in (f"{field}: ", f"{field} "):
            if message.startswith(prefix):
                message = message[len(prefix):]
        raise ConfigError(field, message) from exc


def describe(exc: BaseException) -> str:
    """One line for a user: the error's message and the notes added on its way up (``exc.add_note``), each in
    parentheses.

    Examples
    --------
    >>> try:
    ...     try:
    ...         raise ConfigError("seed", "must be an integer")
    ...     except ValueError as exc:
    ...         exc.add_note("in the sweep's cell seed=x")
    ...         raise
    ... except ValueError as exc:
    ...     describe(exc)
    "seed: must be an integer (in the sweep's cell seed=x)"
    """
    return " ".join([str(exc), *(f"({note})" for note in getattr(exc, "__notes__", ()))])
