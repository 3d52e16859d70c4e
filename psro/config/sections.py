"""The config's sections: the fields of :class:`psro.PSROConfig` grouped as a config file and ``psro run`` may
nest them (``run``, ``algorithm``, ``game``, ``meta_solver``, ``oracle``, ``evaluator``, ``executor``, ``gaps``,
``ranking``), and the conversion between the nested and the flat form.

A config file may write any field flat (``oracle_options: {total_steps: 4096}``) or inside its section (``oracle:
{options: {total_steps: 4096}}``); both give the same config. :data:`SECTIONS` is the conversion table:
``section.key`` is the flat field ``SECTIONS[section][key]``. A section that shares its name with a field (``game``,
``oracle``, ``evaluator``, ``executor``, ``meta_solver``, ``algorithm``) is that field when its value is not a mapping
(``oracle: ppo`` is ``oracle: {name: ppo}``). The flat form is the one :class:`psro.PSROConfig` holds, its keyword
form (``psro.PSRO(game, oracle_options={"total_steps": 4096})``) takes and a checkpoint stores, so old configs and
checkpoints read as before. An old spelling of a field (:data:`OLD_SPELLINGS`) reads as its one current spelling, with
a ``DeprecationWarning`` (:func:`current_spelling`).

Examples
--------
>>> flatten({"game": "kuhn_poker", "oracle": {"name": "ppo", "dispatch": "executor"}, "run": {"seed": 3}})
{'game': 'kuhn_poker', 'oracle': 'ppo', 'oracle_dispatch': 'executor', 'seed': 3}
>>> nest({"oracle": "ppo", "oracle_dispatch": "executor", "seed": 3})
{'run': {'seed': 3}, 'oracle': {'name': 'ppo', 'dispatch': 'executor'}}
"""

from __future__ import annotations

import difflib
import warnings

from psro.errors import ConfigError

__all__ = ["SECTIONS", "SECTION_HELP", "FLAT_PATHS", "OLD_SPELLINGS", "HELD_IN_OPTIONS", "flatten", "nest",
           "flat_name", "flat_assignment", "current_spelling"]

#: Each section's keys and the flat field each one is (``section.key`` -> field).
SECTIONS = {
    "run": {"name": "name", "seed": "seed", "iterations": "iterations", "target_gap": "target_gap",
            "time_limit": "time_limit", "checkpoint": "checkpoint", "progress": "progress", "loggers": "loggers"},
    "algorithm": {"name": "algorithm", "options": "algorithm_options", "teams": "teams", "symmetric": "symmetric",
                  "initial_policies": "initial_policies", "update_players": "update_players",
                  "br_selection": "br_selection"},
    "game": {"name": "game", "max_histories": "max_histories"},
    "meta_solver": {"name": "meta_solver", "options": "meta_solver_options", "prune_dominated": "prune_dominated",
                    "eval": "eval_meta_solver"},
    "oracle": {"name": "oracle", "options": "oracle_options", "dispatch": "oracle_dispatch",
               "warm_start": "warm_start", "device": "device"},
    "evaluator": {"name": "evaluator", "episodes_per_profile": "episodes_per_profile", "options": "evaluator_options",
                  "top_up_episodes": "top_up_episodes", "top_up_method": "top_up_method",
                  "top_up_rounds": "top_up_rounds"},
    "executor": {"engine": "executor", "address": "ray_address"},
    "gaps": {"exact": "exact_gap", "exact_every": "exact_gap_every", "approx_every": "approx_gap_every",
             "approx_options": "approx_gap_options",
             "extensive_form": "extensive_form_gaps", "reference_opponents": "reference_opponents"},
    "ranking": {"population": "rank_population", "alpha": "ranking_alpha"},
}

#: What each section holds (``psro run --help`` shows it above the section's options).
SECTION_HELP = {
    "run": "where the run stops, its seed, and what it writes and shows",
    "algorithm": "the training loop, its options, and who plays and learns",
    "game": "the game, and how large a game tree may be built",
    "meta_solver": "what solves the meta-game, and what the reported gap measures",
    "oracle": "the best-response oracle and its training",
    "evaluator": "how the meta-game's payoffs are computed (exactly or by sampled play)",
    "executor": "where the run's jobs go",
    "gaps": "what is measured in the full game each iteration",
    "ranking": "the final population's ranking",
}

