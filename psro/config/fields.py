"""What a config dataclass's fields say, read from the class itself: the help of each field (type, default,
choices, the first sentence of its attribute docstring, read by docstring_parser), a value checked against the
field's type (by pydantic), and the YAML loader that refuses a key given twice. :mod:`psro.config` uses these
for :class:`psro.PSROConfig`.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import re
import typing
from dataclasses import dataclass

import docstring_parser
import pydantic
import yaml

__all__ = ["FieldHelp", "DuplicateKey", "UniqueKeyLoader", "assigned_values", "checked_value", "describe_fields",
           "field_changes", "field_docstrings"]


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
    """``{field: docstring}`` of the dataclass ``cls``: the string literal after each annotated field, read from its
    source by docstring_parser.

    Examples
    --------
    >>> from psro.config.model import PSROConfig
    >>> field_docstrings(PSROConfig)["seed"]
    "Seed of the run's random generator."
    """
    return {p.arg_name: inspect.cleandoc(p.description or "") for p in docstring_parser.parse_from_object(cls).params
            if p.args[0] == "attribute"}


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
    >>> from psro.config.model import PSROConfig
    >>> seed = next(h for h in describe_fields(PSROConfig, {}) if h.name == "seed")
    >>> seed.type_text, seed.default, seed.choices
    ('int >= 0', 0, None)
    """
    docs = field_docstrings(cls)
    types, annotated = typing.get_type_hints(cls), typing.get_type_hints(cls, include_extras=True)
    out = []
    for f in dataclasses.fields(cls):
        annotation = types[f.name]
        bases = [a for a in typing.get_args(annotation) if a is not type(None)] or [annotation]
        optional = len(bases) < len(typing.get_args(annotation))
        allowed = choices[f.name]() if f.name in choices else None
        bound = "".join(_bound_text(mark) for mark in typing.get_args(annotated[f.name])[1:]) \
            if typing.get_origin(annotated[f.name]) is typing.Annotated else ""
        out.append(FieldHelp(name=f.name, type_text=" or ".join(b.__name__ + bound for b in bases)
                             + (" or null" if optional else ""),
                             default=f.default if f.default_factory is dataclasses.MISSING else f.default_factory(),
                             choices=allowed,
                             description=_first_sentence(_plain(docs.get(f.name, "")))))
    return out


def _bound_text(mark) -> str:
    """An annotated bound as the help writes it (``Ge(1)``: `` >= 1``; ``Gt(0)``: `` > 0``)."""
    for attribute, sign in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
        if hasattr(mark, attribute):
            return f" {sign} {getattr(mark, attribute):g}"
    return ""


def checked_value(key: str, value, annotation, strict: bool = False):
    """``value`` validated against the field's type by pydantic: numbers written as strings (``"1e-6"``) are
    converted unless ``strict`` (then a wrong type is a ``TypeError``, else a ``ValueError`` naming the field);
    a bool is never a number, a number never a bool, and an int is a str only where YAML read one (``executor: 2``).

    Examples
    --------
    >>> checked_value("target_gap", "1e-6", float), checked_value("seed", 3.0, int)
    (1e-06, 3)
    >>> checked_value("checkpoint", 1, bool)
    Traceback (most recent call last):
    ...
    ValueError: config field 'checkpoint' must be a bool; got 1 (int).
    """
    arguments = typing.get_args(annotation) if typing.get_origin(annotation) is typing.Union else (annotation,)
    alternatives = [a for a in arguments if a is not type(None)]
    optional = len(alternatives) < len(arguments)
    if value is None:
        if optional:
            return None
        raise ValueError(f"config field {key!r} cannot be null; give {_article(alternatives[0].__name__)} "
                         f"{alternatives[0].__name__}.")
    if key == "game" and not isinstance(value, str):   # in Python, a game object (checked_game checks it)
        return value
    for base in alternatives:   # (exact_gap: "auto" or a bool, tried in the order of the annotation)
        if (isinstance(value, bool) and base is not bool) or (strict and isinstance(value, str) and base is not str):
            continue
        if base is str and isinstance(value, int) and not isinstance(value, bool):   # YAML reads `executor: 2` as 2
            value = str(value)
        try:
            checked = _adapter(base).validate_python(value)
        except pydantic.ValidationError:
            continue
        return [list(v) if isinstance(v, tuple) else v for v in checked] if base is list else checked
    wanted = " or ".join(f"{_article(a.__name__)} {a.__name__}" for a in alternatives)
    raise (TypeError if strict else ValueError)(
        f"config field {key!r} must be {'null or ' if optional else ''}{wanted}; got {value!r} "
        f"({type(value).__name__}).")


@functools.lru_cache(maxsize=None)
def _adapter(base: type) -> pydantic.TypeAdapter:
    """pydantic's validator of one base type: lax numbers (``"3"``, ``3.0`` as an int), strict bools and str."""
    strict = {bool: pydantic.StrictBool, str: pydantic.StrictStr}
    return pydantic.TypeAdapter(strict.get(base, base))


def assigned_values(assignments, fields: dict, current) -> dict:
    """``{field: value}`` of ``["field=value", "mapping.key=value", ...]``: each value parsed as YAML, a
    ``mapping.key`` (``fields[mapping]`` true: a mapping field) setting one key of the mapping ``current(mapping)``
    (or of the one an earlier assignment gave), the later of two assignments winning; a name that is no field is
    kept whole, for the config to report.

    Examples
    --------
    >>> fields = {"seed": False, "options": True}
    >>> assigned_values(["seed=3", "options.steps=1000", "options.hidden=[8]"], fields, lambda f: {"eta": 1})
    {'seed': 3, 'options': {'eta': 1, 'steps': 1000, 'hidden': [8]}}
    """
    changes = {}
    for item in assignments:
        if "=" not in item:
            raise ValueError(f"override {item!r} must look like field=value, e.g. iterations=5.")
        key, text = (part.strip() for part in item.split("=", 1))
        try:
            value = yaml.safe_load(text) if text else ""
        except yaml.YAMLError as exc:
            raise ValueError(f"{key}: the value {text!r} is not a YAML value ({' '.join(str(exc).split())}); "
                             f"quote it, e.g. --set '{key}=\"...\"'.") from None
        field, _, inner = key.partition(".")
        if not inner or field not in fields:
            changes[key] = value
            continue
        if not fields[field]:
            raise ValueError(f"{field}: is not a mapping field, so {key!r} names nothing; set a field whole, e.g. "
                             f"--set {field}=VALUE.")
        _set_option(changes, field, inner, value, current)
    return changes


def field_changes(settings: dict, current) -> dict:
    """``settings`` (``{field: value, "mapping.key": value, ...}``) as whole field values: a ``mapping.key`` entry
    changes that option of the mapping ``current(mapping)`` (or of the one an earlier entry gave), its other options
    kept.

    Examples
    --------
    >>> field_changes({"seed": 3, "options.total_steps": 64}, lambda field: {"hidden": [8]})
    {'seed': 3, 'options': {'hidden': [8], 'total_steps': 64}}
    """
    changes = {}
    for key, value in settings.items():
        field, dot, option = key.partition(".")
        if dot:
            _set_option(changes, field, option, value, current)
        else:
            changes[key] = value
    return changes


def _set_option(changes: dict, field: str, option: str, value, current) -> None:
    """Set ``option`` of the mapping ``field`` in ``changes`` to ``value``: of the mapping an earlier change gave,
    else of ``current(field)`` (none, or not a mapping: an empty one), its other options kept."""
    mapping = changes[field] if field in changes else current(field)
    changes[field] = {**(mapping if isinstance(mapping, dict) else {}), option: value}


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"
