"""The config's sections: the fields of :class:`psro.PSROConfig` grouped as a config file and ``psro run`` may
nest them (``run``, ``algorithm``, ``game``, ``meta_solver``, ``oracle``, ``evaluator``, ``executor``, ``gaps``,
``ranking``), and the conversion between the nested and the flat form.

A config file may write any field flat (``oracle_steps: 4096``) or inside its section (``oracle: {steps: 4096}``);
both give the same config. :data:`SECTIONS` is the conversion table: ``section.key`` is the flat field
``SECTIONS[section][key]``. A section that shares its name with a field (``game``, ``oracle``, ``evaluator``,
``executor``, ``meta_solver``, ``algorithm``) is that field when its value is not a mapping (``oracle: ppo`` is
``oracle: {name: ppo}``). The flat form is the one :class:`psro.PSROConfig` holds, its keyword form
(``psro.PSRO(game, oracle_steps=4096)``) takes and a checkpoint stores, so old configs and checkpoints read as
before.

Examples
--------
>>> flatten({"game": "kuhn_poker", "oracle": {"name": "ppo", "steps": 4096}, "run": {"seed": 3}})
{'game': 'kuhn_poker', 'oracle': 'ppo', 'oracle_steps': 4096, 'seed': 3}
>>> nest({"oracle": "ppo", "oracle_steps": 4096, "seed": 3})
{'run': {'seed': 3}, 'oracle': {'name': 'ppo', 'steps': 4096}}
"""

from __future__ import annotations

import difflib

__all__ = ["SECTIONS", "SECTION_HELP", "FLAT_PATHS", "flatten", "nest", "flat_name", "flat_assignment"]

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
    "oracle": {"name": "oracle", "options": "oracle_options", "steps": "oracle_steps", "dispatch": "oracle_dispatch",
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


def flat_name(path: str) -> str | None:
    """The flat field a ``section.key`` path names (a longer path keeps its tail: ``oracle.options.hidden`` ->
    ``oracle_options.hidden``); None when ``path`` does not start with a section's key.

    Examples
    --------
    >>> flat_name("oracle.steps"), flat_name("oracle.options.hidden"), flat_name("oracle_options.hidden")
    ('oracle_steps', 'oracle_options.hidden', None)
    """
    section, _, rest = path.partition(".")
    key, dot, tail = rest.partition(".")
    field = SECTIONS.get(section, {}).get(key)
    return None if field is None else field + dot + tail


def flat_assignment(item: str) -> str:
    """A ``path=value`` override with a section's path written as its flat field (``oracle.steps=9`` ->
    ``oracle_steps=9``); any other text as it is.

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
    >>> flatten({"oracle": {"step": 9}})
    Traceback (most recent call last):
    ...
    ValueError: config: oracle.step is no key of the oracle section; did you mean 'steps'? Its keys: name, options, \
steps, dispatch, warm_start, device.
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