#: Each flat field's place in its section: ``field -> (section, key)``.
FLAT_PATHS = {field: (section, key) for section, keys in SECTIONS.items() for key, field in keys.items()}

#: The spellings a setting had before it had one (``old -> (field, key)``), read as ``field``'s ``key`` by
#: :func:`current_spelling`: the learned oracle's budget was also the field ``oracle_steps`` (and ``oracle.steps``)
#: until 2026-12; its one spelling is ``oracle_options.total_steps``. Run directories and configs of earlier releases
#: hold it (as null where it was not set).
OLD_SPELLINGS = {"oracle_steps": ("oracle_options", "total_steps")}
#: The old spellings' places in the sections (``(section, key) -> old flat name``), read by :func:`flatten`.
_OLD_SECTION_KEYS = {("oracle", "steps"): "oracle_steps"}
#: Fields whose value a solver's options hold in a checkpoint (``field -> options field``): the Monte Carlo
#: evaluator's ``episodes_per_profile`` is stored inside ``evaluator_options``. A config gives each once.
HELD_IN_OPTIONS = {"episodes_per_profile": "evaluator_options"}


def flat_name(path: str) -> str | None:
    """The flat field a ``section.key`` path names (a longer path keeps its tail: ``oracle.options.hidden`` ->
    ``oracle_options.hidden``); None when ``path`` does not start with a section's key.

    Examples
    --------
    >>> flat_name("oracle.dispatch"), flat_name("oracle.options.hidden"), flat_name("oracle_options.hidden")
    ('oracle_dispatch', 'oracle_options.hidden', None)
    """
    section, _, rest = path.partition(".")
    key, dot, tail = rest.partition(".")
    field = SECTIONS.get(section, {}).get(key)
    return None if field is None else field + dot + tail


def flat_assignment(item: str) -> str:
    """A ``path=value`` override with a section's path written as its flat field (``run.seed=9`` -> ``seed=9``);
    any other text as it is.

    Examples
    --------
    >>> flat_assignment("oracle.options.hidden=[8]"), flat_assignment("seed=3")
    ('oracle_options.hidden=[8]', 'seed=3')
    """
    path, eq, value = item.partition("=")
    flat = flat_name(path.strip())
    return f"{flat}={value}" if eq and flat is not None else item


def _is_section(key, value) -> bool:
    """Whether the top-level ``key: value`` of a config is a section: a mapping under a section's name (a field of
    the same name, ``oracle: ppo``, is not one; nor is a game given as a mapping, a normal-form game's JSON, unless
    every key of it is one of the game section's)."""
    if key not in SECTIONS or not isinstance(value, dict):
        return False
    return key != "game" or set(value) <= set(SECTIONS["game"])


def flatten(data: dict, source: str = "config") -> dict:
    """The flat form of a config mapping: each section's keys as their fields (:data:`SECTIONS`), the flat keys as
    they are, in the order given. A section's unknown key, a section that is not a mapping, and a field given both
    flat and in its section are each a ``ValueError`` naming them.

    Examples
    --------
    >>> flatten({"executor": {"engine": "ray", "address": "head:6379"}})
    {'executor': 'ray', 'ray_address': 'head:6379'}
    >>> flatten({"oracle": {"option": {}}})
    Traceback (most recent call last):
    ...
    ValueError: config: oracle.option is no key of the oracle section; did you mean 'options'? Its keys: name, \
options, dispatch, warm_start, device.
    """
    flat, where = {}, {}
    for key, value in data.items():
        if not _is_section(key, value):
            if key in SECTIONS and key not in FLAT_PATHS:
                raise ValueError(f"{source}: {key} is a section, a mapping of its keys ({', '.join(SECTIONS[key])}); "
                                 f"got {value!r}.")
            entries = [(key, key, value)]
        else:
            entries = []
            for inner, inner_value in value.items():
                if (key, inner) in _OLD_SECTION_KEYS:
                    entries.append((_OLD_SECTION_KEYS[key, inner], f"{key}.{inner}", inner_value))
                    continue
                if inner not in SECTIONS[key]:
                    close = difflib.get_close_matches(str(inner), list(SECTIONS[key]), n=1, cutoff=0.6)
                    hint = f"; did you mean {close[0]!r}?" if close else "."
                    raise ValueError(f"{source}: {key}.{inner} is no key of the {key} section{hint} Its keys: "
                                     f"{', '.join(SECTIONS[key])}.")
                entries.append((SECTIONS[key][inner], f"{key}.{inner}", inner_value))
        for field, written, field_value in entries:
            if field in flat:
                raise ValueError(f"{source}: {field} is given twice, as {where[field]} and as {written}; keep one.")
            flat[field], where[field] = field_value, written
    return flat


