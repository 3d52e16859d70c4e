"""What a config dataclass's fields say, read from the class itself: the help of each field (type, default,
choices, the first sentence of its attribute docstring), a value checked against the field's type, and the YAML
loader that refuses a key given twice. :mod:`psro.config` uses these for :class:`psro.PSROConfig`.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import numbers
import re
import textwrap
import typing
from dataclasses import dataclass

import yaml

__all__ = ["FieldHelp", "DuplicateKey", "UniqueKeyLoader", "coerce", "describe_fields", "field_docstrings"]


class DuplicateKey(yaml.YAMLError):
    """A key given twice in one YAML mapping."""


class UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that raises on a key given twice in one mapping (plain YAML keeps the last)."""

    def construct_mapping(self, node, deep=False):
        seen = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            line = key_node.start_mark.line + 1
            try:
                if key in seen:
                    raise DuplicateKey(f"config field {key!r} is given twice (lines {seen[key]} and {line}); "
                                        "keep one (YAML would silently keep the last).")
                seen[key] = line
            except TypeError:   # an unhashable key: the base class reports it
                continue
        return super().construct_mapping(node, deep=deep)


@dataclass(frozen=True)
class FieldHelp:
    """What ``psro run --help`` says about one config field.

    Attributes
    ----------
    name : str
    type_text : str
        ``int``, ``float or null``, ...
    default
        The dataclass default.
    choices : list of str or None
        The allowed names, from the field's registry (:data:`psro.config.CHOICES`).
    description : str
        The first sentence of the field's docstring, reST markup removed.
    """

    name: str
    type_text: str
    default: typing.Any
    choices: typing.Optional[list]
    description: str


@functools.lru_cache(maxsize=8)
def field_docstrings(cls: type) -> dict:
    """``{field: docstring}`` read from the source of the dataclass ``cls`` (the string literal after each
    annotated field).

    Examples
    --------
    >>> from psro.config import PSROConfig
    >>> field_docstrings(PSROConfig)["seed"]
    "Seed of the run's random generator."
    """
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body
    docs = {}
    for node, after in zip(body, body[1:]):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) \
                and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant) \
                and isinstance(after.value.value, str):
            docs[node.target.id] = inspect.cleandoc(after.value.value)
    return docs


def _plain(text: str) -> str:
    """reST inline markup to plain text: ````x```` and :role:`x` become x."""
    text = re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", text)
    return re.sub(r"``([^`]+)``", r"\1", " ".join(text.split()))


def _first_sentence(text: str) -> str:
    match = re.search(r"(?<![ (.]e\.g)(?<!i\.e)\.(\s|$)", text)
    return text if match is None else text[:match.start() + 1]


def describe_fields(cls: type, choices: dict) -> list:
    """One :class:`FieldHelp` per field of the dataclass ``cls``, in declaration order; ``choices[name]()`` gives
    the allowed names of a field that names something in a registry.

    Examples
    --------
    >>> from psro.config import PSROConfig
    >>> seed = next(h for h in describe_fields(PSROConfig, {}) if h.name == "seed")
    >>> seed.type_text, seed.default, seed.choices
    ('int', 0, None)
    """
    docs = field_docstrings(cls)
    types = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        annotation = types[f.name]
        bases = [a for a in typing.get_args(annotation) if a is not type(None)] or [annotation]
        optional = len(bases) < len(typing.get_args(annotation))
        allowed = choices[f.name]() if f.name in choices else None
        out.append(FieldHelp(name=f.name, type_text=" or ".join(b.__name__ for b in bases) + (" or null" if optional
                                                                                              else ""),
                             default=f.default, choices=allowed,
                             description=_first_sentence(_plain(docs.get(f.name, "")))))
    return out


def coerce(key: str, value, annotation, strict: bool = False):
    """Check ``value`` against the field's type; numbers written as strings (``"1e-6"``) are converted unless
    ``strict`` (then a wrong type is a ``TypeError``, else a ``ValueError``).

    Examples
    --------
    >>> coerce("target_gap", "1e-6", float), coerce("seed", 3.0, int)
    (1e-06, 3)
    """
    optional = typing.get_origin(annotation) is typing.Union and type(None) in typing.get_args(annotation)
    alternatives = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) is typing.Union and len(alternatives) > 1 and value is not None:
        for alternative in alternatives:   # (exact_gap: "auto" or a bool)
            try:
                return coerce(key, value, alternative, strict)
            except (TypeError, ValueError):
                continue
        raise (TypeError if strict else ValueError)(
            f"config field {key!r} must be {' or '.join(a.__name__ for a in alternatives)}; got {value!r}.")
    base = next((a for a in typing.get_args(annotation) if a is not type(None)), annotation) if optional else annotation
    if value is None:
        if optional:
            return None
        raise ValueError(f"config field {key!r} cannot be null; give a {base.__name__}.")
    if base is bool:
        if isinstance(value, bool):
            return value
    elif base is int:
        if isinstance(value, str) and not strict:
            try:
                value = int(value)
            except ValueError:
                pass
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            return int(value)
        if isinstance(value, float) and value.is_integer():
            return int(value)
    elif base is float:
        if isinstance(value, str) and not strict:
            try:
                value = float(value)
            except ValueError:
                pass
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            return float(value)
    elif base is dict:
        if isinstance(value, dict):
            return dict(value)
    elif base is list:
        if isinstance(value, (list, tuple)):
            return [list(v) if isinstance(v, (list, tuple)) else v for v in value]
    elif base is str:
        if isinstance(value, str) or key == "game":   # in Python, game may be a game object (checked_game checks it)
            return value
        if isinstance(value, int) and not isinstance(value, bool):   # YAML reads `executor: 2` as an int
            return str(value)
    raise (TypeError if strict else ValueError)(
        f"config field {key!r} must be {'null or ' if optional else ''}{_article(base.__name__)} {base.__name__}; "
        f"got {value!r} "
        f"({type(value).__name__})."
    )


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"
