"""The typed configuration of a PSRO run: one dataclass, loadable from YAML, overridable from the command line.

The fields' types, defaults and docstrings are the one description of the
options: :func:`field_help` reads them (the docstrings from the source, as
attribute docstrings) together with each name field's choices from its
registry (:data:`CHOICES`), and the ``psro`` command builds its ``--help`` from
that. Values are checked when a config is built (ranges, the run name) and by
:meth:`PSROConfig.validate` (names against the registries); every error starts
with the field's name.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import functools
import importlib
import inspect
import re
import textwrap
import typing
from dataclasses import dataclass
from pathlib import Path

import yaml

from games.validation import check_int, check_real, check_seed

__all__ = ["PSROConfig", "CHOICES", "FieldHelp", "choices", "field_help"]


#: The fields that name something in a registry, and where their allowed names live: ``(module, attribute)``,
#: a sequence or a function returning one. They are read when asked (the registries are the single source, so a
#: newly registered name appears in ``psro run --help`` too); :func:`choices` reads one.
CHOICES = {
    "meta_solver": ("psro.meta_solvers", "known_names"),
    "eval_meta_solver": ("psro.meta_solvers", "known_names"),
    "update_players": ("psro.loop", "UPDATE_PLAYERS"),
    "br_selection": ("psro.loop", "BR_SELECTIONS"),
    "oracle": ("psro.best_response", "ORACLES"),
    "evaluator": ("psro.evaluation", "EVALUATORS"),
    "executor": ("games.executors", "ENGINES"),   # or a worker count
    "top_up_method": ("psro.evaluation", "TOP_UP_METHODS"),
}


def choices(field: str) -> list:
    """The names a registry allows for ``field`` (see :data:`CHOICES`).

    Examples
    --------
    >>> choices("update_players")
    ['all', 'cycle', 'random']
    """
    module, attribute = CHOICES[field]
    names = getattr(importlib.import_module(module), attribute)
    return list(names() if callable(names) else names)


@dataclass(frozen=True)
class PSROConfig:
    """Everything a PSRO run needs. Field docstrings follow each field.

    Examples
    --------
    >>> cfg = PSROConfig.from_dict({"game": "kuhn_poker", "iterations": 5})
    >>> cfg.replace_from_strings(["target_gap=1e-3"]).target_gap
    0.001
    >>> PSROConfig.from_dict({"iteration": 5})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown config field 'iteration'. Did you mean 'iterations'? ...
    """

    name: str = ""
    """Run name; the default run directory is ``runs/<name>-<timestamp>``. Empty: the config file's stem."""

    game: str = "kuhn_poker"
    """OpenSpiel game string, e.g. ``kuhn_poker`` or ``leduc_poker``."""

    meta_solver: str = "nash"
    """Meta-solver name (see ``psro.meta_solvers.known_names()``). Product solvers (``nash``, ``alpharank``,
    ``prd``, ``uniform``, ``rae``, ...) run PSRO; correlated ones (``mgcce``, ``mgce``, ...) run JPSRO with CCE or
    CE targets. ``nash`` warm-starts the zero-sum LP on two-player constant-sum games and otherwise calls the
    general-sum / n-player Nash dispatcher."""

    eval_meta_solver: typing.Optional[str] = None
    """Meta-solver whose solution the reported gap measures (null: the same as ``meta_solver``); it must give
    the same kind of solution (product, CCE or CE)."""

    update_players: str = "all"
    """Whose best responses join each iteration: ``all``, ``cycle`` (one player in turn) or ``random``
    (one player drawn from the seeded generator)."""

    br_selection: str = "all"
    """Which best responses join when a player has several (CE-JPSRO: one per recommended policy): ``all``,
    ``novel`` (only those not already in the population) or ``largest_gap`` (the novel one with the largest
    mass-weighted deviation incentive)."""

    oracle: str = "exact"
    """Best-response oracle: ``exact`` (sequence form, numpy), ``openspiel`` (pyspiel.TabularBestResponse and
    cce_dist), or the learned ``dqn`` / ``ppo`` (psro.oracles_rl)."""

    oracle_steps: typing.Optional[int] = None
    """Training steps per learned best response (``dqn`` / ``ppo``; the ``total_steps`` of
    ``psro.dqn_oracle.DQNConfig`` / ``psro.ppo_oracle.PPOConfig``). Null: the oracle's default (20,000). Must be
    null with the ``exact`` and ``openspiel`` oracles."""

    evaluator: str = "sequence_form"
    """Meta-game evaluator: ``sequence_form`` (exact, numpy), ``openspiel`` (exact, pyspiel.expected_returns) or
    ``monte_carlo`` (sampled episodes, with counts and variances in the meta-game)."""

    episodes_per_profile: int = 1000
    """Episodes per meta-game profile for the ``monte_carlo`` evaluator (ignored by the exact ones)."""

    executor: str = "serial"
    """Where the run's jobs go: the learned oracles' (``dqn``, ``ppo``) best-response jobs of all players and
    targets of an iteration, and the ``monte_carlo`` evaluator's episodes. ``serial``, ``process`` (a local
    process pool), ``ray`` (a local Ray instance; needs the ``ray`` extra) or a number of worker processes such
    as ``2``. Results do not depend on it (every job's seed is derived from ``seed``); exact oracles are called
    in-process whatever it is."""

    top_up_episodes: int = 0
    """Extra episodes per iteration for the ``monte_carlo`` evaluator, spent after the new profiles are evaluated
    and before the meta-solve on the profiles whose uncertainty matters (0: none; must be 0 with an exact
    evaluator)."""

    top_up_method: str = "support"
    """Where the top-up episodes go: ``support`` (profiles weighted by how much they enter the current
    meta-strategy's regret, times their standard errors) or ``response_graph_ucb`` (the ends of single-deviation
    edges whose confidence intervals still overlap)."""

    top_up_rounds: int = 4
    """Rounds each iteration's top-up is split into (each re-allocates from the samples so far)."""

    iterations: typing.Optional[int] = 100
    """Stop after this many PSRO iterations in total, resumed parts included (null: no limit)."""

    target_gap: typing.Optional[float] = 1e-6
    """Stop once the meta-strategy's gap in the full game (NashConv, or the CCE / CE gap for JPSRO) is at most
    this (null: never)."""

    time_limit: typing.Optional[float] = None
    """Stop once the run has taken this many wall-clock seconds in total, resumed parts included (null: no
    limit)."""

    checkpoint: bool = True
    """Write a checkpoint into the run directory after every iteration, so ``psro resume RUN_DIR`` can continue."""

    seed: int = 0
    """Seed of the run's random generator."""

    progress: bool = True
    """Show a progress bar (the CLI prints its table instead)."""

    rank_population: bool = True
    """When the run ends, rank the final population with alpha-Rank and Elo (``ranking.csv`` in the run
    directory, and a table on the console); see :mod:`psro.population_ranking`."""

    ranking_alpha: float = 10.0
    """alpha-Rank's selection intensity for that ranking."""

    def __post_init__(self):
        """Check the values whose range does not depend on the game (counts, bounds, the seed, the run name)."""
        _check_name(self.name)
        for field, least in (("iterations", 0), ("oracle_steps", 1), ("episodes_per_profile", 1),
                             ("top_up_episodes", 0), ("top_up_rounds", 1)):
            _field_check(check_int, field, getattr(self, field), minimum=least, none_ok=True)
        _field_check(check_seed, "seed", self.seed)
        for field in ("target_gap", "time_limit"):
            _field_check(check_real, field, getattr(self, field), minimum=0.0, none_ok=True)
        _field_check(check_real, "ranking_alpha", self.ranking_alpha, minimum=0.0, strict=True)

    # ---------------------------------------------------------------- building
    @classmethod
    def field_names(cls) -> list:
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def from_dict(cls, data: dict, source: str = "config") -> "PSROConfig":
        """Build and type-check a config from a mapping; unknown fields and wrong types raise ``ValueError``."""
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise ValueError(f"{source} must be a mapping of field: value; got {type(data).__name__}.")
        known = cls.field_names()
        values = {}
        for key, value in data.items():
            if key not in known:
                close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
                hint = f" Did you mean {close[0]!r}?" if close else ""
                raise ValueError(f"unknown config field {key!r}.{hint} Known fields: {', '.join(known)}.")
            values[key] = _coerce(key, value, _field_types()[key])
        return cls(**values)

    @classmethod
    def from_yaml(cls, path) -> "PSROConfig":
        """Read a YAML file; the run name defaults to the file's stem.

        Examples
        --------
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "tiny.yaml")
        >>> _ = open(path, "w").write("game: kuhn_poker\\niterations: 3\\n")
        >>> cfg = PSROConfig.from_yaml(path)
        >>> cfg.name, cfg.iterations
        ('tiny', 3)
        """
        path = Path(path)
        if path.is_dir():
            raise ValueError(f"config file {str(path)!r} is a directory; give a YAML file such as "
                             "experiments/configs/kuhn_poker.yaml (to continue a run directory: psro resume RUN_DIR).")
        if not path.is_file():
            raise ValueError(f"config file {str(path)!r} does not exist.")
        with open(path) as fh:
            try:
                data = yaml.load(fh, Loader=_UniqueKeyLoader)   # a SafeLoader that refuses duplicate keys
            except _DuplicateKey as exc:
                raise ValueError(f"config file {str(path)!r}: {exc}") from None
            except yaml.YAMLError as exc:
                raise ValueError(f"config file {str(path)!r} is not valid YAML: {' '.join(str(exc).split())}") \
                    from None
        cfg = cls.from_dict(data, source=str(path))
        return cfg if cfg.name else dataclasses.replace(cfg, name=path.stem)

    def replace(self, **changes) -> "PSROConfig":
        """A copy with some fields changed (type-checked like :meth:`from_dict`)."""
        return PSROConfig.from_dict({**self.to_dict(), **changes})

    def replace_from_strings(self, assignments) -> "PSROConfig":
        """Apply ``["field=value", ...]`` overrides; values are parsed as YAML scalars (``null``, ``5``, ``1e-6``)."""
        changes = {}
        for item in assignments:
            if "=" not in item:
                raise ValueError(f"override {item!r} must look like field=value, e.g. iterations=5.")
            key, text = item.split("=", 1)
            changes[key.strip()] = yaml.safe_load(text) if text.strip() else ""
        return self.replace(**changes)

    def solver_kwargs(self) -> dict:
        """The keyword arguments of :class:`psro.PSRO` that this config sets.

        Examples
        --------
        >>> PSROConfig(meta_solver="mgcce").solver_kwargs()["meta_solver"]
        'mgcce'
        """
        evaluator_options = None
        if self.evaluator == "monte_carlo":
            evaluator_options = dict(episodes_per_profile=self.episodes_per_profile)
        return dict(game=self.game, meta_solver=self.meta_solver, oracle=self.oracle, evaluator=self.evaluator,
                    seed=self.seed, eval_meta_solver=self.eval_meta_solver, update_players=self.update_players,
                    br_selection=self.br_selection, evaluator_options=evaluator_options,
                    executor=self.executor_spec(), top_up_episodes=self.top_up_episodes,
                    top_up_method=self.top_up_method, top_up_rounds=self.top_up_rounds,
                    oracle_options=None if self.oracle_steps is None else {"total_steps": self.oracle_steps})

    def executor_spec(self):
        """``executor`` as :func:`games.executors.make_executor` takes it: a worker count becomes an int.

        Examples
        --------
        >>> PSROConfig(executor="2").executor_spec(), PSROConfig(executor="ray").executor_spec()
        (2, 'ray')
        """
        text = self.executor.strip()
        return int(text) if text.isdigit() else text

    def to_dict(self) -> dict:
        """The fields as a plain dict (what the run directory's ``config.yaml`` holds)."""
        return {k: getattr(self, k) for k in self.field_names()}

    def validate(self) -> None:
        """Check the names (game, meta-solver, oracle, evaluator) before anything runs.

        Raises ``ValueError`` whose message starts with the field's name.

        Examples
        --------
        >>> PSROConfig(game="kuhn_pokr").validate()  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: game: unknown OpenSpiel game 'kuhn_pokr'. Did you mean 'kuhn_poker'...
        """
        import games
        from psro.best_response import LEARNED, ORACLES
        from psro.evaluation import EVALUATORS
        from psro.loop import BR_SELECTIONS, UPDATE_PLAYERS, _constant_sum
        from psro.meta_solvers import get_meta_solver

        try:
            game = games.load(self.game)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"game: {exc}") from None
        if not isinstance(self.game, str) or not self.game.strip():
            raise ValueError(f"game: must be an OpenSpiel game string such as 'kuhn_poker'; got {self.game!r}.")
        try:
            get_meta_solver(self.meta_solver).check_fits(game.num_players(), _constant_sum(game))
        except (ValueError, TypeError) as exc:
            raise ValueError(f"meta_solver: {exc}") from None
        if self.eval_meta_solver is not None:
            try:
                get_meta_solver(self.eval_meta_solver).check_fits(game.num_players(), _constant_sum(game))
            except (ValueError, TypeError) as exc:
                raise ValueError(f"eval_meta_solver: {exc}") from None
            if get_meta_solver(self.eval_meta_solver).kind != get_meta_solver(self.meta_solver).kind:
                raise ValueError(f"eval_meta_solver: {self.eval_meta_solver!r} gives a different kind of solution "
                                 f"than meta_solver={self.meta_solver!r}; choose one of the same kind.")
        if self.update_players not in UPDATE_PLAYERS:
            raise ValueError(f"update_players: must be one of {list(UPDATE_PLAYERS)}; got {self.update_players!r}.")
        if self.br_selection not in BR_SELECTIONS:
            raise ValueError(f"br_selection: must be one of {list(BR_SELECTIONS)}; got {self.br_selection!r}.")
        if self.oracle not in ORACLES:
            raise ValueError(f"oracle: must be one of {list(ORACLES)}; got {self.oracle!r}.")
        if self.oracle_steps is not None:
            if self.oracle not in LEARNED:
                raise ValueError(f"oracle_steps: only the learned oracles {list(LEARNED)} train; oracle="
                                 f"{self.oracle!r} takes no steps (set oracle_steps to null).")
        if self.evaluator not in EVALUATORS:
            raise ValueError(f"evaluator: must be one of {sorted(EVALUATORS)}; got {self.evaluator!r}.")
        spec = self.executor_spec()
        if spec not in ("serial", "process", "ray") and not (isinstance(spec, int) and spec >= 1):
            raise ValueError(f"executor: must be 'serial', 'process', 'ray' or a number of worker processes "
                             f"such as 2; got {self.executor!r}.")
        from psro.loop import _check_top_up

        try:
            _check_top_up(self.top_up_episodes, self.top_up_method, self.top_up_rounds, self.evaluator)
        except ValueError as exc:
            field = next(f for f in ("top_up_episodes", "top_up_method", "top_up_rounds") if str(exc).startswith(f))
            raise ValueError(f"{field}: {exc}") from None
        if self.iterations is None and self.target_gap is None and self.time_limit is None:
            raise ValueError("iterations: give at least one stopping rule (iterations, target_gap or time_limit).")