def nest(flat: dict) -> dict:
    """The nested form of a flat config mapping (the inverse of :func:`flatten`): every field in its section, the
    sections in the order of :data:`SECTIONS`; a key that is no field stays at the top, for the config to report."""
    nested = {}
    for section, keys in SECTIONS.items():
        values = {key: flat[field] for key, field in keys.items() if field in flat}
        if values:
            nested[section] = values
    nested.update((key, value) for key, value in flat.items() if key not in FLAT_PATHS)
    return nested


def current_spelling(flat: dict, source: str = "config") -> dict:
    """``flat`` (a flat config mapping) with each old spelling of :data:`OLD_SPELLINGS` written as the current one,
    with a ``DeprecationWarning`` naming it; an old spelling that is null is dropped (a run directory of an earlier
    release holds ``oracle_steps: null``), and one given beside its current spelling is refused. A field of
    :data:`HELD_IN_OPTIONS` inside its options field (where a checkpoint stores it) reads as the field, and given
    both ways is refused.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     current_spelling({"oracle": "ppo", "oracle_steps": 64, "oracle_options": {"hidden": [8]}})
    {'oracle': 'ppo', 'oracle_options': {'hidden': [8], 'total_steps': 64}}
    >>> str(caught[0].message)
    'config: oracle_steps is deprecated and will be removed; write oracle_options: {total_steps: 64}.'
    >>> current_spelling({"oracle_steps": None, "seed": 1})
    {'seed': 1}
    >>> current_spelling({"oracle_steps": 64, "oracle_options": {"total_steps": 128}})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: oracle_steps: the same setting is also given as oracle_options.total_steps (128); ...
    >>> current_spelling({"evaluator_options": {"episodes_per_profile": 70, "num_envs": 8}})
    {'evaluator_options': {'num_envs': 8}, 'episodes_per_profile': 70}
    >>> current_spelling({"episodes_per_profile": 50, "evaluator_options": {"episodes_per_profile": 70}})
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: episodes_per_profile: the same setting is also given as \
evaluator_options.episodes_per_profile (70); give it once, as episodes_per_profile.
    """
    flat = dict(flat)
    for field, options in HELD_IN_OPTIONS.items():
        if not (isinstance(flat.get(options), dict) and field in flat[options]):
            continue
        if field in flat:
            raise ConfigError(field, f"the same setting is also given as {options}.{field} ({flat[options][field]!r}); "
                              f"give it once, as {field}.")
        rest = dict(flat[options])   # (a checkpoint's solver options hold it there: read as the field)
        flat[field] = rest.pop(field)
        flat[options] = rest or None
    for old, (field, key) in OLD_SPELLINGS.items():
        if old not in flat:
            continue
        value = flat.pop(old)
        given = flat.get(field)
        if value is None:
            continue
        if given is not None and not isinstance(given, dict):
            raise ConfigError(field, f"must be a mapping of option: value (or null); got {given!r}.")
        if key in (given or {}):
            raise ConfigError(old, f"the same setting is also given as {field}.{key} ({given[key]!r}); give it once, "
                              f"as {field}.{key}.")
        warnings.warn(f"{source}: {old} is deprecated and will be removed; write {field}: {{{key}: {value}}}.",
                      DeprecationWarning, stacklevel=4)
        flat[field] = {**(given or {}), key: value}
    return flat