def _field_types() -> dict:
    return typing.get_type_hints(PSROConfig)


def _field_check(check, field: str, value, **bounds) -> None:
    """Run a :mod:`games.validation` check; its error becomes a ``ValueError`` (what :meth:`PSROConfig.from_dict`
    documents) that starts with ``"<field>: "``, as every config error does."""
    try:
        check(value, field, **bounds)
    except (TypeError, ValueError) as exc:
        message = str(exc)
        raise ValueError(f"{field}: {message[len(field) + 1:] if message.startswith(field + ' ') else message}") \
            from None


def _check_name(name) -> None:
    """A run name is one file name (it names ``runs/<name>-<timestamp>``), never a path."""
    if not isinstance(name, str):
        raise ValueError(f"name: must be a string; got {name!r}.")
    if name and (Path(name).name != name or name.startswith(".") or "\\" in name
                 or any(ord(c) < 32 for c in name) or len(name) > 200):
        raise ValueError(f"name: {name!r} is not a run name: a run name is a file name, not a path (no '/', '\\', "
                         "leading '.' or '..', at most 200 characters). To write somewhere else, give the run "
                         "directory with --out RUN_DIR.")


class _DuplicateKey(yaml.YAMLError):
    """A key given twice in one YAML mapping."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that raises on a key given twice in one mapping (plain YAML keeps the last)."""

    def construct_mapping(self, node, deep=False):
        seen = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            line = key_node.start_mark.line + 1
            try:
                if key in seen:
                    raise _DuplicateKey(f"config field {key!r} is given twice (lines {seen[key]} and {line}); "
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
        The allowed names, from the field's registry (:data:`CHOICES`).
    description : str
        The first sentence of the field's docstring, reST markup removed.
    """

    name: str
    type_text: str
    default: typing.Any
    choices: typing.Optional[list]
    description: str


@functools.lru_cache(maxsize=1)
def _field_docstrings() -> dict:
    """``{field: docstring}`` read from the class source (the string literal after each annotated field)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(PSROConfig)))
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


def field_help() -> list:
    """One :class:`FieldHelp` per config field, in declaration order: type, default, choices and description.

    Examples
    --------
    >>> oracle = next(h for h in field_help() if h.name == "oracle")
    >>> oracle.default, oracle.choices[:2], oracle.description
    ('exact', ['exact', 'openspiel'], 'Best-response oracle: exact (sequence form, numpy), ...')
    """
    docs = _field_docstrings()
    types = _field_types()
    out = []
    for f in dataclasses.fields(PSROConfig):
        annotation = types[f.name]
        optional = typing.get_origin(annotation) is typing.Union and type(None) in typing.get_args(annotation)
        base = next(a for a in typing.get_args(annotation) if a is not type(None)) if optional else annotation
        allowed = choices(f.name) if f.name in CHOICES else None
        out.append(FieldHelp(name=f.name, type_text=base.__name__ + (" or null" if optional else ""),
                             default=f.default, choices=allowed,
                             description=_first_sentence(_plain(docs.get(f.name, "")))))
    return out


def _coerce(key: str, value, annotation):
    """Check ``value`` against the field's type; numbers written as strings (``"1e-6"``) are converted."""
    optional = typing.get_origin(annotation) is typing.Union and type(None) in typing.get_args(annotation)
    base = next((a for a in typing.get_args(annotation) if a is not type(None)), annotation) if optional else annotation
    if value is None:
        if optional:
            return None
        raise ValueError(f"config field {key!r} cannot be null; give a {base.__name__}.")
    if base is bool:
        if isinstance(value, bool):
            return value
    elif base is int:
        if isinstance(value, str):
            try:
                value = int(value)
            except ValueError:
                pass
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
    elif base is float:
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                pass
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif base is str:
        if isinstance(value, str):
            return value
        if isinstance(value, int) and not isinstance(value, bool):   # YAML reads `executor: 2` as an int
            return str(value)
    raise ValueError(
        f"config field {key!r} must be {'null or ' if optional else ''}{_article(base.__name__)} {base.__name__}; "
        f"got {value!r} "
        f"({type(value).__name__})."
    )


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"
